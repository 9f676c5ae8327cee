package clusterspec

import (
	"slices"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Node pinning of a cluster that selects its own nodes.
const (
	// PinningNode pins each logical node's bundles to its selected node
	// through Ray's bundle_label_selector on NodeIDLabel.
	PinningNode = "node"
	// PinningDomain only pins each logical node to its selected node's NVLink
	// domain ({nvlink_domain_X: DomainConstraintAmount}), as the reference does;
	// with a label domain source, with the bundle label selector {<label>: <domain>}.
	PinningDomain = "domain"
	// DefaultPinning is pinning's default.
	DefaultPinning = PinningNode
	// NodeIDLabel is the label Ray gives every node: its node id.
	NodeIDLabel = "ray.io/node-id"
)

// Pinnings lists the valid pinning values.
var Pinnings = []string{PinningNode, PinningDomain}

// SelectionSegmentSize is the segment size selection uses: segment_size, or
// 1 when unset.
func (s Spec) SelectionSegmentSize() int {
	if s.SegmentSize != nil && *s.SegmentSize > 0 {
		return *s.SegmentSize
	}
	return 1
}

// GoneSelectedNodes lists the selected nodes not in alive (a set of node ids).
func (s Spec) GoneSelectedNodes(alive map[string]bool) []string {
	var gone []string
	for _, id := range s.SelectedNodeIDs {
		if !alive[id] {
			gone = append(gone, id)
		}
	}
	return gone
}

// BundleNodes lists the logical node of each bundle of g.
func (s Spec) BundleNodes(g GroupRequest) []int {
	if g.NodeIndex >= 0 {
		out := make([]int, len(g.Bundles))
		for i := range out {
			out[i] = g.NodeIndex
		}
		return out
	}
	var out []int
	for i, c := range s.BundleCtPerNode {
		for j := 0; j < c; j++ {
			out = append(out, i)
		}
	}
	return out
}

// pinSelector is logical node n's pin as a label selector: its selected
// node (PinningNode), or its selected node's label domain (PinningDomain
// with a label source); nil for none.
func (s Spec) pinSelector(n int) map[string]string {
	switch {
	case s.PinsNodes():
		return map[string]string{NodeIDLabel: s.SelectedNodeIDs[n]}
	case s.PinsLabelDomains():
		sel, _ := s.DomainLabelPin(n)
		return sel
	}
	return nil
}

// PinnedNodes lists the nodes the cluster's bundles are pinned to (select_nodes
// with pinning = "node" and a known choice), or nil when they may use any node.
func (s Spec) PinnedNodes() []string {
	if !s.PinsNodes() {
		return nil
	}
	return slices.Clone(s.SelectedNodeIDs)
}

func (s Spec) PinsNodes() bool {
	return s.SelectNodes && s.Pinning == PinningNode && len(s.SelectedNodeIDs) == len(s.BundleCtPerNode)
}

// PinsLabelDomains reports whether domain pinning uses label selectors.
func (s Spec) PinsLabelDomains() bool {
	return s.SelectNodes && s.Pinning == PinningDomain && s.Topology.DomainLabel != "" &&
		len(s.SelectedNodeDomains) == len(s.BundleCtPerNode)
}

// selectedDomain is the domain logical node i was pinned to (PinningDomain).
func (s Spec) selectedDomain(i int) (string, bool) {
	if !s.SelectNodes || s.Pinning != PinningDomain || i >= len(s.SelectedNodeDomains) {
		return "", false
	}
	d := s.SelectedNodeDomains[i]
	return d, d != "" && d != topology.NVLinkDomainUnknown
}

// domainConstraint is the resource domain pin of logical node i (PinningDomain
// with the resource source).
func (s Spec) domainConstraint(i int) (string, bool) {
	if s.Topology.DomainLabel != "" {
		return "", false
	}
	return s.selectedDomain(i)
}

// DomainLabelPin is the label selector of logical node i (PinningDomain with
// a label source); nil for a node in the unknown domain.
func (s Spec) DomainLabelPin(i int) (map[string]string, bool) {
	d, ok := s.selectedDomain(i)
	if !ok {
		return nil, false
	}
	return s.Topology.DomainSelector(d)
}
