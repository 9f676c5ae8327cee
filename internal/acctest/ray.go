package acctest

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// RemoveGroupsOutOfBand removes placement groups of the provider's default
// namespace behind Terraform's back, the way an operator would
// (ray.util.remove_placement_group), and waits until Ray reports them
// REMOVED. Groups that do not exist are skipped.
func RemoveGroupsOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	plainray.RemoveGroups(t, clusterspec.DefaultNamespace, names...)
}

// CreateGroupsOutOfBand makes detached per-node style groups (one
// {CPU: 1, GPU: 1} bundle each, PACK) in the provider's default namespace
// behind Terraform's back, for import tests, and waits until they are placed.
func CreateGroupsOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	groups := make([]plainray.Group, len(names))
	for i, n := range names {
		groups[i] = plainray.Group{Name: n, Strategy: "PACK", Bundles: []map[string]float64{{"CPU": 1, "GPU": 1}}}
	}
	plainray.CreateGroups(t, clusterspec.DefaultNamespace, groups...)
}
