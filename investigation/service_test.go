package investigation

import (
	"context"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
)

// TestStartRefusalsKeepTheirAnswer: each refusal of the startInvestigation
// update is its API error, the quota one also as a worker of an earlier
// release words it, so a rolling upgrade never turns a spent quota into 503.
func TestStartRefusalsKeepTheirAnswer(t *testing.T) {
	s := &Investigations{}
	for typ, want := range map[string]string{
		ErrTypeQuotaExceeded:           errcode.InvestigationQuota,
		"InvestigationQuotaExceeded":   errcode.InvestigationQuota,
		ErrTypeInvestigationInProgress: errcode.InvestigationInProgress,
		ErrTypeIncidentResolved:        errcode.InvalidStatus,
	} {
		err := s.startError(context.Background(), auth.Principal{TenantID: "ten_1"}, "inc_1", temporal.NewApplicationError("refused", typ))
		if e, ok := errcode.As(err); !ok || e.Code != want {
			t.Errorf("%s: %v, want %s", typ, err, want)
		}
	}
}
