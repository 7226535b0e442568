package providers

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkInvariants asserts what every caller of Normalize relies on, whatever the input was.
func checkInvariants(tb testing.TB, provider string, b Batch) {
	tb.Helper()
	if b.Ignored && (len(b.Alerts) > 0 || b.Confirm != nil) {
		tb.Fatalf("ignored batch carries work: %+v", b)
	}
	if b.Ignored && b.Reason == "" {
		tb.Fatalf("ignored batch without reason")
	}
	if !b.Ignored && b.Confirm == nil && len(b.Alerts) == 0 {
		tb.Fatalf("batch yields nothing and is not ignored")
	}
	if b.Confirm != nil && !strings.HasPrefix(b.Confirm.URL, "https://") {
		tb.Fatalf("confirmation URL not https: %q", b.Confirm.URL)
	}
	for i, a := range b.Alerts {
		if a.Title == "" || a.Title != strings.TrimSpace(a.Title) {
			tb.Fatalf("alert %d: bad title %q", i, a.Title)
		}
		if n := utf8.RuneCountInString(a.Title); n > MaxTitleRunes {
			tb.Fatalf("alert %d: title has %d runes", i, n)
		}
		if n := utf8.RuneCountInString(a.Description); n > MaxDescriptionRunes {
			tb.Fatalf("alert %d: description has %d runes", i, n)
		}
		if utf8.RuneCountInString(a.Service) > MaxServiceRunes || utf8.RuneCountInString(a.Environment) > MaxEnvironmentRunes ||
			utf8.RuneCountInString(a.SourceAlertID) > MaxSourceAlertIDRunes {
			tb.Fatalf("alert %d: service, environment or source id over its column", i)
		}
		if !validSeverity(a.Severity) {
			tb.Fatalf("alert %d: severity %q", i, a.Severity)
		}
		if a.Tags == nil || a.Metadata == nil {
			tb.Fatalf("alert %d: nil tags or metadata", i)
		}
		if provider != "custom" && a.SourceAlertID == "" {
			tb.Fatalf("alert %d: empty source id", i)
		}
		for _, s := range []string{a.Description, a.SourceAlertID, a.Service, a.Environment} {
			if s != strings.TrimSpace(s) {
				tb.Fatalf("alert %d: untrimmed field %q", i, s)
			}
		}
	}
}

func fuzzProvider(f *testing.F, provider string) {
	files, err := filepath.Glob(filepath.Join("testdata", provider, "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures for %s", provider)
	}
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	p, _ := New(Options{}).Lookup(provider)
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := p.Normalize(Request{Body: body})
		if err != nil {
			if !errors.Is(err, ErrInvalidPayload) || err.Error() == "" {
				t.Fatalf("error not ErrInvalidPayload: %v", err)
			}
			return
		}
		checkInvariants(t, provider, b)
	})
}

func FuzzCustom(f *testing.F)       { fuzzProvider(f, "custom") }
func FuzzDatadog(f *testing.F)      { fuzzProvider(f, "datadog") }
func FuzzAlertmanager(f *testing.F) { fuzzProvider(f, "alertmanager") }
func FuzzGrafana(f *testing.F)      { fuzzProvider(f, "grafana") }
func FuzzPagerduty(f *testing.F)    { fuzzProvider(f, "pagerduty") }
func FuzzSNS(f *testing.F)          { fuzzProvider(f, "sns") }
func FuzzSentry(f *testing.F)       { fuzzProvider(f, "sentry") }
func FuzzNewrelic(f *testing.F)     { fuzzProvider(f, "newrelic") }
func FuzzOpsgenie(f *testing.F)     { fuzzProvider(f, "opsgenie") }
func FuzzAzure(f *testing.F)        { fuzzProvider(f, "azure") }
func FuzzGCP(f *testing.F)          { fuzzProvider(f, "gcp") }
