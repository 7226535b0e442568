package investigation

import (
	enumspb "go.temporal.io/api/enums/v1"
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
