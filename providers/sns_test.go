package providers

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	snsKeyOnce sync.Once
	snsKey     *rsa.PrivateKey
)

func testSNSKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	snsKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		snsKey = k
	})
	return snsKey
}

// snsFixture serves a self-signed certificate over TLS and builds a registry trusting only its host.
type snsFixture struct {
	srv     *httptest.Server
	host    string
	certURL string
	fetches atomic.Int32
	reg     *Registry
}

func newSNSFixture(t *testing.T) *snsFixture {
	t.Helper()
	key := testSNSKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "sns.us-east-1.amazonaws.com"},
		NotBefore:    testNow.Add(-time.Hour),
		NotAfter:     testNow.Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	f := &snsFixture{}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/SimpleNotificationService-test.pem" {
			http.NotFound(w, r)
			return
		}
		f.fetches.Add(1)
		_, _ = w.Write(certPEM)
	}))
	t.Cleanup(f.srv.Close)
	u, _ := url.Parse(f.srv.URL)
	f.host = u.Host
	f.certURL = f.srv.URL + "/SimpleNotificationService-test.pem"
	f.reg = New(Options{
		HTTPClient:         f.srv.Client(),
		SNSCertHostAllowed: func(h string) bool { return h == f.host },
	})
	return f
}

// signSNS fills Signature by building the string to sign independently of the code under test.
func signSNS(t *testing.T, env map[string]string) []byte {
	t.Helper()
	var keys []string
	switch env["Type"] {
	case "Notification":
		keys = []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"}
	default:
		keys = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	var sb strings.Builder
	for _, k := range keys {
		if v, ok := env[k]; ok {
			sb.WriteString(k + "\n" + v + "\n")
		}
	}
	var sig []byte
	var err error
	if env["SignatureVersion"] == "1" {
		d := sha1.Sum([]byte(sb.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, testSNSKey(t), crypto.SHA1, d[:])
	} else {
		d := sha256.Sum256([]byte(sb.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, testSNSKey(t), crypto.SHA256, d[:])
	}
	if err != nil {
		t.Fatal(err)
	}
	env["Signature"] = base64.StdEncoding.EncodeToString(sig)
	body, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

const testTopic = "arn:aws:sns:us-east-1:123456789012:alarms"

func (f *snsFixture) notification(version string, withSubject bool) map[string]string {
	alarm := `{"AlarmName":"api-5xx","NewStateValue":"ALARM","NewStateReason":"Threshold Crossed","AlarmArn":"arn:aws:cloudwatch:us-east-1:123456789012:alarm:api-5xx","Region":"US East (N. Virginia)","AWSAccountId":"123456789012","Trigger":{"Namespace":"AWS/ApplicationELB","MetricName":"HTTPCode_Target_5XX_Count","Dimensions":[{"name":"LoadBalancer","value":"app/api/abc"}]}}`
	env := map[string]string{
		"Type": "Notification", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "TopicArn": testTopic,
		"Message": alarm, "Timestamp": "2025-05-01T10:00:01.000Z", "SignatureVersion": version,
		"SigningCertURL": f.certURL, "UnsubscribeURL": "https://" + f.host + "/?Action=Unsubscribe",
	}
	if withSubject {
		env["Subject"] = `ALARM: "api-5xx" in US East (N. Virginia)`
	}
	return env
}

func (f *snsFixture) confirmation(version, subscribeURL string) map[string]string {
	return map[string]string{
		"Type": "SubscriptionConfirmation", "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b", "TopicArn": testTopic,
		"Token": "2336412f37fb687f5d51e6e2425c464de12884c0a2c4d0b5e9c1a1b2e0d3f2a1", "Message": "You have chosen to subscribe.",
		"SubscribeURL": subscribeURL, "Timestamp": "2025-05-01T10:00:01.000Z", "SignatureVersion": version,
		"SigningCertURL": f.certURL,
	}
}

func verifySNS(reg *Registry, body []byte, header http.Header, now time.Time) error {
	p, _ := reg.Lookup("sns")
	return p.Verify(context.Background(), Request{Header: header, Body: body}, nil, now)
}

func TestSNSVerifyValid(t *testing.T) {
	f := newSNSFixture(t)
	for _, v := range []string{"1", "2"} {
		for _, withSubject := range []bool{true, false} {
			body := signSNS(t, f.notification(v, withSubject))
			if err := verifySNS(f.reg, body, hdr("x-amz-sns-message-type", "Notification"), testNow); err != nil {
				t.Errorf("notification v%s subject=%v: %v", v, withSubject, err)
			}
		}
		body := signSNS(t, f.confirmation(v, "https://"+f.host+"/?Action=ConfirmSubscription&Token=x"))
		if err := verifySNS(f.reg, body, nil, testNow); err != nil {
			t.Errorf("confirmation v%s: %v", v, err)
		}
	}
	if n := f.fetches.Load(); n != 1 {
		t.Errorf("certificate fetched %d times, want 1 (cached per URL)", n)
	}
}

func TestSNSVerifyRejects(t *testing.T) {
	f := newSNSFixture(t)
	good := func() map[string]string { return f.notification("2", true) }
	tamper := func(body []byte, from, to string) []byte {
		return []byte(strings.Replace(string(body), from, to, 1))
	}
	signed := signSNS(t, good())
	cases := []struct {
		name   string
		body   []byte
		header http.Header
		reg    *Registry
		now    time.Time
	}{
		{name: "tampered message", body: tamper(signed, "Threshold Crossed", "Threshold crossed")},
		{name: "tampered subject", body: tamper(signed, `ALARM: `, `OK: `)},
		{name: "v1 signature claimed as v2", body: func() []byte {
			e := good()
			e["SignatureVersion"] = "1"
			b := signSNS(t, e)
			return tamper(b, `"SignatureVersion":"1"`, `"SignatureVersion":"2"`)
		}()},
		{name: "unknown signature version", body: func() []byte { e := good(); e["SignatureVersion"] = "3"; return signSNS(t, e) }()},
		{name: "http cert url", body: func() []byte {
			e := good()
			e["SigningCertURL"] = strings.Replace(f.certURL, "https://", "http://", 1)
			return signSNS(t, e)
		}()},
		{name: "disallowed cert host", body: func() []byte {
			e := good()
			e["SigningCertURL"] = "https://evil.example.com/SimpleNotificationService-test.pem"
			return signSNS(t, e)
		}()},
		{name: "default host check refuses test server", body: signed, reg: New(Options{HTTPClient: f.srv.Client()})},
		{name: "certificate expired", body: signed, now: testNow.Add(48 * time.Hour)},
		{name: "raw delivery header", body: signed, header: hdr("x-amz-sns-rawdelivery", "true")},
		{name: "raw delivery body", body: []byte(`{"AlarmName":"api-5xx","NewStateValue":"ALARM"}`)},
		{name: "not json", body: []byte(`Type=Notification`)},
		{name: "missing signature", body: func() []byte {
			b, _ := json.Marshal(good())
			return b
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, now := tc.reg, tc.now
			if reg == nil {
				reg = f.reg
			}
			if now.IsZero() {
				now = testNow
			}
			if err := verifySNS(reg, tc.body, tc.header, now); !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("want ErrUnauthenticated, got %v", err)
			}
		})
	}
}

func TestSNSNormalizeSigned(t *testing.T) {
	f := newSNSFixture(t)
	p, _ := f.reg.Lookup("sns")

	b, err := p.Normalize(Request{Body: signSNS(t, f.notification("2", true))})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Alerts) != 1 || b.Alerts[0].SourceAlertID != "arn:aws:cloudwatch:us-east-1:123456789012:alarm:api-5xx" ||
		b.Alerts[0].Service != "AWS/ApplicationELB/app/api/abc" || b.DeliveryID != "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324" {
		t.Fatalf("unexpected batch %+v", b)
	}

	confirmURL := "https://" + f.host + "/?Action=ConfirmSubscription&TopicArn=" + testTopic + "&Token=x"
	b, err = p.Normalize(Request{Body: signSNS(t, f.confirmation("1", confirmURL))})
	if err != nil {
		t.Fatal(err)
	}
	if b.Confirm == nil || b.Confirm.URL != confirmURL || b.Confirm.TopicArn != testTopic || len(b.Alerts) != 0 {
		t.Fatalf("unexpected confirmation %+v", b)
	}

	for _, bad := range []string{
		"https://sns.us-east-1.amazonaws.com.evil.example/?Action=ConfirmSubscription",
		"http://" + f.host + "/?Action=ConfirmSubscription",
		"https://user:pw@" + f.host + "/",
		"https://169.254.169.254/latest/meta-data/",
	} {
		_, err := p.Normalize(Request{Body: signSNS(t, f.confirmation("2", bad))})
		if !errors.Is(err, ErrInvalidPayload) {
			t.Errorf("confirm URL %q: want ErrInvalidPayload, got %v", bad, err)
		}
	}

	restricted := New(Options{
		HTTPClient:         f.srv.Client(),
		SNSCertHostAllowed: func(h string) bool { return h == f.host },
		SNSTopicAllowed:    func(arn string) bool { return arn == "arn:aws:sns:us-east-1:123456789012:other" },
	})
	rp, _ := restricted.Lookup("sns")
	for _, body := range [][]byte{signSNS(t, f.confirmation("2", confirmURL)), signSNS(t, f.notification("2", true))} {
		if _, err := rp.Normalize(Request{Body: body}); !errors.Is(err, ErrInvalidPayload) {
			t.Errorf("disallowed topic: want ErrInvalidPayload, got %v", err)
		}
	}
}

func TestDefaultSNSHostAllowed(t *testing.T) {
	for host, want := range map[string]bool{
		"sns.us-east-1.amazonaws.com":              true,
		"sns.cn-north-1.amazonaws.com.cn":          true,
		"sns.us-east-1.amazonaws.com:8443":         false,
		"sns.us-east-1.amazonaws.com.evil.example": false,
		"evilsns.us-east-1.amazonaws.com":          false,
		"s3.us-east-1.amazonaws.com":               false,
		"127.0.0.1":                                false,
	} {
		if got := DefaultSNSHostAllowed(host); got != want {
			t.Errorf("DefaultSNSHostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}
