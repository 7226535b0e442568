package slackfake

// validBlocks checks Block Kit the way Slack does for the block types
// Causeway uses, answering invalid_blocks for anything else.
func validBlocks(v any) ([]map[string]any, string) {
	if v == nil {
		return nil, ""
	}
	list, ok := v.([]any)
	if !ok || len(list) > 50 {
		return nil, "invalid_blocks"
	}
	out := make([]map[string]any, 0, len(list))
	for _, b := range list {
		block, ok := b.(map[string]any)
		if !ok || !validBlock(block) {
			return nil, "invalid_blocks"
		}
		out = append(out, block)
	}
	return out, ""
}

func validBlock(b map[string]any) bool {
	if id, ok := b["block_id"]; ok {
		if s, _ := id.(string); s == "" || len(s) > 255 {
			return false
		}
	}
	switch b["type"] {
	case "divider":
		return true
	case "header":
		return textObject(b["text"], true, 150)
	case "section":
		text, hasText := b["text"]
		fields, hasFields := b["fields"].([]any)
		if !hasText && !hasFields {
			return false
		}
		if hasText && !textObject(text, false, 3000) {
			return false
		}
		if hasFields {
			if len(fields) == 0 || len(fields) > 10 {
				return false
			}
			for _, f := range fields {
				if !textObject(f, false, 2000) {
					return false
				}
			}
		}
		return true
	case "context":
		return elements(b, 10, func(e any) bool { return textObject(e, false, 3000) })
	case "actions":
		return elements(b, 25, validButton)
	}
	return false
}

// elements checks a block's 1 to max elements with valid.
func elements(b map[string]any, max int, valid func(any) bool) bool {
	els, ok := b["elements"].([]any)
	if !ok || len(els) == 0 || len(els) > max {
		return false
	}
	for _, e := range els {
		if !valid(e) {
			return false
		}
	}
	return true
}

// textObject is a plain_text or mrkdwn object (plain_text only when plainOnly)
// with a non-empty text of at most max characters.
func textObject(v any, plainOnly bool, max int) bool {
	t, ok := v.(map[string]any)
	if !ok {
		return false
	}
	typ, _ := t["type"].(string)
	text, _ := t["text"].(string)
	if typ != "plain_text" && (plainOnly || typ != "mrkdwn") {
		return false
	}
	return text != "" && len([]rune(text)) <= max
}

func validButton(v any) bool {
	b, ok := v.(map[string]any)
	if !ok || b["type"] != "button" || !textObject(b["text"], true, 75) {
		return false
	}
	id, _ := b["action_id"].(string)
	if id == "" || len(id) > 255 {
		return false
	}
	if val, ok := b["value"]; ok {
		if s, _ := val.(string); len(s) > 2000 {
			return false
		}
	}
	if st, ok := b["style"]; ok && st != "primary" && st != "danger" {
		return false
	}
	return true
}
