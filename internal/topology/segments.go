package topology

import (
	"fmt"
	"sort"
	"strings"
)

type domainNodes struct {
	domain string
	nodes  []Node
}

// groupByDomain buckets known-domain nodes by first appearance, stably
// sorts each bucket by topo_rank, then stably sorts buckets by their minimum
// topo_rank. It also returns the number of unknown-domain nodes.
func groupByDomain(topo []Node) ([]domainNodes, int) {
	var out []domainNodes
	idx := map[string]int{}
	unknown := 0
	for _, n := range topo {
		if n.Domain == NVLinkDomainUnknown {
			unknown++
			continue
		}
		i, ok := idx[n.Domain]
		if !ok {
			i = len(out)
			idx[n.Domain] = i
			out = append(out, domainNodes{domain: n.Domain})
		}
		out[i].nodes = append(out[i].nodes, n)
	}
	for _, d := range out {
		ns := d.nodes
		sort.SliceStable(ns, func(a, b int) bool { return ns[a].TopoRank < ns[b].TopoRank })
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].nodes[0].TopoRank < out[b].nodes[0].TopoRank })
	return out, unknown
}

// SelectSegmentNodes mirrors select_segment_nodes: it greedily takes whole
// segments of segmentSize nodes from NVLink domains in topological order
// until numNodes are selected. Selected IDs are in topological order,
// remaining IDs in input order. Unknown-domain nodes are never selected.
// Duplicate IDs follow dict semantics (first position, last value).
func SelectSegmentNodes(topo []Node, segmentSize, numNodes int) (selected, remaining []string, err error) {
	if segmentSize < 1 {
		return nil, nil, fmt.Errorf("%w: segment_size (%d) must be >= 1", ErrInvalidArgument, segmentSize)
	}
	if numNodes < 0 {
		return nil, nil, fmt.Errorf("%w: num_nodes (%d) must be >= 0", ErrInvalidArgument, numNodes)
	}
	if numNodes%segmentSize != 0 {
		return nil, nil, fmt.Errorf("%w: num_nodes (%d) must be divisible by segment_size (%d)", ErrInvalidArgument, numNodes, segmentSize)
	}
	topo = normalizeTopology(topo)
	domains, unknown := groupByDomain(topo)

	needed := numNodes / segmentSize
	taken := 0
	selected = make([]string, 0, min(numNodes, len(topo)))
	for _, d := range domains {
		if taken >= needed {
			break
		}
		take := min(len(d.nodes)/segmentSize, needed-taken)
		for _, n := range d.nodes[:take*segmentSize] {
			selected = append(selected, n.ID)
		}
		taken += take
	}
	if taken < needed {
		return nil, nil, segmentError(domains, unknown, segmentSize, numNodes)
	}

	chosen := make(map[string]struct{}, len(selected))
	for _, id := range selected {
		chosen[id] = struct{}{}
	}
	remaining = make([]string, 0, len(topo)-len(selected))
	for _, n := range topo {
		if _, ok := chosen[n.ID]; !ok {
			remaining = append(remaining, n.ID)
		}
	}
	return selected, remaining, nil
}

func segmentError(domains []domainNodes, unknown, segmentSize, numNodes int) *ResourceInsufficientError {
	e := &ResourceInsufficientError{
		SegmentsNeeded: numNodes / segmentSize,
		SegmentSize:    segmentSize,
		NodesNeeded:    numNodes,
		UnknownNodes:   unknown,
	}
	parts := make([]string, 0, len(domains))
	for _, d := range domains {
		e.DomainNodeCounts = append(e.DomainNodeCounts, DomainCount{Domain: d.domain, Nodes: len(d.nodes)})
		e.SegmentsAvailable += len(d.nodes) / segmentSize
		parts = append(parts, fmt.Sprintf("%s=%d", d.domain, len(d.nodes)))
	}
	summary := "none"
	if len(parts) > 0 {
		summary = strings.Join(parts, ", ")
	}
	e.Message = fmt.Sprintf("cannot form %d complete segments of %d nodes (%d nodes needed); nodes per NVLink domain: %s",
		e.SegmentsNeeded, segmentSize, numNodes, summary)
	if unknown > 0 {
		e.Message += fmt.Sprintf("; %d nodes without NVLink domain info cannot be used", unknown)
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
	selected, remaining, err := SelectSegmentNodes(topo, seg, numNodes)
	if err != nil {
		return SegmentPlan{}, err
	}
	domainOf := make(map[string]string, len(topo))
	for _, n := range topo {
		domainOf[n.ID] = n.Domain
	}
	constraints := make([]map[string]float64, len(selected))
	used := map[string]struct{}{}
	for i, id := range selected {
		d := domainOf[id]
		constraints[i] = map[string]float64{d: DomainConstraintAmount}
		used[d] = struct{}{}
	}
	return SegmentPlan{
		Constraints: constraints,
		Selected:    selected,
		Remaining:   remaining,
		Topology:    topo,
		HasTopology: true,
		Message: fmt.Sprintf("Topology-aware allocation: %d %s nodes in %d NVLink domains (segment_size=%d)",
			numNodes, role, len(used), seg),
	}, nil
}
