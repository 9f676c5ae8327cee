package topology

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
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
//
// The result equals those stable sorts, computed without them: one ordering
// of all bundles by (topo_rank, gpu_id, index), then each domain's bundles are
// taken from it in that order and the domains are laid out by their lowest
// rank. Domains sharing a lowest rank are the only ones whose bundles
// interleave; only they are sorted again.
func SortBundleIndicesByTopology(bundles []Bundle, segmentSize, gpusPerNode *int) (indices []int, trims []DomainTrim, err error) {
	if err := checkSortArguments(segmentSize, gpusPerNode); err != nil {
		return nil, nil, err
	}
	if len(bundles) == 0 {
		return []int{}, nil, nil
	}
	if len(bundles) > math.MaxInt32 { // indices are int32 inside
		return nil, nil, fmt.Errorf("%w: %d bundles (at most %d)", ErrInvalidArgument, len(bundles), math.MaxInt32)
	}

	if !anyTopology(bundles) {
		return nodeGPUOrder(bundles), nil, nil
	}

	dom, names := internDomains(bundles)
	var kept []int // bundles each domain keeps
	if segmentSize != nil {
		kept, trims = segmentQuotas(bundles, dom, names, *segmentSize, *gpusPerNode)
	} else {
		kept = make([]int, len(names))
		for _, d := range dom {
			kept[d]++
		}
	}

	start, byDomain := keptByDomain(bundles, dom, kept)

	// Domains by (lowest kept rank, first appearance).
	lowest := func(d int32) int { return bundles[byDomain[start[d]]].TopoRank }
	doms := make([]int32, 0, len(names))
	for d, k := range kept {
		if k > 0 {
			doms = append(doms, int32(d))
		}
	}
	slices.SortFunc(doms, func(a, b int32) int {
		if c := cmp.Compare(lowest(a), lowest(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})

	out := make([]int, 0, len(byDomain))
	for lo := 0; lo < len(doms); {
		hi := lo + 1
		for hi < len(doms) && lowest(doms[hi]) == lowest(doms[lo]) {
			hi++
		}
		from := len(out)
		for _, d := range doms[lo:hi] {
			for _, i := range byDomain[start[d]:start[d+1]] {
				out = append(out, int(i))
			}
		}
		if hi-lo > 1 {
			run := out[from:]
			if segmentSize != nil {
				// The reference sorts the per-domain lists concatenated in
				// first-appearance order: ties keep domain order.
				slices.SortStableFunc(run, func(a, b int) int { return compareRankGPU(&bundles[a], &bundles[b]) })
			} else {
				slices.SortFunc(run, func(a, b int) int {
					if c := compareRankGPU(&bundles[a], &bundles[b]); c != 0 {
						return c
					}
					return cmp.Compare(a, b)
				})
			}
		}
		lo = hi
	}
	return out, trims, nil
}

// checkSortArguments rejects a segment_size without gpus_per_node, and
// either below 1.
func checkSortArguments(segmentSize, gpusPerNode *int) error {
	if segmentSize != nil && gpusPerNode == nil {
		return fmt.Errorf("%w: gpus_per_node is required when segment_size is set", ErrInvalidArgument)
	}
	if segmentSize != nil && *segmentSize < 1 {
		return fmt.Errorf("%w: segment_size (%d) must be >= 1", ErrInvalidArgument, *segmentSize)
	}
	if gpusPerNode != nil && *gpusPerNode < 1 {
		return fmt.Errorf("%w: gpus_per_node (%d) must be >= 1", ErrInvalidArgument, *gpusPerNode)
	}
	return nil
}

// anyTopology reports whether some bundle has a known domain or rank.
func anyTopology(bundles []Bundle) bool {
	for i := range bundles {
		if bundles[i].Domain != NVLinkDomainUnknown || bundles[i].TopoRank != TopoRankUnknown {
			return true
		}
	}
	return false
}

// nodeGPUOrder is the order without topology: the bundle indices stably
// sorted by (node_id, gpu_id).
func nodeGPUOrder(bundles []Bundle) []int {
	idx := make([]int, len(bundles))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := &bundles[a], &bundles[b]
		if c := strings.Compare(x.NodeID, y.NodeID); c != 0 {
			return c
		}
		return cmp.Compare(x.GPUID, y.GPUID)
	})
	return idx
}

// keptByDomain lays out each domain's kept bundles contiguously, in
// (topo_rank, gpu_id, index) order: the first kept[d] ones of domain d in
// rankGPUOrder, at byDomain[start[d]:start[d+1]].
func keptByDomain(bundles []Bundle, dom []int32, kept []int) (start, byDomain []int32) {
	start = make([]int32, len(kept)+1)
	for d, k := range kept {
		start[d+1] = start[d] + int32(k)
	}
	next := slices.Clone(start[:len(kept)])
	order, scratch := rankGPUOrder(bundles)
	byDomain = scratch[:start[len(kept)]]
	for _, i := range order {
		if d := dom[i]; next[d] < start[d+1] {
			byDomain[next[d]] = i
			next[d]++
		}
	}
	return start, byDomain
}

func compareRankGPU(x, y *Bundle) int {
	if c := cmp.Compare(x.TopoRank, y.TopoRank); c != 0 {
		return c
	}
	return cmp.Compare(x.GPUID, y.GPUID)
}

// internDomains numbers domains by first appearance. Bundles of one node
// are usually adjacent, so the previous domain is checked before the map.
func internDomains(bundles []Bundle) (dom []int32, names []string) {
	dom = make([]int32, len(bundles))
	var domains interner
	prev, prevDom := "", int32(-1)
	for i := range bundles {
		if s := bundles[i].Domain; prevDom < 0 || s != prev {
			prev, prevDom = s, domains.index(s)
		}
		dom[i] = prevDom
	}
	return dom, domains.names
}

// segmentQuotas returns how many bundles each domain keeps: those of its
// complete segments of seg nodes, gpus bundles per node.
func segmentQuotas(bundles []Bundle, dom []int32, names []string, seg, gpus int) (kept []int, trims []DomainTrim) {
	size := make([]int, len(names))
	nodes := make([]int, len(names)) // distinct node ids per domain
	nodeIndex := map[string]int32{}
	var firstDom []int32        // per node: the domain it was first counted in
	var extra map[[2]int32]bool // (node, domain) counted beyond a node's first domain
	prev, prevNode := "", int32(-1)
	for i := range bundles {
		d := dom[i]
		size[d]++
		if id := bundles[i].NodeID; prevNode < 0 || id != prev {
			n, ok := nodeIndex[id]
			if !ok {
				n = int32(len(firstDom))
				nodeIndex[id] = n
				firstDom = append(firstDom, -1)
			}
			prev, prevNode = id, n
		}
		switch fd := firstDom[prevNode]; {
		case fd < 0:
			firstDom[prevNode] = d
			nodes[d]++
		case fd != d:
			if extra == nil {
				extra = map[[2]int32]bool{}
			}
			if k := [2]int32{prevNode, d}; !extra[k] {
				extra[k] = true
				nodes[d]++
			}
		}
	}
	kept = make([]int, len(names))
	for d, name := range names {
		usableNodes := nodes[d] / seg * seg
		usable := size[d]
		if usableNodes == 0 {
			usable = 0
		} else if gpus <= size[d]/usableNodes { // usableNodes*gpus cannot overflow
			usable = min(usableNodes*gpus, size[d])
		}
		kept[d] = usable
		if usable < size[d] {
			trims = append(trims, DomainTrim{
				Domain: name, DomainNodes: nodes[d], UsableNodes: usableNodes,
				Kept: usable, Discarded: size[d] - usable,
			})
		}
	}
	return kept, trims
}

// rankGPUOrder returns every bundle index ordered by (topo_rank, gpu_id,
// index), and a scratch slice of the same length. Ranks and GPU ids are small, nearly consecutive integers in
// practice, so a counting sort over the combined key does it in linear time
// when the key range is within a few times the bundle count; otherwise it
// falls back to a comparison sort.
func rankGPUOrder(bundles []Bundle) (order, scratch []int32) {
	minR, maxR := bundles[0].TopoRank, bundles[0].TopoRank
	minG, maxG := bundles[0].GPUID, bundles[0].GPUID
	for i := range bundles {
		minR, maxR = min(minR, bundles[i].TopoRank), max(maxR, bundles[i].TopoRank)
		minG, maxG = min(minG, bundles[i].GPUID), max(maxG, bundles[i].GPUID)
	}
	// Unsigned differences are exact for any ints with max >= min.
	rSpan, gSpan := uint64(maxR)-uint64(minR), uint64(maxG)-uint64(minG)
	limit := 8*uint64(len(bundles)) + 4096
	if rSpan >= limit || gSpan >= limit || (rSpan+1)*(gSpan+1) > limit {
		return rankGPUOrderCompare(bundles), make([]int32, len(bundles))
	}
	width := gSpan + 1
	keys := make([]int32, len(bundles))
	start := make([]int32, (rSpan+1)*width+1)
	for i := range bundles {
		k := int32((uint64(bundles[i].TopoRank)-uint64(minR))*width + uint64(bundles[i].GPUID) - uint64(minG))
		keys[i] = k
		start[k+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	order = make([]int32, len(bundles))
	for i, k := range keys {
		order[start[k]] = int32(i)
		start[k]++
	}
	return order, keys
}

func rankGPUOrderCompare(bundles []Bundle) []int32 {
	idx := make([]int32, len(bundles))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := compareRankGPU(&bundles[a], &bundles[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
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
	slices.SortFunc(idx, func(a, b int) int {
		x, y := &nodes[a], &nodes[b]
		if c := cmp.Compare(domainMin[x.Domain], domainMin[y.Domain]); c != 0 {
			return c
		}
		if c := cmp.Compare(x.TopoRank, y.TopoRank); c != 0 {
			return c
		}
		if c := strings.Compare(x.ID, y.ID); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}
