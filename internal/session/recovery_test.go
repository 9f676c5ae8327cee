package session

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// recoveringCluster is a two-node cluster placed by Ray whose state
// recorded vc-node0's bundle on node a and vc-node1's on node b.
func recoveringCluster() (clusterspec.Spec, []RecordedBundle, map[string]string) {
	spec := clusterspec.Spec{Name: "vc", Namespace: "ns", BundleCtPerNode: []int{1, 1}}.WithDefaults()
	bundles := []RecordedBundle{{Group: "vc-node0", NodeID: "a", NodeIP: "10.0.0.1"}, {Group: "vc-node1", NodeID: "b", NodeIP: "10.0.0.2"}}
	return spec, bundles, map[string]string{"vc-node0": "pg0", "vc-node1": "pg1"}
}

// afterLossOfB is Ray's view once node b died: vc-node1 in state with its
// bundle on node1 ("" while unplaced).
func afterLossOfB(state, node1 string) *planning.Snapshot {
	return &planning.Snapshot{
		Nodes: []raystate.Node{{NodeID: "a"}, {NodeID: "c"}},
		Groups: []raystate.PlacementGroup{
			{PlacementGroupID: "pg0", Name: "vc-node0", State: raystate.PlacementGroupStateCreated, Bundles: []raystate.Bundle{{BundleIndex: 0, NodeID: "a"}}},
			{PlacementGroupID: "pg1", Name: "vc-node1", State: state, Bundles: []raystate.Bundle{{BundleIndex: 0, NodeID: node1}},
				Stats: map[string]any{"scheduling_state": "NO_RESOURCES"}},
		},
	}
}

// Node b died. While Ray places vc-node1's bundle again the plan warns and
// replaces nothing; once Ray placed it elsewhere it re-probes in place; a
// bundle pinned to b by a ray.io/node-id selector replaces.
func TestPlanRecoveryFollowsRay(t *testing.T) {
	d := &Session{}
	spec, bundles, ids := recoveringCluster()
	ctx := context.Background()
	got := d.PlanRecovery(ctx, spec, bundles, ids, afterLossOfB(raystate.PlacementGroupStateRescheduling, ""), RecoveryTimeout{})
	if got.Replace != "" || got.Reprobe || got.Summary != "Virtual cluster is recovering" ||
		!strings.Contains(got.Detail, "bundle 0 of vc-node1") || !strings.Contains(got.Detail, "vc-node1 RESCHEDULING (scheduling state NO_RESOURCES)") {
		t.Fatalf("recovering: %+v", got)
	}
	got = d.PlanRecovery(ctx, spec, bundles, ids, afterLossOfB(raystate.PlacementGroupStateCreated, "c"), RecoveryTimeout{})
	if got.Replace != "" || !got.Reprobe || got.Summary != "Virtual cluster recovered from a node's loss" {
		t.Fatalf("moved: %+v", got)
	}
	spec.NodeLabelSelectors = []map[string]string{{}, {clusterspec.NodeIDLabel: "b"}}
	got = d.PlanRecovery(ctx, spec, bundles, ids, afterLossOfB(raystate.PlacementGroupStateRescheduling, ""), RecoveryTimeout{})
	if got.Replace != AttrPlacementGroups || got.Summary != "A node of the virtual cluster is gone" {
		t.Fatalf("pinned: %+v", got)
	}
	if got := d.PlanRecovery(ctx, spec, nil, nil, afterLossOfB(raystate.PlacementGroupStateRescheduling, ""), RecoveryTimeout{}); got != (RecoveryPlan{}) {
		t.Fatalf("nothing recorded: %+v", got)
	}
}

// With recovery_timeout the plan asks Ray when the node died: it replaces
// once the timeout has passed, and replaces nothing when it cannot tell.
func TestPlanRecoveryReplacesAfterRecoveryTimeout(t *testing.T) {
	died := time.Now().Add(-10 * time.Minute).UnixMilli()
	failing, endTime := false, died
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		if !strings.Contains(r.URL.RawQuery, "filter_values=b") {
			t.Errorf("query %s", r.URL.RawQuery)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"result": true, "msg": "", "data": map[string]any{"result": map[string]any{
			"total": 1, "num_after_truncation": 1, "num_filtered": 1,
			"result": []map[string]any{{"node_id": "b", "state": "DEAD", "end_time_ms": endTime}}}}})
	}))
	defer srv.Close()
	d := planReadsData(t, srv.URL)
	spec, bundles, ids := recoveringCluster()
	for _, c := range []struct {
		timeout time.Duration
		failing bool
		endTime int64
		replace bool
		want    string
	}{
		{time.Hour, false, died, false, "recovery_timeout (1h0m0s) replaces the cluster if Ray has not placed them 50m0s from now"},
		{5 * time.Minute, false, died, true, "the node died 10m0s ago, longer than recovery_timeout (5m0s)"},
		{5 * time.Minute, true, died, false, "could not read when the node died"},
		{5 * time.Minute, false, 0, false, "with no time of death"},
	} {
		failing, endTime = c.failing, c.endTime
		got := d.PlanRecovery(context.Background(), spec, bundles, ids, afterLossOfB(raystate.PlacementGroupStateRescheduling, ""),
			RecoveryTimeout{Limit: c.timeout, Set: true})
		if (got.Replace != "") != c.replace || !strings.Contains(got.Detail, c.want) {
			t.Errorf("%s (read fails: %v): %+v", c.timeout, c.failing, got)
		}
	}
}

// A select_nodes cluster pinned to its domain: a selected node that holds
// none of its bundles dying only warns; one that holds bundles waits for
// Ray to place them again inside the domain; pinned to the node, it
// replaces at once.
func TestPlanRecoveryOfSelectedNodes(t *testing.T) {
	d := &Session{}
	spec, bundles, ids := recoveringCluster()
	spec.SelectNodes, spec.Pinning, spec.SelectedNodeIDs = true, clusterspec.PinningDomain, []string{"a", "b"}
	ctx := context.Background()

	packed := []RecordedBundle{{Group: "vc-node0", NodeID: "a"}, {Group: "vc-node1", NodeID: "a"}} // Ray packed both on a
	snap := afterLossOfB(raystate.PlacementGroupStateCreated, "a")
	got := d.PlanRecovery(ctx, spec, packed, ids, snap, RecoveryTimeout{Limit: time.Nanosecond, Set: true})
	if got.Replace != "" || got.Reprobe || got.Summary != "A selected node of the virtual cluster is gone" {
		t.Fatalf("selected node without bundles: %+v", got)
	}

	got = d.PlanRecovery(ctx, spec, bundles, ids, afterLossOfB(raystate.PlacementGroupStateRescheduling, ""), RecoveryTimeout{})
	if got.Replace != "" || got.Summary != "Virtual cluster is recovering" {
		t.Fatalf("domain-pinned bundles on the lost node: %+v", got)
	}

	// The lost bundle's domain has no alive node left: Ray can never place it again.
	spec.SelectedNodeDomains = []string{"nvlink_domain_x", "nvlink_domain_y"}
	got = d.PlanRecovery(ctx, spec, bundles, ids, afterLossOfB(raystate.PlacementGroupStateRescheduling, ""), RecoveryTimeout{})
	if got.Replace != AttrPlacementGroups {
		t.Fatalf("domain-pinned bundles whose domain has no alive node: %+v", got)
	}
	snap = afterLossOfB(raystate.PlacementGroupStateRescheduling, "")
	snap.Nodes[1].ResourcesTotal = map[string]float64{"nvlink_domain_y": 1}
	if got = d.PlanRecovery(ctx, spec, bundles, ids, snap, RecoveryTimeout{}); got.Replace != "" || got.Summary != "Virtual cluster is recovering" {
		t.Fatalf("domain-pinned bundles with an alive node in their domain: %+v", got)
	}

	spec.Pinning = clusterspec.PinningNode
	got = d.PlanRecovery(ctx, spec, bundles, ids, afterLossOfB(raystate.PlacementGroupStateRescheduling, ""), RecoveryTimeout{})
	if got.Replace != clusterspec.AttrSelectedNodeIDs {
		t.Fatalf("node-pinned bundles on the lost node: %+v", got)
	}
}
