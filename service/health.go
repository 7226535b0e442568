package service

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/ratelimit"
)

// Health states, worst last.
const (
	Healthy   = "healthy"
	Degraded  = "degraded"
	Unhealthy = "unhealthy"
)

// slowProbe is the latency above which a dependency that still answers is degraded.
const slowProbe = 500 * time.Millisecond

// Health probes the dependencies for GET /health/detailed.
type Health struct {
	store    *models.Store
	limiter  ratelimit.Limiter
	temporal client.Client
}

// NewHealth wires the health service.
func NewHealth(store *models.Store, limiter ratelimit.Limiter, tc client.Client) *Health {
	return &Health{store: store, limiter: limiter, temporal: tc}
}

// Probe is one dependency's state.
type Probe struct {
	Status    string `json:"status"`
	LatencyMs int64  `json:"latencyMs"`
	Error     string `json:"error,omitempty"`
}

// Report is the body of GET /health/detailed. Services are keyed by the concrete
// technology in use: postgres or sqlite, redis or memory, temporal.
type Report struct {
	Status   string           `json:"status"`
	Services map[string]Probe `json:"services"`
}

// Check probes every dependency concurrently, each with its own deadline, so one
// hung dependency cannot hide the others.
func (h *Health) Check(ctx context.Context) Report {
	probes := map[string]func(context.Context) error{
		h.store.Dialect():   h.store.Ping,
		h.limiter.Backend(): h.limiter.Ping,
		"temporal": func(ctx context.Context) error {
			_, err := h.temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
	}
	rep := Report{Status: Healthy, Services: make(map[string]Probe, len(probes))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, ping := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := probe(ctx, ping)
			mu.Lock()
			defer mu.Unlock()
			rep.Services[name] = p
			rep.Status = worst(rep.Status, h.impact(name, p.Status))
		}()
	}
	wg.Wait()
	return rep
}

// impact is what a dependency's state means for the whole service: a failing
// rate limiter only makes it degraded, because requests fail open without it.
func (h *Health) impact(name, status string) string {
	if name == h.limiter.Backend() && status == Unhealthy {
		return Degraded
	}
	return status
}

func probe(ctx context.Context, ping func(context.Context) error) Probe {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	err := ping(ctx)
	p := Probe{Status: Healthy, LatencyMs: time.Since(start).Milliseconds()}
	switch {
	case err != nil:
		// The error class is enough for an operator; connection strings stay out.
		p.Status, p.Error = Unhealthy, "not responding"
		if ctx.Err() != nil {
			p.Error = "timed out"
		}
	case time.Since(start) > slowProbe:
		p.Status = Degraded
	}
	return p
}

var healthRank = map[string]int{Healthy: 0, Degraded: 1, Unhealthy: 2}

func worst(a, b string) string {
	if healthRank[b] > healthRank[a] {
		return b
	}
	return a
}
