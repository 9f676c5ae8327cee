package topology

import "testing"

// The hot paths allocate per call, per domain or per distinct shape, never
// per node or bundle: at 10,000 nodes they used to make 5,083 (selection),
// 8,946 (sort) and 1,057,000 (feasibility) allocations. Counts, not times.
func TestAllocationsDoNotScaleWithNodes(t *testing.T) {
	const n = 10000
	topo := benchTopology(n)
	var bundles []Bundle
	for _, nd := range topo {
		for g := 7; g >= 0; g-- {
			bundles = append(bundles, Bundle{GPUID: g, Domain: nd.Domain, TopoRank: nd.TopoRank, NodeID: nd.ID})
		}
	}
	seg, gpus := 4, 8
	groups, nodes := benchPlacement(n)
	cases := []struct {
		name string
		max  float64
		fn   func()
	}{
		{"SelectSegmentNodes", 64, func() { _, _, _ = SelectSegmentNodes(topo, seg, n/2/seg*seg) }},
		// + one constraint map (two allocations) per selected node, as the API returns
		{"PrepareSegmentTopology", 64 + n, func() { _, _ = PrepareSegmentTopology(&seg, n/2/seg*seg, topo, "") }},
		{"SortBundleIndicesByTopology", 256, func() { _, _, _ = SortBundleIndicesByTopology(bundles, &seg, &gpus) }},
		{"CheckPlacement", n / 2, func() { _ = CheckPlacement(groups, nodes) }}, // 556 domains, each a shape
	}
	for _, c := range cases {
		if got := testing.AllocsPerRun(2, c.fn); got > c.max {
			t.Errorf("%s at %d nodes: %.0f allocations per call, want at most %.0f", c.name, n, got, c.max)
		}
	}
}
