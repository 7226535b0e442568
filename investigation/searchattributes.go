package investigation

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Custom search attributes, so an SRE can filter workflows in the Temporal UI
// ("CausewayTenant = 'ten_…' AND CausewaySeverity = 'critical'"). Incident
// workflows carry tenant, service, severity and incident status, kept current
// as the incident moves; investigation workflows carry tenant, service and the
// root-cause category once the pass has an answer. All are keywords: exact
// values, no full-text search. They must exist on the cluster before workflows
// use them (the embedded server creates them; for a cluster see the README), so
// the starter checks and tells the workflow in its input.
var (
	SearchAttrTenant         = temporal.NewSearchAttributeKeyKeyword("CausewayTenant")
	SearchAttrService        = temporal.NewSearchAttributeKeyKeyword("CausewayService")
	SearchAttrSeverity       = temporal.NewSearchAttributeKeyKeyword("CausewaySeverity")
	SearchAttrCategory       = temporal.NewSearchAttributeKeyKeyword("CausewayCategory")
	SearchAttrIncidentStatus = temporal.NewSearchAttributeKeyKeyword("CausewayIncidentStatus")
)

// SearchAttributeTypes is every custom search attribute with its type, for the
// embedded server to register and for the check of a cluster.
func SearchAttributeTypes() map[string]enumspb.IndexedValueType {
	out := map[string]enumspb.IndexedValueType{}
	for _, k := range []temporal.SearchAttributeKeyKeyword{
		SearchAttrTenant, SearchAttrService, SearchAttrSeverity, SearchAttrCategory, SearchAttrIncidentStatus,
	} {
		out[k.GetName()] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	return out
}

// versionSearchAttributes marks the change that made the incident and
// investigation workflows upsert their search attributes. Histories recorded
// before it replay without those commands.
const versionSearchAttributes = "search-attributes"

// searchAttributesOn decides, once per run and deterministically, whether this
// run upserts search attributes: only runs that started after the change, and
// only when the starter found the attributes on the cluster (enabled).
func searchAttributesOn(ctx workflow.Context, enabled bool) bool {
	v := workflow.GetVersion(ctx, versionSearchAttributes, workflow.DefaultVersion, 1)
	return v == 1 && enabled
}

// keyword is value, or "unknown" for an empty one: an empty keyword cannot be
// told apart from an unset attribute in a query.
func keyword(k temporal.SearchAttributeKeyKeyword, value string) temporal.SearchAttributeUpdate {
	if value == "" {
		value = "unknown"
	}
	return k.ValueSet(value)
}

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
