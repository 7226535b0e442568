package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/internal/promlab"
)

// runDemo is `make demo`: a real Prometheus holding a bundled scenario (the
// checkout service running out of memory), the whole product as in `make
// run`, and a tenant whose data source points at that Prometheus. It then
// posts the kind of alert Alertmanager sends, with nothing in it but a bland
// summary, prints the investigation answered from the live data, and keeps
// everything running for a look around until interrupted.
func runDemo(ctx context.Context, cfgPath string) error {
	if _, _, err := promlab.Binaries(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "causeway-demo-prometheus-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Println("Starting Prometheus with the demo scenario (checkout running out of memory)…")
	target := promlab.Target{Service: "checkout", Namespace: "shop", Endpoint: "https://checkout.shop.example", ConsumerGroup: "checkout-orders"}
	prom, err := promlab.Start(ctx, dir, promlab.MemoryExhaustion(target), promlab.Options{})
	if err != nil {
		return err
	}
	defer prom.Stop()
	fmt.Printf("  Prometheus   %s (pid %d)\n", prom.URL, prom.Pid())

	errc := make(chan error, 1)
	go func() { errc <- runAll(ctx, cfgPath) }()
	base, err := waitForAPI(ctx, cfgPath, errc)
	if err != nil {
		return err
	}
	d := &demoClient{base: base}
	if err := d.investigate(ctx, prom.URL); err != nil {
		return err
	}
	fmt.Println("\nEverything keeps running; press Ctrl-C to stop (Prometheus stops with it).")
	return <-errc
}

// waitForAPI waits until the product answers /health, or fails with it.
func waitForAPI(ctx context.Context, cfgPath string, errc <-chan error) (string, error) {
	cfg, err := config.Load(cfgPath, config.ModeDev)
	if err != nil {
		return "", err
	}
	base := "http://" + cfg.HTTPAddr
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-errc:
			if err == nil {
				err = errors.New("stopped before it was ready")
			}
			return "", err
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, nil
			}
		}
	}
	return "", errors.New("the API did not come up within 3 minutes")
}

// demoClient drives the API the way a new user would.
type demoClient struct {
	base  string
	token string
}

func (d *demoClient) call(method, path, auth string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if strings.HasPrefix(auth, "cw_") {
		req.Header.Set("X-API-Key", auth)
	} else if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		_ = json.Unmarshal(raw, out)
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, nil
}

// investigate signs a demo tenant up, connects the Prometheus, posts the
// alert and prints the answer.
func (d *demoClient) investigate(ctx context.Context, promURL string) error {
	email := "demo-" + strings.ToLower(auth.RandomToken(4)) + "@example.com"
	password := "demo-" + auth.RandomToken(9)
	var signup struct {
		TenantID    string `json:"tenantId"`
		AccessToken string `json:"accessToken"`
	}
	if _, err := d.call("POST", "/auth/signup", "", map[string]string{"tenantName": "Demo", "email": email, "password": password, "name": "Demo"}, &signup); err != nil {
		return err
	}
	d.token = signup.AccessToken
	var key struct {
		Key string `json:"key"`
	}
	if _, err := d.call("POST", "/v1/api-keys", d.token, map[string]string{"name": "alertmanager"}, &key); err != nil {
		return err
	}
	var ds struct {
		DataSourceID string `json:"dataSourceId"`
	}
	if _, err := d.call("POST", "/v1/datasources", d.token, map[string]any{"name": "demo prometheus", "type": "prometheus", "url": promURL}, &ds); err != nil {
		return err
	}
	var tested struct {
		OK      bool   `json:"ok"`
		Message string `json:"message"`
	}
	if _, err := d.call("POST", "/v1/datasources/"+ds.DataSourceID+"/test", d.token, nil, &tested); err != nil || !tested.OK {
		return fmt.Errorf("the demo data source does not answer: %v %s", err, tested.Message)
	}
	fmt.Printf("\nDemo tenant %s: sign in as %s / %s\nData source %s: %s\n", signup.TenantID, email, password, ds.DataSourceID, tested.Message)

	alert := map[string]any{"version": "4", "status": "firing", "receiver": "causeway",
		"alerts": []map[string]any{{"status": "firing",
			"labels":      map[string]string{"alertname": "CheckoutDegraded", "service": "checkout", "namespace": "shop", "severity": "warning"},
			"annotations": map[string]string{"summary": "checkout is degraded"},
			"startsAt":    time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339), "fingerprint": auth.RandomToken(8)}}}
	var posted struct {
		IncidentID string `json:"incidentId"`
	}
	if _, err := d.call("POST", "/v1/webhooks/"+signup.TenantID+"/alertmanager", key.Key, alert, &posted); err != nil {
		return err
	}
	fmt.Printf("Posted an Alertmanager alert \"checkout is degraded\" → incident %s\n", posted.IncidentID)
	var res struct {
		Status     string  `json:"status"`
		Category   string  `json:"category"`
		Confidence float64 `json:"confidence"`
		RootCause  string  `json:"rootCause"`
		Evidence   []struct {
			AgentRole  string   `json:"agentRole"`
			AgentRoles []string `json:"agentRoles"`
			Content    string   `json:"content"`
			Source     *struct {
				Type  string `json:"type"`
				Query string `json:"query"`
			} `json:"source"`
		} `json:"evidence"`
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		res.Status = ""
		_, _ = d.call("GET", "/v1/investigation/"+posted.IncidentID, d.token, nil, &res)
		if res.Status != "" && res.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the investigation did not finish within 90 seconds")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	fmt.Printf("\nInvestigation %s: %s (confidence %.2f)\n%s\n\nEvidence from the live data:\n", res.Status, res.Category, res.Confidence, res.RootCause)
	for _, ev := range res.Evidence {
		if ev.Source == nil || ev.Source.Type == "" {
			continue
		}
		q := ev.Source.Query
		if len(q) > 160 {
			q = q[:160] + "…"
		}
		agents := ev.AgentRole
		if len(ev.AgentRoles) > 0 {
			agents = strings.Join(ev.AgentRoles, ", ")
		}
		fmt.Printf("  [%s] %s\n    query: %s\n", agents, ev.Content, q)
	}
	fmt.Printf("\nFull result: curl -s %s/v1/investigation/%s -H 'Authorization: Bearer %s'\n", d.base, posted.IncidentID, d.token)
	return nil
}
