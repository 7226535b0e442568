package investigation

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

// searchAttrRecheck is how long a negative answer stands: an operator who
// creates the attributes on a running cluster sees new incidents labelled
// within this time, without a restart.
const searchAttrRecheck = time.Minute

// searchAttributes answers whether the namespace has every custom search
// attribute the workflows upsert (SearchAttributeTypes). A workflow
// told yes that then meets a cluster without them would fail every workflow
// task, so an unanswered check counts as no. A yes is kept for the life of the
// process; a no is asked again after searchAttrRecheck.
type searchAttributes struct {
	temporal  client.Client
	namespace string
	log       *slog.Logger
	now       func() time.Time

	mu        sync.Mutex
	ok        bool
	checkedAt time.Time
	warned    bool
}

// available reports whether starts may set IncidentInput.SearchAttributes.
func (s *searchAttributes) available(ctx context.Context) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ok || (!s.checkedAt.IsZero() && s.now().Sub(s.checkedAt) < searchAttrRecheck) {
		return s.ok
	}
	s.checkedAt = s.now()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := s.temporal.OperatorService().ListSearchAttributes(cctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.namespace})
	if err != nil {
		s.log.Warn("could not list the namespace's search attributes; workflows start without them", "namespace", s.namespace, "error", err)
		return false
	}
	var missing []string
	for name, typ := range SearchAttributeTypes() {
		if got, ok := resp.GetCustomAttributes()[name]; !ok || got != typ {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		if !s.warned {
			sort.Strings(missing)
			s.log.Warn("the Temporal namespace lacks Causeway's search attributes; workflows run without them until they are created (README: Finding workflows in the Temporal UI)",
				"namespace", s.namespace, "missing", missing)
			s.warned = true
		}
		return false
	}
	s.ok = true
	return true
}
