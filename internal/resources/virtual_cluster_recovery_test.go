package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// recoveringState is selectingState without select_nodes, its groups
// recorded with ids pg0 and pg1.
func recoveringState(t *testing.T) virtualClusterModel {
	t.Helper()
	state := selectingState(t)
	state.SelectNodes = types.BoolValue(false)
	state.SelectedNodeIDs = types.ListNull(types.StringType)
	groups, d := types.ListValueFrom(context.Background(), groupObjectType, []recordedGroup{
		{ID: "pg0", Name: "vc-node0", State: raystate.PlacementGroupStateCreated, Strategy: "PACK", Index: 0, Count: 1},
		{ID: "pg1", Name: "vc-node1", State: raystate.PlacementGroupStateRescheduling, Strategy: "PACK", Index: 1, Count: 1},
	})
	if d.HasError() {
		t.Fatal(d)
	}
	state.PlacementGroups = groups
	return state
}

// liveGroups is Ray's view: vc-node0 on a, vc-node1 in state with its bundle on node1 ("" while unplaced).
func liveGroups(snap *planning.Snapshot, state, node1 string) *planning.Snapshot {
	snap.Groups = []raystate.PlacementGroup{
		{PlacementGroupID: "pg0", Name: "vc-node0", State: raystate.PlacementGroupStateCreated, Bundles: []raystate.Bundle{{BundleIndex: 0, NodeID: "a"}}},
		{PlacementGroupID: "pg1", Name: "vc-node1", State: state, Bundles: []raystate.Bundle{{BundleIndex: 0, NodeID: node1}},
			Stats: map[string]any{"scheduling_state": "NO_RESOURCES"}},
	}
	return snap
}

func planRecovery(t *testing.T, p *planCall, snap *planning.Snapshot) {
	t.Helper()
	p.compareWithState()
	spec, _, _ := clusterSpec(p.ctx, *p.plan)
	p.checkRecovery(spec, snap)
}

func warningSummaries(p *planCall) []string {
	var out []string
	for _, w := range p.resp.Diagnostics.Warnings() {
		out = append(out, w.Summary()+": "+w.Detail())
	}
	return out
}

// Node b died. While Ray places vc-node1's bundle again the plan warns and
// replaces nothing; once Ray placed it elsewhere the plan is an in-place
// update; a bundle pinned to b by a ray.io/node-id selector replaces.
func TestPlanWaitsForRayToPlaceLostBundles(t *testing.T) {
	state := recoveringState(t)
	p := newPlanning(state, state)
	planRecovery(t, p, liveGroups(snapshotOf("a", "c"), raystate.PlacementGroupStateRescheduling, ""))
	w := warningSummaries(p)
	if p.replacing || len(w) != 1 || !strings.HasPrefix(w[0], "Virtual cluster is recovering") ||
		!strings.Contains(w[0], "bundle 0 of vc-node1") || !strings.Contains(w[0], "vc-node1 RESCHEDULING (scheduling state NO_RESOURCES)") {
		t.Fatalf("recovering: replacing=%v warnings %q", p.replacing, w)
	}
	if !p.plan.Bundles.Equal(state.Bundles) {
		t.Fatal("a recovering cluster planned a change")
	}

	p = newPlanning(state, state)
	planRecovery(t, p, liveGroups(snapshotOf("a", "c"), raystate.PlacementGroupStateCreated, "c"))
	w = warningSummaries(p)
	if p.replacing || len(w) != 1 || !strings.HasPrefix(w[0], "Virtual cluster recovered from a node's loss") ||
		!p.plan.Bundles.IsUnknown() || !p.plan.PlacementGroups.IsUnknown() {
		t.Fatalf("moved: replacing=%v warnings %q bundles %v", p.replacing, w, p.plan.Bundles)
	}

	pinned := state
	pinned.NodeLabelSelectors, _ = types.ListValueFrom(context.Background(), selectorType, []map[string]string{{}, {"ray.io/node-id": "b"}})
	p = newPlanning(pinned, pinned)
	planRecovery(t, p, liveGroups(snapshotOf("a", "c"), raystate.PlacementGroupStateRescheduling, ""))
	if w = warningSummaries(p); !p.replacing || len(w) != 1 || !strings.HasPrefix(w[0], "A node of the virtual cluster is gone") {
		t.Fatalf("pinned: replacing=%v warnings %q", p.replacing, w)
	}
}
