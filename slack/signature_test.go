package slack

import (
	"errors"
	"testing"
	"time"

	"github.com/causeway/causeway/slack/slackfake"
)

// slackDocBody is the worked example of Slack's "Verifying requests from
// Slack" guide; its signature below was computed independently (openssl).
const (
	slackDocSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	slackDocTS     = "1531420618"
	slackDocBody   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	slackDocSig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

// hmacSig signs like Slack does, through the fake rather than through Sign.
func hmacSig(secret, ts, body string) string { return slackfake.Sign(secret, ts, body) }

func TestVerifyAcceptsSlacksWorkedExample(t *testing.T) {
	at := time.Unix(1531420618, 0).Add(30 * time.Second)
	if err := Verify(slackDocSecret, slackDocTS, slackDocSig, []byte(slackDocBody), at); err != nil {
		t.Fatalf("Slack's own example was refused: %v", err)
	}
	if got := Sign(slackDocSecret, slackDocTS, []byte(slackDocBody)); got != slackDocSig {
		t.Fatalf("Sign = %s, Slack's example says %s", got, slackDocSig)
	}
}

func TestVerifyRefuses(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := "1800000000"
	body := "payload=%7B%7D"
	good := hmacSig("secret-1", ts, body)
	cases := []struct {
		name, secret, ts, sig, body string
		want                        error
	}{
		{"another secret", "secret-2", ts, good, body, ErrBadSignature},
		{"changed body", "secret-1", ts, good, body + "x", ErrBadSignature},
		{"bare hex", "secret-1", ts, good[3:], body, ErrBadSignature},
		{"empty signature", "secret-1", ts, "", body, ErrBadSignature},
		{"older than five minutes", "secret-1", "1799999699", hmacSig("secret-1", "1799999699", body), body, ErrBadTimestamp},
		{"more than five minutes ahead", "secret-1", "1800000301", hmacSig("secret-1", "1800000301", body), body, ErrBadTimestamp},
		{"no timestamp", "secret-1", "", hmacSig("secret-1", "", body), body, ErrBadTimestamp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := Verify(c.secret, c.ts, c.sig, []byte(c.body), now); !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
	// Just inside the window either way is accepted.
	for _, edge := range []string{"1799999701", "1800000299"} {
		if err := Verify("secret-1", edge, hmacSig("secret-1", edge, body), []byte(body), now); err != nil {
			t.Fatalf("timestamp %s inside the window refused: %v", edge, err)
		}
	}
}
