package opensre

import (
	"slices"

	"github.com/causeway/causeway/analyzer"
)

// AnyMechanism is the mechanism of a mapping row that holds for an answer
// with no mechanism, "other", or one no row of its category lists.
const AnyMechanism = "*"

// Mapping is one row of docs/opensre.md's table: a Causeway category, the
// mechanisms the row holds for (nil: all of them), and the OpenSRE category.
type Mapping struct {
	Category   string
	Mechanisms []string
	OpenSRE    string
}

// Mappings is the table of docs/opensre.md, decided from the two taxonomies'
// definitions before any case was run (its one correction, unknown, is
// explained there); a test keeps the two in step.
var Mappings = []Mapping{
	{analyzer.CategoryBadDeployment, nil, "code_defect"},
	{analyzer.CategoryConfigChange, nil, "configuration_error"},
	{analyzer.CategoryDBConnectionExhaustion, nil, "resource_exhaustion"},
	{analyzer.CategoryDBSlowQueries, nil, "resource_exhaustion"},
	{analyzer.CategoryDBLockContention, nil, "resource_exhaustion"},
	{analyzer.CategoryMemoryExhaustion, nil, "resource_exhaustion"},
	{analyzer.CategoryCPUSaturation, nil, "resource_exhaustion"},
	{analyzer.CategoryDiskFull, nil, "resource_exhaustion"},
	{analyzer.CategoryCertificateExpired, nil, "configuration_error"},
	{analyzer.CategoryDNSFailure, nil, "dependency_failure"},
	{analyzer.CategoryNetworkPartition, nil, "infrastructure"},
	{analyzer.CategoryUpstreamDependency, nil, "dependency_failure"},
	{analyzer.CategoryRateLimited, nil, "resource_exhaustion"},
	{analyzer.CategoryQueueBacklog, nil, "resource_exhaustion"},
	{analyzer.CategoryCacheFailure, nil, "dependency_failure"},
	{analyzer.CategoryUnknown, nil, "healthy"},
	{analyzer.CategorySchedulingFailure, []string{"insufficient_cpu", "insufficient_memory"}, "resource_exhaustion"},
	{analyzer.CategorySchedulingFailure, []string{"node_selector_mismatch", "node_affinity_mismatch", "taint_not_tolerated", "pod_anti_affinity", "volume_binding"}, "configuration_error"},
	{analyzer.CategorySchedulingFailure, []string{"node_cordoned"}, "infrastructure"},
	{analyzer.CategorySchedulingFailure, []string{AnyMechanism}, "resource_exhaustion"},
	{analyzer.CategoryAdmissionRejected, []string{"quota_exceeded"}, "resource_exhaustion"},
	{analyzer.CategoryAdmissionRejected, []string{"service_account_missing", "webhook_denied", "policy_denied"}, "configuration_error"},
	{analyzer.CategoryAdmissionRejected, []string{AnyMechanism}, "resource_exhaustion"},
	{analyzer.CategoryImagePullFailure, []string{"image_not_found", "pull_secret_missing"}, "configuration_error"},
	{analyzer.CategoryImagePullFailure, []string{"registry_unreachable"}, "dependency_failure"},
	{analyzer.CategoryImagePullFailure, []string{AnyMechanism}, "configuration_error"},
	{analyzer.CategoryProbeFailure, nil, "configuration_error"},
	{analyzer.CategoryServiceMisrouting, nil, "configuration_error"},
	{analyzer.CategoryNodeFailure, nil, "infrastructure"},
	{analyzer.CategoryNetworkDegradation, nil, "infrastructure"},
}

// FinerNames are the finer names OpenSRE's forbidden lists use, with the
// Causeway categories each stands for.
var FinerNames = map[string][]string{
	"cpu_saturation":        {analyzer.CategoryCPUSaturation},
	"connection_exhaustion": {analyzer.CategoryDBConnectionExhaustion},
}

// OpenSRECategory maps a Causeway answer onto OpenSRE's categories: by
// category, and by mechanism where the category splits (an empty mechanism
// takes the category's AnyMechanism row). A category the table lacks maps
// to "unknown".
func OpenSRECategory(category, mechanism string) string {
	fallback := "unknown"
	for _, m := range Mappings {
		if m.Category != category {
			continue
		}
		switch {
		case m.Mechanisms == nil, slices.Contains(m.Mechanisms, mechanism) && mechanism != "":
			return m.OpenSRE
		case slices.Contains(m.Mechanisms, AnyMechanism):
			fallback = m.OpenSRE
		}
	}
	return fallback
}

// Forbidden tells whether a Causeway answer is one the case forbids: its
// mapped category is listed, or a finer name listed stands for its category.
func (a Answer) Forbidden(category, mechanism string) bool {
	if slices.Contains(a.ForbiddenCategories, OpenSRECategory(category, mechanism)) {
		return true
	}
	for _, f := range a.ForbiddenCategories {
		if slices.Contains(FinerNames[f], category) {
			return true
		}
	}
	return false
}

// Accepts tells whether a mapped category scores: the case's category, or
// dependency_failure for the DNS failure mode, which OpenSRE's own eks suite
// accepts too.
func (a Answer) Accepts(mapped string) bool {
	return mapped == a.Category || (a.FailureMode == "dns_resolution_failure" && mapped == "dependency_failure")
}
