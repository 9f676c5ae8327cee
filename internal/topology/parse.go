package topology

import (
	"hash/maphash"
	"math"
	"math/bits"
	"strings"
)

// Node is one alive Ray node's topology. A []Node is ordered like Ray's node
// list, modelling the reference's insertion-ordered topology dict.
type Node struct {
	ID       string
	Domain   string
	TopoRank int
}

// ParseNodeTopology reads (domain, rank) from a Ray node's resources map, as
// get_ray_cluster_topology does. A key with NVLinkDomainPrefix is the domain
// (the whole key). If several such keys exist the reference keeps the last in
// dict order; Go maps are unordered, so the lexicographically smallest key is
// chosen. TopoRankKey gives int(value), truncated toward zero; a non-finite or
// out-of-range value yields TopoRankUnknown. Absent keys yield the sentinels.
func ParseNodeTopology(resources map[string]float64) (domain string, rank int) {
	domain, rank = NVLinkDomainUnknown, TopoRankUnknown
	found := false
	for k := range resources {
		if strings.HasPrefix(k, NVLinkDomainPrefix) && (!found || k < domain) {
			domain, found = k, true
		}
	}
	if v, ok := resources[TopoRankKey]; ok {
		rank = truncRank(v)
	}
	return domain, rank
}

func truncRank(v float64) int {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return TopoRankUnknown
	}
	t := math.Trunc(v)
	if t >= float64(math.MaxInt) || t < float64(math.MinInt) {
		return TopoRankUnknown
	}
	return int(t)
}

// HasTopology reports whether any node has a known NVLink domain
// (prepare_segment_topology's test).
func HasTopology(nodes []Node) bool {
	for _, n := range nodes {
		if n.Domain != NVLinkDomainUnknown {
			return true
		}
	}
	return false
}

// normalizeTopology applies dict semantics to duplicate IDs: the first
// occurrence keeps its position, the last occurrence supplies the value.
// The input is returned unchanged when IDs are already unique.
func normalizeTopology(topo []Node) []Node {
	if !hasDuplicateIDs(topo) {
		return topo
	}
	pos := make(map[string]int, len(topo))
	out := make([]Node, 0, len(topo))
	for _, n := range topo {
		if i, ok := pos[n.ID]; ok {
			out[i] = n
			continue
		}
		pos[n.ID] = len(out)
		out = append(out, n)
	}
	return out
}

var idSeed = maphash.MakeSeed()

// hasDuplicateIDs reports whether two nodes share an ID: an open-addressing
// set of positions, cheaper than a map of strings. Each slot keeps the upper
// half of its ID's hash, so probing past other IDs rarely reads them.
func hasDuplicateIDs(topo []Node) bool {
	if len(topo) < 2 {
		return false
	}
	if len(topo) >= math.MaxInt32 { // positions are 32 bits: let the caller's map decide
		return true
	}
	slots := make([]uint64, 1<<bits.Len(uint(2*len(topo)-1))) // hash>>32<<32 | position+1; 0 is empty
	mask := uint64(len(slots) - 1)
	for i := range topo {
		id := topo[i].ID
		h := maphash.String(idSeed, id)
		tag := h &^ (1<<32 - 1)
		for p := h & mask; ; p = (p + 1) & mask {
			v := slots[p]
			if v == 0 {
				slots[p] = tag | uint64(i+1)
				break
			}
			if v&^(1<<32-1) == tag && topo[v&(1<<32-1)-1].ID == id {
				return true
			}
		}
	}
	return false
}
