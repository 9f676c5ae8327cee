package placement

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
)

// A select_nodes plan chooses its nodes around exclude, then claims its
// groups from the clusters planned beside it; capacity_check = "none"
// claims nothing, and a choice that fails claims nothing either.
func TestPlanNew(t *testing.T) {
	snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
	claimed := map[string]int{}
	claim := func(key string, groups []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		claimed[key] = len(groups)
		return nil
	}
	spec := clusterspectest.SelectingSpec(4)
	exclude := map[string]bool{snap.Nodes[0].NodeID: true}
	if issues := PlanNew(&spec, snap, exclude, claim); clusterspec.HasError(issues) {
		t.Fatalf("plan on a free cluster: %v", issues)
	}
	if len(spec.SelectedNodeIDs) != 1 || spec.SelectedNodeIDs[0] == snap.Nodes[0].NodeID {
		t.Errorf("chose %v around the excluded %s", spec.SelectedNodeIDs, snap.Nodes[0].NodeID)
	}
	if claimed[spec.Namespace+"/"+spec.Name] != 1 {
		t.Errorf("claims: %v; want the one group", claimed)
	}
	waiting := clusterspectest.SelectingSpec(4)
	waiting.Name, waiting.CapacityCheck = "waits", clusterspec.CapacityNone
	PlanNew(&waiting, snap, nil, claim)
	if n, ok := claimed[waiting.Namespace+"/waits"]; !ok || n != 0 {
		t.Errorf("capacity_check = none claimed %d groups (registered %v)", n, ok)
	}
	huge := clusterspectest.SelectingSpec(64)
	huge.Name = "huge"
	if issues := PlanNew(&huge, snap, nil, claim); !clusterspec.HasError(issues) {
		t.Errorf("a cluster no node holds planned: %v", issues)
	}
	if _, ok := claimed[huge.Namespace+"/huge"]; ok {
		t.Errorf("a failed choice claimed capacity")
	}
}
