package vcluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
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
	// pinnedNodeResource stands for "this bundle must run on node <id>" in
	// the static feasibility check, which knows resources, not labels.
	pinnedNodeResource = "pinned_node:"
	// pinnedLabelResource + "<key>=<value>" stands for "this bundle must run
	// on a node with that label" in the same check.
	pinnedLabelResource = "pinned_label:"
	pinnedNodeAmount    = 0.0001
	pinnedNodeCapacity  = 1e9
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

// ChooseNodes chooses the physical node of every logical node by
// select_segment_nodes's rules: complete segments of SelectionSegmentSize
// nodes from the NVLink domains in topological order, over topo minus the
// excluded nodes. It returns the ids and their domains, one per logical node.
func (s Spec) ChooseNodes(topo []topology.Node, exclude map[string]bool) (ids, domains []string, err error) {
	kept := make([]topology.Node, 0, len(topo))
	domainOf := map[string]string{}
	for _, n := range topo {
		if !exclude[n.ID] {
			kept = append(kept, n)
			domainOf[n.ID] = n.Domain
		}
	}
	ids, _, err = topology.SelectSegmentNodes(kept, s.SelectionSegmentSize(), len(s.BundleCtPerNode))
	if err != nil {
		if len(exclude) > 0 {
			err = fmt.Errorf("%w (after excluding %d node(s) listed in exclude_node_ids)", err, len(exclude))
		}
		return nil, nil, err
	}
	domains = make([]string, len(ids))
	for i, id := range ids {
		domains[i] = domainOf[id]
	}
	return ids, domains, nil
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

// bundleNodes lists the logical node of each bundle of g.
func (s Spec) bundleNodes(g GroupRequest) []int {
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
	case s.pinsNodes():
		return map[string]string{NodeIDLabel: s.SelectedNodeIDs[n]}
	case s.pinsLabelDomains():
		sel, _ := s.domainLabelPin(n)
		return sel
	}
	return nil
}

// PinnedNodes lists the nodes the cluster's bundles are pinned to (select_nodes
// with pinning = "node" and a known choice), or nil when they may use any node.
func (s Spec) PinnedNodes() []string {
	if !s.pinsNodes() {
		return nil
	}
	return slices.Clone(s.SelectedNodeIDs)
}

func (s Spec) pinsNodes() bool {
	return s.SelectNodes && s.Pinning == PinningNode && len(s.SelectedNodeIDs) == len(s.BundleCtPerNode)
}

// pinsLabelDomains reports whether domain pinning uses label selectors.
func (s Spec) pinsLabelDomains() bool {
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

// domainLabelPin is the label selector of logical node i (PinningDomain with
// a label source); nil for a node in the unknown domain.
func (s Spec) domainLabelPin(i int) (map[string]string, bool) {
	d, ok := s.selectedDomain(i)
	if !ok {
		return nil, false
	}
	return s.Topology.DomainSelector(d)
}

// FeasibilityGroups are the spec's groups as the static check sees them:
// node and label pins and node_label_selectors become resources only the
// matching nodes have (withPins, withLabelPins, withSelectors).
func (s Spec) FeasibilityGroups() []GroupRequest {
	groups := s.Groups()
	if !s.pinsNodes() && !s.pinsLabelDomains() && s.NodeLabelSelectors == nil {
		return groups
	}
	for gi, g := range groups {
		nodes := s.bundleNodes(g)
		bundles := make([]topology.Resources, len(g.Bundles))
		for i, b := range g.Bundles {
			nb := topology.Resources{}
			if s.pinsNodes() {
				nb[pinnedNodeResource+s.SelectedNodeIDs[nodes[i]]] = pinnedNodeAmount
			} else if sel, ok := s.domainLabelPin(nodes[i]); ok {
				for k, v := range sel {
					nb[labelPinResource(k, v)] = pinnedNodeAmount
				}
			}
			if sel := s.nodeSelector(nodes[i]); sel != nil {
				nb[selectorResource(sel)] = selectorAmount
			}
			for k, v := range b {
				nb[k] = v
			}
			bundles[i] = nb
		}
		groups[gi].Bundles = bundles
	}
	return groups
}

func labelPinResource(key, value string) string { return pinnedLabelResource + key + "=" + value }

// hasLabelPins reports whether any bundle of groups carries a label pin.
func hasLabelPins(groups []GroupRequest) bool {
	for _, g := range groups {
		for _, b := range g.Bundles {
			for k := range b {
				if strings.HasPrefix(k, pinnedLabelResource) {
					return true
				}
			}
		}
	}
	return false
}

// withLabelPins gives each node the resources that stand for its labels;
// nodes[i] is capacity[i]'s node (Snapshot.Capacity keeps that order).
func withLabelPins(capacity []topology.NodeCapacity, nodes []raystate.Node) []topology.NodeCapacity {
	out := make([]topology.NodeCapacity, len(capacity))
	for i, c := range capacity {
		total := maps.Clone(c.Total)
		avail := maps.Clone(c.Available)
		if i < len(nodes) && nodes[i].NodeID == c.ID {
			for k, v := range nodes[i].Labels {
				total[labelPinResource(k, v)] = pinnedNodeCapacity
				if avail != nil {
					avail[labelPinResource(k, v)] = pinnedNodeCapacity
				}
			}
		}
		out[i] = topology.NodeCapacity{ID: c.ID, Total: total, Available: avail}
	}
	return out
}

// CheckSnapshotCapacity is CheckCapacity under the spec's capacity mode:
// over what snap has free (the spec's own groups not counted) with the
// others, over the alive nodes' totals alone (CapacityTotal), or not at all
// (CapacityNone); with node labels when a pin needs them.
func (s Spec) CheckSnapshotCapacity(snap *Snapshot, others []GroupRequest) (sh Shortage, togetherOnly bool) {
	switch s.CapacityMode() {
	case CapacityNone:
		return Shortage{}, false
	case CapacityTotal:
		others = nil // they may leave: the apply waits for them
	}
	capacity := s.checkedCapacity(snap)
	if hasLabelPins(s.FeasibilityGroups()) || hasLabelPins(others) {
		capacity = withLabelPins(capacity, snap.Nodes)
	}
	return s.CheckCapacity(capacity, NodeLabels(snap.Nodes), others)
}

// withPins gives every node the resource that stands for its pins.
func withPins(capacity []topology.NodeCapacity) []topology.NodeCapacity {
	out := make([]topology.NodeCapacity, len(capacity))
	for i, c := range capacity {
		total := topology.Resources{pinnedNodeResource + c.ID: pinnedNodeCapacity}
		for k, v := range c.Total {
			total[k] = v
		}
		var avail topology.Resources
		if c.Available != nil {
			avail = topology.Resources{pinnedNodeResource + c.ID: pinnedNodeCapacity}
			for k, v := range c.Available {
				avail[k] = v
			}
		}
		out[i] = topology.NodeCapacity{ID: c.ID, Total: total, Available: avail}
	}
	return out
}

// CheckCapacity explains whether the cluster fits capacity, first alone and
// then together with others (groups of other clusters planned in the same
// run). togetherOnly is true when it fits alone but not with the others.
// labels (node id -> labels) judges label selectors; nil when unknown.
func (s Spec) CheckCapacity(capacity []topology.NodeCapacity, labels map[string]map[string]string, others []GroupRequest) (sh Shortage, togetherOnly bool) {
	own := s.FeasibilityGroups()
	pinned := withSelectors(withPins(capacity), labels, append(slices.Clone(others), own...))
	sh = ExplainShortage(own, pinned)
	sh.Nodes = CapacitySummary(capacity)
	if len(sh.Errors) > 0 || len(others) == 0 {
		return sh, false
	}
	both := ExplainShortage(append(slices.Clone(others), own...), pinned)
	if len(both.Errors) == 0 {
		return sh, false
	}
	both.Nodes = sh.Nodes
	return both, true
}
