package resources

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
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

// With recovery_timeout the plan asks Ray when the node died: it replaces
// once the timeout has passed, and replaces nothing when it cannot tell.
func TestPlanReplacesAfterRecoveryTimeout(t *testing.T) {
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
	for _, c := range []struct {
		timeout string
		failing bool
		endTime int64
		replace bool
		want    string
	}{
		{"1h", false, died, false, "recovery_timeout (1h0m0s) replaces the cluster if Ray has not placed them 50m0s from now"},
		{"5m", false, died, true, "the node died 10m0s ago, longer than recovery_timeout (5m0s)"},
		{"5m", true, died, false, "could not read when the node died"},
		{"5m", false, 0, false, "with no time of death"},
	} {
		state := recoveringState(t)
		plan := state
		plan.RecoveryTimeout = goDuration(c.timeout)
		p := newPlanning(state, plan)
		p.r.data = planReadsData(t, srv.URL)
		failing, endTime = c.failing, c.endTime
		planRecovery(t, p, liveGroups(snapshotOf("a", "c"), raystate.PlacementGroupStateRescheduling, ""))
		w := warningSummaries(p)
		if p.replacing != c.replace || len(w) != 1 || !strings.Contains(w[0], c.want) {
			t.Errorf("%s (read fails: %v): replacing=%v warnings %q", c.timeout, c.failing, p.replacing, w)
		}
	}
}

func planReadsData(t *testing.T, address string) *session.Session {
	t.Helper()
	client, err := rayclient.New(rayclient.Config{Address: address})
	if err != nil {
		t.Fatal(err)
	}
	d := session.New(client, "ns", "python", "test", nil)
	d.PlanTimeout = 7 * time.Second
	return d
}
