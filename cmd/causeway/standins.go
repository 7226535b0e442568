package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/clusterlab"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/replay"
	"github.com/causeway/causeway/service"
)

// connectSnapshot serves a snapshot's systems through their own APIs, every
// time moved by shift: the cluster through a Kubernetes API replay over TLS
// behind a bearer token, the log streams through a Loki, the series through a
// real Prometheus. Each is connected as a data source of the tenant. The
// returned func stops every server and process it started; on an error they
// are stopped already.
func connectSnapshot(ctx context.Context, sources *service.DataSources, p auth.Principal, s replay.Scenario, shift time.Duration) (func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	connect := func(name, typ, url string, auth, settings any) error {
		a, err := json.Marshal(auth)
		if err != nil {
			return err
		}
		st, err := json.Marshal(settings)
		if err != nil {
			return err
		}
		if _, err := sources.Create(ctx, p, service.CreateDataSourceInput{Name: name, Type: typ, URL: url, Auth: a, Settings: st}); err != nil {
			return fmt.Errorf("connecting the snapshot's %s: %w", name, err)
		}
		return nil
	}
	fail := func(err error) (func(), error) {
		stop()
		return nil, err
	}
	if s.Kubernetes != nil {
		token := auth.RandomToken(16)
		api, err := clusterlab.NewKubeAPI(token, s.Kubernetes.Objects, shift)
		if err != nil {
			return fail(fmt.Errorf("kubernetes: %w", err))
		}
		ks := clusterlab.ServeKube(api)
		stops = append(stops, ks.Close)
		settings := maps.Clone(s.Kubernetes.Settings)
		if settings == nil {
			settings = map[string]any{}
		}
		settings["caBundle"] = ks.CABundle
		if err := connect("cluster", datasources.TypeKubernetes, ks.URL, datasources.Auth{BearerToken: token}, settings); err != nil {
			return fail(err)
		}
	}
	if len(s.Logs) > 0 {
		srv := httptest.NewServer(clusterlab.NewLoki("", s.LogStreams(shift)))
		stops = append(stops, srv.Close)
		if err := connect("logs", datasources.TypeLoki, srv.URL, nil, nil); err != nil {
			return fail(err)
		}
	}
	if len(s.Series) > 0 {
		dir, err := os.MkdirTemp("", "causeway-eval-prometheus-")
		if err != nil {
			return fail(err)
		}
		stops = append(stops, func() { _ = os.RemoveAll(dir) })
		series := make([]promlab.Series, 0, len(s.Series))
		for _, st := range s.Series {
			ps := promlab.Series{Metric: st.Metric, Labels: st.Labels, Samples: []promlab.Sample{}}
			moved := 0.0
			if timeValued(st.Metric) {
				// A series whose value is a moment moves with the snapshot
				// too, or a certificate valid for 60 days at the snapshot
				// would have expired by the time it is replayed.
				moved = shift.Seconds()
			}
			for _, sm := range st.Samples {
				ps.Samples = append(ps.Samples, promlab.Sample{At: sm.At.Add(shift), Value: sm.Value + moved})
			}
			series = append(series, ps)
		}
		prom, err := promlab.Start(ctx, dir, series, promlab.Options{})
		if err != nil {
			return fail(fmt.Errorf("serving the snapshot's series: %w", err))
		}
		stops = append(stops, func() { _ = prom.Stop() })
		if err := connect("metrics", datasources.TypePrometheus, prom.URL, nil, nil); err != nil {
			return fail(err)
		}
	}
	return stop, nil
}

// timeValuedSeries are the exporters' series whose value is a Unix time
// rather than a quantity: blackbox_exporter's certificate expiry, node and
// process start times, kube-state-metrics' creation and start times,
// x509-certificate-exporter's validity bounds.
var timeValuedSeries = map[string]bool{
	"probe_ssl_earliest_cert_expiry": true, "node_boot_time_seconds": true, "process_start_time_seconds": true,
	"kube_pod_created": true, "kube_pod_start_time": true, "kube_deployment_created": true,
	"x509_cert_not_after": true, "x509_cert_not_before": true,
}

// timeValued tells a series whose value is a moment: one of the above, or a
// name ending in _timestamp_seconds, the Prometheus naming convention for
// a time.
func timeValued(metric string) bool {
	return timeValuedSeries[metric] || strings.HasSuffix(metric, "_timestamp_seconds")
}
