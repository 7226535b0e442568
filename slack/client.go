// Package slack is Causeway's Slack integration (docs/slack.md): a tenant's
// connection, the incident's root message kept up to date with its timeline in
// the thread, remediation proposals with Approve and Reject buttons, and the
// signed interaction and slash-command endpoints that drive the same
// plan-bound approval the API uses.
package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/egress"
)

// DefaultAPIURL is Slack's Web API base; CAUSEWAY_SLACK_API_URL replaces it
// for tests and proxies.
const DefaultAPIURL = "https://slack.com/api"

// Slack error codes the integration treats as the end of sending: the token
// no longer works or the bot cannot write to the channel, and retrying cannot
// change that until an admin reconnects.
var permanentCodes = map[string]bool{
	"invalid_auth":      true,
	"not_authed":        true,
	"account_inactive":  true,
	"token_revoked":     true,
	"token_expired":     true,
	"channel_not_found": true,
	"not_in_channel":    true,
	"is_archived":       true,
	"missing_scope":     true,
}

// APIError is a failed Web API call: Slack's `ok:false` error code, or the HTTP
// status when Slack did not answer with its JSON envelope.
type APIError struct {
	Method string
	// Code is Slack's error code ("channel_not_found"), "ratelimited" for a
	// 429, or "http_<status>" for another non-200 answer.
	Code string
	// Status is the HTTP status of the answer.
	Status int
	// RetryAfter is Slack's Retry-After on a 429.
	RetryAfter time.Duration
}

// Error names the method and Slack's code, never the token or the body.
func (e *APIError) Error() string { return "slack " + e.Method + ": " + e.Code }

// Permanent reports whether retrying the call cannot succeed until the
// integration is reconfigured.
func (e *APIError) Permanent() bool { return permanentCodes[e.Code] }

// Retryable reports whether the same call may succeed later: rate limits and
// Slack's own server errors.
func (e *APIError) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500 || e.Code == "ratelimited" ||
		e.Code == "internal_error" || e.Code == "fatal_error" || e.Code == "service_unavailable"
}

// AsAPIError unwraps err to an *APIError.
func AsAPIError(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}

// Client calls Slack's Web API with one bot token. It makes one attempt per
// call: retries belong to the Temporal activity that owns the send.
type Client struct {
	base  string
	http  *http.Client
	token string
}

// NewClient calls the Web API at base (DefaultAPIURL when empty) through hc,
// which must be the egress client so every outbound call is SSRF-guarded.
func NewClient(base string, hc *http.Client, token string) *Client {
	if base == "" {
		base = DefaultAPIURL
	}
	return &Client{base: strings.TrimRight(base, "/"), http: hc, token: token}
}

// envelope is the part of every Web API answer the client reads first.
type envelope struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// call posts a JSON body (methods that take one) or a form (the read methods,
// which Slack documents as form or query arguments) and decodes the answer.
func (c *Client) call(ctx context.Context, method string, body any, form url.Values, out any) error {
	var req *http.Request
	var err error
	if body != nil {
		raw, merr := json.Marshal(body)
		if merr != nil {
			return merr
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+method, strings.NewReader(string(raw)))
		if err == nil {
			req.Header.Set("Content-Type", "application/json; charset=utf-8")
		}
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+method, strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("slack %s: read: %w", method, err)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		// At least a second: a 429 without a usable Retry-After still means wait.
		wait := max(egress.RetryAfter(resp.Header.Get("Retry-After"), time.Now()), time.Second)
		return &APIError{Method: method, Code: "ratelimited", Status: resp.StatusCode, RetryAfter: wait}
	}
	if resp.StatusCode != http.StatusOK {
		return &APIError{Method: method, Code: "http_" + strconv.Itoa(resp.StatusCode), Status: resp.StatusCode}
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return &APIError{Method: method, Code: "invalid_response", Status: resp.StatusCode}
	}
	if !env.OK {
		return &APIError{Method: method, Code: env.Error, Status: resp.StatusCode}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// Identity is what auth.test says about a bot token.
type Identity struct {
	TeamID string `json:"team_id"`
	Team   string `json:"team"`
	UserID string `json:"user_id"`
	BotID  string `json:"bot_id"`
	URL    string `json:"url"`
}

// AuthTest checks the token and names its workspace and bot user.
func (c *Client) AuthTest(ctx context.Context) (Identity, error) {
	var id Identity
	err := c.call(ctx, "auth.test", nil, url.Values{}, &id)
	return id, err
}

// Metadata is Slack message metadata; Causeway stamps every message it posts
// with its message key so a retried send can find the message again.
type Metadata struct {
	EventType    string            `json:"event_type"`
	EventPayload map[string]string `json:"event_payload"`
}

// Message is the content of a post or an update.
type Message struct {
	Channel  string    `json:"channel"`
	TS       string    `json:"ts,omitempty"`
	ThreadTS string    `json:"thread_ts,omitempty"`
	Text     string    `json:"text"`
	Blocks   []Block   `json:"blocks,omitempty"`
	Metadata *Metadata `json:"metadata,omitempty"`
	// Broadcast also shows a thread reply in the channel (reply_broadcast).
	Broadcast bool `json:"reply_broadcast,omitempty"`
}

type postAnswer struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// PostMessage posts m (chat.postMessage) and returns the channel ID and the
// message's ts, which is its ID within the channel.
func (c *Client) PostMessage(ctx context.Context, m Message) (channel, ts string, err error) {
	m.TS = ""
	var out postAnswer
	if err := c.call(ctx, "chat.postMessage", m, nil, &out); err != nil {
		return "", "", err
	}
	return out.Channel, out.TS, nil
}

// UpdateMessage replaces the message at m.Channel/m.TS (chat.update).
func (c *Client) UpdateMessage(ctx context.Context, m Message) error {
	m.ThreadTS, m.Broadcast = "", false
	return c.call(ctx, "chat.update", m, nil, nil)
}

// HistoryMessage is a message as conversations.history and .replies list it.
type HistoryMessage struct {
	TS       string    `json:"ts"`
	ThreadTS string    `json:"thread_ts"`
	Metadata *Metadata `json:"metadata"`
}

type historyAnswer struct {
	Messages []HistoryMessage `json:"messages"`
}

// FindMessage looks for the message stamped with key among the channel's
// recent messages, or among the replies of thread when it is set. It returns
// "" when there is none.
func (c *Client) FindMessage(ctx context.Context, channel, thread, key string) (string, error) {
	form := url.Values{"channel": {channel}, "limit": {"200"}, "include_all_metadata": {"true"}}
	method := "conversations.history"
	if thread != "" {
		method = "conversations.replies"
		form.Set("ts", thread)
	}
	var out historyAnswer
	if err := c.call(ctx, method, nil, form, &out); err != nil {
		return "", err
	}
	for _, m := range out.Messages {
		if m.Metadata != nil && m.Metadata.EventType == MetadataEventType && m.Metadata.EventPayload["key"] == key {
			return m.TS, nil
		}
	}
	return "", nil
}

// SlackUser is the part of users.info the integration reads.
type SlackUser struct {
	ID               string `json:"id"`
	TeamID           string `json:"team_id"`
	Deleted          bool   `json:"deleted"`
	IsBot            bool   `json:"is_bot"`
	IsEmailConfirmed bool   `json:"is_email_confirmed"`
	Profile          struct {
		Email string `json:"email"`
	} `json:"profile"`
}

// UserInfo reads a Slack user (users.info; the e-mail needs users:read.email).
func (c *Client) UserInfo(ctx context.Context, userID string) (SlackUser, error) {
	var out struct {
		User SlackUser `json:"user"`
	}
	err := c.call(ctx, "users.info", nil, url.Values{"user": {userID}}, &out)
	return out.User, err
}
