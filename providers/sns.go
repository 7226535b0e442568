package providers

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// SNS reads AWS SNS HTTP/S deliveries, usually carrying CloudWatch alarms, and authenticates them with the
// SNS RSA message signature instead of the webhook secret.
//
// A CloudWatch alarm maps as docs/providers.md describes: ALARM fires, OK resolves, INSUFFICIENT_DATA fires with
// severity info. The service is "<Trigger.Namespace>/<first dimension value>". Any other notification
// becomes an alert titled by Subject (else the first line of Message) with MessageId as its source id.
// SubscriptionConfirmation yields a Confirmation for the caller to GET; UnsubscribeConfirmation is
// ignored so the service never re-subscribes on its own. The topic allowlist applies to every type,
// because a genuinely signed message from any topic can be replayed to this endpoint by anyone.
type SNS struct {
	n           normalizer
	client      *http.Client
	hostAllowed func(string) bool
	topicOK     func(string) bool
	certs       *certCache
}

func newSNS(o Options, n normalizer) *SNS {
	s := &SNS{n: n, client: o.HTTPClient, hostAllowed: o.SNSCertHostAllowed, topicOK: o.SNSTopicAllowed, certs: newCertCache(64)}
	if s.client == nil {
		s.client = &http.Client{Timeout: 10 * time.Second}
	}
	if s.hostAllowed == nil {
		s.hostAllowed = DefaultSNSHostAllowed
	}
	return s
}

var snsHost = regexp.MustCompile(`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// DefaultSNSHostAllowed accepts only SNS's regional endpoints on the default port; it is the SSRF guard
// for both the certificate fetch and the subscription confirmation GET.
func DefaultSNSHostAllowed(host string) bool {
	return snsHost.MatchString(host)
}

// Name implements Provider.
func (*SNS) Name() string { return "sns" }

// Mode implements Provider.
func (*SNS) Mode() Mode { return ModeNative }

type snsEnvelope struct {
	Type             string  `json:"Type"`
	MessageID        string  `json:"MessageId"`
	TopicArn         string  `json:"TopicArn"`
	Subject          *string `json:"Subject"`
	Message          string  `json:"Message"`
	Timestamp        string  `json:"Timestamp"`
	SignatureVersion string  `json:"SignatureVersion"`
	Signature        string  `json:"Signature"`
	SigningCertURL   string  `json:"SigningCertURL"`
	SubscribeURL     string  `json:"SubscribeURL"`
	Token            string  `json:"Token"`
	UnsubscribeURL   string  `json:"UnsubscribeURL"`
}

// stringToSign builds SNS's canonical "Name\nValue\n" list in the documented key order.
func (e *snsEnvelope) stringToSign() (string, bool) {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	switch e.Type {
	case "Notification":
		add("Message", e.Message)
		add("MessageId", e.MessageID)
		if e.Subject != nil {
			add("Subject", *e.Subject)
		}
		add("Timestamp", e.Timestamp)
		add("TopicArn", e.TopicArn)
		add("Type", e.Type)
	case "SubscriptionConfirmation", "UnsubscribeConfirmation":
		add("Message", e.Message)
		add("MessageId", e.MessageID)
		add("SubscribeURL", e.SubscribeURL)
		add("Timestamp", e.Timestamp)
		add("Token", e.Token)
		add("TopicArn", e.TopicArn)
		add("Type", e.Type)
	default:
		return "", false
	}
	return b.String(), true
}

// Verify checks the SNS message signature with the certificate at SigningCertURL. The webhook secret is
// not used: SNS cannot sign with it. Raw message delivery has no envelope to verify and is refused.
func (s *SNS) Verify(ctx context.Context, r Request, _ []byte, now time.Time) error {
	if strings.EqualFold(strings.TrimSpace(r.Header.Get("x-amz-sns-rawdelivery")), "true") {
		return unauthenticated("sns raw message delivery cannot be verified")
	}
	var e snsEnvelope
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Type == "" || e.Signature == "" {
		return unauthenticated("not a signed sns envelope")
	}
	var h crypto.Hash
	switch e.SignatureVersion {
	case "1":
		h = crypto.SHA1
	case "2":
		h = crypto.SHA256
	default:
		return unauthenticated("unsupported sns signature version")
	}
	msg, ok := e.stringToSign()
	if !ok {
		return unauthenticated("unknown sns message type")
	}
	if err := checkSNSTimestamp(e.Timestamp, now); err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(e.Signature)
	if err != nil {
		return unauthenticated("signature is not base64")
	}
	if _, err := s.checkURL(e.SigningCertURL); err != nil {
		return unauthenticated("signing cert url refused: %v", err)
	}
	cert, err := s.cert(ctx, e.SigningCertURL, now)
	if err != nil {
		return unauthenticated("signing cert: %v", err)
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return unauthenticated("signing cert key is not rsa")
	}
	var digest []byte
	if h == crypto.SHA1 {
		d := sha1.Sum([]byte(msg))
		digest = d[:]
	} else {
		d := sha256.Sum256([]byte(msg))
		digest = d[:]
	}
	if err := rsa.VerifyPKCS1v15(pub, h, digest, sig); err != nil {
		return unauthenticated("sns signature mismatch")
	}
	return nil
}

// SNSMaxMessageAge is how old a signed SNS message may be: SNS stops retrying
// an HTTP/S delivery within an hour (a hard limit of its delivery policies),
// plus the clock skew allowed everywhere else. An older message is a replay.
const SNSMaxMessageAge = time.Hour + MaxClockSkew

// checkSNSTimestamp accepts a signed Timestamp no older than SNSMaxMessageAge
// and no further in the future than MaxClockSkew.
func checkSNSTimestamp(raw string, now time.Time) error {
	ts, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(raw))
	if err != nil {
		return unauthenticated("sns timestamp is not RFC 3339")
	}
	if now.Sub(ts) > SNSMaxMessageAge || ts.Sub(now) > MaxClockSkew {
		return unauthenticated("sns timestamp outside tolerance")
	}
	return nil
}

// checkURL enforces https on an allowed SNS host, refusing credentials in the URL.
func (s *SNS) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("unparsable url")
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return nil, fmt.Errorf("url must be https without credentials")
	}
	if !s.hostAllowed(strings.ToLower(u.Host)) {
		return nil, fmt.Errorf("host %q is not an sns host", u.Host)
	}
	return u, nil
}

// cert returns the parsed certificate for url, fetching it once and then serving it from the cache; a
// certificate outside its validity window is dropped so a renewed one is fetched next time.
func (s *SNS) cert(ctx context.Context, certURL string, now time.Time) (*x509.Certificate, error) {
	c, ok := s.certs.get(certURL)
	if !ok {
		var err error
		if c, err = s.fetchCert(ctx, certURL); err != nil {
			return nil, err
		}
		s.certs.put(certURL, c)
	}
	if now.Before(c.NotBefore) || now.After(c.NotAfter) {
		s.certs.drop(certURL)
		return nil, fmt.Errorf("certificate not valid at %s", now.UTC().Format(time.RFC3339))
	}
	return c, nil
}

const maxCertBytes = 64 << 10

func (s *SNS) fetchCert(ctx context.Context, certURL string) (*x509.Certificate, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, certURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.Request != nil && resp.Request.URL != nil {
		if _, err := s.checkURL(resp.Request.URL.String()); err != nil {
			return nil, fmt.Errorf("redirected off sns: %v", err)
		}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch returned %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCertBytes))
	if err != nil {
		return nil, err
	}
	for rest := body; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("no certificate in response")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// certCache is a small bounded map; SNS uses a handful of certificate URLs, so evicting an arbitrary
// entry when full is enough to stop a flood of distinct URLs from growing memory.
type certCache struct {
	mu  sync.Mutex
	max int
	m   map[string]*x509.Certificate
}

func newCertCache(max int) *certCache {
	return &certCache{max: max, m: make(map[string]*x509.Certificate)}
}

func (c *certCache) get(k string) (*x509.Certificate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *certCache) put(k string, v *x509.Certificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = v
}

func (c *certCache) drop(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// cloudWatchAlarm is the decoded Message of a CloudWatch alarm notification.
type cloudWatchAlarm struct {
	AlarmName        string     `json:"AlarmName"`
	AlarmDescription *string    `json:"AlarmDescription"`
	AWSAccountID     flexString `json:"AWSAccountId"`
	NewStateValue    string     `json:"NewStateValue"`
	NewStateReason   string     `json:"NewStateReason"`
	StateChangeTime  string     `json:"StateChangeTime"`
	Region           string     `json:"Region"`
	AlarmArn         string     `json:"AlarmArn"`
	OldStateValue    string     `json:"OldStateValue"`
	Trigger          *struct {
		MetricName string         `json:"MetricName"`
		Namespace  string         `json:"Namespace"`
		Dimensions []cwDimension  `json:"Dimensions"`
		Threshold  any            `json:"Threshold"`
		Metrics    []cwMetricStat `json:"Metrics"`
	} `json:"Trigger"`
}

type cwDimension struct {
	Name  flexString `json:"name"`
	Value flexString `json:"value"`
}

type cwMetricStat struct {
	MetricStat *struct {
		Metric *struct {
			MetricName string        `json:"MetricName"`
			Namespace  string        `json:"Namespace"`
			Dimensions []cwDimension `json:"Dimensions"`
		} `json:"Metric"`
	} `json:"MetricStat"`
}

// Normalize implements Provider.
func (s *SNS) Normalize(r Request) (Batch, error) {
	var e snsEnvelope
	if err := decodeObject("sns", r.Body, &e); err != nil {
		return Batch{}, err
	}
	if e.Type == "" {
		return Batch{}, invalid("sns: Type is required (raw message delivery is not supported)")
	}
	if strings.TrimSpace(e.MessageID) == "" {
		return Batch{}, invalid("sns: MessageId is required")
	}
	if s.topicOK != nil && !s.topicOK(e.TopicArn) {
		return Batch{}, invalid("sns: topic is not allowed for this tenant")
	}
	b := Batch{DeliveryID: strings.TrimSpace(e.MessageID), Topic: strings.TrimSpace(e.TopicArn)}
	switch e.Type {
	case "SubscriptionConfirmation":
		u, err := s.checkURL(e.SubscribeURL)
		if err != nil {
			return Batch{}, invalid("sns: SubscribeURL must be https on an sns.<region>.amazonaws.com host")
		}
		b.Confirm = &Confirmation{TopicArn: e.TopicArn, URL: u.String()}
		return b, nil
	case "UnsubscribeConfirmation":
		b.Ignored = true
		b.Reason = "sns unsubscribe confirmation for " + e.TopicArn
		return b, nil
	case "Notification":
	default:
		return Batch{}, invalid("sns: unknown Type %q", e.Type)
	}
	a, err := s.notification(&e)
	if err != nil {
		return Batch{}, err
	}
	b.Alerts = []Alert{a}
	return b, nil
}

func (s *SNS) notification(e *snsEnvelope) (Alert, error) {
	a := Alert{Tags: map[string]string{}, Metadata: map[string]any{}}
	putIf(a.Metadata, "TopicArn", e.TopicArn)
	putIf(a.Metadata, "MessageId", e.MessageID)
	putIf(a.Metadata, "Timestamp", e.Timestamp)
	var subject string
	if e.Subject != nil {
		subject = *e.Subject
		putIf(a.Metadata, "Subject", subject)
	}
	var alarm cloudWatchAlarm
	if json.Unmarshal([]byte(e.Message), &alarm) != nil || alarm.AlarmName == "" || alarm.NewStateValue == "" {
		title, _, _ := strings.Cut(strings.TrimSpace(e.Message), "\n")
		a.Title = firstNonEmpty(subject, title)
		a.Description = e.Message
		a.SourceAlertID = e.MessageID
		if err := s.n.finish(&a, "sns", true); err != nil {
			return Alert{}, err
		}
		return a, nil
	}
	a.Title = alarm.AlarmName
	var desc string
	if alarm.AlarmDescription != nil {
		desc = *alarm.AlarmDescription
	}
	a.Description = joinNonEmpty("\n\n", alarm.NewStateReason, desc)
	a.SourceAlertID = firstNonEmpty(alarm.AlarmArn, alarm.AlarmName)
	switch alarm.NewStateValue {
	case "OK":
		a.Resolved = true
	case "INSUFFICIENT_DATA":
		a.Severity = SeverityInfo
	}
	namespace, metric, dims := alarmMetric(&alarm)
	for _, d := range dims {
		if k := d.Name.String(); k != "" {
			a.Tags[k] = d.Value.String()
		}
	}
	if len(dims) > 0 {
		a.Service = joinNonEmpty("/", namespace, dims[0].Value.String())
	} else {
		a.Service = namespace
	}
	if alarm.Region != "" {
		a.Tags["Region"] = alarm.Region
	}
	if id := alarm.AWSAccountID.String(); id != "" {
		a.Tags["AWSAccountId"] = id
	}
	putIf(a.Metadata, "AlarmArn", alarm.AlarmArn)
	putIf(a.Metadata, "NewStateValue", alarm.NewStateValue)
	putIf(a.Metadata, "OldStateValue", alarm.OldStateValue)
	putIf(a.Metadata, "StateChangeTime", alarm.StateChangeTime)
	putIf(a.Metadata, "MetricName", metric)
	putIf(a.Metadata, "Namespace", namespace)
	if alarm.Trigger != nil {
		putIf(a.Metadata, "Threshold", alarm.Trigger.Threshold)
	}
	if err := s.n.finish(&a, "sns", true); err != nil {
		return Alert{}, err
	}
	return a, nil
}

// alarmMetric finds the metric of a plain alarm, or of the first MetricStat of a metric-math alarm.
func alarmMetric(a *cloudWatchAlarm) (namespace, metric string, dims []cwDimension) {
	t := a.Trigger
	if t == nil {
		return "", "", nil
	}
	if t.Namespace != "" || t.MetricName != "" {
		return t.Namespace, t.MetricName, t.Dimensions
	}
	for _, m := range t.Metrics {
		if m.MetricStat != nil && m.MetricStat.Metric != nil {
			mm := m.MetricStat.Metric
			return mm.Namespace, mm.MetricName, mm.Dimensions
		}
	}
	return "", "", nil
}
