package session

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
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
		{"drops a node without bundles", with(func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{2, 2, 0} }), base, []int{0, 1}, nil, nil, ""},
		{"appends a node without bundles", base, with(func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{2, 2, 0} }), []int{0, 1}, nil, nil, ""},
		{"unified drops a node without bundles", with(func(s *clusterspec.Spec) { s.UseUnifiedPG, s.BundleCtPerNode = true, []int{2, 2, 0} }),
			with(func(s *clusterspec.Spec) { s.UseUnifiedPG = true }), nil, nil, nil, "unified"},
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
			if relisted := len(c.prior.BundleCtPerNode) != len(c.planned.BundleCtPerNode); r.InPlace() != relisted {
				t.Fatalf("InPlace = %v, want %v: a change of the list's length is a resize", r.InPlace(), relisted)
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

// Relisting nodes without bundles keeps select_nodes' one node per logical
// node: a drop trims the selection, an append chooses a node.
func TestRelistedNodesKeepTheSelectionWhole(t *testing.T) {
	prior := clusterspectest.SelectingSpec(4, 4, 0)
	spec := clusterspectest.SelectingSpec(4, 4)
	r := PlanResize(prior, spec)
	r.KeepSelection(&spec, []string{"b2", "b1", "a1"}, nil)
	if !r.InPlace() || !slices.Equal(spec.SelectedNodeIDs, []string{"b2", "b1"}) {
		t.Fatalf("resize %+v, selected %v", r, spec.SelectedNodeIDs)
	}
	grown := clusterspectest.SelectingSpec(4, 4, 0)
	r = PlanResize(spec, grown)
	r.KeepSelection(&grown, []string{"b2", "b1"}, nil)
	snap := &planning.Snapshot{Nodes: clusterspectest.GPUNodes()}
	if issues := GrowIssues(&grown, r, snap, nil, nil); !r.InPlace() || clusterspec.HasError(issues) || len(grown.SelectedNodeIDs) != 3 {
		t.Fatalf("resize %+v, issues %+v, selected %v", r, issues, grown.SelectedNodeIDs)
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

// A resize that failed before its record was written keeps the former
// shape; one that failed after it (Committed) or finished before its stop
// stands, with warnings naming what it left.
func TestResizeOutcome(t *testing.T) {
	stopped := errors.New("stopped")
	detail := func() string { return "why" }
	for _, c := range []struct {
		name     string
		res      *contract.Result
		err      error
		kept     bool
		warnings []string
	}{
		{"done", &contract.Result{OK: true}, nil, true, nil},
		{"left a group", &contract.Result{OK: true, NotRemoved: []string{"vc-node2"}}, nil, true, []string{"vc-node2"}},
		{"failed before the commit", &contract.Result{}, stopped, false, nil},
		{"no result", nil, stopped, false, nil},
		{"stopped after the commit", &contract.Result{Committed: true, NotRemoved: []string{"vc-node2"}}, stopped, true,
			[]string{"interrupted (stopped)", "vc-node2"}},
		{"finished, then its wait was cancelled", &contract.Result{OK: true}, stopped, true, []string{"interrupted"}},
	} {
		res, issues := ResizeOutcome(c.res, c.err, detail, nil)
		if (res != nil) != c.kept || clusterspec.HasError(issues) == c.kept {
			t.Errorf("%s: result %v, issues %+v", c.name, res, issues)
			continue
		}
		if !c.kept {
			if !strings.Contains(issues[0].Detail, "why") || !strings.Contains(issues[0].Detail, "former shape") {
				t.Errorf("%s: %q", c.name, issues[0].Detail)
			}
			continue
		}
		if len(issues) != len(c.warnings) {
			t.Errorf("%s: issues %+v, want %d warnings", c.name, issues, len(c.warnings))
			continue
		}
		for i, w := range c.warnings {
			if !issues[i].Warning || !strings.Contains(issues[i].Detail, w) {
				t.Errorf("%s: issue %d %+v, want a warning with %q", c.name, i, issues[i], w)
			}
		}
	}
}

// A change of the nodes replaces for a reason the plan names, never an
// empty one.
func TestNodesReplacement(t *testing.T) {
	inPlace := Resize{Kept: []int{0}, Added: []int{1}}
	for _, c := range []struct {
		r              Resize
		known, pending bool
		want           string
	}{
		{inPlace, true, false, ""},
		{Resize{}, false, false, "known only at apply"},
		{Resize{Replace: "why"}, true, false, "why"},
		{inPlace, true, true, "import is not applied"},
		{Resize{Kept: []int{0}}, true, true, ""}, // nothing changes: nothing to resize
	} {
		got := NodesReplacement(c.r, c.known, c.pending, "vc")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v known=%v pending=%v: %q, want %q", c.r, c.known, c.pending, got, c.want)
		}
	}
}

func TestPlannedSelection(t *testing.T) {
	held := []string{"a", "b", "c"}
	if ids, known := (Resize{Kept: []int{0, 1}, Removed: []int{2}, Common: 2, Relisted: true}).PlannedSelection(held); !known || !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("a shrink shows the kept nodes: %v %v", ids, known)
	}
	if _, known := (Resize{Kept: []int{0, 1, 2}, Added: []int{3}, Common: 3, Relisted: true, Appended: true}).PlannedSelection(held); known {
		t.Error("a grow's added nodes are chosen at apply")
	}
	if _, known := (Resize{Common: 4}).PlannedSelection(held); known {
		t.Error("a selection shorter than the kept nodes is not shown")
	}
}

// An update whose nodes now call for a replacement fails before any call
// to Ray (the session has no client).
func TestUpdateNodesRefusesAReplacement(t *testing.T) {
	d := New(nil, "ns", "python3", "test", nil)
	spec := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1, 1}}
	for _, u := range []NodesUpdate{
		{Resize: &Resize{Replace: "Logical node 0 changes."}, Known: true},
		{Resize: &Resize{}, Known: false},
	} {
		res, resized, issues := d.UpdateNodes(t.Context(), &spec, "owner", u)
		if res != nil || resized || len(issues) != 1 || issues[0].Summary != SummaryCannotResize {
			t.Errorf("%+v: %v %v %+v", u, res, resized, issues)
		}
	}
}
