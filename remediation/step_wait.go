package remediation

import (
	"context"
	"fmt"
	"time"
)

// MaxWait bounds a wait step; longer pauses belong between remediations.
const MaxWait = time.Hour

// waitParams are the params of a wait step.
type waitParams struct {
	Duration string `json:"duration"`
}

// waitStep pauses between steps, for example to let a rollback settle before a
// verification. The activity heartbeats while it waits, so a lost worker is
// noticed quickly and the wait resumes elsewhere, for the time that is left.
type waitStep struct{}

func (waitStep) parse(p map[string]any, rendered bool) (time.Duration, error) {
	var wp waitParams
	if err := decodeParams(p, &wp); err != nil {
		return 0, err
	}
	if wp.Duration == "" {
		return 0, fmt.Errorf("params.duration is required")
	}
	return checkDuration("duration", wp.Duration, rendered, MaxWait)
}

func (s waitStep) check(p map[string]any, rendered bool, _ checkEnv) error {
	_, err := s.parse(p, rendered)
	return err
}

func (s waitStep) run(ctx context.Context, _ *Activities, c stepCall) error {
	d, err := s.parse(c.Params, true)
	if err != nil {
		return badParams(err)
	}
	// A wait resumed after a lost worker waits only what is left of d,
	// counted from when the step first started.
	remaining := d - time.Since(stepStarted(ctx))
	if remaining <= 0 {
		return nil
	}
	t := time.NewTimer(remaining)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
