package topology

import (
	"fmt"
	"math"
	"testing"
)

func decodeTopology(data []byte) []Node {
	var topo []Node
	for len(data) >= 3 {
		d := domainChoices[int(data[1])%len(domainChoices)]
		topo = append(topo, Node{ID: fmt.Sprintf("n%d", data[0]%32), Domain: d, TopoRank: int(int8(data[2]))})
		data = data[3:]
	}
	return topo
}

func FuzzSelectSegmentNodes(f *testing.F) {
	f.Add([]byte{}, 1, 0)
	f.Add([]byte{0, 0, 1, 1, 0, 2, 2, 1, 0, 3, 1, 1}, 2, 4)
	f.Add([]byte{0, 4, 1, 1, 4, 255, 2, 0, 9}, 1, 1)
	f.Add([]byte{5, 0, 1, 5, 1, 2, 6, 2, 3}, 3, 3)
	f.Add([]byte{1, 1, 1}, 0, 0)
	f.Add([]byte{1, 1, 1}, 2, -2)
	f.Fuzz(func(t *testing.T, data []byte, seg, num int) {
		topo := decodeTopology(data)
		sel, rem, err := SelectSegmentNodes(topo, seg, num)
		if err != nil && (sel != nil || rem != nil) {
			t.Fatal("results on error")
		}
		if e := checkSelectInvariants(topo, seg, num, sel, rem, err); e != nil {
			t.Fatal(e)
		}
	})
}

func FuzzSortBundles(f *testing.F) {
	f.Add([]byte{}, byte(0), byte(0))
	f.Add([]byte{0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 2, 1}, byte(2), byte(2))
	f.Add([]byte{0, 4, 255, 0, 1, 4, 255, 1}, byte(1), byte(1))
	f.Add([]byte{3, 1, 3, 2, 2, 2, 2, 2}, byte(0), byte(4))
	f.Add([]byte{3, 1, 3, 2}, byte(3), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, segB, gpusB byte) {
		var bundles []Bundle
		for len(data) >= 4 {
			bundles = append(bundles, Bundle{
				GPUID:    int(data[0] % 8),
				Domain:   domainChoices[int(data[1])%len(domainChoices)],
				TopoRank: int(int8(data[2])),
				NodeID:   fmt.Sprintf("n%d", data[3]%16),
			})
			data = data[4:]
		}
		var seg, gpus *int
		if segB != 0 {
			s := int(int8(segB))
			seg = &s
		}
		if gpusB != 0 {
			g := int(int8(gpusB))
			gpus = &g
		}
		idx, _, err := SortBundleIndicesByTopology(bundles, seg, gpus)
		if e := checkSortInvariants(bundles, seg, gpus, idx, err); e != nil {
			t.Fatal(e)
		}
	})
}

func FuzzCheckPlacement(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 4, 4, 0, 0, 1, 4, 4, 0, 0, 1, 1, 0, 1, 2, 1, 0, 0})
	f.Add([]byte{3, 1, 1, 1, 1, 0, 2, 2, 2, 2, 1, 3, 3, 3, 3, 1, 2, 3, 2, 1, 1, 1, 1, 2, 1, 2, 0, 0, 3})
	f.Add([]byte{1, 4, 0, 0, 0, 1, 1, 2, 2, 3, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		groups, nodes := decodePlacement(data)
		fz := CheckPlacement(groups, nodes)
		if e := checkPlacementAgainstBrute(groups, nodes, fz); e != nil {
			t.Fatalf("%v\ngroups %+v\nnodes %+v\n%+v", e, groups, nodes, fz)
		}
		// Arbitrary amounts, strategies and names must never panic.
		wg, wn := decodeWild(data)
		_ = CheckPlacement(wg, wn)
	})
}

var wildAmounts = []float64{math.NaN(), -1, 0, 0.00001, 0.001, 0.5, 1, 8, 1e300, math.Inf(1), math.Inf(-1), 1e18}

// decodeWild builds a problem with special amounts and any strategy.
func decodeWild(data []byte) ([]GroupRequest, []NodeCapacity) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	keys := []string{"CPU", "GPU", "", "nvlink_domain_a", "memory"}
	strategies := append([]string{"", "pack"}, Strategies...)
	res := func() Resources {
		r := Resources{}
		for n := next() % 4; n > 0; n-- {
			r[keys[next()%len(keys)]] = wildAmounts[next()%len(wildAmounts)]
		}
		return r
	}
	var nodes []NodeCapacity
	for n := next() % 6; n > 0; n-- {
		c := NodeCapacity{ID: fmt.Sprint(n), Total: res()}
		if next()%2 == 0 {
			c.Available = res()
		}
		nodes = append(nodes, c)
	}
	var groups []GroupRequest
	for n := next() % 4; n > 0; n-- {
		g := GroupRequest{Name: fmt.Sprint(n), Strategy: strategies[next()%len(strategies)]}
		for b := next() % 5; b > 0; b-- {
			g.Bundles = append(g.Bundles, res())
		}
		groups = append(groups, g)
	}
	return groups, nodes
}
