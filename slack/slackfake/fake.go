// Package slackfake is a Slack Web API for tests: an httptest server that
// speaks the protocol Causeway relies on (JSON and form bodies, Bearer tokens,
// the ok/error envelope, 429 with Retry-After, 5xx) and validates Block Kit
// like Slack does, answering invalid_blocks for unknown block types or missing
// required fields. It also receives response_url posts.
package slackfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Message is a message as the fake holds it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Blocks   []map[string]any
	Metadata map[string]any
	Updates  int
}

// User is a workspace member for users.info.
type User struct {
	ID        string
	Email     string
	Confirmed bool
}

// Fault is one injected failure of a method's next call.
type Fault struct {
	Status     int    // HTTP status; 0 means 200 with Error
	RetryAfter int    // seconds, for 429
	Error      string // Slack error code with ok:false
}

// Server is the fake workspace.
type Server struct {
	*httptest.Server
	// Token is the bot token the workspace accepts; TeamID names it.
	Token, TeamID string

	mu        sync.Mutex
	channels  map[string]bool // channel id → the bot is a member
	users     map[string]User
	messages  []*Message
	faults    map[string][]Fault
	calls     map[string]int
	callTimes map[string][]time.Time
	responses []map[string]any
	seq       int
	hold      *hold
}

// hold keeps the answer to one chat.postMessage back after the message is
// posted, as a worker killed mid-call experiences it.
type hold struct {
	arrived, release chan struct{}
	once             sync.Once
}

// HoldNextPost makes the next chat.postMessage post its message and then
// withhold the answer until release is called; arrived closes once the
// message is posted.
func (s *Server) HoldNextPost() (arrived <-chan struct{}, release func()) {
	h := &hold{arrived: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	s.hold = h
	s.mu.Unlock()
	return h.arrived, func() { h.once.Do(func() { close(h.release) }) }
}

// New starts a workspace with one channel the bot is in.
func New(t testing.TB, channel string) *Server {
	s := &Server{Token: "xoxb-test-" + strconv.Itoa(len(channel)) + "-token", TeamID: "T0TEST",
		channels: map[string]bool{channel: true}, users: map[string]User{}, faults: map[string][]Fault{}, calls: map[string]int{},
		callTimes: map[string][]time.Time{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// AddChannel adds a channel; member says whether the bot is in it.
func (s *Server) AddChannel(id string, member bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = member
}

// AddUser adds a workspace member.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// Fail makes the next calls of method fail, one fault per call.
func (s *Server) Fail(method string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], faults...)
}

// Messages returns a copy of every message posted, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = *m
	}
	return out
}

// Calls is how many times method was called (faults included).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// CallTimes is when each call of method arrived, oldest first.
func (s *Server) CallTimes(method string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.callTimes[method]...)
}

// Responses returns the bodies posted to response_url.
func (s *Server) Responses() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.responses...)
}

// Sign signs a request body the way Slack signs what it sends to an app:
// "v0=" + hex HMAC-SHA256 of "v0:{timestamp}:{body}" with the signing secret.
// Tests sign with it so their expectations do not come from the code under
// test.
func Sign(secret, timestamp, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + timestamp + ":" + body))
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// ResponseURL is a response_url that lands in Responses.
func (s *Server) ResponseURL() string { return s.URL + "/response/1" }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/response/") {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		s.mu.Lock()
		s.responses = append(s.responses, body)
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	}
	method := strings.TrimPrefix(r.URL.Path, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	s.callTimes[method] = append(s.callTimes[method], time.Now())
	if f := s.faults[method]; len(f) > 0 {
		s.faults[method] = f[1:]
		if f[0].Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(f[0].RetryAfter))
		}
		if f[0].Status != 0 {
			w.WriteHeader(f[0].Status)
			_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
			return
		}
		reply(w, map[string]any{"ok": false, "error": f[0].Error})
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	args, err := parseArgs(r)
	if err != nil {
		reply(w, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		reply(w, map[string]any{"ok": false, "error": "not_authed"})
		return
	}
	if auth != "Bearer "+s.Token {
		reply(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	handler, ok := map[string]func(map[string]any) map[string]any{
		"auth.test":             s.authTest,
		"chat.postMessage":      s.post,
		"chat.update":           s.update,
		"conversations.history": s.history,
		"conversations.replies": s.replies,
		"users.info":            s.userInfo,
	}[method]
	if !ok {
		reply(w, map[string]any{"ok": false, "error": "unknown_method"})
		return
	}
	answer := handler(args)
	if h := s.hold; h != nil && method == "chat.postMessage" && answer["ok"] == true {
		s.hold = nil
		close(h.arrived)
		s.mu.Unlock()
		<-h.release
		s.mu.Lock()
	}
	reply(w, answer)
}

func reply(w http.ResponseWriter, body map[string]any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(body)
}

// parseArgs reads a JSON body, or a form whose blocks and metadata arguments
// are JSON strings, as Slack accepts both.
func parseArgs(r *http.Request) (map[string]any, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var out map[string]any
		return out, json.Unmarshal(raw, &out)
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, err
	}
	for k, v := range r.URL.Query() {
		form[k] = v
	}
	out := map[string]any{}
	for k := range form {
		v := form.Get(k)
		if k == "blocks" || k == "metadata" {
			var parsed any
			if err := json.Unmarshal([]byte(v), &parsed); err != nil {
				return nil, err
			}
			out[k] = parsed
			continue
		}
		out[k] = v
	}
	return out, nil
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func fail(code string) map[string]any { return map[string]any{"ok": false, "error": code} }

func (s *Server) authTest(map[string]any) map[string]any {
	return map[string]any{"ok": true, "url": "https://test.slack.com/", "team": "Test Workspace", "user": "causeway",
		"team_id": s.TeamID, "user_id": "U0BOT", "bot_id": "B0BOT"}
}

// channel checks the channel argument like Slack: unknown → channel_not_found,
// known without the bot → not_in_channel.
func (s *Server) channel(args map[string]any) (string, string) {
	ch := str(args, "channel")
	member, known := s.channels[ch]
	switch {
	case !known:
		return "", "channel_not_found"
	case !member:
		return "", "not_in_channel"
	}
	return ch, ""
}

func (s *Server) post(args map[string]any) map[string]any {
	ch, code := s.channel(args)
	if code != "" {
		return fail(code)
	}
	blocks, code := validBlocks(args["blocks"])
	if code != "" {
		return fail(code)
	}
	if str(args, "text") == "" && len(blocks) == 0 {
		return fail("no_text")
	}
	thread := str(args, "thread_ts")
	if thread != "" && s.find(ch, thread) == nil {
		return fail("thread_not_found")
	}
	s.seq++
	m := &Message{Channel: ch, TS: fmt.Sprintf("1700000000.%06d", s.seq), ThreadTS: thread, Text: str(args, "text"), Blocks: blocks}
	m.Metadata, _ = args["metadata"].(map[string]any)
	s.messages = append(s.messages, m)
	return map[string]any{"ok": true, "channel": ch, "ts": m.TS, "message": map[string]any{"text": m.Text, "ts": m.TS}}
}

func (s *Server) find(ch, ts string) *Message {
	for _, m := range s.messages {
		if m.Channel == ch && m.TS == ts {
			return m
		}
	}
	return nil
}

func (s *Server) update(args map[string]any) map[string]any {
	ch, code := s.channel(args)
	if code != "" {
		return fail(code)
	}
	m := s.find(ch, str(args, "ts"))
	if m == nil {
		return fail("message_not_found")
	}
	blocks, code := validBlocks(args["blocks"])
	if code != "" {
		return fail(code)
	}
	m.Text, m.Blocks, m.Updates = str(args, "text"), blocks, m.Updates+1
	if md, ok := args["metadata"].(map[string]any); ok {
		m.Metadata = md
	}
	return map[string]any{"ok": true, "channel": ch, "ts": m.TS, "text": m.Text}
}

// listing renders messages as history/replies do; metadata only when asked.
func listing(msgs []*Message, withMetadata bool) map[string]any {
	out := []map[string]any{}
	for _, m := range msgs {
		item := map[string]any{"type": "message", "ts": m.TS, "text": m.Text}
		if m.ThreadTS != "" {
			item["thread_ts"] = m.ThreadTS
		}
		if withMetadata && m.Metadata != nil {
			item["metadata"] = m.Metadata
		}
		out = append(out, item)
	}
	return map[string]any{"ok": true, "messages": out, "has_more": false}
}

func wantsMetadata(args map[string]any) bool {
	v := args["include_all_metadata"]
	return v == true || v == "true" || v == "1"
}

func (s *Server) history(args map[string]any) map[string]any {
	ch, code := s.channel(args)
	if code != "" {
		return fail(code)
	}
	var msgs []*Message
	for i := len(s.messages) - 1; i >= 0; i-- { // newest first, top level only
		if m := s.messages[i]; m.Channel == ch && m.ThreadTS == "" {
			msgs = append(msgs, m)
		}
	}
	return listing(msgs, wantsMetadata(args))
}

func (s *Server) replies(args map[string]any) map[string]any {
	ch, code := s.channel(args)
	if code != "" {
		return fail(code)
	}
	ts := str(args, "ts")
	parent := s.find(ch, ts)
	if parent == nil {
		return fail("thread_not_found")
	}
	msgs := []*Message{parent}
	for _, m := range s.messages {
		if m.Channel == ch && m.ThreadTS == ts {
			msgs = append(msgs, m)
		}
	}
	return listing(msgs, wantsMetadata(args))
}

func (s *Server) userInfo(args map[string]any) map[string]any {
	u, ok := s.users[str(args, "user")]
	if !ok {
		return fail("user_not_found")
	}
	return map[string]any{"ok": true, "user": map[string]any{"id": u.ID, "team_id": s.TeamID, "deleted": false, "is_bot": false,
		"is_email_confirmed": u.Confirmed, "profile": map[string]any{"email": u.Email}}}
}
