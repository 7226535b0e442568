package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/ratelimit"
	"github.com/causeway/causeway/service"
)

// upTemporal answers health checks and nothing else.
type upTemporal struct{ client.Client }

func (upTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

func TestRedisDownIsDegradedNotUnhealthy(t *testing.T) {
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	h := service.NewHealth(testdb.Open(t), ratelimit.NewRedis(rc), upTemporal{})
	rep := h.Check(context.Background())
	if rep.Services["redis"].Status != service.Unhealthy {
		t.Errorf("redis probe %+v, want unhealthy", rep.Services["redis"])
	}
	if rep.Status != service.Degraded {
		t.Errorf("overall %q, want degraded: rate limiting fails open", rep.Status)
	}
	if rep := service.NewHealth(testdb.Open(t), ratelimit.NewMemory(), upTemporal{}).Check(context.Background()); rep.Status != service.Healthy {
		t.Errorf("all up: %+v", rep)
	}
}
