package llm

import (
	"strings"
	"testing"
)

func TestParseFindings(t *testing.T) {
	ok := `{"category":"disk_full","stance":"supports","strength":1,"summary":"Disk is full.","citation":"No space left on device"}`
	cases := []struct {
		name    string
		in      string
		wantErr string // "" = valid
		n       int
	}{
		{"valid", `{"findings":[` + ok + `]}`, "", 1},
		{"empty list", `{"findings":[]}`, "", 0},
		{"extra keys ignored", `{"findings":[{"category":"unknown","stance":"refutes","strength":0,"summary":"s","citation":"title","why":"x"}],"notes":"n"}`, "", 1},
		{"empty reply", "  ", "empty", 0},
		{"not json", "the database is down", "not a JSON object", 0},
		{"code fence", "```json\n{\"findings\":[]}\n```", "not a JSON object", 0},
		{"trailing prose", `{"findings":[]} hope this helps`, "text after the JSON object", 0},
		{"array top level", `[` + ok + `]`, "not a JSON object", 0},
		{"null", `null`, "JSON null", 0},
		{"missing findings", `{"results":[]}`, `no "findings" array`, 0},
		{"findings null", `{"findings":null}`, "must be an array", 0},
		{"findings object", `{"findings":{}}`, "must be an array", 0},
		{"finding not object", `{"findings":["disk_full"]}`, "must be an object", 0},
		{"unknown category", `{"findings":[{"category":"aliens","stance":"supports","strength":0.5,"summary":"s","citation":"c"}]}`, `category "aliens"`, 0},
		{"empty category", `{"findings":[{"category":"","stance":"supports","strength":0.5,"summary":"s","citation":"c"}]}`, `"category" is empty`, 0},
		{"category case", `{"findings":[{"category":"Disk_Full","stance":"supports","strength":0.5,"summary":"s","citation":"c"}]}`, "not one of the allowed", 0},
		{"bad stance", `{"findings":[{"category":"disk_full","stance":"support","strength":0.5,"summary":"s","citation":"c"}]}`, `stance "support"`, 0},
		{"strength high", `{"findings":[{"category":"disk_full","stance":"supports","strength":1.5,"summary":"s","citation":"c"}]}`, "outside 0..1", 0},
		{"strength negative", `{"findings":[{"category":"disk_full","stance":"supports","strength":-0.1,"summary":"s","citation":"c"}]}`, "outside 0..1", 0},
		{"strength string", `{"findings":[{"category":"disk_full","stance":"supports","strength":"0.5","summary":"s","citation":"c"}]}`, `"strength" must be a number`, 0},
		{"strength missing", `{"findings":[{"category":"disk_full","stance":"supports","summary":"s","citation":"c"}]}`, `"strength" is missing`, 0},
		{"summary missing", `{"findings":[{"category":"disk_full","stance":"supports","strength":0.5,"citation":"c"}]}`, `"summary" is missing`, 0},
		{"citation number", `{"findings":[{"category":"disk_full","stance":"supports","strength":0.5,"summary":"s","citation":5}]}`, `"citation" must be a string`, 0},
		{"empty citation", `{"findings":[{"category":"disk_full","stance":"supports","strength":0.5,"summary":"s","citation":""}]}`, `"citation" is empty`, 0},
		{"one bad spoils the reply", `{"findings":[` + ok + `,{"category":"disk_full","stance":"supports","strength":2,"summary":"s","citation":"c"}]}`, "findings[1]", 0},
		{"too many", `{"findings":[` + strings.Repeat(ok+",", maxFindings) + ok + `]}`, "report at most", 0},
		{"culprit and mechanism", `{"findings":[{"category":"image_pull_failure","stance":"supports","strength":0.9,"summary":"s","citation":"c","mechanism":"image_not_found","culprit":{"kind":"deployment","name":"checkout","namespace":"shop"}}]}`, "", 1},
		{"mechanism of another category", `{"findings":[{"category":"image_pull_failure","stance":"supports","strength":0.9,"summary":"s","citation":"c","mechanism":"quota_exceeded"}]}`, `mechanism "quota_exceeded" is not one of image_pull_failure's`, 0},
		{"culprit kind unknown", `{"findings":[{"category":"disk_full","stance":"supports","strength":0.9,"summary":"s","citation":"c","culprit":{"kind":"spaceship","name":"x"}}]}`, `culprit kind "spaceship"`, 0},
		{"culprit without name", `{"findings":[{"category":"disk_full","stance":"supports","strength":0.9,"summary":"s","citation":"c","culprit":{"kind":"host"}}]}`, `"culprit" has no name`, 0},
		{"culprit not an object", `{"findings":[{"category":"disk_full","stance":"supports","strength":0.9,"summary":"s","citation":"c","culprit":"db-1"}]}`, `"culprit" must be an object`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, errs := parseFindings("logs", tc.in)
			if tc.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				if len(fs) != tc.n {
					t.Fatalf("findings = %d, want %d", len(fs), tc.n)
				}
				for _, f := range fs {
					if f.AgentRole != "logs" {
						t.Errorf("role = %q", f.AgentRole)
					}
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("accepted %q", tc.in)
			}
			if joined := strings.Join(errs, "; "); !strings.Contains(joined, tc.wantErr) {
				t.Errorf("errors %q do not mention %q", joined, tc.wantErr)
			}
			if fs != nil {
				t.Errorf("invalid reply returned findings: %+v", fs)
			}
		})
	}
}

func TestParseFindingsBoundsErrorList(t *testing.T) {
	bad := `{"category":"x","stance":"y","strength":9,"summary":"","citation":""}`
	_, errs := parseFindings("logs", `{"findings":[`+strings.Repeat(bad+",", 9)+bad+`]}`)
	if len(errs) != maxValidationErrors {
		t.Errorf("errors = %d, want %d", len(errs), maxValidationErrors)
	}
}
