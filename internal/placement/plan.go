package placement

import (
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
)

// PlanNew plans a new (or replacing) cluster against snap: a select_nodes
// cluster chooses its nodes now, around exclude and the clusters planned
// before it in this run, into spec (for the checks and the port overlap the
// plan reports; the apply chooses again by the same rules, since the choice
// is final only once the driver reserves it), then the live check runs
// against snap and those clusters. choose hands pick the groups of the
// clusters planned before this one and records what pick returns: what this
// cluster takes (nothing after a failed choice, nor for a cluster Ray places
// with capacity_check = "none", whose groups wait for capacity).
func PlanNew(spec *clusterspec.Spec, snap *planning.Snapshot, exclude map[string]bool,
	choose func(key string, pick func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest)) []clusterspec.Issue {
	var issues []clusterspec.Issue
	choose(spec.Namespace+"/"+spec.Name, func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		if spec.SelectNodes {
			ids, domains, found := planning.ChooseFreeNodes(*spec, snap, exclude, others)
			if issues = found; clusterspec.HasError(found) {
				return nil
			}
			spec.SelectedNodeIDs, spec.SelectedNodeDomains = ids, domains
		}
		issues = append(issues, CheckLive(*spec, snap, others)...)
		if spec.CapacityCheck == clusterspec.CapacityNone && !spec.SelectNodes {
			return []clusterspec.GroupRequest{} // its groups wait for capacity; a select_nodes one's reservation holds its nodes
		}
		return planning.TakenGroups(*spec)
	})
	return issues
}
