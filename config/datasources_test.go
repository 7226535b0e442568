package config

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestDataSourceSettings(t *testing.T) {
	t.Setenv("CAUSEWAY_DATA_DIR", t.TempDir())
	dev, err := Load("", ModeDev)
	if err != nil {
		t.Fatal(err)
	}
	nets := dev.DataSourceNetworks()
	for _, ip := range []string{"127.0.0.1", "10.2.3.4", "192.168.1.9", "::1"} {
		in := false
		for _, n := range nets {
			in = in || n.Contains(netip.MustParseAddr(ip))
		}
		if !in {
			t.Errorf("make run should let data sources live on %s: %v", ip, nets)
		}
	}
	for _, n := range nets {
		if n.Contains(netip.MustParseAddr("169.254.169.254")) {
			t.Errorf("make run must not open link-local (cloud metadata): %v", n)
		}
	}
	if dev.DataSourceQueryTimeout != 10*time.Second || dev.DataSourceResultCap != 4096 || dev.DataSourcePassBudget != 30*time.Second ||
		dev.DataSourceMaxQueries != 60 || dev.DataSourceLookback != 30*time.Minute {
		t.Errorf("defaults: %+v", dev)
	}
	if !dev.DataSourceGrantAll {
		t.Error("make run's tenants should be granted the whole ceiling")
	}

	t.Setenv("CAUSEWAY_AUTH_JWT_SECRET", strings.Repeat("k", 32))
	t.Setenv("CAUSEWAY_SECRETS_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	prod, err := Load("", ModeProduction)
	if err != nil {
		t.Fatal(err)
	}
	if len(prod.DataSourceNetworks()) != 0 {
		t.Errorf("production must open no private network by default: %v", prod.DataSourceNetworks())
	}
	if prod.DataSourceGrantAll {
		t.Error("production must grant tenants nothing by default")
	}
	if prod.Masked()["DATASOURCE_ALLOWED_NETWORKS"] != "" || prod.Masked()["DATASOURCE_PASS_BUDGET"] != "30s" {
		t.Errorf("masked view: %v", prod.Masked())
	}

	for env, val := range map[string]string{
		"CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS": "10.0.0.0/8,not-a-cidr",
		"CAUSEWAY_DATASOURCE_QUERY_TIMEOUT":    "500ms",
		"CAUSEWAY_DATASOURCE_RESULT_CAP":       "10",
		"CAUSEWAY_DATASOURCE_PASS_BUDGET":      "2s",
		"CAUSEWAY_DATASOURCE_MAX_QUERIES":      "0",
		"CAUSEWAY_DATASOURCE_LOOKBACK":         "48h",
	} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, val)
			_, err := Load("", ModeProduction)
			if err == nil || !strings.Contains(err.Error(), env) {
				t.Fatalf("%s=%s: %v, want an error naming it", env, val, err)
			}
		})
	}
}

func TestParseNetworks(t *testing.T) {
	got, err := ParseNetworks(" 10.1.2.3/8 , 192.168.0.7, ::1/128 ")
	if err != nil || len(got) != 3 || got[0].String() != "10.0.0.0/8" || got[1].String() != "192.168.0.7/32" {
		t.Fatalf("ParseNetworks: %v, %v", got, err)
	}
}
