package vcluster

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// The local test cluster's topology, plus the extra node rackB-0.
var testTopo = []topology.Node{
	{ID: "head", Domain: topology.NVLinkDomainUnknown, TopoRank: 1},
	{ID: "a1", Domain: "nvlink_domain_rackA", TopoRank: 3},
	{ID: "a2", Domain: "nvlink_domain_rackA", TopoRank: 2},
	{ID: "b1", Domain: "nvlink_domain_rackB", TopoRank: 5},
	{ID: "b2", Domain: "nvlink_domain_rackB", TopoRank: 4},
	{ID: "c1", Domain: "nvlink_domain_rackC", TopoRank: 6},
}

func selectingSpec(counts ...int) Spec {
	return Spec{Name: "vc", BundleCtPerNode: counts, UseGPUs: true, NumGPUsPerNode: 4, MaxColocatedWorkerGroups: 1,
		SelectNodes: true}.WithDefaults()
}

func TestChooseNodesFollowsSelectSegmentNodes(t *testing.T) {
	s := selectingSpec(1, 1)
	s.SegmentSize = ptr(2)
	ids, domains, err := s.ChooseNodes(testTopo, nil)
	if err != nil || !reflect.DeepEqual(ids, []string{"a2", "a1"}) || domains[0] != "nvlink_domain_rackA" {
		t.Fatalf("segment 2: %v %v %v", ids, domains, err)
	}
	// Unset segment_size means segments of 1; excluded nodes are skipped.
	s.SegmentSize = nil
	ids, _, err = s.ChooseNodes(testTopo, map[string]bool{"a2": true})
	if err != nil || !reflect.DeepEqual(ids, []string{"a1", "b2"}) {
		t.Fatalf("segment 1 minus a2: %v %v", ids, err)
	}
	// A node joining with a lower topo_rank changes a new choice...
	joined := append([]topology.Node{{ID: "b0", Domain: "nvlink_domain_rackB", TopoRank: 0}}, testTopo...)
	if ids, _, _ := s.ChooseNodes(joined, nil); !reflect.DeepEqual(ids, []string{"b0", "b2"}) {
		t.Fatalf("after a join: %v", ids)
	}
	// ...and too few complete segments is the reference's error, naming the exclusions.
	s.SegmentSize = ptr(2)
	s.BundleCtPerNode = []int{1, 1, 1, 1, 1, 1}
	_, _, err = s.ChooseNodes(testTopo, map[string]bool{"c1": true})
	if err == nil || !strings.Contains(err.Error(), "cannot form 3 complete segments") || !strings.Contains(err.Error(), "exclude_node_ids") {
		t.Fatalf("infeasible: %v", err)
	}
}

func TestGoneSelectedNodes(t *testing.T) {
	s := selectingSpec(1, 1)
	s.SelectedNodeIDs = []string{"a2", "a1"}
	if gone := s.GoneSelectedNodes(map[string]bool{"a1": true, "a2": true, "b0": true}); len(gone) != 0 {
		t.Fatalf("nothing gone: %v", gone)
	}
	if gone := s.GoneSelectedNodes(map[string]bool{"a1": true}); !reflect.DeepEqual(gone, []string{"a2"}) {
		t.Fatalf("a2 gone: %v", gone)
	}
}

func TestNodePinningUsesLabelSelectors(t *testing.T) {
	s := selectingSpec(2, 1)
	s.SelectedNodeIDs = []string{"a2", "a1"}
	req := s.Request(ActionCreate)
	if len(req.Groups) != 2 {
		t.Fatal(req.Groups)
	}
	want0 := []map[string]string{{NodeIDLabel: "a2"}, {NodeIDLabel: "a2"}}
	if !reflect.DeepEqual(req.Groups[0].BundleLabelSelector, want0) ||
		!reflect.DeepEqual(req.Groups[1].BundleLabelSelector, []map[string]string{{NodeIDLabel: "a1"}}) {
		t.Fatalf("selectors: %+v", req.Groups)
	}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	// Unified: bundles follow their logical node.
	s.UseUnifiedPG = true
	req = s.Request(ActionCreate)
	want := []map[string]string{{NodeIDLabel: "a2"}, {NodeIDLabel: "a2"}, {NodeIDLabel: "a1"}}
	if !reflect.DeepEqual(req.Groups[0].BundleLabelSelector, want) {
		t.Fatalf("unified selectors: %+v", req.Groups[0].BundleLabelSelector)
	}
	// Resources stay the reference's: no pin resource reaches Ray.
	for _, b := range req.Groups[0].Bundles {
		if len(b) != 2 {
			t.Fatalf("bundle %v", b)
		}
	}
	// Without a selection there are no selectors.
	if r := (Spec{Name: "vc", BundleCtPerNode: []int{1}, MaxColocatedWorkerGroups: 1}).Request(ActionCreate); r.Groups[0].BundleLabelSelector != nil {
		t.Fatal("selectors without select_nodes")
	}
}

func TestDomainPinningAddsDomainConstraint(t *testing.T) {
	s := selectingSpec(1, 1)
	s.Pinning = PinningDomain
	s.SelectedNodeIDs = []string{"a2", "b2"}
	s.SelectedNodeDomains = []string{"nvlink_domain_rackA", "nvlink_domain_rackB"}
	groups := s.Groups()
	if groups[0].Bundles[0]["nvlink_domain_rackA"] != topology.DomainConstraintAmount ||
		groups[1].Bundles[0]["nvlink_domain_rackB"] != topology.DomainConstraintAmount {
		t.Fatalf("domain pins: %+v", groups)
	}
	if s.Request(ActionCreate).Groups[0].BundleLabelSelector != nil {
		t.Fatal("domain pinning uses no label selector")
	}
}

func TestCheckCapacityHonoursPins(t *testing.T) {
	capacity := []topology.NodeCapacity{
		{ID: "a1", Total: topology.Resources{"CPU": 4, "GPU": 4}, Available: topology.Resources{"CPU": 4, "GPU": 0}},
		{ID: "a2", Total: topology.Resources{"CPU": 4, "GPU": 4}, Available: topology.Resources{"CPU": 4, "GPU": 4}},
	}
	s := selectingSpec(2)
	s.SelectedNodeIDs = []string{"a2"}
	if sh, _ := s.CheckCapacity(capacity, nil, nil); len(sh.Errors) != 0 {
		t.Fatalf("pinned to the free node: %+v", sh)
	}
	s.SelectedNodeIDs = []string{"a1"}
	if sh, _ := s.CheckCapacity(capacity, nil, nil); len(sh.Errors) == 0 {
		t.Fatal("pinned to the busy node must not fit")
	}
	// Fits alone, not together with another cluster planned on the same node.
	s.SelectedNodeIDs = []string{"a2"}
	other := selectingSpec(4)
	other.Name = "other"
	other.SelectedNodeIDs = []string{"a2"}
	sh, together := s.CheckCapacity(capacity, nil, other.FeasibilityGroups())
	if !together || len(sh.Errors) == 0 {
		t.Fatalf("together: %v %+v", together, sh)
	}
}

func TestSpecValidateSelection(t *testing.T) {
	s := selectingSpec(1, 1)
	s.NodeResourceConstraints = []topology.Resources{{}, {}}
	s.Pinning = "rack"
	issues := s.Validate()
	var paths []string
	for _, is := range issues {
		paths = append(paths, is.Path)
	}
	if !strings.Contains(strings.Join(paths, ","), AttrNodeResourceConstraints) || !strings.Contains(strings.Join(paths, ","), AttrPinning) {
		t.Fatalf("issues: %+v", issues)
	}
}
