package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// selectingState is a cluster in state that selected nodes a and b.
func selectingState(t *testing.T) virtualClusterModel {
	t.Helper()
	ctx := context.Background()
	counts, _ := types.ListValueFrom(ctx, types.Int64Type, []int64{1, 1})
	selected, _ := types.ListValueFrom(ctx, types.StringType, []string{"a", "b"})
	bundles, d := types.ListValueFrom(ctx, bundleObjectType, []recordedBundle{
		{Rank: 0, Group: "vc-node0", GlobalIndex: 0, NodeID: "a", NodeIP: "10.0.0.1", GPUID: types.Int64Null(), NVLinkDomain: "nvlink_domain_x"},
		{Rank: 1, Group: "vc-node1", GlobalIndex: 1, NodeID: "b", NodeIP: "10.0.0.2", GPUID: types.Int64Null(), NVLinkDomain: "nvlink_domain_x"},
	})
	if d.HasError() {
		t.Fatal(d)
	}
	return virtualClusterModel{
		ID: types.StringValue("vc"), Name: types.StringValue("vc"), BundleCtPerNodeList: counts,
		UseGPUs: types.BoolValue(false), NumGPUsPerNode: types.Int64Value(8), MaxColocatedWorkerGroups: types.Int64Value(1),
		PlacementGroupStrategy: types.StringValue(clusterspec.DefaultStrategy), UseUnifiedPG: types.BoolValue(false),
		SegmentSize: types.Int64Null(), NodeResourceConstraints: types.ListNull(constraintType),
		PortRangeLow: types.Int64Value(1400), PortRangeHigh: types.Int64Value(1999), ReadyTimeout: goDuration("180s"),
		Namespace: types.StringValue("ns"), PlacementGroups: types.ListNull(groupObjectType), Bundles: bundles,
		OwnerID: types.StringValue("owner"), ExclusiveNodes: types.BoolValue(false), SelectNodes: types.BoolValue(true), Pinning: types.StringValue(clusterspec.PinningNode),
		ExcludeNodeIDs: types.SetNull(types.StringType), SelectedNodeIDs: selected,
		NodeLabelSelectors: types.ListNull(selectorType), TopologyStrategy: types.MapNull(types.StringType),
		TopologyAssignments: types.MapNull(types.StringType),
	}
}

func newPlanning(state, plan virtualClusterModel) *planCall {
	r := &virtualClusterResource{data: &session.Session{Namespace: "ns"}}
	return &planCall{r: r, ctx: context.Background(), resp: &resource.ModifyPlanResponse{}, plan: &plan, state: state}
}

func snapshotOf(ids ...string) *planning.Snapshot {
	s := &planning.Snapshot{}
	for _, id := range ids {
		s.Nodes = append(s.Nodes, raystate.Node{NodeID: id})
	}
	return s
}

// The selection lives in state: an unchanged configuration keeps it whatever
// the topology does, as long as the cluster's own nodes are alive.
func TestPlanKeepsSelectionWhenNothingOfTheClusterChanged(t *testing.T) {
	state := selectingState(t)
	plan := state
	plan.SelectedNodeIDs = types.ListUnknown(types.StringType) // as the framework hands it over
	p := newPlanning(state, plan)
	p.compareWithState()
	spec, _, _ := clusterSpec(p.ctx, *p.plan)
	p.checkRecovery(spec, snapshotOf("a", "b", "joined"))
	if p.replacing || len(p.resp.RequiresReplace) != 0 || !p.plan.SelectedNodeIDs.Equal(state.SelectedNodeIDs) {
		t.Fatalf("replacing=%v %v selected=%v", p.replacing, p.resp.RequiresReplace, p.plan.SelectedNodeIDs)
	}
}

func TestPlanReplacesWhenAHeldNodeIsGone(t *testing.T) {
	state := selectingState(t)
	p := newPlanning(state, state)
	p.compareWithState()
	spec, _, _ := clusterSpec(p.ctx, *p.plan)
	p.checkRecovery(spec, snapshotOf("a", "c"))
	if !p.replacing || len(p.resp.RequiresReplace) != 1 || !p.plan.SelectedNodeIDs.IsUnknown() {
		t.Fatalf("replacing=%v %v", p.replacing, p.resp.RequiresReplace)
	}
	if w := p.resp.Diagnostics.Warnings(); len(w) != 1 || w[0].Summary() != "A node of the virtual cluster is gone" {
		t.Fatalf("warnings %v", w)
	}
}

func TestPlanReplacesWhenExcludingAHeldNode(t *testing.T) {
	state := selectingState(t)
	plan := state
	plan.ExcludeNodeIDs, _ = types.SetValueFrom(context.Background(), types.StringType, []string{"c"})
	p := newPlanning(state, plan)
	p.compareWithState()
	if p.replacing {
		t.Fatal("excluding a node the cluster does not hold replaced it")
	}
	plan.ExcludeNodeIDs, _ = types.SetValueFrom(context.Background(), types.StringType, []string{"b"})
	p = newPlanning(state, plan)
	p.compareWithState()
	if !p.replacing || !p.plan.SelectedNodeIDs.IsUnknown() {
		t.Fatal("excluding a held node did not replace the cluster")
	}
}

// A state written before select_nodes, pinning and exclusive_nodes existed is no replacement.
func TestPlanTreatsMissingNewAttributesAsDefaults(t *testing.T) {
	state := selectingState(t)
	state.SelectNodes, state.Pinning = types.BoolValue(false), types.StringValue(clusterspec.DefaultPinning)
	state.SelectedNodeIDs = types.ListNull(types.StringType)
	old := state
	old.SelectNodes, old.Pinning, old.ExclusiveNodes = types.BoolNull(), types.StringNull(), types.BoolNull()
	upgradeState(&old)
	p := newPlanning(old, state)
	p.compareWithState()
	if p.replacing {
		t.Fatal("an upgraded state was replaced")
	}
}

func TestIssuePath(t *testing.T) {
	if got := issuePath("node_resource_constraints[2]").String(); got != "node_resource_constraints[2]" {
		t.Fatalf("indexed path %q", got)
	}
	if got := issuePath("segment_size").String(); got != "segment_size" {
		t.Fatalf("plain path %q", got)
	}
}

// A configuration that only respells ready_timeout or a timeout plans no
// change: configEqual holds, nothing is replaced, and the plan keeps the
// prior spelling (which Terraform accepts for an equivalent configuration).
func TestPlanRespelledDurationsChangeNothing(t *testing.T) {
	state := selectingState(t)
	state.Timeouts = timeoutsValue("10m")
	plan := state
	plan.ReadyTimeout, plan.Timeouts = goDuration("3m"), timeoutsValue("600s")
	if !configEqual(plan, state) || shapeChanged(plan, state) {
		t.Fatalf("configEqual = %v, shapeChanged = %v", configEqual(plan, state), shapeChanged(plan, state))
	}
	p := newPlanning(state, plan)
	p.compareWithState()
	if p.replacing || len(p.resp.RequiresReplace) != 0 {
		t.Fatalf("replacing=%v %v", p.replacing, p.resp.RequiresReplace)
	}
	if !p.plan.Timeouts.Equal(state.Timeouts) {
		t.Errorf("timeouts planned %v, want the prior %v", p.plan.Timeouts, state.Timeouts)
	}
	plan.ReadyTimeout = goDuration("4m")
	if configEqual(plan, state) {
		t.Error("a different ready_timeout must be a change")
	}
	if got := changedAttributes(plan, state, inPlaceAttributes); len(got) != 1 || got[0] != "ready_timeout" {
		t.Errorf("changed %v, want [ready_timeout]", got)
	}
}

// withCounts is m with bundle_ct_per_node_list counts.
func withCounts(t *testing.T, m virtualClusterModel, counts ...int64) virtualClusterModel {
	t.Helper()
	var d diag.Diagnostics
	if m.BundleCtPerNodeList, d = types.ListValueFrom(context.Background(), types.Int64Type, counts); d.HasError() {
		t.Fatal(d)
	}
	return m
}

// Appending a node resizes in place (a warning lists the groups), with the
// kept nodes' selection kept and the added one's unknown; a changed kept
// node replaces, naming why.
func TestPlanResizesAppendedNodesInPlace(t *testing.T) {
	state := selectingState(t)
	p := newPlanning(state, withCounts(t, state, 1, 1, 1))
	p.compareWithState()
	if p.replacing || len(p.resp.RequiresReplace) != 0 || p.resize == nil || !p.plan.SelectedNodeIDs.IsUnknown() {
		t.Fatalf("replacing=%v %v resize=%v selected=%v", p.replacing, p.resp.RequiresReplace, p.resize, p.plan.SelectedNodeIDs)
	}
	if w := p.resp.Diagnostics.Warnings(); len(w) != 1 || w[0].Summary() != "Virtual cluster resized in place" ||
		!strings.Contains(w[0].Detail(), "Added: vc-node2.") {
		t.Fatalf("warnings %v", w)
	}
	p = newPlanning(state, withCounts(t, state, 1))
	p.compareWithState()
	if p.replacing || p.resize == nil || p.plan.SelectedNodeIDs.String() != `["a"]` {
		t.Fatalf("shrink: replacing=%v resize=%v selected=%v", p.replacing, p.resize, p.plan.SelectedNodeIDs)
	}
	p = newPlanning(state, withCounts(t, state, 2, 1))
	p.compareWithState()
	if !p.replacing || p.resize != nil || len(p.resp.RequiresReplace) != 1 {
		t.Fatalf("changed node: replacing=%v resize=%v %v", p.replacing, p.resize, p.resp.RequiresReplace)
	}
	if w := p.resp.Diagnostics.Warnings(); len(w) != 1 || !strings.Contains(w[0].Detail(), "Logical node 0 changes (bundles 1 → 2)") {
		t.Fatalf("warnings %v", w)
	}
	shrunk := withCounts(t, state, 1)
	shrunk.ExcludeNodeIDs, _ = types.SetValueFrom(context.Background(), types.StringType, []string{"b"})
	p = newPlanning(state, shrunk)
	p.compareWithState()
	if p.replacing || p.resize == nil {
		t.Fatalf("a shrink that excludes the node it gives up replaced the cluster")
	}
	imported := state
	imported.OwnerID = types.StringValue(importPendingOwner)
	p = newPlanning(imported, withCounts(t, imported, 1, 1, 1))
	p.compareWithState()
	if !p.replacing || p.resize != nil {
		t.Fatalf("an import not applied yet was resized: replacing=%v", p.replacing)
	}
}
