package planning

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// NodeLabels maps node id to labels.
func NodeLabels(nodes []raystate.Node) map[string]map[string]string {
	out := make(map[string]map[string]string, len(nodes))
	for _, n := range nodes {
		out[n.NodeID] = n.Labels
	}
	return out
}

// CheckSelectors reports every logical node whose selector no alive node
// satisfies (labels: node id -> labels), and a topology strategy whose
// label no alive node carries.
func CheckSelectors(s clusterspec.Spec, labels map[string]map[string]string) []clusterspec.Issue {
	var out []clusterspec.Issue
	ids := slices.Sorted(maps.Keys(labels))
	for i := range s.BundleCtPerNode {
		sel := s.NodeSelector(i)
		if sel == nil || s.BundleCtPerNode[i] == 0 {
			continue
		}
		if !slices.ContainsFunc(ids, func(id string) bool { return clusterspec.SelectorMatches(sel, labels[id]) }) {
			out = append(out, clusterspec.Issue{Path: fmt.Sprintf("%s[%d]", clusterspec.AttrNodeLabelSelectors, i), Summary: "No node matches the label selector",
				Detail: fmt.Sprintf("node_label_selectors[%d]: no alive Ray node satisfies logical node %d's selector %s (%d nodes checked).", i, i, clusterspec.FormatSelector(sel), len(ids))})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.TopologyStrategy)) {
		if !slices.ContainsFunc(ids, func(id string) bool { _, ok := labels[id][k]; return ok }) {
			out = append(out, clusterspec.Issue{Path: clusterspec.AttrTopologyStrategy, Summary: "No node carries the topology label",
				Detail: fmt.Sprintf("topology_strategy packs the group inside one value of label %q, but no alive Ray node has that label.", k)})
		}
	}
	return out
}

// selectorResource stands for "this bundle needs a node matching selector"
// in the static feasibility check, which knows resources, not labels. The
// selector is JSON after the prefix so withSelectors can read it back.
const (
	selectorResourcePrefix = "label_selector:"
	selectorAmount         = pinnedNodeAmount
	selectorCapacity       = pinnedNodeCapacity
)

func selectorResource(sel map[string]string) string {
	b, _ := json.Marshal(sel) // map keys are sorted
	return selectorResourcePrefix + string(b)
}

// withSelectors gives every node a selector resource for each selector in
// groups that it satisfies. With labels nil (unknown) every node gets
// every selector, so the check does not reject what it cannot judge.
func withSelectors(capacity []topology.NodeCapacity, labels map[string]map[string]string, groups []clusterspec.GroupRequest) []topology.NodeCapacity {
	selectors := map[string]map[string]string{}
	for _, g := range groups {
		for _, b := range g.Bundles {
			for k := range b {
				if rest, ok := strings.CutPrefix(k, selectorResourcePrefix); ok && selectors[k] == nil {
					var sel map[string]string
					if json.Unmarshal([]byte(rest), &sel) == nil {
						selectors[k] = sel
					}
				}
			}
		}
	}
	if len(selectors) == 0 {
		return capacity
	}
	out := make([]topology.NodeCapacity, len(capacity))
	for i, c := range capacity {
		total := maps.Clone(c.Total)
		var avail topology.Resources
		if c.Available != nil {
			avail = maps.Clone(c.Available)
		}
		for name, sel := range selectors {
			if labels != nil && !clusterspec.SelectorMatches(sel, labels[c.ID]) {
				continue
			}
			total[name] = selectorCapacity
			if avail != nil {
				avail[name] = selectorCapacity
			}
		}
		out[i] = topology.NodeCapacity{ID: c.ID, Total: total, Available: avail}
	}
	return out
}

// CheckTopologyStrategy reports whether the unified group fits inside one
// value of each topology label, over the capacity the spec's capacity mode
// checks (checkedCapacity); it returns "" when it does or there is nothing
// to check.
func CheckTopologyStrategy(s clusterspec.Spec, snap *Snapshot) string {
	if len(s.TopologyStrategy) == 0 || !s.UseUnifiedPG || s.CapacityMode() == clusterspec.CapacityNone {
		return ""
	}
	groups := FeasibilityGroups(s)
	labels := NodeLabels(snap.Nodes)
	capacity := checkedCapacity(s, snap)
	if hasLabelPins(groups) {
		capacity = withLabelPins(capacity, snap.Nodes)
	}
	for _, key := range slices.Sorted(maps.Keys(s.TopologyStrategy)) {
		byValue := map[string][]topology.NodeCapacity{}
		for _, c := range capacity {
			if v, ok := labels[c.ID][key]; ok {
				byValue[v] = append(byValue[v], c)
			}
		}
		fits := false
		for _, v := range slices.Sorted(maps.Keys(byValue)) {
			caps := withSelectors(withPins(byValue[v]), labels, groups)
			if len(ExplainShortage(groups, caps).Errors) == 0 {
				fits = true
				break
			}
		}
		if !fits {
			return fmt.Sprintf("topology_strategy packs every bundle inside one value of label %q, but no value's nodes "+
				"(%s) can hold all %d bundles together.\n\n%s", key, strings.Join(slices.Sorted(maps.Keys(byValue)), ", "),
				s.WorldSize(), CapacitySummary(snap.Capacity(s.GroupNames())))
		}
	}
	return ""
}

// ChooseLabelledNodes is ChooseNodes honouring node_label_selectors: nodes
// that satisfy no logical node's selector are left out of the choice, and
// each chosen node must satisfy its own logical node's selector (with
// pinning = "node" a selector on NodeIDLabel that the choice contradicts is
// reported here). labels maps node id to labels.
func ChooseLabelledNodes(s clusterspec.Spec, topo []topology.Node, exclude map[string]bool, labels map[string]map[string]string) (ids, domains []string, issues []clusterspec.Issue) {
	skip := maps.Clone(exclude)
	if skip == nil {
		skip = map[string]bool{}
	}
	if s.NodeLabelSelectors != nil {
		for _, n := range topo {
			usable := false
			for i := range s.BundleCtPerNode {
				if sel := s.NodeSelector(i); sel == nil || clusterspec.SelectorMatches(sel, labels[n.ID]) {
					usable = true
					break
				}
			}
			if !usable {
				skip[n.ID] = true
			}
		}
	}
	ids, domains, err := ChooseNodes(s, topo, skip)
	if err != nil {
		if len(skip) > len(exclude) {
			err = fmt.Errorf("%w; %d node(s) satisfy no entry of node_label_selectors", err, len(skip)-len(exclude))
		}
		return nil, nil, []clusterspec.Issue{{Path: clusterspec.AttrSelectNodes, Summary: "Cannot select nodes for the virtual cluster", Detail: err.Error()}}
	}
	for i, id := range ids {
		sel := s.NodeSelector(i)
		if sel == nil || clusterspec.SelectorMatches(sel, labels[id]) {
			continue
		}
		detail := fmt.Sprintf("node_label_selectors[%d]: select_nodes chose node %s for logical node %d (complete NVLink segments in topological order), "+
			"but it does not satisfy that node's selector %s. Make the selectors agree with the segment order, or list "+
			"unwanted nodes in exclude_node_ids.", i, id, i, clusterspec.FormatSelector(sel))
		if _, onID := sel[clusterspec.NodeIDLabel]; onID && s.Pinning == clusterspec.PinningNode {
			detail += fmt.Sprintf(" A selector on %s contradicts pinning = %q, which pins each logical node to its chosen node.", clusterspec.NodeIDLabel, clusterspec.PinningNode)
		}
		issues = append(issues, clusterspec.Issue{Path: fmt.Sprintf("%s[%d]", clusterspec.AttrNodeLabelSelectors, i), Summary: "Selected node does not match the label selector", Detail: detail})
	}
	if len(issues) > 0 {
		return nil, nil, issues
	}
	return ids, domains, nil
}
