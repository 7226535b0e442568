package providers

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func readFixture(tb testing.TB, provider, name string) []byte {
	tb.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", provider, name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// TestNormalizeFixtures pins every mapped field of every fixture, so a mapping change shows up as a diff
// against docs/providers.md rather than slipping through.
func TestNormalizeFixtures(t *testing.T) {
	reg := New(Options{})
	cases := []struct {
		provider, fixture string
		header            http.Header
		want              Batch
		wantErr           string
	}{
		{provider: "alertmanager", fixture: "empty_alerts",
			wantErr: "alertmanager: alerts must contain at least one alert"},
		{provider: "alertmanager", fixture: "firing",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "5xx > 5%",
						Description:   "api 5xx 7.2% for 10m",
						SourceAlertID: "1a30ba71cca2921f:2025-05-01T10:00:00Z",
						Severity:      "critical",
						Service:       "api",
						Environment:   "prod",
						Tags:          map[string]string{"alertname": "HighErrorRate", "instance": "api-1:9100"},
						Metadata:      map[string]any{"annotations": map[string]any{"description": "api 5xx 7.2% for 10m", "summary": "5xx > 5%"}, "externalURL": "http://am:9093", "fingerprint": "1a30ba71cca2921f", "generatorURL": "http://prom/graph?g0.expr=rate", "groupKey": "{}:{alertname=\"HighErrorRate\"}", "receiver": "ops", "startsAt": "2025-05-01T10:00:00Z"},
					},
				},
			}},
		{provider: "alertmanager", fixture: "group_mixed",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "NodeDown",
						Description:   "",
						SourceAlertID: "aa01:2025-05-01T11:00:00Z",
						Severity:      "medium",
						Service:       "node",
						Environment:   "staging",
						Tags:          map[string]string{"alertname": "NodeDown"},
						Metadata:      map[string]any{"externalURL": "http://am:9093", "fingerprint": "aa01", "groupKey": "{}:{job=\"node\"}", "receiver": "infra", "startsAt": "2025-05-01T11:00:00Z", "truncatedAlerts": float64(2)},
					},
					{
						Title:         "node-2 down",
						Description:   "",
						SourceAlertID: "bb02:2025-05-01T09:00:00Z",
						Severity:      "high",
						Service:       "node",
						Environment:   "",
						Tags:          map[string]string{"alertname": "NodeDown"},
						Metadata:      map[string]any{"annotations": map[string]any{"summary": "node-2 down"}, "endsAt": "2025-05-01T09:30:00Z", "externalURL": "http://am:9093", "fingerprint": "bb02", "groupKey": "{}:{job=\"node\"}", "receiver": "infra", "startsAt": "2025-05-01T09:00:00Z", "truncatedAlerts": float64(2)},
						Resolved:      true,
					},
				},
			}},
		{provider: "alertmanager", fixture: "no_title",
			wantErr: "alertmanager: alerts[0]: title is required"},
		{provider: "azure", fixture: "fired",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "api-cpu-high",
						Description:   "CPU > 90%",
						SourceAlertID: "/subscriptions/1111/providers/Microsoft.AlertsManagement/alerts/b95",
						Severity:      "high",
						Service:       "api",
						Environment:   "prod",
						Tags:          map[string]string{"env": "prod", "service": "api"},
						Metadata:      map[string]any{"alertContext": map[string]any{"conditionType": "SingleResourceMultipleMetricCriteria"}, "alertTargetIDs": []any{"/subscriptions/1111/resourcegroups/rg/providers/microsoft.compute/virtualmachines/api-1"}, "firedDateTime": "2025-05-01T10:00:00Z", "monitorCondition": "Fired", "monitoringService": "Platform", "severity": "Sev1", "signalType": "Metric"},
					},
				},
			}},
		{provider: "azure", fixture: "legacy_schema",
			wantErr: "azure: schemaId must be azureMonitorCommonAlertSchema; enable the common alert schema on the action group"},
		{provider: "azure", fixture: "resolved",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "api-cpu-high",
						Description:   "CPU > 90%",
						SourceAlertID: "/subscriptions/1111/providers/Microsoft.AlertsManagement/alerts/b95",
						Severity:      "info",
						Service:       "api-1",
						Environment:   "",
						Tags:          map[string]string{},
						Metadata:      map[string]any{"firedDateTime": "2025-05-01T10:00:00Z", "monitorCondition": "Resolved", "resolvedDateTime": "2025-05-01T10:30:00Z", "severity": "Sev4", "signalType": "Metric"},
						Resolved:      true,
					},
				},
			}},
		{provider: "custom", fixture: "bad_severity",
			wantErr: "severity must be one of critical, high, medium, low, info"},
		{provider: "custom", fixture: "firing",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "p99 latency > 2s",
						Description:   "checkout p99 2.4s for 10m",
						SourceAlertID: "chk-lat-01",
						Severity:      "high",
						Service:       "checkout",
						Environment:   "prod",
						Tags:          map[string]string{"team": "payments"},
						Metadata:      map[string]any{"runbook": "https://runbooks.example.com/checkout-latency"},
					},
				},
			}},
		{provider: "custom", fixture: "minimal",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "Disk almost full",
						Description:   "db-1 /var at 93%",
						SourceAlertID: "",
						Severity:      "high",
						Service:       "",
						Environment:   "",
						Tags:          map[string]string{},
						Metadata:      map[string]any{},
					},
				},
			}},
		{provider: "custom", fixture: "missing_description",
			wantErr: "description is required"},
		{provider: "custom", fixture: "resolved",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "p99 latency > 2s",
						Description:   "recovered",
						SourceAlertID: "chk-lat-01",
						Severity:      "high",
						Service:       "",
						Environment:   "",
						Tags:          map[string]string{},
						Metadata:      map[string]any{},
						Resolved:      true,
					},
				},
			}},
		{provider: "datadog", fixture: "firing",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "[Triggered] High CPU on api",
						Description:   "CPU above 90% on api-1",
						SourceAlertID: "7f3c1e9a2b",
						Severity:      "high",
						Service:       "api",
						Environment:   "prod",
						Tags:          map[string]string{"env": "prod", "monitor": "", "role": "computing-node", "service": "api"},
						Metadata:      map[string]any{"alert_id": "1234567", "alert_transition": "Triggered", "link": "https://app.datadoghq.com/event/event?id=1", "scope": "host:api-1"},
					},
				},
			}},
		{provider: "datadog", fixture: "with_date",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "[Triggered] checkout degraded",
						Description:   "",
						SourceAlertID: "c-998",
						Severity:      "medium",
						Service:       "checkout",
						Environment:   "",
						Tags:          map[string]string{"kube_namespace": "shop", "service": "checkout"},
						Metadata: map[string]any{"alert_id": "998", "alert_transition": "Triggered", "link": "https://app.datadoghq.com/event/event?id=2",
							"scope": "kube_namespace:shop,pod_name:checkout-7d9f", "date": "1777636500000", "last_updated": "1777636560000"},
					},
				},
			}},
		{provider: "datadog", fixture: "missing_id",
			wantErr: "datadog: alert_cycle_key or alert_id is required"},
		{provider: "datadog", fixture: "numeric_id",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "No data from checkout",
						Description:   "",
						SourceAlertID: "4242",
						Severity:      "info",
						Service:       "",
						Environment:   "",
						Tags:          map[string]string{},
						Metadata:      map[string]any{"alert_id": "4242"},
					},
				},
			}},
		{provider: "datadog", fixture: "recovered",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "[Recovered] High CPU on api",
						Description:   "CPU back to 40%",
						SourceAlertID: "7f3c1e9a2b",
						Severity:      "high",
						Service:       "api",
						Environment:   "prod",
						Tags:          map[string]string{"env": "prod", "service": "api"},
						Metadata:      map[string]any{"alert_id": "1234567", "alert_transition": "Recovered", "scope": "host:api-1"},
						Resolved:      true,
					},
				},
			}},
		{provider: "datadog", fixture: "spec_shape",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "Disk usage high",
						Description:   "disk 91% on db-1",
						SourceAlertID: "98765:host:db-1",
						Severity:      "medium",
						Service:       "db",
						Environment:   "staging",
						Tags:          map[string]string{"env": "staging", "service": "db", "url": "http://x:8080"},
						Metadata:      map[string]any{"alert_id": "98765", "scope": "host:db-1"},
					},
				},
			}},
		{provider: "gcp", fixture: "closed",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "checkout-5xx",
						Description:   "Error rate for checkout returned to normal",
						SourceAlertID: "0.nrwotmyokd9n",
						Severity:      "high",
						Service:       "checkout",
						Environment:   "staging",
						Tags:          map[string]string{"environment": "staging", "service": "checkout"},
						Metadata:      map[string]any{"ended_at": "1714559400", "resource": map[string]any{"labels": map[string]any{"instance_id": "123"}, "type": "gce_instance"}, "started_at": "1714557600", "state": "closed"},
						Resolved:      true,
					},
				},
			}},
		{provider: "gcp", fixture: "missing_incident",
			wantErr: "gcp: incident is required"},
		{provider: "gcp", fixture: "open",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "checkout-5xx - 5xx ratio",
						Description:   "Error rate for checkout above 5% (7.1%)\n\nSee runbook",
						SourceAlertID: "0.nrwotmyokd9n",
						Severity:      "high",
						Service:       "checkout",
						Environment:   "prod",
						Tags:          map[string]string{"env": "prod", "response_code_class": "5xx"},
						Metadata:      map[string]any{"condition_name": "5xx ratio", "metric_type": "run.googleapis.com/request_count", "observed_value": "0.071", "resource": map[string]any{"labels": map[string]any{"service_name": "checkout"}, "type": "cloud_run_revision"}, "scoping_project_id": "acme-prod", "started_at": "1714557600", "state": "open", "threshold_value": "0.05", "url": "https://console.cloud.google.com/monitoring/alerting/incidents/0.nrwotmyokd9n"},
					},
				},
			}},
		{provider: "grafana", fixture: "firing",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "p95 > 1s",
						Description:   "p95 latency 1.4s",
						SourceAlertID: "d00d:2025-05-02T08:00:00Z",
						Severity:      "high",
						Service:       "",
						Environment:   "",
						Tags:          map[string]string{"alertname": "HighLatency", "team": "web"},
						Metadata:      map[string]any{"annotations": map[string]any{"description": "p95 latency 1.4s", "summary": "p95 > 1s"}, "dashboardURL": "https://grafana/d/abc", "fingerprint": "d00d", "grafana_folder": "api", "groupKey": "{}:{}", "orgId": "1", "panelURL": "https://grafana/d/abc?viewPanel=2", "receiver": "inc", "silenceURL": "https://grafana/alerting/silence/new", "startsAt": "2025-05-02T08:00:00Z", "values": map[string]any{"A": float64(1.4)}},
					},
				},
			}},
		{provider: "grafana", fixture: "missing_fingerprint",
			wantErr: "grafana: alerts[0].fingerprint is required"},
		{provider: "grafana", fixture: "resolved",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "disk 95%",
						Description:   "",
						SourceAlertID: "c6eadffa33fcdf37:2025-05-01T10:00:00Z",
						Severity:      "high",
						Service:       "db",
						Environment:   "prod",
						Tags:          map[string]string{"alertname": "DiskFull"},
						Metadata:      map[string]any{"annotations": map[string]any{"summary": "disk 95%"}, "endsAt": "2025-05-01T10:20:00Z", "fingerprint": "c6eadffa33fcdf37", "grafana_folder": "infra", "groupKey": "{}:{}", "orgId": "1", "receiver": "inc", "startsAt": "2025-05-01T10:00:00Z", "values": map[string]any{"B": float64(95.1)}},
						Resolved:      true,
					},
				},
			}},
		{provider: "newrelic", fixture: "acknowledged",
			want: Batch{
				Ignored: true, Reason: "newrelic issue acknowledged does not open or resolve an alert",
			}},
		{provider: "newrelic", fixture: "activated",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "Memory Used % > 90 on 'checkout'",
						Description:   "Memory above 90% for 5 minutes",
						SourceAlertID: "d1b1f3fd-995a-4066-88ab-8ce4f6960654",
						Severity:      "critical",
						Service:       "checkout",
						Environment:   "production",
						Tags:          map[string]string{"condition": "Memory high", "policy": "Prod"},
						Metadata:      map[string]any{"createdAt": "1714557600000", "issueUrl": "https://one.newrelic.com/alerts-ai/issues/d1b1f3fd", "priority": "CRITICAL", "state": "ACTIVATED", "totalIncidents": "1", "trigger": "STATE_CHANGE", "workflowName": "to-incidents"},
					},
				},
			}},
		{provider: "newrelic", fixture: "closed",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "Memory Used % > 90 on 'checkout'",
						Description:   "",
						SourceAlertID: "d1b1f3fd-995a-4066-88ab-8ce4f6960654",
						Severity:      "high",
						Service:       "checkout",
						Environment:   "",
						Tags:          map[string]string{"condition": "Memory high", "policy": "Prod,Shared"},
						Metadata:      map[string]any{"priority": "HIGH", "state": "CLOSED", "trigger": "STATE_CHANGE"},
						Resolved:      true,
					},
				},
			}},
		{provider: "newrelic", fixture: "missing_id",
			wantErr: "newrelic: id is required"},
		{provider: "opsgenie", fixture: "acknowledge",
			want: Batch{
				Ignored: true, Reason: "opsgenie action Acknowledge does not open or resolve an alert",
			}},
		{provider: "opsgenie", fixture: "close",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "api 5xx > 5%",
						Description:   "",
						SourceAlertID: "052652ac-5d1c-4c4b-9a8e-38a1d2f0a6b1",
						Severity:      "info",
						Service:       "api",
						Environment:   "staging",
						Tags:          map[string]string{"environment": "staging", "service": "api"},
						Metadata:      map[string]any{"action": "Close", "alertId": "052652ac-5d1c-4c4b-9a8e-38a1d2f0a6b1", "priority": "P5", "tinyId": "23"},
						Resolved:      true,
					},
				},
			}},
		{provider: "opsgenie", fixture: "create",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "api 5xx > 5%",
						Description:   "ALB 5xx",
						SourceAlertID: "api-5xx",
						Severity:      "high",
						Service:       "api",
						Environment:   "prod",
						Tags:          map[string]string{"env": "prod", "oncall": "", "service": "api"},
						Metadata:      map[string]any{"action": "Create", "alertId": "052652ac-5d1c-4c4b-9a8e-38a1d2f0a6b1", "alias": "api-5xx", "entity": "api", "priority": "P2", "source": "cloudwatch", "tinyId": "23", "username": "System"},
					},
				},
			}},
		{provider: "opsgenie", fixture: "missing_alert",
			wantErr: "opsgenie: alert is required"},
		{provider: "pagerduty", fixture: "acknowledged",
			want: Batch{
				DeliveryID: "01DEN4HPBQAA5HTJ2WUCB2VFRT",
				Ignored:    true, Reason: "pagerduty event incident.acknowledged does not open or resolve an alert",
			}},
		{provider: "pagerduty", fixture: "ping",
			want: Batch{
				DeliveryID: "01PING",
				Ignored:    true, Reason: "pagerduty event pagey.ping does not open or resolve an alert",
			}},
		{provider: "pagerduty", fixture: "reopened_no_priority",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "DB replica lag",
						Description:   "",
						SourceAlertID: "Q1VTF8N8BDBXYT",
						Severity:      "low",
						Service:       "orders-db",
						Environment:   "",
						Tags:          map[string]string{},
						Metadata:      map[string]any{"event_id": "01DEN4HPBQAA5HTJ2WUCB2VFRT", "event_type": "incident.reopened", "html_url": "https://acme.pagerduty.com/incidents/Q1VTF8N8BDBXYT", "incident_key": "d3640fbd41094207", "number": "42", "occurred_at": "2025-05-01T10:00:00Z", "status": "triggered", "urgency": "low"},
					},
				},
				DeliveryID: "01DEN4HPBQAA5HTJ2WUCB2VFRT",
			}},
		{provider: "pagerduty", fixture: "resolved",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "DB replica lag",
						Description:   "",
						SourceAlertID: "Q1VTF8N8BDBXYT",
						Severity:      "critical",
						Service:       "orders-db",
						Environment:   "",
						Tags:          map[string]string{"team": "dba,sre"},
						Metadata:      map[string]any{"event_id": "01DEN4HPBQAA5HTJ2WUCB2VFRT", "event_type": "incident.resolved", "html_url": "https://acme.pagerduty.com/incidents/Q1VTF8N8BDBXYT", "incident_key": "d3640fbd41094207", "number": "42", "occurred_at": "2025-05-01T10:00:00Z", "priority": "P1", "status": "resolved", "urgency": "high"},
						Resolved:      true,
					},
				},
				DeliveryID: "01DEN4HPBQAA5HTJ2WUCB2VFRT",
			}},
		{provider: "pagerduty", fixture: "service_updated",
			want: Batch{
				DeliveryID: "01SVC",
				Ignored:    true, Reason: "pagerduty event service.updated does not open or resolve an alert",
			}},
		{provider: "pagerduty", fixture: "triggered",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "DB replica lag",
						Description:   "",
						SourceAlertID: "Q1VTF8N8BDBXYT",
						Severity:      "critical",
						Service:       "orders-db",
						Environment:   "",
						Tags:          map[string]string{"team": "dba,sre"},
						Metadata:      map[string]any{"event_id": "01DEN4HPBQAA5HTJ2WUCB2VFRT", "event_type": "incident.triggered", "html_url": "https://acme.pagerduty.com/incidents/Q1VTF8N8BDBXYT", "incident_key": "d3640fbd41094207", "number": "42", "occurred_at": "2025-05-01T10:00:00Z", "priority": "P1", "status": "triggered", "urgency": "high"},
					},
				},
				DeliveryID: "01DEN4HPBQAA5HTJ2WUCB2VFRT",
			}},
		{provider: "sentry", fixture: "event_alert",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "TypeError: Cannot read property 'id' of undefined",
						Description:   "app/components/cart in render\nTriggered by rule: Send a notification for new issues",
						SourceAlertID: "1117540176",
						Severity:      "high",
						Service:       "checkout-web",
						Environment:   "production",
						Tags:          map[string]string{"browser": "Chrome 120", "environment": "production", "level": "error"},
						Metadata:      map[string]any{"action": "triggered", "culprit": "app/components/cart in render", "event_id": "e4874d664c3540c1a32eab185f12c5ab", "installation": "a8e5d37a", "issue_url": "https://sentry.io/api/0/issues/1117540176/", "level": "error", "resource": "event_alert", "triggered_rule": "Send a notification for new issues", "web_url": "https://sentry.io/organizations/acme/issues/1117540176/events/e4874d/"},
					},
				},
			}},
		{provider: "sentry", fixture: "issue_created",
			want: Batch{
				Ignored: true, Reason: "sentry issue created does not open or resolve an alert",
			}},
		{provider: "sentry", fixture: "issue_resolved",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "TypeError: Cannot read property 'id' of undefined",
						Description:   "app/components/cart in render",
						SourceAlertID: "1117540176",
						Severity:      "high",
						Service:       "checkout-web",
						Environment:   "",
						Tags:          map[string]string{},
						Metadata:      map[string]any{"action": "resolved", "installation": "a8e5d37a", "resource": "issue", "web_url": "https://sentry.io/organizations/acme/issues/1117540176/"},
						Resolved:      true,
					},
				},
			}},
		{provider: "sentry", fixture: "metric_critical",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "Critical: Too many errors",
						Description:   "1000 events in the last 10 minutes",
						SourceAlertID: "4",
						Severity:      "critical",
						Service:       "checkout",
						Environment:   "production",
						Tags:          map[string]string{},
						Metadata:      map[string]any{"action": "critical", "alert_rule_id": "7", "alert_rule_name": "Too many errors", "installation": "a8e5d37a-1b2c-4d5e-8f90-123456789abc", "resource": "metric_alert", "web_url": "https://sentry.io/organizations/acme/alerts/rules/details/7/"},
					},
				},
			}},
		{provider: "sentry", fixture: "metric_resolved",
			want: Batch{
				Alerts: []Alert{
					{
						Title:         "Resolved: Too many errors",
						Description:   "12 events in the last 10 minutes",
						SourceAlertID: "4",
						Severity:      "high",
						Service:       "checkout",
						Environment:   "production",
						Tags:          map[string]string{},
						Metadata:      map[string]any{"action": "resolved", "alert_rule_id": "7", "alert_rule_name": "Too many errors", "installation": "a8e5d37a-1b2c-4d5e-8f90-123456789abc", "resource": "metric_alert"},
						Resolved:      true,
					},
				},
			}},
		{provider: "sns", fixture: "alarm",
			want: Batch{
				Topic: "arn:aws:sns:us-east-1:123456789012:alarms",
				Alerts: []Alert{
					{
						Title:         "api-5xx",
						Description:   "Threshold Crossed: 1 datapoint [12.0] > 5.0\n\n5xx on ALB",
						SourceAlertID: "arn:aws:cloudwatch:us-east-1:123456789012:alarm:api-5xx",
						Severity:      "high",
						Service:       "AWS/ApplicationELB/app/api/abc",
						Environment:   "",
						Tags:          map[string]string{"AWSAccountId": "123456789012", "LoadBalancer": "app/api/abc", "Region": "US East (N. Virginia)"},
						Metadata:      map[string]any{"AlarmArn": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:api-5xx", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "MetricName": "HTTPCode_Target_5XX_Count", "Namespace": "AWS/ApplicationELB", "NewStateValue": "ALARM", "OldStateValue": "OK", "StateChangeTime": "2025-05-01T10:00:00.000+0000", "Subject": "ALARM: \"api-5xx\" in US East (N. Virginia)", "Threshold": float64(5), "Timestamp": "2025-05-01T10:00:01.000Z", "TopicArn": "arn:aws:sns:us-east-1:123456789012:alarms"},
					},
				},
				DeliveryID: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
			}},
		{provider: "sns", fixture: "confirmation_evil_host",
			wantErr: "sns: SubscribeURL must be https on an sns.<region>.amazonaws.com host"},
		{provider: "sns", fixture: "metric_math_insufficient",
			want: Batch{
				Topic: "arn:aws:sns:us-east-1:123456789012:alarms",
				Alerts: []Alert{
					{
						Title:         "latency-anomaly",
						Description:   "Insufficient Data",
						SourceAlertID: "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:latency-anomaly",
						Severity:      "info",
						Service:       "AWS/ECS/orders",
						Environment:   "",
						Tags:          map[string]string{"AWSAccountId": "123456789012", "ClusterName": "prod", "Region": "EU (Ireland)", "ServiceName": "orders"},
						Metadata:      map[string]any{"AlarmArn": "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:latency-anomaly", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "MetricName": "CPUUtilization", "Namespace": "AWS/ECS", "NewStateValue": "INSUFFICIENT_DATA", "OldStateValue": "OK", "Timestamp": "2025-05-01T10:00:01.000Z", "TopicArn": "arn:aws:sns:us-east-1:123456789012:alarms"},
					},
				},
				DeliveryID: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
			}},
		{provider: "sns", fixture: "ok",
			want: Batch{
				Topic: "arn:aws:sns:us-east-1:123456789012:alarms",
				Alerts: []Alert{
					{
						Title:         "api-5xx",
						Description:   "Threshold Crossed: 1 datapoint [1.0] < 5.0\n\n5xx on ALB",
						SourceAlertID: "arn:aws:cloudwatch:us-east-1:123456789012:alarm:api-5xx",
						Severity:      "high",
						Service:       "AWS/ApplicationELB/app/api/abc",
						Environment:   "",
						Tags:          map[string]string{"AWSAccountId": "123456789012", "LoadBalancer": "app/api/abc", "Region": "US East (N. Virginia)"},
						Metadata:      map[string]any{"AlarmArn": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:api-5xx", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "MetricName": "HTTPCode_Target_5XX_Count", "Namespace": "AWS/ApplicationELB", "NewStateValue": "OK", "OldStateValue": "ALARM", "StateChangeTime": "2025-05-01T10:00:00.000+0000", "Subject": "OK: \"api-5xx\" in US East (N. Virginia)", "Threshold": float64(5), "Timestamp": "2025-05-01T10:00:01.000Z", "TopicArn": "arn:aws:sns:us-east-1:123456789012:alarms"},
						Resolved:      true,
					},
				},
				DeliveryID: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
			}},
		{provider: "sns", fixture: "plain",
			want: Batch{
				Topic: "arn:aws:sns:us-east-1:123456789012:alarms",
				Alerts: []Alert{
					{
						Title:         "Backup failed",
						Description:   "Backup job nightly-db finished with errors\nsee logs",
						SourceAlertID: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
						Severity:      "high",
						Service:       "",
						Environment:   "",
						Tags:          map[string]string{},
						Metadata:      map[string]any{"MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "Subject": "Backup failed", "Timestamp": "2025-05-01T10:00:01.000Z", "TopicArn": "arn:aws:sns:us-east-1:123456789012:alarms"},
					},
				},
				DeliveryID: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
			}},
		{provider: "sns", fixture: "raw",
			wantErr: "sns: Type is required (raw message delivery is not supported)"},
		{provider: "sns", fixture: "subscription_confirmation",
			want: Batch{
				Topic:      "arn:aws:sns:us-east-1:123456789012:alarms",
				DeliveryID: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
				Confirm:    &Confirmation{TopicArn: "arn:aws:sns:us-east-1:123456789012:alarms", URL: "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-east-1:123456789012:alarms&Token=2336412f"},
			}},
		{provider: "sns", fixture: "unsubscribe",
			want: Batch{
				Topic:      "arn:aws:sns:us-east-1:123456789012:alarms",
				DeliveryID: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
				Ignored:    true, Reason: "sns unsubscribe confirmation for arn:aws:sns:us-east-1:123456789012:alarms",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.provider+"/"+tc.fixture, func(t *testing.T) {
			p, ok := reg.Lookup(tc.provider)
			if !ok {
				t.Fatalf("provider %q not registered", tc.provider)
			}
			got, err := p.Normalize(Request{Header: tc.header, Body: readFixture(t, tc.provider, tc.fixture)})
			if tc.wantErr != "" {
				if !errors.Is(err, ErrInvalidPayload) || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want ErrInvalidPayload %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(tc.want, "", "  ")
				t.Fatalf("batch mismatch\n got: %s\nwant: %s", g, w)
			}
			checkInvariants(t, tc.provider, got)
		})
	}
}

func normalizeWith(t *testing.T, reg *Registry, provider string, r Request) (Batch, error) {
	t.Helper()
	p, ok := reg.Lookup(provider)
	if !ok {
		t.Fatalf("provider %q not registered", provider)
	}
	b, err := p.Normalize(r)
	if err == nil {
		checkInvariants(t, provider, b)
	}
	return b, err
}

func TestDeliveryIDFromHeaders(t *testing.T) {
	reg := New(Options{})
	b, err := normalizeWith(t, reg, "pagerduty", Request{Header: hdr("X-Webhook-Id", "wh-123"), Body: readFixture(t, "pagerduty", "triggered")})
	if err != nil || b.DeliveryID != "wh-123" {
		t.Fatalf("pagerduty DeliveryID = %q, %v; want header value", b.DeliveryID, err)
	}
	b, err = normalizeWith(t, reg, "sentry", Request{Header: hdr("Request-ID", "req-9", "Sentry-Hook-Resource", "metric_alert"), Body: readFixture(t, "sentry", "metric_critical")})
	if err != nil || b.DeliveryID != "req-9" || len(b.Alerts) != 1 {
		t.Fatalf("sentry batch = %+v, %v", b, err)
	}
}

func TestSentryResourceHeaderWins(t *testing.T) {
	reg := New(Options{})
	for _, res := range []string{"installation", "comment", "error"} {
		b, err := normalizeWith(t, reg, "sentry", Request{Header: hdr("Sentry-Hook-Resource", res), Body: readFixture(t, "sentry", "metric_critical")})
		if err != nil || !b.Ignored {
			t.Errorf("resource %s: batch %+v, err %v; want ignored", res, b, err)
		}
	}
}

func TestDefaultSeverityOption(t *testing.T) {
	body := []byte(`{"title":"t","description":"d"}`)
	for opt, want := range map[string]string{"": "high", "LOW": "low", "bogus": "high", "info": "info"} {
		b, err := normalizeWith(t, New(Options{DefaultSeverity: opt}), "custom", Request{Body: body})
		if err != nil || b.Alerts[0].Severity != want {
			t.Errorf("DefaultSeverity %q: got %+v, %v; want %s", opt, b, err, want)
		}
	}
	b, err := normalizeWith(t, New(Options{DefaultSeverity: "low"}), "pagerduty", Request{Body: []byte(
		`{"event":{"id":"e","event_type":"incident.triggered","data":{"id":"Q1","title":"x","urgency":"unknown"}}}`)})
	if err != nil || b.Alerts[0].Severity != "low" {
		t.Fatalf("pagerduty fallback: %+v, %v", b, err)
	}
}

func TestTruncation(t *testing.T) {
	long := strings.Repeat("é", MaxTitleRunes+10)
	desc := strings.Repeat("ü", MaxDescriptionRunes+10)
	body, _ := json.Marshal(map[string]any{"title": "  " + long, "description": desc, "severity": "low"})
	b, err := normalizeWith(t, New(Options{}), "custom", Request{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	a := b.Alerts[0]
	if utf8.RuneCountInString(a.Title) != MaxTitleRunes || utf8.RuneCountInString(a.Description) != MaxDescriptionRunes {
		t.Fatalf("title %d runes, description %d runes", utf8.RuneCountInString(a.Title), utf8.RuneCountInString(a.Description))
	}
}

func TestCustomValidation(t *testing.T) {
	reg := New(Options{})
	cases := map[string]string{
		``:                                  "custom: body is empty",
		`not json`:                          "custom: body must be a JSON object",
		`[{"title":"t"}]`:                   "custom: body must be a JSON object",
		`{"title":"t","description":"d"`:    "custom: body is not valid JSON",
		`{"title":"   ","description":"d"}`: "title is required",
		`{"description":"d"}`:               "title is required",
		`{"title":"t","description":""}`:    "description is required",
		`{"title":5,"description":"d"}`:     `custom: field "title" has a number where a string is expected`,
		`{"title":"t","description":"d","tags":{"a":1}}`:  `custom: field "tags" has a number where a string is expected`,
		`{"title":"t","description":"d","metadata":[1]}`:  `custom: field "metadata" has an array where an object is expected`,
		`{"title":"t","description":"d","severity":"P1"}`: "severity must be one of critical, high, medium, low, info",
	}
	for body, want := range cases {
		_, err := normalizeWith(t, reg, "custom", Request{Body: []byte(body)})
		if !errors.Is(err, ErrInvalidPayload) || err.Error() != want {
			t.Errorf("body %s: err = %v, want %q", body, err, want)
		}
	}
	b, err := normalizeWith(t, reg, "custom", Request{Header: hdr("Content-Type", "text/plain"), Body: []byte(`{"title":"t","description":"d","status":"firing","sourceAlertId":42}`)})
	if err != nil || b.Alerts[0].Resolved || b.Alerts[0].SourceAlertID != "42" {
		t.Fatalf("got %+v, %v", b, err)
	}
}

func TestDatadogTagShapes(t *testing.T) {
	reg := New(Options{})
	b, err := normalizeWith(t, reg, "datadog", Request{Body: []byte(
		`{"alert_id":"1","title":"t","text":"x","priority":"p4","tags":["service:web"," env:dev ","bare",""],"scope":""}`)})
	if err != nil {
		t.Fatal(err)
	}
	a := b.Alerts[0]
	want := map[string]string{"service": "web", "env": "dev", "bare": ""}
	if !reflect.DeepEqual(a.Tags, want) || a.Service != "web" || a.Environment != "dev" || a.Severity != "low" || a.SourceAlertID != "1" {
		t.Fatalf("got %+v", a)
	}
}
