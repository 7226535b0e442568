package providers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	testSecret = []byte("whsec-test-secret")
	testNow    = time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestVerifyHMAC(t *testing.T) {
	body := []byte(`{"title":"t","description":"d"}`)
	sig := Sign(testSecret, body, "")
	ts := strconv.FormatInt(testNow.Unix(), 10)
	tsSig := Sign(testSecret, body, ts)
	stale := strconv.FormatInt(testNow.Add(-301*time.Second).Unix(), 10)
	future := strconv.FormatInt(testNow.Add(301*time.Second).Unix(), 10)
	edge := strconv.FormatInt(testNow.Add(-300*time.Second).Unix(), 10)
	cases := []struct {
		name     string
		secret   []byte
		body     []byte
		sig, ts  string
		wantPass bool
	}{
		{"bare hex", testSecret, body, sig, "", true},
		{"sha256 prefix", testSecret, body, "sha256=" + sig, "", true},
		{"uppercase prefix and hex", testSecret, body, "SHA256=" + strings.ToUpper(sig), "", true},
		{"surrounding spaces", testSecret, body, "  " + sig + " ", "", true},
		{"timestamped", testSecret, body, tsSig, ts, true},
		{"timestamp at tolerance edge", testSecret, body, Sign(testSecret, body, edge), edge, true},
		{"stale by 301s", testSecret, body, Sign(testSecret, body, stale), stale, false},
		{"future by 301s", testSecret, body, Sign(testSecret, body, future), future, false},
		{"timestamp sent but body-only signature", testSecret, body, sig, ts, false},
		{"non-numeric timestamp", testSecret, body, Sign(testSecret, body, "abc"), "abc", false},
		{"tampered body", testSecret, []byte(`{"title":"T","description":"d"}`), sig, "", false},
		{"wrong secret", []byte("other"), body, sig, "", false},
		{"empty secret", nil, body, Sign(nil, body, ""), "", false},
		{"empty signature", testSecret, body, "", "", false},
		{"truncated signature", testSecret, body, sig[:32], "", false},
		{"not hex", testSecret, body, strings.Repeat("zz", 32), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyHMAC(tc.secret, tc.body, tc.sig, tc.ts, testNow)
			if tc.wantPass && err != nil {
				t.Fatalf("want pass, got %v", err)
			}
			if !tc.wantPass && !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("want ErrUnauthenticated, got %v", err)
			}
		})
	}
}

// TestAuthErrorHidesReason guards the rule that a client never learns which check failed.
func TestAuthErrorHidesReason(t *testing.T) {
	err := VerifyHMAC(testSecret, []byte("x"), "", "", testNow)
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Reason == "" {
		t.Fatalf("want AuthError with a reason, got %#v", err)
	}
	if err.Error() != ErrUnauthenticated.Error() {
		t.Fatalf("error text leaks detail: %q", err.Error())
	}
}

func TestProviderVerify(t *testing.T) {
	reg := New(Options{})
	body := []byte(`{"k":"v"}`)
	sig := Sign(testSecret, body, "")
	ts := strconv.FormatInt(testNow.Unix(), 10)
	staleTS := strconv.FormatInt(testNow.Add(-400*time.Second).Unix(), 10)
	other := Sign([]byte("rotated-out"), body, "")
	cases := []struct {
		provider string
		name     string
		header   http.Header
		wantPass bool
	}{
		{"custom", "signed", hdr(HeaderSignature, sig), true},
		{"custom", "timestamped", hdr(HeaderSignature, "sha256="+Sign(testSecret, body, ts), HeaderTimestamp, ts), true},
		{"custom", "missing header", hdr(), false},
		{"custom", "empty header", hdr(HeaderSignature, ""), false},
		{"custom", "wrong signature", hdr(HeaderSignature, other), false},

		{"datadog", "no signature", hdr(), true},
		{"datadog", "correct optional signature", hdr(HeaderSignature, sig), true},
		{"datadog", "wrong optional signature", hdr(HeaderSignature, other), false},
		{"alertmanager", "wrong optional signature", hdr(HeaderSignature, other), false},
		{"newrelic", "no signature", hdr(), true},
		{"opsgenie", "empty optional signature", hdr(HeaderSignature, ""), false},
		{"azure", "no signature", hdr(), true},
		{"gcp", "wrong optional signature", hdr(HeaderSignature, "sha256="+other), false},

		{"grafana", "our header", hdr(HeaderSignature, sig), true},
		{"grafana", "our header wrong", hdr(HeaderSignature, other), false},
		{"grafana", "grafana header body only", hdr(HeaderGrafanaSignature, sig), true},
		{"grafana", "grafana header with timestamp", hdr(HeaderGrafanaSignature, hexMAC(testSecret, ts+":"+string(body)), HeaderGrafanaTimestamp, ts), true},
		{"grafana", "grafana timestamp signed with dot", hdr(HeaderGrafanaSignature, Sign(testSecret, body, ts), HeaderGrafanaTimestamp, ts), false},
		{"grafana", "grafana stale timestamp", hdr(HeaderGrafanaSignature, hexMAC(testSecret, staleTS+":"+string(body)), HeaderGrafanaTimestamp, staleTS), false},
		{"grafana", "grafana header wrong", hdr(HeaderGrafanaSignature, other), false},
		{"grafana", "no signature", hdr(), false},

		{"pagerduty", "single v1", hdr(HeaderPagerDutySignature, "v1="+sig), true},
		{"pagerduty", "rotation, second matches", hdr(HeaderPagerDutySignature, "v1="+other+",v1="+sig), true},
		{"pagerduty", "rotation with spaces, first matches", hdr(HeaderPagerDutySignature, "v1="+sig+", v1="+other), true},
		{"pagerduty", "none match", hdr(HeaderPagerDutySignature, "v1="+other+",v1="+other), false},
		{"pagerduty", "missing v1 prefix", hdr(HeaderPagerDutySignature, sig), false},
		{"pagerduty", "missing header", hdr(), false},
		{"pagerduty", "our header is not enough", hdr(HeaderSignature, sig), false},

		{"sentry", "signed", hdr(HeaderSentrySignature, sig), true},
		{"sentry", "wrong", hdr(HeaderSentrySignature, other), false},
		{"sentry", "missing", hdr(), false},
	}
	for _, tc := range cases {
		t.Run(tc.provider+"/"+tc.name, func(t *testing.T) {
			p, _ := reg.Lookup(tc.provider)
			err := p.Verify(context.Background(), Request{Header: tc.header, Body: body}, testSecret, testNow)
			if tc.wantPass && err != nil {
				t.Fatalf("want pass, got %v", err)
			}
			if !tc.wantPass && !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("want ErrUnauthenticated, got %v", err)
			}
		})
	}
	t.Run("tampered body", func(t *testing.T) {
		for _, name := range []string{"custom", "grafana", "sentry"} {
			p, _ := reg.Lookup(name)
			h := hdr(HeaderSignature, sig, HeaderGrafanaSignature, sig, HeaderSentrySignature, sig)
			if err := p.Verify(context.Background(), Request{Header: h, Body: []byte(`{"k":"w"}`)}, testSecret, testNow); !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("%s accepted a tampered body: %v", name, err)
			}
		}
	})
}

func hexMAC(secret []byte, msg string) string {
	return Sign(secret, []byte(msg), "")
}

func TestRegistry(t *testing.T) {
	want := []string{"alertmanager", "azure", "custom", "datadog", "gcp", "grafana", "newrelic", "opsgenie", "pagerduty", "sentry", "sns"}
	got := Names()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Names() = %v", got)
	}
	reg := New(Options{})
	modes := map[string]Mode{"custom": ModeHMAC, "grafana": ModeNative, "pagerduty": ModeNative, "sentry": ModeNative, "sns": ModeNative}
	for _, n := range got {
		p, ok := reg.Lookup(n)
		if !ok || p.Name() != n {
			t.Fatalf("Lookup(%q) = %v, %v", n, p, ok)
		}
		wantMode, ok := modes[n]
		if !ok {
			wantMode = ModeKeyOnly
		}
		if p.Mode() != wantMode {
			t.Errorf("%s mode = %s, want %s", n, p.Mode(), wantMode)
		}
	}
	if _, ok := reg.Lookup("splunk"); ok {
		t.Fatal("unknown provider found")
	}
}
