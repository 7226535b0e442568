package analyzer

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestInvestigateReadsABoundedInput shows an agent reads at most
// MaxContextBytes of supplemental context and MaxDescriptionBytes of the
// alert's description, however much an incident holds.
func TestInvestigateReadsABoundedInput(t *testing.T) {
	var ctxEntries []string
	for i := 0; i < 200; i++ {
		ctxEntries = append(ctxEntries, strings.Repeat("FATAL: too many connections for role app\n", 500))
	}
	in := Input{Title: "x", Description: strings.Repeat("d", 1<<20), Context: ctxEntries}
	b := BoundInput(in)
	total := 0
	for _, e := range b.Context {
		total += len(e)
	}
	if total > MaxContextBytes || total == 0 {
		t.Fatalf("context read: %d bytes, want 1..%d", total, MaxContextBytes)
	}
	if len(b.Description) > MaxDescriptionBytes {
		t.Fatalf("description read: %d bytes", len(b.Description))
	}
	if len(in.Context) != 200 || len(in.Description) != 1<<20 {
		t.Fatal("input modified")
	}
	if rep, err := InvestigateContext(context.Background(), RoleDatabase, in); err != nil || len(rep.Findings) == 0 {
		t.Fatalf("bounded input: %v, %d findings", err, len(rep.Findings))
	}
}

// TestInvestigateStopsOnCancellation shows a cancelled agent (its pass hit the
// deadline, or the activity was cancelled) stops instead of finishing its
// analysis.
func TestInvestigateStopsOnCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := InvestigateContext(ctx, RoleDatabase, Input{Title: "db down", Description: "FATAL: too many connections"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled analysis: %v", err)
	}
}
