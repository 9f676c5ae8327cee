package topology

import (
	"fmt"
	"math/rand"
	"testing"
)

var benchSizes = []int{100, 1000, 10000}

const benchDomainNodes = 18 // e.g. one GB200 NVL72 rack

func benchDomain(i int) string { return fmt.Sprintf("%sd%04d", NVLinkDomainPrefix, i/benchDomainNodes) }

// benchTopology is n nodes in racks of 18 with shuffled node order.
func benchTopology(n int) []Node {
	topo := make([]Node, n)
	for i := range topo {
		topo[i] = Node{ID: fmt.Sprintf("node%05d", i), Domain: benchDomain(i), TopoRank: i + 1}
	}
	r := rand.New(rand.NewSource(1))
	r.Shuffle(n, func(a, b int) { topo[a], topo[b] = topo[b], topo[a] })
	return topo
}

func perNode(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
}

func BenchmarkSelectSegmentNodes(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			topo := benchTopology(n)
			num := n / 2 / 4 * 4
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := SelectSegmentNodes(topo, 4, num); err != nil {
					b.Fatal(err)
				}
			}
			perNode(b, n)
		})
	}
}

func BenchmarkSortBundles(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			var bundles []Bundle
			for _, nd := range benchTopology(n) {
				for g := 7; g >= 0; g-- {
					bundles = append(bundles, Bundle{GPUID: g, Domain: nd.Domain, TopoRank: nd.TopoRank, NodeID: nd.ID})
				}
			}
			seg, gpus := 4, 8
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := SortBundleIndicesByTopology(bundles, &seg, &gpus); err != nil {
					b.Fatal(err)
				}
			}
			perNode(b, n)
		})
	}
}

// benchPlacement: one PACK group per node pinned to its rack using 6 GPUs,
// a STRICT_SPREAD group with one CPU bundle per node, and STRICT_PACK pairs.
func benchPlacement(n int) ([]GroupRequest, []NodeCapacity) {
	var nodes []NodeCapacity
	for i := 0; i < n; i++ {
		r := Resources{"CPU": 64, "GPU": 8, "memory": 1 << 40, benchDomain(i): 1, TopoRankKey: float64(i + 1),
			fmt.Sprintf("node:10.0.%d.%d", i/256, i%256): 1}
		nodes = append(nodes, NodeCapacity{ID: fmt.Sprintf("node%05d", i), Total: r})
	}
	var groups []GroupRequest
	for i := 0; i < n; i++ {
		g := GroupRequest{Name: "vc-node0", Strategy: StrategyPack}
		for j := 0; j < 6; j++ {
			g.Bundles = append(g.Bundles, Resources{"CPU": 1, "GPU": 1, benchDomain(i): DomainConstraintAmount})
		}
		groups = append(groups, g)
	}
	spread := GroupRequest{Name: "spread", Strategy: StrategyStrictSpread, NodeIndex: -1}
	for i := 0; i < n; i++ {
		spread.Bundles = append(spread.Bundles, Resources{"CPU": 1})
	}
	groups = append(groups, spread)
	for i := 0; i < n/2; i++ {
		groups = append(groups, GroupRequest{Name: fmt.Sprint("pair", i), Strategy: StrategyStrictPack,
			Bundles: []Resources{{"CPU": 2, "GPU": 1}, {"CPU": 2, "GPU": 1}}})
	}
	return groups, nodes
}

func BenchmarkCheckPlacement(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			groups, nodes := benchPlacement(n)
			if f := CheckPlacement(groups, nodes); !f.OK() || len(f.Warnings) != 0 {
				b.Fatalf("benchmark workload should fit: %+v", f)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				CheckPlacement(groups, nodes)
			}
			perNode(b, n)
		})
	}
}
