package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// domainGroups is a topology's known-domain nodes bucketed by domain: the
// buckets in first-appearance order, each bucket stably sorted by topo_rank,
// and the buckets' order stably sorted by their lowest topo_rank.
type domainGroups struct {
	names   []string // known domains, by first appearance
	dom     []int32  // per node: its domain, or -1 when unknown
	start   []int32  // domain d's nodes are members[start[d]:start[d+1]]
	members []int32  // node positions, each domain's by (topo_rank, position)
	order   []int32  // domains by (lowest topo_rank, first appearance)
	unknown int      // nodes without NVLink domain info
}

func (g *domainGroups) nodes(d int32) []int32 { return g.members[g.start[d]:g.start[d+1]] }

// groupByDomain buckets the nodes without a map per domain or a sort per
// bucket: one (topo_rank, position) ordering of all known-domain nodes,
// dealt out to the buckets in that order.
func groupByDomain(topo []Node) *domainGroups {
	g := &domainGroups{dom: make([]int32, len(topo))}
	var domains interner
	var size []int32
	for i := range topo {
		name := topo[i].Domain
		if name == NVLinkDomainUnknown {
			g.dom[i] = -1
			g.unknown++
			continue
		}
		d := domains.index(name)
		if int(d) == len(size) {
			size = append(size, 0)
		}
		g.dom[i] = d
		size[d]++
	}
	g.names = domains.names
	g.start = make([]int32, len(g.names)+1)
	for d, n := range size {
		g.start[d+1] = g.start[d] + n
	}
	next := slices.Clone(g.start[:len(g.names)])
	g.members = make([]int32, g.start[len(g.names)])
	for _, i := range rankOrder(topo, g.dom, len(g.members)) {
		d := g.dom[i]
		g.members[next[d]] = i
		next[d]++
	}
	lowest := func(d int32) int { return topo[g.members[g.start[d]]].TopoRank }
	g.order = make([]int32, len(g.names))
	for d := range g.order {
		g.order[d] = int32(d)
	}
	slices.SortFunc(g.order, func(a, b int32) int {
		if c := cmp.Compare(lowest(a), lowest(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return g
}

// rankOrder returns the positions of the known-domain nodes (dom >= 0, n
// of them) ordered by (topo_rank, position): a counting sort when the ranks
// span a range comparable to the node count, as SLURM ranks do, else a
// comparison sort.
func rankOrder(topo []Node, dom []int32, n int) []int32 {
	out := make([]int32, 0, n)
	if n == 0 {
		return out
	}
	minR, maxR := 0, 0
	first := true
	for i := range topo {
		if dom[i] < 0 {
			continue
		}
		r := topo[i].TopoRank
		if first {
			minR, maxR, first = r, r, false
		}
		minR, maxR = min(minR, r), max(maxR, r)
	}
	span := uint64(maxR) - uint64(minR) // exact for any ints with max >= min
	if span >= 4*uint64(n)+1024 {
		for i := range topo {
			if dom[i] >= 0 {
				out = append(out, int32(i))
			}
		}
		slices.SortFunc(out, func(a, b int32) int {
			if c := cmp.Compare(topo[a].TopoRank, topo[b].TopoRank); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		return out
	}
	start := make([]int32, span+2)
	for i := range topo {
		if dom[i] >= 0 {
			start[uint64(topo[i].TopoRank)-uint64(minR)+1]++
		}
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	out = out[:n]
	for i := range topo {
		if dom[i] >= 0 {
			k := uint64(topo[i].TopoRank) - uint64(minR)
			out[start[k]] = int32(i)
			start[k]++
		}
	}
	return out
}

// SelectSegmentNodes mirrors select_segment_nodes: it greedily takes whole
// segments of segmentSize nodes from NVLink domains in topological order
// until numNodes are selected. Selected IDs are in topological order,
// remaining IDs in input order. Unknown-domain nodes are never selected.
// Duplicate IDs follow dict semantics (first position, last value).
func SelectSegmentNodes(topo []Node, segmentSize, numNodes int) (selected, remaining []string, err error) {
	if err := checkSegmentArgs(segmentSize, numNodes); err != nil {
		return nil, nil, err
	}
	_, selected, remaining, err = selectNodes(normalizeTopology(topo), segmentSize, numNodes)
	return selected, remaining, err
}

func checkSegmentArgs(segmentSize, numNodes int) error {
	if segmentSize < 1 {
		return fmt.Errorf("%w: segment_size (%d) must be >= 1", ErrInvalidArgument, segmentSize)
	}
	if numNodes < 0 {
		return fmt.Errorf("%w: num_nodes (%d) must be >= 0", ErrInvalidArgument, numNodes)
	}
	if numNodes%segmentSize != 0 {
		return fmt.Errorf("%w: num_nodes (%d) must be divisible by segment_size (%d)", ErrInvalidArgument, numNodes, segmentSize)
	}
	return nil
}

// selectNodes is SelectSegmentNodes on a topology with unique IDs; pos
// holds the selected nodes' positions in topo.
func selectNodes(topo []Node, segmentSize, numNodes int) (pos []int32, selected, remaining []string, err error) {
	g := groupByDomain(topo)
	pos, err = selectPositions(g, segmentSize, numNodes)
	if err != nil {
		return nil, nil, nil, err
	}
	selected = make([]string, len(pos))
	chosen := make([]bool, len(topo))
	for k, i := range pos {
		selected[k] = topo[i].ID
		chosen[i] = true
	}
	remaining = make([]string, 0, len(topo)-len(pos))
	for i := range topo {
		if !chosen[i] {
			remaining = append(remaining, topo[i].ID)
		}
	}
	return pos, selected, remaining, nil
}

// selectPositions is select_segment_nodes' greedy pass over g, returning
// the positions of the selected nodes.
func selectPositions(g *domainGroups, segmentSize, numNodes int) ([]int32, error) {
	needed := numNodes / segmentSize
	taken := 0
	var pos []int32
	for _, d := range g.order {
		if taken >= needed {
			break
		}
		nodes := g.nodes(d)
		take := min(len(nodes)/segmentSize, needed-taken)
		if pos == nil {
			pos = make([]int32, 0, min(numNodes, len(g.members)))
		}
		pos = append(pos, nodes[:take*segmentSize]...)
		taken += take
	}
	if taken < needed {
		return nil, segmentError(g, segmentSize, numNodes)
	}
	return pos, nil
}

func segmentError(g *domainGroups, segmentSize, numNodes int) *ResourceInsufficientError {
	e := &ResourceInsufficientError{
		SegmentsNeeded: numNodes / segmentSize,
		SegmentSize:    segmentSize,
		NodesNeeded:    numNodes,
		UnknownNodes:   g.unknown,
	}
	parts := make([]string, 0, len(g.order))
	for _, d := range g.order {
		n := len(g.nodes(d))
		e.DomainNodeCounts = append(e.DomainNodeCounts, DomainCount{Domain: g.names[d], Nodes: n})
		e.SegmentsAvailable += n / segmentSize
		parts = append(parts, fmt.Sprintf("%s=%d", g.names[d], n))
	}
	summary := "none"
	if len(parts) > 0 {
		summary = strings.Join(parts, ", ")
	}
	e.Message = fmt.Sprintf("cannot form %d complete segments of %d nodes (%d nodes needed); nodes per NVLink domain: %s",
		e.SegmentsNeeded, segmentSize, numNodes, summary)
	if g.unknown > 0 {
		e.Message += fmt.Sprintf("; %d nodes without NVLink domain info cannot be used", g.unknown)
	}
	return e
}

// SegmentPlan is prepare_segment_topology's result.
type SegmentPlan struct {
	// Constraints holds one {domain: DomainConstraintAmount} per selected
	// node; nil when segmentSize is nil or no NVLink info exists.
	Constraints []map[string]float64
	Selected    []string
	Remaining   []string
	// Topology is the topology used; empty (non-nil) when segmentSize is nil.
	Topology    []Node
	HasTopology bool
	// Message is the progress line the reference prints ("" when segmentSize is nil).
	Message string
}

// PrepareSegmentTopology mirrors prepare_segment_topology with a
// caller-supplied topology. An empty role means DefaultRole. Unlike the
// reference, segmentSize < 1 or numNodes < 0 is rejected even when the
// topology has no NVLink info; divisibility is only checked when it does
// (as in the reference).
func PrepareSegmentTopology(segmentSize *int, numNodes int, topo []Node, role string) (SegmentPlan, error) {
	if segmentSize == nil {
		return SegmentPlan{Selected: []string{}, Remaining: []string{}, Topology: []Node{}}, nil
	}
	seg := *segmentSize
	if seg < 1 {
		return SegmentPlan{}, fmt.Errorf("%w: segment_size (%d) must be >= 1", ErrInvalidArgument, seg)
	}
	if numNodes < 0 {
		return SegmentPlan{}, fmt.Errorf("%w: num_nodes (%d) must be >= 0", ErrInvalidArgument, numNodes)
	}
	if role == "" {
		role = DefaultRole
	}
	topo = append([]Node{}, normalizeTopology(topo)...)
	if !HasTopology(topo) {
		ids := make([]string, len(topo))
		for i, n := range topo {
			ids[i] = n.ID
		}
		return SegmentPlan{
			Selected:  []string{},
			Remaining: ids,
			Topology:  topo,
			Message: fmt.Sprintf("segment_size=%d is set but no NVLink domain info found, "+
				"falling back to unordered allocation", seg),
		}, nil
	}
	if err := checkSegmentArgs(seg, numNodes); err != nil {
		return SegmentPlan{}, err
	}
	pos, selected, remaining, err := selectNodes(topo, seg, numNodes)
	if err != nil {
		return SegmentPlan{}, err
	}
	// selected is in topological order: a domain's nodes are contiguous.
	constraints := make([]map[string]float64, len(selected))
	used := 0
	for i := range selected {
		d := topo[pos[i]].Domain
		constraints[i] = map[string]float64{d: DomainConstraintAmount}
		if i == 0 || d != topo[pos[i-1]].Domain {
			used++
		}
	}
	return SegmentPlan{
		Constraints: constraints,
		Selected:    selected,
		Remaining:   remaining,
		Topology:    topo,
		HasTopology: true,
		Message: fmt.Sprintf("Topology-aware allocation: %d %s nodes in %d NVLink domains (segment_size=%d)",
			numNodes, role, used, seg),
	}, nil
}
