package placement

import (
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
)

// PlanNew plans a new (or replacing) cluster against snap: a select_nodes
// cluster chooses its nodes now, around exclude, into spec (for the checks
// and the port overlap the plan reports; the apply chooses again, since
// the choice is final only once the driver reserves it), then the live
// check runs against snap and the clusters planned beside it in this run.
// claim registers what this cluster takes from those others (nothing for
// capacity_check = "none", whose groups wait for capacity) and returns
// their groups.
func PlanNew(spec *clusterspec.Spec, snap *planning.Snapshot, exclude map[string]bool,
	claim func(key string, groups []clusterspec.GroupRequest) []clusterspec.GroupRequest) []clusterspec.Issue {
	var issues []clusterspec.Issue
	if spec.SelectNodes {
		ids, domains, found := planning.ChooseFreeNodes(*spec, snap, exclude, nil)
		if issues = found; clusterspec.HasError(found) {
			return issues
		}
		spec.SelectedNodeIDs, spec.SelectedNodeDomains = ids, domains
	}
	var takes []clusterspec.GroupRequest
	if spec.CapacityCheck != clusterspec.CapacityNone {
		takes = planning.FeasibilityGroups(*spec)
	}
	others := claim(spec.Namespace+"/"+spec.Name, takes)
	return append(issues, CheckLive(*spec, snap, others)...)
}
