package placement

import (
	"fmt"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
)

// A select_nodes plan chooses its nodes around exclude, then claims its
// groups from the clusters planned beside it; a cluster Ray places with
// capacity_check = "none" claims nothing, and a choice that fails claims
// nothing either.
func TestPlanNew(t *testing.T) {
	snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
	claimed := map[string]int{}
	claim := func(key string, pick func([]clusterspec.GroupRequest) []clusterspec.GroupRequest) {
		if groups := pick(nil); groups != nil {
			claimed[key] = len(groups)
		}
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
	waiting.Name, waiting.CapacityCheck, waiting.SelectNodes = "waits", clusterspec.CapacityNone, false
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

// planInTurn is the ledger's PlanChoose without the rest of the session:
// each cluster picks around what the ones planned before it take.
func planInTurn() func(string, func([]clusterspec.GroupRequest) []clusterspec.GroupRequest) {
	planned := map[string][]clusterspec.GroupRequest{}
	var order []string
	return func(key string, pick func([]clusterspec.GroupRequest) []clusterspec.GroupRequest) {
		var others []clusterspec.GroupRequest
		for _, k := range order {
			others = append(others, planned[k]...)
		}
		if groups := pick(others); groups != nil {
			planned[key], order = groups, append(order, key)
		}
	}
}

// Siblings that select nodes, more than the best node or segment holds,
// plan whenever the cluster holds them all: each chooses around those
// planned before it instead of all choosing the same best node. One more
// than the cluster holds fails, naming select_nodes.
func TestPlanNewSiblingsChooseInTurn(t *testing.T) {
	for _, c := range []struct {
		name     string
		spec     func() clusterspec.Spec
		fit      int
		pinnings []string
	}{
		{"sub-node", func() clusterspec.Spec { return clusterspectest.SelectingSpec(2) }, 10, []string{clusterspec.PinningNode, clusterspec.PinningDomain}},
		{"whole-node", func() clusterspec.Spec { return clusterspectest.SelectingSpec(4) }, 5, []string{clusterspec.PinningNode, clusterspec.PinningDomain}},
	} {
		for _, pinning := range c.pinnings {
			snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
			choose := planInTurn()
			used := map[string]int{}
			for i := 0; i <= c.fit; i++ {
				spec := c.spec()
				spec.Name, spec.Pinning = fmt.Sprintf("vc%d", i), pinning
				issues := PlanNew(&spec, snap, nil, choose)
				if i == c.fit {
					if !clusterspec.HasError(issues) {
						t.Errorf("%s/%s: sibling %d of %d planned past the cluster's GPUs on %v", c.name, pinning, i+1, c.fit, spec.SelectedNodeIDs)
					}
					continue
				}
				if clusterspec.HasError(issues) {
					t.Fatalf("%s/%s: sibling %d of %d: %v", c.name, pinning, i+1, c.fit, issues)
				}
				for _, id := range spec.SelectedNodeIDs {
					used[id] += spec.BundleCtPerNode[0]
				}
			}
			for id, gpus := range used {
				if gpus > 4 {
					t.Errorf("%s/%s: node %s given %d of its 4 GPUs", c.name, pinning, id, gpus)
				}
			}
		}
	}
}
