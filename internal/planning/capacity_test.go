package planning

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// topoSnapshot is testTopo as Ray reports it: 4 CPUs and 4 GPUs per node
// (the head none), domains and ranks as resources, and groups holding
// bundles: group name -> node id -> GPUs (one bundle of {CPU 1, GPU n}).
func topoSnapshot(held map[string]map[string]float64) *Snapshot {
	snap := &Snapshot{Nodes: clusterspectest.GPUNodes()}
	for name, nodes := range held {
		g := raystate.PlacementGroup{Name: name, State: raystate.PlacementGroupStateCreated}
		for id, gpus := range nodes {
			g.Bundles = append(g.Bundles, raystate.Bundle{NodeID: id, UnitResources: map[string]float64{"CPU": 1, "GPU": gpus}})
		}
		snap.Groups = append(snap.Groups, g)
	}
	return snap
}

// Selection sees what other groups hold: nodes that cannot hold a logical
// node are left out and the segments form from the rest, in order.
func TestChooseFreeNodesSkipsHeldNodes(t *testing.T) {
	s := clusterspectest.SelectingSpec(2, 2)
	s.SegmentSize = clusterspectest.Ptr(2)
	snap := topoSnapshot(map[string]map[string]float64{"other-unified": {"a2": 3, "a1": 4}})
	ids, _, issues := ChooseFreeNodes(s, snap, nil, nil)
	if len(issues) != 0 || !cmp.Equal(ids, []string{"b2", "b1"}) {
		t.Fatalf("free segment rackB: %v %+v", ids, issues)
	}
	// a2 keeps 1 GPU free: enough for logical nodes of one bundle.
	one := clusterspectest.SelectingSpec(1, 1)
	one.SegmentSize = clusterspectest.Ptr(2)
	if ids, _, _ := ChooseFreeNodes(one, snap, nil, nil); !cmp.Equal(ids, []string{"b2", "b1"}) {
		t.Fatalf("a1 is full, so rackA has no complete segment: %v", ids)
	}
	// Its own groups do not count: a replacement frees them first.
	s.Name = "other"
	s.UseUnifiedPG = true
	if ids, _, _ := ChooseFreeNodes(s, snap, nil, nil); !cmp.Equal(ids, []string{"a2", "a1"}) {
		t.Fatalf("own groups counted as taken: %v", ids)
	}
}

// When the free nodes form no complete segments, the error names per
// domain the busy nodes and the groups holding them, never a pin resource.
func TestChooseFreeNodesNamesHolders(t *testing.T) {
	s := clusterspectest.SelectingSpec(2, 2, 2, 2)
	s.SegmentSize = clusterspectest.Ptr(2)
	snap := topoSnapshot(map[string]map[string]float64{"a-unified": {"a1": 3, "a2": 3}, "a-node0": {"b1": 4}})
	_, _, issues := ChooseFreeNodes(s, snap, map[string]bool{"c1": true}, nil)
	if len(issues) != 1 || issues[0].Path != clusterspec.AttrSelectNodes {
		t.Fatalf("issues: %+v", issues)
	}
	d := issues[0].Detail
	for _, want := range []string{
		"cannot form 2 complete segments", "exclude_node_ids", "3 node(s) were left out: their free resources",
		"nvlink_domain_rackA:\n    node a2 (topo_rank 2, GPU 1/4 free): held by \"a-unified\"",
		"node a1 (topo_rank 3, GPU 1/4 free): held by \"a-unified\"",
		"nvlink_domain_rackB:\n    node b1 (topo_rank 5, GPU 0/4 free): held by \"a-node0\"",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("detail lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, pinnedNodeResource) || strings.Contains(d, "node c1") {
		t.Errorf("detail names a pin resource or an excluded node:\n%s", d)
	}
	// Clusters this process is creating hold the nodes they are pinned to,
	// until Ray lists their groups (then counted once).
	first := clusterspectest.SelectingSpec(4, 4)
	first.Name = "first"
	first.SelectedNodeIDs = []string{"b2", "b1"}
	_, _, issues = ChooseFreeNodes(clusterspectest.SelectingSpec(1, 1), topoSnapshot(nil), map[string]bool{"a1": true, "a2": true}, FeasibilityGroups(first))
	if len(issues) != 1 || !strings.Contains(issues[0].Detail, `node b2 (topo_rank 4, GPU 0/4 free): held by "first-node0" (being created)`) {
		t.Fatalf("holder being created: %+v", issues)
	}
	listed := topoSnapshot(map[string]map[string]float64{"first-node0": {"b2": 2}})
	if ids, _, issues := ChooseFreeNodes(clusterspectest.SelectingSpec(1, 1), listed, map[string]bool{"a1": true, "a2": true}, FeasibilityGroups(first)); len(issues) != 0 ||
		!cmp.Equal(ids, []string{"b2", "c1"}) { // b1 is held by first-node1, not listed yet
		t.Fatalf("a group both listed and being created counts once: %v %+v", ids, issues)
	}
}

// Under total and none, nodes are chosen among those that could hold the
// bundles when empty; the capacity check follows the mode.
func TestCapacityModes(t *testing.T) {
	snap := topoSnapshot(map[string]map[string]float64{"holder": {"a1": 4, "a2": 4, "b1": 4, "b2": 4, "c1": 4}})
	s := clusterspectest.SelectingSpec(2, 2)
	if _, _, issues := ChooseFreeNodes(s, snap, nil, nil); len(issues) != 1 {
		t.Fatalf("free: every node is held: %+v", issues)
	}
	for _, mode := range []string{clusterspec.CapacityTotal, clusterspec.CapacityNone} {
		s.CapacityCheck = mode
		ids, _, issues := ChooseFreeNodes(s, snap, nil, nil)
		if len(issues) != 0 || !cmp.Equal(ids, []string{"a2", "a1"}) {
			t.Fatalf("%s chooses by totals: %v %+v", mode, ids, issues)
		}
	}
	big := clusterspectest.SelectingSpec(4, 4)
	big.SelectNodes, big.CapacityCheck = false, clusterspec.CapacityTotal
	if sh, _ := CheckSnapshotCapacity(big, snap, nil); len(sh.Errors) != 0 {
		t.Fatalf("total: 8 GPUs fit the totals: %v", sh.Errors)
	}
	big.CapacityCheck = clusterspec.CapacityFree
	if sh, _ := CheckSnapshotCapacity(big, snap, nil); len(sh.Errors) == 0 {
		t.Fatal("free: nothing is free")
	}
	huge := big
	huge.BundleCtPerNode = []int{4, 4, 4, 4, 4, 4, 4, 4}
	huge.CapacityCheck = clusterspec.CapacityTotal
	if sh, _ := CheckSnapshotCapacity(huge, snap, nil); len(sh.Errors) == 0 {
		t.Fatal("total: 32 GPUs never fit 20")
	}
	huge.CapacityCheck = clusterspec.CapacityNone
	if sh, _ := CheckSnapshotCapacity(huge, snap, nil); len(sh.Errors)+len(sh.Warnings) != 0 {
		t.Fatalf("none checks nothing: %+v", sh)
	}
	huge.CapacityCheck = "later"
	found := false
	for _, is := range huge.Validate() {
		found = found || (is.Path == clusterspec.AttrCapacityCheck && !is.Warning && strings.Contains(is.Detail, `"later"`))
	}
	if !found {
		t.Fatalf("unknown mode not reported on %s: %+v", clusterspec.AttrCapacityCheck, huge.Validate())
	}
}

func TestReadableMessageHidesPins(t *testing.T) {
	in := `bundle 2 of group "x-unified" needs {"CPU":1,"GPU":1,"pinned_node:abc":0.0001,"label_selector:{\"k\":\"v\"}":0.0001}; ` +
		`no node has that free (best: node d has pinned_node:abc 0, GPU 0 free)`
	got := readableMessage(in)
	want := `bundle 2 of group "x-unified" needs {"CPU":1,"GPU":1,"on ray.io/node-id=abc","on label selector {\"k\":\"v\"}"}; ` +
		`no node has that free (best: node d has (ray.io/node-id=abc) 0, GPU 0 free)`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A choice that other tenants' groups changed is named, so the plan can
// leave it to the apply; an undisturbed choice is not.

// Nodes other clusters claimed at apply (Snapshot.Claims) are left out
// whatever they have free, under every capacity mode, and the error of a
// choice that finds none names the claimant.
func TestChooseFreeNodesLeavesClaimedNodesOut(t *testing.T) {
	for _, mode := range clusterspec.CapacityChecks {
		s := clusterspectest.SelectingSpec(2, 2)
		s.SegmentSize, s.CapacityCheck = clusterspectest.Ptr(2), mode
		snap := topoSnapshot(nil)
		snap.Claims = map[string]string{"a1": `cluster "ns/first"`}
		ids, _, issues := ChooseFreeNodes(s, snap, nil, nil)
		if len(issues) != 0 || !cmp.Equal(ids, []string{"b2", "b1"}) {
			t.Fatalf("%s: rackA is claimed in part, so rackB: %v %+v", mode, ids, issues)
		}
		snap.Claims["b2"] = `cluster "ns/second"`
		_, _, issues = ChooseFreeNodes(s, snap, nil, nil)
		if len(issues) == 0 {
			t.Fatalf("%s: both segments claimed, yet a choice", mode)
		}
		for _, want := range []string{`node a1 (topo_rank 3, GPU 4/4 free): claimed at apply by cluster "ns/first"`,
			`claimed at apply by cluster "ns/second"`, `capacity_check = "total"`} {
			if mode == clusterspec.CapacityTotal && strings.Contains(want, "capacity_check") {
				continue
			}
			if !strings.Contains(issues[0].Detail, want) {
				t.Errorf("%s: detail lacks %q:\n%s", mode, want, issues[0].Detail)
			}
		}
	}
}

// A capacity refusal names the groups that hold resources, largest first,
// bounded, and never the cluster's own.
func TestHoldersReport(t *testing.T) {
	s := clusterspectest.SelectingSpec(1)
	held := map[string]map[string]float64{"vc-node0": {"a1": 4}}
	for i := range maxHolderGroups + 2 {
		held[fmt.Sprintf("other-%d", i)] = map[string]float64{"b1": float64(i % 3)}
	}
	held["big"] = map[string]float64{"a2": 4, "b2": 4}
	report := HoldersReport(s, topoSnapshot(held))
	lines := strings.Split(report, "\n")
	if len(lines) != maxHolderGroups+2 || !strings.HasPrefix(lines[1], `  "big" holds {CPU 2, GPU 8} on 2 node(s)`) ||
		lines[len(lines)-1] != "  and 3 more" || strings.Contains(report, "vc-node0") {
		t.Errorf("report:\n%s", report)
	}
	if got := HoldersReport(s, topoSnapshot(map[string]map[string]float64{"vc-node0": {"a1": 4}})); got != "" {
		t.Errorf("only its own group holds anything, yet: %s", got)
	}
}

// A create that timed out while pinned to a node another group holds says
// so, naming the node, rather than that the resources appear free.
func TestExplainApplyShortageOfPinnedGroup(t *testing.T) {
	s := clusterspectest.SelectingSpec(4)
	s.SelectedNodeIDs = []string{"a1"}
	nodes := []topology.NodeCapacity{
		{ID: "a1", Total: map[string]float64{"CPU": 4, "GPU": 4}, Available: map[string]float64{"CPU": 4, "GPU": 0}},
		{ID: "b1", Total: map[string]float64{"CPU": 4, "GPU": 4}, Available: map[string]float64{"CPU": 4, "GPU": 4}},
	}
	why := ExplainApplyShortage(s, []string{"vc-node0"}, nodes)
	if !strings.HasPrefix(why, "Why: ") || !strings.Contains(why, "ray.io/node-id=a1") {
		t.Errorf("pinned to a full node, explained as:\n%s", why)
	}
}

// The disjoint choices a create falls back on (and spreads over after a
// lost race) are, in order, the complete segments the reference's rules
// would take once the ones before them were gone.
func TestDisjointChoices(t *testing.T) {
	s := clusterspectest.SelectingSpec(2, 2)
	s.SegmentSize = clusterspectest.Ptr(2)
	snap := topoSnapshot(nil)
	ids, domains, _ := ChooseFreeNodes(s, snap, nil, nil)
	var got []string
	for _, c := range DisjointChoices(s, snap, nil, nil, ids, domains) {
		if len(c.Domains) != 2 || c.Domains[0] != c.Domains[1] {
			t.Errorf("choice %v %v spans domains", c.IDs, c.Domains)
		}
		got = append(got, strings.Join(c.IDs, ","))
	}
	if !cmp.Equal(got, []string{"a2,a1", "b2,b1"}) {
		t.Errorf("disjoint choices %v; want the two complete segments, in order", got)
	}
	one := clusterspectest.SelectingSpec(1)
	exclude := map[string]bool{"a2": true, "b2": true, "b1": true, "c1": true}
	ids, domains, _ = ChooseFreeNodes(one, snap, exclude, nil)
	if got := DisjointChoices(one, snap, exclude, nil, ids, domains); len(got) != 1 || !cmp.Equal(got[0].IDs, []string{"a1"}) {
		t.Errorf("the only free node a1, yet %v", got)
	}
}
