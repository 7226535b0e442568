package opensre

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/causeway/causeway/replay"
)

// The rds_postgres suite's files: CloudWatch's GetMetricData, RDS's
// DescribeEvents and Performance Insights' GetResourceMetrics answers.
type (
	metricsFile struct {
		Namespace string         `json:"namespace"`
		Results   []metricResult `json:"metric_data_results"`
	}
	metricResult struct {
		MetricName string `json:"metric_name"`
		Dimensions []struct {
			Name, Value string
		} `json:"dimensions"`
		Stat       string    `json:"stat"`
		Timestamps []string  `json:"timestamps"`
		Values     []float64 `json:"values"`
	}
	rdsEventsFile struct {
		Events []struct {
			Date             string   `json:"date"`
			Message          string   `json:"message"`
			SourceIdentifier string   `json:"source_identifier"`
			SourceType       string   `json:"source_type"`
			EventCategories  []string `json:"event_categories"`
		} `json:"events"`
	}
	piFile struct {
		DBInstanceIdentifier string `json:"db_instance_identifier"`
		DBLoad               struct {
			Timestamps []string  `json:"timestamps"`
			Values     []float64 `json:"values"`
		} `json:"db_load"`
		TopWaitEvents []struct {
			Type      string  `json:"type"`
			DBLoadAvg float64 `json:"db_load_avg"`
		} `json:"top_wait_events"`
	}
)

// AccountID is the AWS account the exported series and ARNs name. The
// fixtures name none; it is AWS's documentation account.
const AccountID = "123456789012"

// RDSEventsLogGroup is the CloudWatch Logs group an EventBridge rule for
// RDS events writes to (EventBridge requires the /aws/events/ prefix).
const RDSEventsLogGroup = "/aws/events/rds"

// loadRDS turns an rds_postgres case into YACE's series in a Prometheus and
// the RDS event stream in a Loki.
func loadRDS(s *replay.Scenario, meta metadata, files caseFiles) error {
	region := meta.str("region")
	series := newSeriesSet()
	if meta.evidence("aws_cloudwatch_metrics") {
		mf, err := readMetrics(files)
		if err != nil {
			return err
		}
		for _, r := range mf.Results {
			if len(r.Timestamps) != len(r.Values) {
				return fmt.Errorf("metric %s: %d timestamps, %d values", r.MetricName, len(r.Timestamps), len(r.Values))
			}
			labels := map[string]string{"region": region, "account_id": AccountID, "name": "global"}
			for _, d := range r.Dimensions {
				labels["dimension_"+d.Name] = d.Value
				if d.Name == "DBInstanceIdentifier" {
					labels["name"] = instanceARN(region, d.Value)
				}
			}
			if err := series.add(YACEName(mf.Namespace, r.MetricName, r.Stat), labels, r.Timestamps, r.Values); err != nil {
				return err
			}
		}
	}
	var pi piFile
	if ok, err := readEvidence(meta, files, "aws_performance_insights", &pi); err != nil {
		return err
	} else if ok {
		if err := addDBLoad(series, pi, region); err != nil {
			return err
		}
	}
	s.Series = series.list
	var events rdsEventsFile
	if ok, err := readEvidence(meta, files, "aws_rds_events", &events); err != nil {
		return err
	} else if ok && len(events.Events) > 0 {
		stream := replay.LogStream{Labels: cloudWatchLabels(RDSEventsLogGroup)}
		for i, e := range events.Events {
			at, err := parseTime(e.Date)
			if err != nil {
				return fmt.Errorf("aws_rds_events %d: %w", i, err)
			}
			if e.SourceType != "db-instance" {
				return fmt.Errorf("aws_rds_events %d: source type %q has no EventBridge form here", i, e.SourceType)
			}
			// The event as EventBridge delivers it to CloudWatch Logs, with
			// the fields the fixture states (no id, account or event id).
			line, err := json.Marshal(map[string]any{"version": "0", "detail-type": "RDS DB Instance Event", "source": "aws.rds",
				"time": e.Date, "region": region, "detail": map[string]any{"EventCategories": e.EventCategories, "SourceType": "DB_INSTANCE",
					"SourceIdentifier": e.SourceIdentifier, "Date": e.Date, "Message": e.Message}})
			if err != nil {
				return err
			}
			stream.Lines = append(stream.Lines, replay.LogLine{At: at, Text: string(line)})
		}
		s.Logs = []replay.LogStream{stream}
	}
	return nil
}

// readMetrics reads aws_cloudwatch_metrics.json, or the per-metric files
// beside an aws_cloudwatch_metrics_envelope.json; the case's own, else its
// base's.
func readMetrics(files caseFiles) (metricsFile, error) {
	for _, d := range []string{files.dir, files.base} {
		if d == "" {
			continue
		}
		var mf metricsFile
		if p := filepath.Join(d, "aws_cloudwatch_metrics.json"); fileExists(p) {
			return mf, readJSON(p, &mf)
		}
		env := filepath.Join(d, "aws_cloudwatch_metrics_envelope.json")
		if !fileExists(env) {
			continue
		}
		if err := readJSON(env, &mf); err != nil {
			return mf, err
		}
		parts, _ := filepath.Glob(filepath.Join(d, "aws_cloudwatch_metrics_*.json"))
		slices.Sort(parts)
		for _, p := range parts {
			if p == env {
				continue
			}
			var r metricResult
			if err := readJSON(p, &r); err != nil {
				return mf, err
			}
			mf.Results = append(mf.Results, r)
		}
		return mf, nil
	}
	return metricsFile{}, fmt.Errorf("aws_cloudwatch_metrics is listed in available_evidence and missing: %w", os.ErrNotExist)
}

func instanceARN(region, id string) string {
	return "arn:aws:rds:" + region + ":" + AccountID + ":db:" + id
}

// addDBLoad serves Performance Insights' db_load as the DBLoad metric AWS
// publishes to CloudWatch, and DBLoadCPU and DBLoadNonCPU as db_load split
// by the window's wait-event mix (CPU waits against the rest), where the
// fixture gives one.
func addDBLoad(series *seriesSet, pi piFile, region string) error {
	if len(pi.DBLoad.Timestamps) != len(pi.DBLoad.Values) {
		return fmt.Errorf("aws_performance_insights: %d timestamps, %d values", len(pi.DBLoad.Timestamps), len(pi.DBLoad.Values))
	}
	labels := map[string]string{"region": region, "account_id": AccountID, "name": instanceARN(region, pi.DBInstanceIdentifier),
		"dimension_DBInstanceIdentifier": pi.DBInstanceIdentifier}
	if err := series.add(YACEName("AWS/RDS", "DBLoad", "Average"), labels, pi.DBLoad.Timestamps, pi.DBLoad.Values); err != nil {
		return err
	}
	var cpu, total float64
	for _, w := range pi.TopWaitEvents {
		total += w.DBLoadAvg
		if w.Type == "CPU" {
			cpu += w.DBLoadAvg
		}
	}
	if total <= 0 {
		return nil
	}
	for metric, share := range map[string]float64{"DBLoadCPU": cpu / total, "DBLoadNonCPU": (total - cpu) / total} {
		vals := make([]float64, len(pi.DBLoad.Values))
		for i, v := range pi.DBLoad.Values {
			vals[i] = v * share
		}
		if err := series.add(YACEName("AWS/RDS", metric, "Average"), labels, pi.DBLoad.Timestamps, vals); err != nil {
			return err
		}
	}
	return nil
}

// seriesSet collects series, merging ones with the same name and labels (a
// fixture may list a metric twice) and keeping each time's first sample.
type seriesSet struct {
	list  []replay.Series
	index map[string]int
}

func newSeriesSet() *seriesSet { return &seriesSet{index: map[string]int{}} }

func (s *seriesSet) add(metric string, labels map[string]string, times []string, values []float64) error {
	key := metric + fmt.Sprint(labels) // fmt prints a map in key order
	i, ok := s.index[key]
	if !ok {
		i = len(s.list)
		s.index[key] = i
		s.list = append(s.list, replay.Series{Metric: metric, Labels: maps.Clone(labels)})
	}
	st := &s.list[i]
	for j, ts := range times {
		at, err := parseTime(ts)
		if err != nil {
			return fmt.Errorf("%s: %w", metric, err)
		}
		if slices.ContainsFunc(st.Samples, func(p replay.Sample) bool { return p.At.Equal(at) }) {
			continue
		}
		st.Samples = append(st.Samples, replay.Sample{At: at, Value: values[j]})
	}
	return nil
}

// YACEName is the name yet-another-cloudwatch-exporter exports a CloudWatch
// metric under: aws_<namespace>_<metric>_<statistic>, each part snake-cased
// its way (an upper-case letter after a lower-case one or a digit starts a
// word, so CPUUtilization is cpuutilization and DBLoad dbload), and a metric
// name's leading words that repeat the namespace's left out.
func YACEName(namespace, metric, statistic string) string {
	ns := strings.TrimPrefix(promString(strings.ToLower(namespace)), "_")
	var b strings.Builder
	if !strings.HasPrefix(ns, "aws") {
		b.WriteString("aws_")
	}
	b.WriteString(ns + "_")
	m := promString(metric)
	for _, part := range strings.Split(ns, "_") {
		m = strings.TrimPrefix(m, part)
	}
	b.WriteString(strings.TrimPrefix(m, "_"))
	if statistic != "" {
		b.WriteString("_" + promString(statistic))
	}
	return b.String()
}

// promString is YACE's snake-casing of a CloudWatch name.
func promString(s string) string {
	var b strings.Builder
	var prev rune
	for _, c := range s {
		switch {
		case strings.ContainsRune(" ,\t/\\.-:=@<>()“", c):
			b.WriteRune('_')
		case c == '%':
			b.WriteString("_percent")
		default:
			if unicode.IsUpper(c) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
				b.WriteRune('_')
			}
			b.WriteRune(unicode.ToLower(c))
		}
		prev = c
	}
	return b.String()
}
