package clusterlab

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// TestLokiDerivesServiceName: a stream pushed without service_name is
// stored, as Loki 3 stores it, with the service_name its distributor takes
// from the first discover_service_name label the stream carries, else
// unknown_service; a stream that names its service keeps it.
func TestLokiDerivesServiceName(t *testing.T) {
	at := time.Date(2026, 3, 18, 7, 34, 0, 0, time.UTC)
	line := []LogLine{{At: at, Text: "level=error msg=\"login failed\""}}
	ls := NewLoki("", []Stream{
		{Labels: map[string]string{"namespace": "auth", "app": "sessions", "container": "web", "job": "auth/sessions"}, Lines: line},
		{Labels: map[string]string{"namespace": "auth", "container": "sidecar"}, Lines: line},
		{Labels: map[string]string{"namespace": "auth"}, Lines: line},
		{Labels: map[string]string{"service_name": "gateway", "app": "edge"}, Lines: line},
	})
	srv := httptest.NewServer(ls)
	defer srv.Close()
	count := func(selector string) int {
		q := url.Values{"query": {selector}, "start": {strconv.FormatInt(at.Add(-time.Hour).UnixNano(), 10)}, "end": {strconv.FormatInt(at.Add(time.Hour).UnixNano(), 10)}}
		resp, err := http.Get(srv.URL + "/loki/api/v1/query_range?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return len(body.Data.Result)
	}
	for sel, want := range map[string]int{
		`{service_name="sessions"}`:        1, // app before container and job
		`{service_name="sidecar"}`:         1,
		`{service_name="unknown_service"}`: 1,
		`{service_name="gateway"}`:         1,
		`{service_name="edge"}`:            0,
		`{service_name="auth/sessions"}`:   0,
	} {
		if got := count(sel); got != want {
			t.Errorf("%s: %d streams, want %d", sel, got, want)
		}
	}
}
