package topology

import (
	"fmt"
	"sort"
)

// bruteFeasible exhaustively assigns bundles to nodes (tiny inputs only),
// honouring STRICT_PACK (one node) and STRICT_SPREAD (distinct nodes).
// Amounts are compared as float64, so tests use exactly representable values.
func bruteFeasible(groups []GroupRequest, nodes []NodeCapacity) bool {
	avail := make([]map[string]float64, len(nodes))
	for i, n := range nodes {
		src := n.Available
		if src == nil {
			src = n.Total
		}
		avail[i] = map[string]float64{}
		for k, v := range src {
			if v > 0 {
				avail[i][k] = v
			}
		}
	}
	type slot struct{ g, b int }
	var slots []slot
	for gi, g := range groups {
		for bi := range g.Bundles {
			slots = append(slots, slot{gi, bi})
		}
	}
	assign := make([]int, len(slots))
	var rec func(int) bool
	rec = func(i int) bool {
		if i == len(slots) {
			return true
		}
		s := slots[i]
		g := groups[s.g]
		for ni := range nodes {
			ok := true
			for j := 0; j < i && ok; j++ {
				if slots[j].g != s.g {
					continue
				}
				switch g.Strategy {
				case StrategyStrictPack:
					ok = assign[j] == ni
				case StrategyStrictSpread:
					ok = assign[j] != ni
				}
			}
			if !ok {
				continue
			}
			b := g.Bundles[s.b]
			for k, v := range b {
				if v > 0 && avail[ni][k] < v {
					ok = false
				}
			}
			if !ok {
				continue
			}
			for k, v := range b {
				avail[ni][k] -= v
			}
			assign[i] = ni
			if rec(i + 1) {
				return true
			}
			for k, v := range b {
				avail[ni][k] += v
			}
		}
		return false
	}
	return rec(0)
}

// decodePlacement turns bytes into a tiny placement problem with exactly
// representable amounts (multiples of 0.5).
func decodePlacement(data []byte) ([]GroupRequest, []NodeCapacity) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	res := []string{"CPU", "GPU", "nvlink_domain_a", "nvlink_domain_b"}
	nNodes := next() % 5
	var nodes []NodeCapacity
	for i := 0; i < nNodes; i++ {
		r := Resources{}
		for _, k := range res {
			if v := next() % 5; v > 0 {
				r[k] = float64(v) / 2
			}
		}
		n := NodeCapacity{ID: fmt.Sprintf("n%d", i), Total: r}
		if next()%2 == 1 {
			n.Available = r
		}
		nodes = append(nodes, n)
	}
	nGroups := next() % 3
	var groups []GroupRequest
	for gi := 0; gi < nGroups; gi++ {
		g := GroupRequest{Name: fmt.Sprintf("g%d", gi), Strategy: Strategies[next()%4], NodeIndex: -1}
		nb := 1 + next()%3
		for bi := 0; bi < nb; bi++ {
			b := Resources{}
			for _, k := range res {
				if v := next() % 4; v > 0 {
					b[k] = float64(v) / 2
				}
			}
			if len(b) == 0 {
				b["CPU"] = 0.5
			}
			g.Bundles = append(g.Bundles, b)
		}
		groups = append(groups, g)
	}
	return groups, nodes
}

// checkSelectInvariants verifies SelectSegmentNodes' structural guarantees.
func checkSelectInvariants(topo []Node, seg, num int, sel, rem []string, err error) error {
	uniq := normalizeTopology(topo)
	if err != nil {
		if seg < 1 || num < 0 || num%seg != 0 {
			return nil
		}
		g := groupByDomain(uniq)
		avail := 0
		for _, d := range g.order {
			avail += len(g.nodes(d)) / seg
		}
		if avail >= num/seg {
			return fmt.Errorf("error %v although %d segments are available", err, avail)
		}
		return nil
	}
	if len(sel) != num {
		return fmt.Errorf("selected %d nodes, want %d", len(sel), num)
	}
	byID := map[string]Node{}
	for _, n := range uniq {
		byID[n.ID] = n
	}
	seen := map[string]bool{}
	perDomain := map[string]int{}
	for _, id := range sel {
		n, ok := byID[id]
		if !ok || seen[id] {
			return fmt.Errorf("selected id %q unknown or repeated", id)
		}
		if n.Domain == NVLinkDomainUnknown {
			return fmt.Errorf("selected unknown-domain node %q", id)
		}
		seen[id] = true
		perDomain[n.Domain]++
	}
	for d, c := range perDomain {
		if c%seg != 0 {
			return fmt.Errorf("domain %s contributes %d nodes, not a multiple of %d", d, c, seg)
		}
	}
	// Each domain's selected nodes are contiguous and rank-ordered.
	for i := 1; i < len(sel); i++ {
		a, b := byID[sel[i-1]], byID[sel[i]]
		if a.Domain == b.Domain && a.TopoRank > b.TopoRank {
			return fmt.Errorf("selection not in rank order: %v", sel)
		}
		if a.Domain != b.Domain {
			for _, id := range sel[i:] {
				if byID[id].Domain == a.Domain {
					return fmt.Errorf("domain %s is not contiguous in %v", a.Domain, sel)
				}
			}
		}
	}
	var wantRem []string
	for _, n := range uniq {
		if !seen[n.ID] {
			wantRem = append(wantRem, n.ID)
		}
	}
	if fmt.Sprint(wantRem) != fmt.Sprint(rem) || len(wantRem) != len(rem) {
		return fmt.Errorf("remaining %v, want %v (input order)", rem, wantRem)
	}
	return nil
}

// checkSortInvariants verifies SortBundleIndicesByTopology's output shape.
func checkSortInvariants(bundles []Bundle, seg, gpus *int, idx []int, err error) error {
	if err != nil {
		if seg != nil && (gpus == nil || *seg < 1) || gpus != nil && *gpus < 1 {
			return nil
		}
		return fmt.Errorf("unexpected error %v", err)
	}
	seen := make([]bool, len(bundles))
	for _, i := range idx {
		if i < 0 || i >= len(bundles) || seen[i] {
			return fmt.Errorf("index %d out of range or repeated in %v", i, idx)
		}
		seen[i] = true
	}
	hasTopo := false
	for _, b := range bundles {
		hasTopo = hasTopo || b.Domain != NVLinkDomainUnknown || b.TopoRank != TopoRankUnknown
	}
	if (seg == nil || !hasTopo) && len(idx) != len(bundles) {
		return fmt.Errorf("not a permutation: %d of %d", len(idx), len(bundles))
	}
	if !hasTopo {
		ok := sort.SliceIsSorted(idx, func(a, b int) bool {
			x, y := bundles[idx[a]], bundles[idx[b]]
			return x.NodeID < y.NodeID || x.NodeID == y.NodeID && x.GPUID < y.GPUID
		})
		if !ok {
			return fmt.Errorf("not sorted by (node_id, gpu_id)")
		}
		return nil
	}
	minRank := map[string]int{}
	for _, i := range idx {
		b := bundles[i]
		if r, ok := minRank[b.Domain]; !ok || b.TopoRank < r {
			minRank[b.Domain] = b.TopoRank
		}
	}
	for k := 1; k < len(idx); k++ {
		x, y := bundles[idx[k-1]], bundles[idx[k]]
		kx := [3]int{minRank[x.Domain], x.TopoRank, x.GPUID}
		ky := [3]int{minRank[y.Domain], y.TopoRank, y.GPUID}
		if kx[0] > ky[0] || kx[0] == ky[0] && (kx[1] > ky[1] || kx[1] == ky[1] && kx[2] > ky[2]) {
			return fmt.Errorf("not sorted by (domain_min_topo_rank, topo_rank, gpu_id) at %d", k)
		}
	}
	return nil
}

// checkPlacementAgainstBrute enforces: no Errors when a placement exists, and
// a clean greedy pass implies a placement exists.
func checkPlacementAgainstBrute(groups []GroupRequest, nodes []NodeCapacity, f Feasibility) error {
	feasible := bruteFeasible(groups, nodes)
	if feasible && len(f.Errors) > 0 {
		return fmt.Errorf("false error: %v", f.Errors)
	}
	if !feasible && len(f.Errors) == 0 && len(f.Warnings) == 0 {
		return fmt.Errorf("infeasible but greedy claimed success")
	}
	return nil
}

// OK reports whether no certain failure was found.
func (f Feasibility) OK() bool { return len(f.Errors) == 0 }
