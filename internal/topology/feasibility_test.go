package topology

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func gpuBundles(n int, extra Resources) []Resources {
	out := make([]Resources, n)
	for i := range out {
		b := Resources{"CPU": 1, "GPU": 1}
		for k, v := range extra {
			b[k] = v
		}
		out[i] = b
	}
	return out
}

func node(id string, avail Resources) NodeCapacity {
	return NodeCapacity{ID: id, Total: avail, Available: avail}
}

func TestCheckPlacementOK(t *testing.T) {
	gpuBundles := func(n int, domain string) []Resources {
		out := make([]Resources, n)
		for i := range out {
			out[i] = Resources{"CPU": 1, "GPU": 1, domain: 0.001}
		}
		return out
	}
	perNode := []GroupRequest{
		{Name: "vc-node0", Strategy: StrategyPack, Bundles: gpuBundles(8, "nvlink_domain_a")},
		{Name: "vc-node1", Strategy: StrategyPack, Bundles: gpuBundles(8, "nvlink_domain_b")},
	}
	unified := GroupRequest{Name: "vc-unified", Strategy: StrategySpread, NodeIndex: -1,
		Bundles: append(gpuBundles(8, "nvlink_domain_a"), gpuBundles(8, "nvlink_domain_b")...)}
	nodes := []NodeCapacity{
		node("n1", Resources{"CPU": 64, "GPU": 8, "nvlink_domain_b": 1}),
		node("n2", Resources{"CPU": 64, "GPU": 8, "nvlink_domain_a": 1}),
	}
	for _, groups := range [][]GroupRequest{perNode, {unified}} {
		f := CheckPlacement(groups, nodes)
		if !f.OK() || len(f.Warnings) != 0 {
			t.Fatalf("%s: %+v", groups[0].Name, f)
		}
	}
	if f := CheckPlacement(nil, nil); !f.OK() || len(f.Warnings) != 0 {
		t.Fatalf("nothing to place: %+v", f)
	}
}

func TestCheckPlacementFixedPointSums(t *testing.T) {
	// 1000 * 0.001 exceeds 1.0 in float64 arithmetic, but not in Ray's units.
	g := GroupRequest{Name: "g", Strategy: StrategyPack, NodeIndex: -1}
	for i := 0; i < 1000; i++ {
		g.Bundles = append(g.Bundles, Resources{"nvlink_domain_a": 0.001})
	}
	f := CheckPlacement([]GroupRequest{g}, []NodeCapacity{node("n", Resources{"nvlink_domain_a": 1})})
	if !f.OK() || len(f.Warnings) != 0 {
		t.Fatalf("%+v", f)
	}
}

func TestCheckPlacementAvailableFallsBackToTotal(t *testing.T) {
	g := []GroupRequest{{Name: "g", Strategy: StrategyPack, Bundles: gpuBundles(2, nil)}}
	f := CheckPlacement(g, []NodeCapacity{{ID: "n", Total: Resources{"CPU": 2, "GPU": 2}}})
	if !f.OK() {
		t.Fatalf("%+v", f)
	}
	f = CheckPlacement(g, []NodeCapacity{{ID: "n", Total: Resources{"CPU": 2, "GPU": 2}, Available: Resources{}}})
	if f.OK() {
		t.Fatal("an empty (non-nil) Available means nothing is free")
	}
}

func TestCheckPlacementErrors(t *testing.T) {
	tests := []struct {
		name   string
		groups []GroupRequest
		nodes  []NodeCapacity
		errors []string
	}{
		{
			name:   "totals",
			groups: []GroupRequest{{Name: "vc-unified", Strategy: StrategyPack, Bundles: gpuBundles(20, nil)}},
			nodes:  []NodeCapacity{node("a", Resources{"CPU": 64, "GPU": 8}), node("b", Resources{"CPU": 64, "GPU": 8})},
			errors: []string{"not enough GPU: requested 20 GPU, 16 available"},
		},
		{
			name:   "totals mention cluster total when busy",
			groups: []GroupRequest{{Name: "g", Strategy: StrategyPack, Bundles: gpuBundles(20, nil)}},
			nodes: []NodeCapacity{
				{ID: "a", Total: Resources{"CPU": 64, "GPU": 16}, Available: Resources{"CPU": 64, "GPU": 8}},
				{ID: "b", Total: Resources{"CPU": 64, "GPU": 16}, Available: Resources{"CPU": 64, "GPU": 8}},
			},
			errors: []string{"not enough GPU: requested 20 GPU, 16 available (32 in total)"},
		},
		{
			name: "bundle fits no node",
			groups: []GroupRequest{{Name: "vc-node1", Strategy: StrategyPack, NodeIndex: 1,
				Bundles: gpuBundles(8, Resources{"nvlink_domain_X": 0.001})}},
			nodes: []NodeCapacity{
				node("abc", Resources{"CPU": 64, "GPU": 0, "nvlink_domain_X": 1}),
				node("def", Resources{"CPU": 64, "GPU": 8}),
			},
			errors: []string{`bundle 0 of group "vc-node1" needs {"CPU":1,"GPU":1,"nvlink_domain_X":0.001}; no node has that free (best: node abc has GPU 0 free); 7 more bundles of this group need the same`},
		},
		{
			name:   "no nodes",
			groups: []GroupRequest{{Name: "g", Strategy: StrategyPack, Bundles: []Resources{{"CPU": 1}}}},
			errors: []string{
				"not enough CPU: requested 1 CPU, 0 available",
				`bundle 0 of group "g" needs {"CPU":1}; no node has that free (no nodes are available)`,
			},
		},
		{
			name:   "strict pack",
			groups: []GroupRequest{{Name: "g", Strategy: StrategyStrictPack, Bundles: []Resources{{"GPU": 1}, {"GPU": 2}, {"GPU": 3}}}},
			nodes:  []NodeCapacity{node("n1", Resources{"GPU": 4}), node("n2", Resources{"GPU": 4})},
			errors: []string{`group "g" (STRICT_PACK) needs {"GPU":6} on a single node; no node has that free (best: node n1 has GPU 4 free)`},
		},
		{
			name:   "strict spread needs more nodes than exist",
			groups: []GroupRequest{{Name: "g", Strategy: StrategyStrictSpread, Bundles: gpuBundles(3, nil)}},
			nodes:  []NodeCapacity{node("n1", Resources{"CPU": 8, "GPU": 8}), node("n2", Resources{"CPU": 8, "GPU": 8})},
			errors: []string{`group "g" (STRICT_SPREAD) needs 3 distinct nodes, but only 2 nodes exist`},
		},
		{
			name:   "strict spread matching",
			groups: []GroupRequest{{Name: "g", Strategy: StrategyStrictSpread, Bundles: []Resources{{"GPU": 1}, {"GPU": 1}, {"GPU": 1}}}},
			nodes: []NodeCapacity{
				node("n1", Resources{"GPU": 8}), node("n2", Resources{"GPU": 8}), node("n3", Resources{"CPU": 8}),
			},
			errors: []string{`group "g" (STRICT_SPREAD) needs its 3 bundles on distinct nodes, but at most 2 can be placed that way`},
		},
		{
			name: "constraint resource offered by too few nodes",
			groups: []GroupRequest{{Name: "g", Strategy: StrategyPack,
				Bundles: append([]Resources{}, gpuBundles(16, Resources{"nvlink_domain_X": 0.001})...)}},
			nodes: []NodeCapacity{
				node("n1", Resources{"CPU": 64, "GPU": 8, "nvlink_domain_X": 1}),
				node("n2", Resources{"CPU": 64, "GPU": 8}),
			},
			errors: []string{"bundles needing nvlink_domain_X request 16 GPU in total, but the 1 node(s) offering nvlink_domain_X have only 8 GPU free"},
		},
		{
			name: "invalid requests",
			groups: []GroupRequest{
				{Name: "s", Strategy: "pack", Bundles: []Resources{{"CPU": 1}}},
				{Name: "e", Strategy: StrategyPack},
				{Name: "z", Strategy: StrategyPack, Bundles: []Resources{{}, {"CPU": 0}}},
				{Name: "v", Strategy: StrategyPack, Bundles: []Resources{{"CPU": -1}, {"CPU": 1, "GPU": math.NaN()}, {"GPU": math.Inf(1)}}},
			},
			nodes: []NodeCapacity{node("n", Resources{"CPU": 8})},
			errors: []string{
				`group "s": "pack" must be one of PACK, SPREAD, STRICT_PACK, STRICT_SPREAD; did you mean "PACK"?`,
				`group "e" has no bundles; Ray rejects empty placement groups`,
				`bundle 0 of group "z" requests no resources; Ray rejects empty bundles`,
				`bundle 1 of group "z" requests no resources; Ray rejects empty bundles`,
				`bundle 0 of group "v" has invalid amount -1 for "CPU" (must be a finite number >= 0)`,
				`bundle 1 of group "v" has invalid amount NaN for "GPU" (must be a finite number >= 0)`,
				`bundle 2 of group "v" has invalid amount +Inf for "GPU" (must be a finite number >= 0)`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := CheckPlacement(tc.groups, tc.nodes)
			if diff := cmp.Diff(tc.errors, f.Errors); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if len(f.Warnings) != 0 || f.OK() {
				t.Fatalf("warnings must not accompany errors: %+v", f)
			}
		})
	}
}

func TestCheckPlacementGreedyWarnings(t *testing.T) {
	// First-fit-decreasing fails on {4,4,3,3,2,2} into two bins of 9;
	// {4,3,2}+{4,3,2} works, so this is only a warning.
	var bs []Resources
	for _, c := range []float64{2, 4, 3, 2, 4, 3} {
		bs = append(bs, Resources{"CPU": c})
	}
	f := CheckPlacement([]GroupRequest{{Name: "g", Strategy: StrategySpread, Bundles: bs}},
		[]NodeCapacity{node("a", Resources{"CPU": 9}), node("b", Resources{"CPU": 9})})
	want := []string{`greedy first-fit packing could not place bundle 3 of group "g" (needs {"CPU":2}) after placing larger requests; Ray's scheduler may still find a placement`}
	if !f.OK() || !cmp.Equal(f.Warnings, want) {
		t.Fatalf("%+v", f)
	}

	// STRICT_SPREAD: matching succeeds (A->n3, B->n1, C->n2) but first fit
	// puts A on n1 first.
	g := GroupRequest{Name: "s", Strategy: StrategyStrictSpread, Bundles: []Resources{{"GPU": 1}, {"CPU": 1}, {"CPU": 1}}}
	nodes := []NodeCapacity{
		node("n1", Resources{"GPU": 1, "CPU": 1}), node("n2", Resources{"CPU": 1}), node("n3", Resources{"GPU": 1}),
	}
	f = CheckPlacement([]GroupRequest{g}, nodes)
	if !f.OK() || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], `bundle 2 of group "s"`) {
		t.Fatalf("%+v", f)
	}

	// Many failures are summarised.
	var many []GroupRequest
	for i := 0; i < 8; i++ {
		many = append(many, GroupRequest{Name: "p", Strategy: StrategyStrictPack, Bundles: []Resources{{"CPU": 2}, {"CPU": 2}}})
	}
	var caps []NodeCapacity
	for i := 0; i < 8; i++ {
		caps = append(caps, node("n", Resources{"CPU": 3}), node("m", Resources{"CPU": 3}), node("o", Resources{"CPU": 4}))
	}
	// 8 groups of 4 CPU: each fits only the "o" nodes (8 of them) -> OK.
	if f := CheckPlacement(many, caps); !f.OK() || len(f.Warnings) != 0 {
		t.Fatalf("%+v", f)
	}
}

func TestCheckPlacementGreedySummary(t *testing.T) {
	// 20 bundles of 2 CPU on 14 nodes of 3 CPU: totals pass (40 <= 42) but
	// only one fits per node; the six misses are warnings, five listed.
	var bs []Resources
	for i := 0; i < 20; i++ {
		bs = append(bs, Resources{"CPU": 2})
	}
	var nodes []NodeCapacity
	for i := 0; i < 14; i++ {
		nodes = append(nodes, node("n", Resources{"CPU": 3}))
	}
	f := CheckPlacement([]GroupRequest{{Name: "g", Strategy: StrategyPack, Bundles: bs}}, nodes)
	if !f.OK() || len(f.Warnings) != 6 || !strings.Contains(f.Warnings[0], "bundle 14 of group") ||
		f.Warnings[5] != "greedy first-fit packing could not place 1 more requests" {
		t.Fatalf("%+v", f)
	}
}

func TestCheckPlacementSubResolutionAmounts(t *testing.T) {
	g := []GroupRequest{{Name: "g", Strategy: StrategyStrictSpread, Bundles: []Resources{{"x": 0.00001}, {"x": 0.00001}}}}
	f := CheckPlacement(g, []NodeCapacity{node("a", Resources{"CPU": 1}), node("b", Resources{})})
	if !f.OK() || len(f.Warnings) != 0 {
		t.Fatalf("%+v", f)
	}
	f = CheckPlacement(g, []NodeCapacity{node("a", Resources{"CPU": 1})})
	if f.OK() {
		t.Fatal("STRICT_SPREAD still needs distinct nodes")
	}
}
