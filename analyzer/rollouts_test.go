package analyzer

import (
	"strings"
	"testing"
	"time"
)

func rolloutReading(rev int, rs string, at time.Time) Reading {
	return releaseReading("checkout", rev, rs, rs, at)
}

func containerReading(pod, rs string, restarts int, reason, waiting string, at time.Time) Reading {
	r := Reading{Signal: SignalContainerStatus, Value: float64(restarts), Unit: UnitCount, At: at,
		Labels: map[string]string{"pod": pod, "container": "checkout", "replicaset": rs, "ready": "true"}}
	if reason != "" {
		r.Labels["reason"], r.Labels["exit_code"], r.Labels["ready"] = reason, "1", "false"
	}
	if waiting != "" {
		r.Labels["waiting"] = waiting
	}
	r.Render("container restarts")
	return r
}

// TestRolloutReasoning: the deployments agent blames a rollout only when its
// pods alone fail soon after it.
func TestRolloutReasoning(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	excerpt := func(rs ...Reading) []Excerpt {
		return []Excerpt{{Source: Source{Kind: SourceDataSource, Type: "kubernetes", Query: "GET /apis/apps/v1/namespaces/shop/replicasets"},
			Text: ReadingsText(rs), Readings: rs, Measured: true}}
	}
	newRS, oldRS := rolloutReading(8, "checkout-new", now.Add(-10*time.Minute)), rolloutReading(7, "checkout-old", now.Add(-72*time.Hour))
	crash := containerReading("checkout-new-a", "checkout-new", 3, "Error", "CrashLoopBackOff", now.Add(-2*time.Minute))
	healthy := containerReading("checkout-old-a", "checkout-old", 0, "", "", now.Add(-72*time.Hour))
	oldCrash := containerReading("checkout-old-b", "checkout-old", 5, "Error", "CrashLoopBackOff", now.Add(-3*time.Minute))
	staleNew := rolloutReading(8, "checkout-new", now.Add(-50*time.Hour))
	restored := containerReading("checkout-old-c", "checkout-old", 0, "", "", now.Add(-4*time.Minute))

	cases := []struct {
		name   string
		in     []Reading
		stance string
		cite   string
	}{
		{"the new revision's pods alone fail", []Reading{newRS, oldRS, crash, healthy}, StanceSupports, newRS.Line},
		{"the previous revision's pods fail too", []Reading{newRS, oldRS, crash, oldCrash}, StanceRefutes, oldCrash.Line},
		{"the rollout is two days old", []Reading{staleNew, oldRS, crash, healthy}, StanceRefutes, staleNew.Line},
		// kubectl rollout undo: the old ReplicaSet takes revision 9 and its
		// pods start again.
		{"the rollout was undone and the restored pods run", []Reading{rolloutReading(9, "checkout-old", now.Add(-72*time.Hour)), newRS, restored}, StanceSupports, newRS.Line},
		{"undoing the rollout did not help", []Reading{rolloutReading(9, "checkout-old", now.Add(-72*time.Hour)), newRS, oldCrash}, StanceRefutes, newRS.Line},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := Investigate(RoleDeployments, Input{Title: "checkout degraded", Service: "checkout", Gathered: excerpt(c.in...)})
			var got *Finding
			for i, f := range rep.Findings {
				if f.Category == CategoryBadDeployment {
					got = &rep.Findings[i]
					break
				}
			}
			if got == nil || got.Stance != c.stance || got.Citation != c.cite {
				t.Fatalf("findings %+v, want %s bad_deployment citing %q", rep.Findings, c.stance, c.cite)
			}
			if c.stance == StanceSupports && (!strings.Contains(got.Summary, "revision 8") || got.Strength < 0.8 || got.Culprit == nil || got.Culprit.Name != "checkout") {
				t.Fatalf("finding %+v should name the revision and be decisive beside a healthy previous revision", got)
			}
			other := Investigate(RoleInfrastructure, Input{Title: "checkout degraded", Service: "checkout", Gathered: excerpt(c.in...)})
			for _, f := range other.Findings {
				if f.Category == CategoryBadDeployment {
					t.Fatalf("the infrastructure agent judged a rollout: %+v", f)
				}
			}
		})
	}
}

// TestContainerTerminations: OOMKilled is memory exhaustion; exit 137 alone
// is, more weakly, unless the kubelet killed the container for a failed
// liveness probe; an application error is only a symptom.
func TestContainerTerminations(t *testing.T) {
	at := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		reason, code string
		probeKill    bool
		cat          string
		min, max     float64
	}{
		{"OOMKilled", "137", false, CategoryMemoryExhaustion, 0.85, 0.95},
		{"Error", "137", false, CategoryMemoryExhaustion, 0.5, 0.6},
		{"Error", "137", true, "", 0, 0},
		{"Error", "1", false, "", 0, 0},
	}
	for _, c := range cases {
		r := Reading{Signal: SignalContainerStatus, Value: 4, Unit: UnitCount, At: at,
			Labels: map[string]string{"namespace": "shop", "pod": "checkout-7d9f8c6b5-x2k4q", "container": "checkout", "workload": "deployment/checkout",
				"reason": c.reason, "exit_code": c.code}}
		r.Render("container restarts")
		rs := []Reading{r}
		if c.probeKill {
			ev := Reading{Signal: SignalK8sEvent, Value: 4, At: at, Labels: map[string]string{"namespace": "shop", "kind": "Pod", "name": "checkout-7d9f8c6b5-x2k4q",
				"object": "Pod/checkout-7d9f8c6b5-x2k4q", "reason": "Killing", "type": "Normal", "message": "Container checkout failed liveness probe, will be restarted"}}
			ev.Render("event")
			rs = append(rs, ev)
		}
		hits := clusterHits(quotedReadings([]Excerpt{{Text: ReadingsText(rs), Readings: rs, Measured: true}}), RoleInfrastructure, Input{})
		var got *hit
		for i := range hits {
			if hits[i].stance == StanceSupports && hits[i].cat == CategoryMemoryExhaustion {
				got = &hits[i]
			}
		}
		switch {
		case c.cat == "" && got != nil:
			t.Errorf("%s/%s (probe kill %v): blamed memory: %+v", c.reason, c.code, c.probeKill, *got)
		case c.cat != "" && (got == nil || got.str < c.min || got.str > c.max || got.culprit == nil || got.culprit.String() != "deployment shop/checkout"):
			t.Errorf("%s/%s: %+v", c.reason, c.code, got)
		}
	}
}

// releaseReading is a ReplicaSet revision of deployment whose pods run the
// deployment's image at tag.
func releaseReading(deployment string, rev int, rs, tag string, at time.Time) Reading {
	r := Reading{Signal: SignalRollout, Value: float64(rev), Unit: UnitCount, At: at,
		Labels: map[string]string{"deployment": deployment, "replicaset": rs, "image": "registry.example/" + deployment + ":" + tag}}
	r.Render("ReplicaSet revision")
	return r
}

// TestRolloutAsTrigger: a rollout confirmed as the trigger is weighed as a
// recorded release is: the failing lines naming its version make it
// decisive, and what its pods then show (OOM kills here) is what it set
// off, which the deployments agent argues against as the root cause.
func TestRolloutAsTrigger(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	newRS, oldRS := releaseReading("checkout", 8, "checkout-5f4c7b9d8", "2.15.0", now.Add(-10*time.Minute)), releaseReading("checkout", 7, "checkout-7d9f8c6b5", "2.14.0", now.Add(-72*time.Hour))
	oom := containerReading("checkout-5f4c7b9d8-z9q2m", "checkout-5f4c7b9d8", 4, "OOMKilled", "CrashLoopBackOff", now.Add(-2*time.Minute))
	oom.Labels["exit_code"] = "137"
	oom.Render("container restarts")
	healthy := containerReading("checkout-7d9f8c6b5-x2k4q", "checkout-7d9f8c6b5", 0, "", "", now.Add(-72*time.Hour))
	rs := []Reading{newRS, oldRS, oom, healthy}
	in := Input{Title: "checkout degraded", Service: "checkout",
		Context:  []string{"2026-03-04T11:58:01Z checkout-5f4c7b9d8-z9q2m ERROR pricing cache warm-up failed in 2.15.0: fatal error: runtime: out of memory"},
		Gathered: []Excerpt{{Source: Source{Kind: SourceDataSource, Type: "kubernetes", Query: "GET /api/v1/namespaces/shop/pods"}, Text: ReadingsText(rs), Readings: rs, Measured: true}}}
	rep := Investigate(RoleDeployments, in)
	var trigger, mechanism *Finding
	for i, f := range rep.Findings {
		switch {
		case f.Category == CategoryBadDeployment && f.Stance == StanceSupports && trigger == nil:
			trigger = &rep.Findings[i]
		case f.Category == CategoryMemoryExhaustion && f.Stance == StanceRefutes:
			mechanism = &rep.Findings[i]
		}
	}
	if trigger == nil || trigger.Strength < 0.9 || !strings.Contains(trigger.Summary, "2.15.0") || trigger.Citation != newRS.Line {
		t.Fatalf("the rollout as trigger: %+v", rep.Findings)
	}
	if mechanism == nil || mechanism.Citation != newRS.Line {
		t.Fatalf("the OOM kills the rollout set off are not argued against: %+v", rep.Findings)
	}
	res := Synthesize(in, []AgentReport{rep, Investigate(RoleInfrastructure, in), Investigate(RoleLogs, in)})
	if res.Category != CategoryBadDeployment || res.Culprit == nil || res.Culprit.Name != "checkout" {
		t.Fatalf("answered %s %+v", res.Category, res.Culprit)
	}

	// Without a healthy previous revision and a version in the failures,
	// the rollout is a suspect, not a confirmed trigger: the mechanism
	// stands.
	rs = []Reading{newRS, oldRS, oom}
	in.Context, in.Gathered[0].Readings, in.Gathered[0].Text = nil, rs, ReadingsText(rs)
	for _, f := range Investigate(RoleDeployments, in).Findings {
		if f.Category == CategoryMemoryExhaustion && f.Stance == StanceRefutes {
			t.Fatalf("an unconfirmed rollout argues against the mechanism: %+v", f)
		}
	}
}

// TestLateRollbackIsNoTrigger: a revision rolled back days after it rolled
// out had run well meanwhile; the rollback does not make it the trigger.
func TestLateRollbackIsNoTrigger(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	rs := []Reading{rolloutReading(9, "checkout-old", now.Add(-30*24*time.Hour)), rolloutReading(8, "checkout-new", now.Add(-72*time.Hour)),
		containerReading("checkout-old-c", "checkout-old", 0, "", "", now.Add(-5*time.Minute))}
	in := Input{Title: "checkout degraded", Service: "checkout",
		Gathered: []Excerpt{{Source: Source{Kind: SourceDataSource, Type: "kubernetes", Query: "GET /apis/apps/v1/namespaces/shop/replicasets"}, Text: ReadingsText(rs), Readings: rs, Measured: true}}}
	for _, f := range Investigate(RoleDeployments, in).Findings {
		if f.Category == CategoryBadDeployment && f.Stance == StanceSupports {
			t.Fatalf("a rollout undone three days on is blamed: %+v", f)
		}
	}
}

// TestServingRolloutNamedByItsFailures: a rollout whose pods all run (a
// panic a handler recovers from fails no container) is the release the
// failures come from when they name its version and not the previous one,
// and begin shortly after it; failures naming the previous version too, or
// beginning long after, leave it alone.
func TestServingRolloutNamedByItsFailures(t *testing.T) {
	now := time.Date(2026, 7, 22, 10, 40, 0, 0, time.UTC)
	newRS := releaseReading("shipment-tracker", 18, "shipment-tracker-59bc7f6d84", "v1.22.0", now.Add(-28*time.Minute))
	oldRS := releaseReading("shipment-tracker", 17, "shipment-tracker-6d4f8b9c57", "v1.21.3", now.Add(-8*24*time.Hour))
	serving := containerReading("shipment-tracker-59bc7f6d84-r5kq2", "shipment-tracker-59bc7f6d84", 0, "", "", now.Add(-28*time.Minute))
	rs := []Reading{newRS, oldRS, serving}
	judge := func(lines ...string) *Finding {
		in := Input{Title: "shipment-tracker 5xx ratio above 5%", Service: "shipment-tracker", Context: lines,
			Gathered: []Excerpt{{Source: Source{Kind: SourceDataSource, Type: "kubernetes", Query: "GET /apis/apps/v1/namespaces/logistics/replicasets"}, Text: ReadingsText(rs), Readings: rs, Measured: true}}}
		for _, f := range Investigate(RoleDeployments, in).Findings {
			if f.Category == CategoryBadDeployment && f.Stance == StanceSupports && f.Citation == newRS.Line {
				return &f
			}
		}
		return nil
	}
	panicked := `{"level":"error","ts":"2026-07-22T10:16:10.000Z","msg":"panic recovered","version":"v1.22.0","error":"runtime error: invalid memory address or nil pointer dereference"}`
	if f := judge(panicked); f == nil || f.Strength < 0.9 {
		t.Fatalf("the rollout the failures name: %+v", f)
	}
	if f := judge(panicked, `{"level":"error","ts":"2026-07-22T10:05:00.000Z","msg":"panic recovered","version":"v1.21.3"}`); f != nil {
		t.Errorf("the previous version fails too, yet the rollout is blamed: %+v", f)
	}
	if f := judge(`{"level":"error","ts":"2026-07-22T13:30:00.000Z","msg":"panic recovered","version":"v1.22.0"}`); f != nil {
		t.Errorf("failures beginning hours after the rollout blame it: %+v", f)
	}
}
