package topology

import (
	"fmt"
	"sort"
)

// Bundle is one placement-group bundle's probed placement, the reference
// tuple (gpu_id, nvlink_domain, topo_rank, node_id).
type Bundle struct {
	GPUID    int
	Domain   string
	TopoRank int
	NodeID   string
}

// DomainTrim describes a domain whose incomplete segment was discarded.
type DomainTrim struct {
	Domain      string
	DomainNodes int
	UsableNodes int
	Kept        int
	Discarded   int
}

// SortBundleIndicesByTopology mirrors _sort_bundle_indices_by_topology.
//
// Without topology info (every bundle has unknown domain and rank) indices are
// stably sorted by (node_id, gpu_id) and no trimming happens. Otherwise, when
// segmentSize is set, each domain (first-appearance order) keeps its first
// usable_nodes*gpusPerNode bundles by (topo_rank, gpu_id); the result is then
// stably sorted by (domain_min_topo_rank, topo_rank, gpu_id). Trims lists
// domains that discarded bundles.
func SortBundleIndicesByTopology(bundles []Bundle, segmentSize, gpusPerNode *int) (indices []int, trims []DomainTrim, err error) {
	if segmentSize != nil && gpusPerNode == nil {
		return nil, nil, fmt.Errorf("%w: gpus_per_node is required when segment_size is set", ErrInvalidArgument)
	}
	if segmentSize != nil && *segmentSize < 1 {
		return nil, nil, fmt.Errorf("%w: segment_size (%d) must be >= 1", ErrInvalidArgument, *segmentSize)
	}
	if gpusPerNode != nil && *gpusPerNode < 1 {
		return nil, nil, fmt.Errorf("%w: gpus_per_node (%d) must be >= 1", ErrInvalidArgument, *gpusPerNode)
	}
	if len(bundles) == 0 {
		return []int{}, nil, nil
	}

	hasTopo := false
	for _, b := range bundles {
		if b.Domain != NVLinkDomainUnknown || b.TopoRank != TopoRankUnknown {
			hasTopo = true
			break
		}
	}
	idx := make([]int, len(bundles))
	for i := range idx {
		idx[i] = i
	}
	if !hasTopo {
		sort.SliceStable(idx, func(a, b int) bool {
			x, y := bundles[idx[a]], bundles[idx[b]]
			if x.NodeID != y.NodeID {
				return x.NodeID < y.NodeID
			}
			return x.GPUID < y.GPUID
		})
		return idx, nil, nil
	}

	byRankGPU := func(s []int) {
		sort.SliceStable(s, func(a, b int) bool {
			x, y := bundles[s[a]], bundles[s[b]]
			if x.TopoRank != y.TopoRank {
				return x.TopoRank < y.TopoRank
			}
			return x.GPUID < y.GPUID
		})
	}

	if segmentSize != nil {
		seg, gpus := *segmentSize, *gpusPerNode
		var order []string
		members := map[string][]int{}
		for i, b := range bundles {
			if _, ok := members[b.Domain]; !ok {
				order = append(order, b.Domain)
			}
			members[b.Domain] = append(members[b.Domain], i)
		}
		filtered := make([]int, 0, len(bundles))
		for _, d := range order {
			m := members[d]
			nodes := map[string]struct{}{}
			for _, i := range m {
				nodes[bundles[i].NodeID] = struct{}{}
			}
			usableNodes := len(nodes) / seg * seg
			usable := len(m)
			if usableNodes == 0 {
				usable = 0
			} else if gpus <= len(m)/usableNodes {
				usable = min(usableNodes*gpus, len(m))
			}
			byRankGPU(m)
			if usable < len(m) {
				trims = append(trims, DomainTrim{
					Domain: d, DomainNodes: len(nodes), UsableNodes: usableNodes,
					Kept: usable, Discarded: len(m) - usable,
				})
			}
			filtered = append(filtered, m[:usable]...)
		}
		idx = filtered
	}

	minRank := map[string]int{}
	for _, i := range idx {
		b := bundles[i]
		if r, ok := minRank[b.Domain]; !ok || b.TopoRank < r {
			minRank[b.Domain] = b.TopoRank
		}
	}
	domRank := make([]int, len(bundles))
	for _, i := range idx {
		domRank[i] = minRank[bundles[i].Domain]
	}
	sort.SliceStable(idx, func(a, c int) bool {
		i, j := idx[a], idx[c]
		if domRank[i] != domRank[j] {
			return domRank[i] < domRank[j]
		}
		x, y := bundles[i], bundles[j]
		if x.TopoRank != y.TopoRank {
			return x.TopoRank < y.TopoRank
		}
		return x.GPUID < y.GPUID
	})
	return idx, trims, nil
}

// TopologicalOrder returns node indices sorted by their domain's lowest
// topo_rank, then topo_rank, then node id: the order nodes are listed and
// selected in.
func TopologicalOrder(nodes []Node) []int {
	domainMin := map[string]int{}
	for _, n := range nodes {
		if m, ok := domainMin[n.Domain]; !ok || n.TopoRank < m {
			domainMin[n.Domain] = n.TopoRank
		}
	}
	idx := make([]int, len(nodes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := nodes[idx[a]], nodes[idx[b]]
		if domainMin[x.Domain] != domainMin[y.Domain] {
			return domainMin[x.Domain] < domainMin[y.Domain]
		}
		if x.TopoRank != y.TopoRank {
			return x.TopoRank < y.TopoRank
		}
		return x.ID < y.ID
	})
	return idx
}
