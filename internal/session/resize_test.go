package session

import (
	"slices"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestPlanResize(t *testing.T) {
	base := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{2, 2}, UseGPUs: true, NumGPUsPerNode: 2, MaxColocatedWorkerGroups: 1}
	with := func(f func(*clusterspec.Spec)) clusterspec.Spec {
		s := base
		f(&s)
		return s
	}
	two := 2
	cases := []struct {
		name                 string
		prior, planned       clusterspec.Spec
		kept, added, removed []int
		replace              string // a word of the reason; "" when in place
	}{
		{"grow", base, with(func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{2, 2, 2} }), []int{0, 1}, []int{2}, nil, ""},
		{"shrink", with(func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{2, 2, 2} }), base, []int{0, 1}, nil, []int{2}, ""},
		{"changed node", base, with(func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{2, 3, 2} }), nil, nil, nil, "Logical node 1"},
		{"constraint of a kept node", base, with(func(s *clusterspec.Spec) {
			s.BundleCtPerNode = []int{2, 2, 2}
			s.NodeResourceConstraints = []topology.Resources{{"x": 1}, {}, {}}
		}), nil, nil, nil, clusterspec.AttrNodeResourceConstraints},
		{"constraint of an added node", base, with(func(s *clusterspec.Spec) {
			s.BundleCtPerNode = []int{2, 2, 2}
			s.NodeResourceConstraints = []topology.Resources{{}, {}, {"x": 1}}
		}), []int{0, 1}, []int{2}, nil, ""},
		{"unified", with(func(s *clusterspec.Spec) { s.UseUnifiedPG = true }), with(func(s *clusterspec.Spec) {
			s.UseUnifiedPG, s.BundleCtPerNode = true, []int{2, 2, 2}
		}), []int{0, 1}, []int{2}, nil, "unified"},
		{"select_nodes", with(func(s *clusterspec.Spec) { s.SelectNodes = true }), with(func(s *clusterspec.Spec) {
			s.SelectNodes, s.BundleCtPerNode = true, []int{2, 2, 2}
		}), []int{0, 1}, []int{2}, nil, ""},
		{"incomplete segments", with(func(s *clusterspec.Spec) { s.BundleCtPerNode, s.SegmentSize = []int{2, 2, 2, 2}, &two }),
			with(func(s *clusterspec.Spec) { s.BundleCtPerNode, s.SegmentSize = []int{2, 2, 2}, &two }), []int{0, 1, 2}, nil, []int{3}, "segment"},
		{"unchanged", base, base, []int{0, 1}, nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := PlanResize(c.prior, c.planned)
			if c.replace == "" && r.Replace != "" || !strings.Contains(r.Replace, c.replace) {
				t.Fatalf("Replace = %q, want one naming %q", r.Replace, c.replace)
			}
			if c.replace != "" {
				return
			}
			if !slices.Equal(r.Kept, c.kept) || !slices.Equal(r.Added, c.added) || !slices.Equal(r.Removed, c.removed) {
				t.Fatalf("kept %v added %v removed %v, want %v %v %v", r.Kept, r.Added, r.Removed, c.kept, c.added, c.removed)
			}
		})
	}
}

func TestResizeAddedOnly(t *testing.T) {
	spec := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1, 2, 3}, UseGPUs: true, NumGPUsPerNode: 1, MaxColocatedWorkerGroups: 1}
	added := PlanResize(clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1}, UseGPUs: true, NumGPUsPerNode: 1, MaxColocatedWorkerGroups: 1}, spec).AddedOnly(spec)
	var names []string
	for _, g := range added.Groups() {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, []string{"vc-node1", "vc-node2"}) || spec.BundleCtPerNode[0] != 1 {
		t.Fatalf("added groups %v (spec %v)", names, spec.BundleCtPerNode)
	}
	if d := (Resize{Kept: []int{0}, Added: []int{1}}).Describe("vc"); !strings.Contains(d, "Kept (their workers keep running): vc-node0.") ||
		!strings.Contains(d, "Added: vc-node1.") || !strings.Contains(d, "once the added groups are ready: none.") {
		t.Fatal(d)
	}
}

// With select_nodes and segments, the added logical nodes are chosen as a
// create chooses them (a complete segment of free nodes), never on the nodes
// the kept ones hold, whose groups count as taken.
func TestGrowChoosesAddedNodesBesideTheKept(t *testing.T) {
	prior := clusterspectest.SelectingSpec(4, 4)
	prior.SegmentSize = clusterspectest.Ptr(2)
	spec := clusterspectest.SelectingSpec(4, 4, 4, 4)
	spec.SegmentSize = prior.SegmentSize
	r := PlanResize(prior, spec)
	if r.Replace != "" || !slices.Equal(r.Added, []int{2, 3}) {
		t.Fatalf("resize %+v", r)
	}
	snap := &planning.Snapshot{Nodes: clusterspectest.GPUNodes()}
	for i, node := range []string{"b2", "b1"} {
		g := raystate.PlacementGroup{Name: clusterspec.NodeGroupName("vc", i), State: raystate.PlacementGroupStateCreated}
		for j := 0; j < 4; j++ {
			g.Bundles = append(g.Bundles, raystate.Bundle{NodeID: node, UnitResources: map[string]float64{"CPU": 1, "GPU": 1}})
		}
		snap.Groups = append(snap.Groups, g)
	}
	r.KeepSelection(&spec, []string{"b2", "b1"}, []string{"nvlink_domain_rackB", "nvlink_domain_rackB"})
	if issues := GrowIssues(&spec, r, snap, nil, nil); clusterspec.HasError(issues) {
		t.Fatalf("issues %+v", issues)
	}
	if len(spec.SelectedNodeIDs) != 4 || !slices.Equal(spec.SelectedNodeIDs[:2], []string{"b2", "b1"}) ||
		slices.Contains(spec.SelectedNodeIDs[2:], "b1") || slices.Contains(spec.SelectedNodeIDs[2:], "b2") ||
		len(spec.SelectedNodeDomains) != 4 || spec.SelectedNodeDomains[2] != spec.SelectedNodeDomains[3] {
		t.Fatalf("selected %v in %v", spec.SelectedNodeIDs, spec.SelectedNodeDomains)
	}
	// Every free node held by the kept ones or excluded: the grow fails, naming it.
	spec.SelectedNodeIDs, spec.SelectedNodeDomains = nil, nil
	r.KeepSelection(&spec, []string{"b2", "b1"}, nil)
	exclude := map[string]bool{}
	for _, n := range clusterspectest.GPUNodes() {
		exclude[n.NodeID] = true
	}
	issues := GrowIssues(&spec, r, snap, exclude, nil)
	if !clusterspec.HasError(issues) || !strings.Contains(issues[0].Detail, "must fit beside the groups it keeps") {
		t.Fatalf("issues %+v", issues)
	}
}

func TestLeftoverGroups(t *testing.T) {
	prior := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1, 1, 1}}
	planned := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1, 1}}
	live := []raystate.PlacementGroup{
		{Name: "vc-node0", State: raystate.PlacementGroupStateCreated},
		{Name: "vc-node2", State: raystate.PlacementGroupStateCreated}, // the shrink removes it
		{Name: "vc-node3", State: raystate.PlacementGroupStateCreated},
		{Name: "vc-node4", State: raystate.PlacementGroupStateRemoved},
		{Name: "vc-nodes", State: raystate.PlacementGroupStateCreated},
		{Name: "other-node5", State: raystate.PlacementGroupStateCreated},
	}
	got := LeftoverGroups("vc", []clusterspec.Spec{prior, planned}, live)
	if !slices.Equal(got, []string{"vc-node3"}) {
		t.Fatalf("leftovers %v", got)
	}
	if is := LeftoverIssue("vc", got); len(is) != 1 || !is[0].Warning || !strings.Contains(is[0].Detail, "vc-node3") {
		t.Fatalf("issue %+v", is)
	}
}
