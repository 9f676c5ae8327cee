package planning

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Pins in the static feasibility check, which knows resources, not labels.
const (
	// pinnedNodeResource stands for "this bundle must run on node <id>" in
	// the static feasibility check, which knows resources, not labels.
	pinnedNodeResource = "pinned_node:"
	// pinnedLabelResource + "<key>=<value>" stands for "this bundle must run
	// on a node with that label" in the same check.
	pinnedLabelResource = "pinned_label:"
	pinnedNodeAmount    = topology.ResourceUnit
	pinnedNodeCapacity  = 1e9
)

// ChooseNodes chooses the physical node of every logical node by
// select_segment_nodes's rules: complete segments of SelectionSegmentSize
// nodes from the NVLink domains in topological order, over topo minus the
// excluded nodes. It returns the ids and their domains, one per logical node.
func ChooseNodes(s clusterspec.Spec, topo []topology.Node, exclude map[string]bool) (ids, domains []string, err error) {
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

// TakenGroups are what a cluster being created takes from the clusters
// planned or chosen after it in the same process: FeasibilityGroups, with
// a select_nodes cluster's bundles on the nodes it chose whatever its
// pinning, since its reservation holds those nodes (domain pinning only
// lets Ray move them within the domain later).
func TakenGroups(s clusterspec.Spec) []clusterspec.GroupRequest {
	if s.SelectNodes && len(s.SelectedNodeIDs) == len(s.BundleCtPerNode) {
		s.Pinning = clusterspec.PinningNode
	}
	return FeasibilityGroups(s)
}

// FeasibilityGroups are the spec's groups as the static check sees them:
// node and label pins and node_label_selectors become resources only the
// matching nodes have (withPins, withLabelPins, withSelectors).
func FeasibilityGroups(s clusterspec.Spec) []clusterspec.GroupRequest {
	groups := s.Groups()
	if !s.PinsNodes() && !s.PinsLabelDomains() && s.NodeLabelSelectors == nil {
		return groups
	}
	for gi, g := range groups {
		nodes := s.BundleNodes(g)
		bundles := make([]topology.Resources, len(g.Bundles))
		for i, b := range g.Bundles {
			nb := topology.Resources{}
			if s.PinsNodes() {
				nb[pinnedNodeResource+s.SelectedNodeIDs[nodes[i]]] = pinnedNodeAmount
			} else if sel, ok := s.DomainLabelPin(nodes[i]); ok {
				for k, v := range sel {
					nb[labelPinResource(k, v)] = pinnedNodeAmount
				}
			}
			if sel := s.NodeSelector(nodes[i]); sel != nil {
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
func hasLabelPins(groups []clusterspec.GroupRequest) bool {
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
func CheckSnapshotCapacity(s clusterspec.Spec, snap *Snapshot, others []clusterspec.GroupRequest) (sh Shortage, togetherOnly bool) {
	switch s.CapacityMode() {
	case clusterspec.CapacityNone:
		return Shortage{}, false
	case clusterspec.CapacityTotal:
		others = nil // they may leave: the apply waits for them
	}
	capacity := checkedCapacity(s, snap)
	if hasLabelPins(FeasibilityGroups(s)) || hasLabelPins(others) {
		capacity = withLabelPins(capacity, snap.Nodes)
	}
	return CheckCapacity(s, capacity, NodeLabels(snap.Nodes), others)
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
func CheckCapacity(s clusterspec.Spec, capacity []topology.NodeCapacity, labels map[string]map[string]string, others []clusterspec.GroupRequest) (sh Shortage, togetherOnly bool) {
	own := FeasibilityGroups(s)
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
