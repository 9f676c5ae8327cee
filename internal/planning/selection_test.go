package planning

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestChooseNodesFollowsSelectSegmentNodes(t *testing.T) {
	s := clusterspectest.SelectingSpec(1, 1)
	s.SegmentSize = clusterspectest.Ptr(2)
	ids, domains, err := ChooseNodes(s, clusterspectest.Topo, nil)
	if err != nil || !cmp.Equal(ids, []string{"a2", "a1"}) || domains[0] != "nvlink_domain_rackA" {
		t.Fatalf("segment 2: %v %v %v", ids, domains, err)
	}
	// Unset segment_size means segments of 1; excluded nodes are skipped.
	s.SegmentSize = nil
	ids, _, err = ChooseNodes(s, clusterspectest.Topo, map[string]bool{"a2": true})
	if err != nil || !cmp.Equal(ids, []string{"a1", "b2"}) {
		t.Fatalf("segment 1 minus a2: %v %v", ids, err)
	}
	// A node joining with a lower topo_rank changes a new choice...
	joined := append([]topology.Node{{ID: "b0", Domain: "nvlink_domain_rackB", TopoRank: 0}}, clusterspectest.Topo...)
	if ids, _, _ := ChooseNodes(s, joined, nil); !cmp.Equal(ids, []string{"b0", "b2"}) {
		t.Fatalf("after a join: %v", ids)
	}
	// ...and too few complete segments is the reference's error, naming the exclusions.
	s.SegmentSize = clusterspectest.Ptr(2)
	s.BundleCtPerNode = []int{1, 1, 1, 1, 1, 1}
	_, _, err = ChooseNodes(s, clusterspectest.Topo, map[string]bool{"c1": true})
	if err == nil || !strings.Contains(err.Error(), "cannot form 3 complete segments") || !strings.Contains(err.Error(), "exclude_node_ids") {
		t.Fatalf("infeasible: %v", err)
	}
}

func TestCheckCapacityHonoursPins(t *testing.T) {
	capacity := []topology.NodeCapacity{
		{ID: "a1", Total: topology.Resources{"CPU": 4, "GPU": 4}, Available: topology.Resources{"CPU": 4, "GPU": 0}},
		{ID: "a2", Total: topology.Resources{"CPU": 4, "GPU": 4}, Available: topology.Resources{"CPU": 4, "GPU": 4}},
	}
	s := clusterspectest.SelectingSpec(2)
	s.SelectedNodeIDs = []string{"a2"}
	if sh, _ := CheckCapacity(s, capacity, nil, nil); len(sh.Errors) != 0 {
		t.Fatalf("pinned to the free node: %+v", sh)
	}
	s.SelectedNodeIDs = []string{"a1"}
	if sh, _ := CheckCapacity(s, capacity, nil, nil); len(sh.Errors) == 0 {
		t.Fatal("pinned to the busy node must not fit")
	}
	// Fits alone, not together with another cluster planned on the same node.
	s.SelectedNodeIDs = []string{"a2"}
	other := clusterspectest.SelectingSpec(4)
	other.Name = "other"
	other.SelectedNodeIDs = []string{"a2"}
	sh, together := CheckCapacity(s, capacity, nil, FeasibilityGroups(other))
	if !together || len(sh.Errors) == 0 {
		t.Fatalf("together: %v %+v", together, sh)
	}
}
