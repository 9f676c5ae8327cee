package vcluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Label selectors (Ray's bundle_label_selector) and topology strategies, with
// the syntax Ray 2.55.1 and 2.60.0 accept (ray/_private/label_utils.py and
// ray/util/placement_group.py; both versions agree on the selector rules).

// maxLabelValueLength bounds one selector value (Kubernetes label rules).
const maxLabelValueLength = 63

var (
	// labelValueExpr is a label value: the same rule as a key's name.
	labelValueExpr = strings.TrimSuffix(strings.TrimPrefix(labelNamePattern.String(), "^"), "$")
	// selectorValuePattern is one selector value: "v", "!v", "in(a, b)",
	// "!in(a, b)" (Ray also accepts the parentheses without "in").
	selectorValuePattern = regexp.MustCompile(`^!?(?:in)?\((?P<list>` + labelValueExpr + `(?:, ?` + labelValueExpr + `)*)\)$|^!?(?P<one>` + labelValueExpr + `)$`)
	selectorList         = selectorValuePattern.SubexpIndex("list")
	selectorOne          = selectorValuePattern.SubexpIndex("one")
)

// validateSelectorValue returns why value is not a selector value Ray
// accepts, or "".
func validateSelectorValue(key, value string) string {
	if value == "" || selectorValuePattern.MatchString(value) {
		return ""
	}
	return fmt.Sprintf("selector %s = %q is not a value Ray accepts: use \"v\", \"!v\", \"in(a,b)\" or \"!in(a,b)\", "+
		"where each value has at most %d letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
		key, value, maxLabelValueLength)
}

// labelMatch is one parsed selector value.
type labelMatch struct {
	negate bool
	values []string
}

func parseSelectorValue(value string) (labelMatch, bool) {
	m := selectorValuePattern.FindStringSubmatch(value)
	if m == nil {
		return labelMatch{}, false
	}
	lm := labelMatch{negate: strings.HasPrefix(value, "!")}
	if m[selectorList] != "" {
		for _, v := range strings.Split(m[selectorList], ",") {
			lm.values = append(lm.values, strings.TrimSpace(v))
		}
	} else {
		lm.values = []string{m[selectorOne]}
	}
	return lm, true
}

// SelectorMatches reports whether a node with labels satisfies selector, by
// Ray's rules: "in" needs the label with one of the values, "!"/"!in" is
// satisfied by a node without the label. A value this package cannot parse
// (only "", which Ray accepts) matches every node, so that the plan-time
// check never rejects what Ray might place.
func SelectorMatches(selector, labels map[string]string) bool {
	for k, v := range selector {
		lm, ok := parseSelectorValue(v)
		if !ok {
			continue
		}
		have, present := labels[k]
		in := present && slices.Contains(lm.values, have)
		if in == lm.negate {
			return false
		}
	}
	return true
}

// canonicalSelectorValue drops the optional spaces of "in(a, b)" so that
// what Ray reports compares equal to what was sent.
func canonicalSelectorValue(v string) string {
	if !strings.HasSuffix(v, ")") {
		return v
	}
	return strings.ReplaceAll(v, " ", "")
}

// sameSelector compares two selectors by canonical values; nil and empty
// are the same.
func sameSelector(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || canonicalSelectorValue(v) != canonicalSelectorValue(w) {
			return false
		}
	}
	return true
}

// FormatSelector renders a selector with sorted keys.
func FormatSelector(s map[string]string) string {
	parts := make([]string, 0, len(s))
	for _, k := range slices.Sorted(maps.Keys(s)) {
		parts = append(parts, fmt.Sprintf("%s: %q", k, s[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// validateSelectors checks node_label_selectors: one entry per logical
// node, each key and value as Ray accepts them. A selector on NodeIDLabel
// that contradicts pinning = "node" is found when nodes are chosen
// (ChooseLabelledNodes).
func (s Spec) validateSelectors(bad issueFunc) {
	if s.NodeLabelSelectors == nil {
		return
	}
	if len(s.NodeLabelSelectors) != len(s.BundleCtPerNode) {
		bad(AttrNodeLabelSelectors, "Selector count mismatch",
			"node_label_selectors length (%d) must match bundle_ct_per_node_list length (%d): one selector map per logical node",
			len(s.NodeLabelSelectors), len(s.BundleCtPerNode))
	}
	for i, sel := range s.NodeLabelSelectors {
		p := fmt.Sprintf("%s[%d]", AttrNodeLabelSelectors, i)
		for _, k := range slices.Sorted(maps.Keys(sel)) {
			if err := ValidateLabelKey(k); err != nil {
				bad(p, "Invalid label selector", "%s: %v", p, err)
				continue
			}
			if why := validateSelectorValue(k, sel[k]); why != "" {
				bad(p, "Invalid label selector", "%s: %s", p, why)
			}
		}
	}
}

// validateTopologyStrategy checks topology_strategy against what Ray 2.60
// accepts: at most one topology label besides Ray's node-id label (which
// placement_group_strategy sets), with STRICT_PACK, on a unified group.
func (s Spec) validateTopologyStrategy(bad issueFunc) {
	if s.TopologyStrategy == nil {
		return
	}
	if !s.UseUnifiedPG {
		bad(AttrTopologyStrategy, "topology_strategy needs a unified group",
			"topology_strategy applies to the unified placement group only: set use_unified_pg = true, or remove topology_strategy")
	}
	if len(s.TopologyStrategy) > maxTopologyLabels {
		bad(AttrTopologyStrategy, "Too many topology labels",
			"topology_strategy has %d entries; Ray supports at most %d topology label", len(s.TopologyStrategy), maxTopologyLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(s.TopologyStrategy)) {
		v := s.TopologyStrategy[k]
		switch {
		case k == NodeIDLabel:
			bad(AttrTopologyStrategy, "Invalid topology label",
				"topology_strategy cannot use %s: the node-level strategy is placement_group_strategy", NodeIDLabel)
		case ValidateLabelKey(k) != nil:
			bad(AttrTopologyStrategy, "Invalid topology label", "topology_strategy: %v", ValidateLabelKey(k))
		case v != TopologyLabelStrategy:
			bad(AttrTopologyStrategy, "Invalid topology strategy",
				"topology_strategy[%q] = %q: Ray supports only %q for topology labels", k, v, TopologyLabelStrategy)
		}
	}
}

// maxTopologyLabels is how many topology labels Ray 2.60 accepts besides
// the node-id label.
const maxTopologyLabels = 1

// TopologyLabelStrategy is the only strategy Ray 2.60 accepts for a
// topology label.
const TopologyLabelStrategy = topology.StrategyStrictPack

// nodeSelector is logical node i's user selector (nil for none).
func (s Spec) nodeSelector(i int) map[string]string {
	if i < len(s.NodeLabelSelectors) && len(s.NodeLabelSelectors[i]) > 0 {
		return s.NodeLabelSelectors[i]
	}
	return nil
}

// bundleSelectors is the bundle_label_selector of g: each bundle gets its
// logical node's selector merged with its pin (pinSelector), the pin
// winning on a key both set (ChooseLabelledNodes has checked that the
// chosen node satisfies the selector). Nil when no bundle has one.
func (s Spec) bundleSelectors(g GroupRequest) []map[string]string {
	pins := s.pinsNodes() || s.pinsLabelDomains()
	if !pins && s.NodeLabelSelectors == nil {
		return nil
	}
	nodes := s.bundleNodes(g)
	out := make([]map[string]string, len(nodes))
	some := false
	for i, n := range nodes {
		sel := map[string]string{}
		maps.Copy(sel, s.nodeSelector(n))
		maps.Copy(sel, s.pinSelector(n))
		out[i] = sel
		some = some || len(sel) > 0
	}
	if !some {
		return nil
	}
	return out
}

// groupTopologyStrategy is what the driver passes as Ray's
// topology_strategy for g: the node-level strategy under NodeIDLabel plus
// the configured topology labels. Nil without topology_strategy.
func (s Spec) groupTopologyStrategy(g GroupRequest) map[string]string {
	if len(s.TopologyStrategy) == 0 || g.NodeIndex >= 0 {
		return nil
	}
	out := map[string]string{NodeIDLabel: g.Strategy}
	maps.Copy(out, s.TopologyStrategy)
	return out
}

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
func (s Spec) CheckSelectors(labels map[string]map[string]string) []Issue {
	var out []Issue
	ids := slices.Sorted(maps.Keys(labels))
	for i := range s.BundleCtPerNode {
		sel := s.nodeSelector(i)
		if sel == nil || s.BundleCtPerNode[i] == 0 {
			continue
		}
		if !slices.ContainsFunc(ids, func(id string) bool { return SelectorMatches(sel, labels[id]) }) {
			out = append(out, Issue{Path: fmt.Sprintf("%s[%d]", AttrNodeLabelSelectors, i), Summary: "No node matches the label selector",
				Detail: fmt.Sprintf("node_label_selectors[%d]: no alive Ray node satisfies logical node %d's selector %s (%d nodes checked).", i, i, FormatSelector(sel), len(ids))})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.TopologyStrategy)) {
		if !slices.ContainsFunc(ids, func(id string) bool { _, ok := labels[id][k]; return ok }) {
			out = append(out, Issue{Path: AttrTopologyStrategy, Summary: "No node carries the topology label",
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
func withSelectors(capacity []topology.NodeCapacity, labels map[string]map[string]string, groups []GroupRequest) []topology.NodeCapacity {
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
			if labels != nil && !SelectorMatches(sel, labels[c.ID]) {
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
func (s Spec) CheckTopologyStrategy(snap *Snapshot) string {
	if len(s.TopologyStrategy) == 0 || !s.UseUnifiedPG || s.CapacityMode() == CapacityNone {
		return ""
	}
	groups := s.FeasibilityGroups()
	labels := NodeLabels(snap.Nodes)
	capacity := s.checkedCapacity(snap)
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
func (s Spec) ChooseLabelledNodes(topo []topology.Node, exclude map[string]bool, labels map[string]map[string]string) (ids, domains []string, issues []Issue) {
	skip := maps.Clone(exclude)
	if skip == nil {
		skip = map[string]bool{}
	}
	if s.NodeLabelSelectors != nil {
		for _, n := range topo {
			usable := false
			for i := range s.BundleCtPerNode {
				if sel := s.nodeSelector(i); sel == nil || SelectorMatches(sel, labels[n.ID]) {
					usable = true
					break
				}
			}
			if !usable {
				skip[n.ID] = true
			}
		}
	}
	ids, domains, err := s.ChooseNodes(topo, skip)
	if err != nil {
		if len(skip) > len(exclude) {
			err = fmt.Errorf("%w; %d node(s) satisfy no entry of node_label_selectors", err, len(skip)-len(exclude))
		}
		return nil, nil, []Issue{{Path: AttrSelectNodes, Summary: "Cannot select nodes for the virtual cluster", Detail: err.Error()}}
	}
	for i, id := range ids {
		sel := s.nodeSelector(i)
		if sel == nil || SelectorMatches(sel, labels[id]) {
			continue
		}
		detail := fmt.Sprintf("node_label_selectors[%d]: select_nodes chose node %s for logical node %d (complete NVLink segments in topological order), "+
			"but it does not satisfy that node's selector %s. Make the selectors agree with the segment order, or list "+
			"unwanted nodes in exclude_node_ids.", i, id, i, FormatSelector(sel))
		if _, onID := sel[NodeIDLabel]; onID && s.Pinning == PinningNode {
			detail += fmt.Sprintf(" A selector on %s contradicts pinning = %q, which pins each logical node to its chosen node.", NodeIDLabel, PinningNode)
		}
		issues = append(issues, Issue{Path: fmt.Sprintf("%s[%d]", AttrNodeLabelSelectors, i), Summary: "Selected node does not match the label selector", Detail: detail})
	}
	if len(issues) > 0 {
		return nil, nil, issues
	}
	return ids, domains, nil
}

// InferNative reads node_label_selectors and topology_strategy back from
// the live groups of an imported cluster: each logical node takes the
// label selector of its first bundle, the unified group its topology
// strategy without the node-level entry. Both stay nil when Ray shows none.
func (s *Spec) InferNative(live []raystate.PlacementGroup) {
	byName := map[string]raystate.PlacementGroup{}
	for _, g := range live {
		byName[g.Name] = g
	}
	selectors := make([]map[string]string, len(s.BundleCtPerNode))
	found := false
	for _, want := range s.Groups() {
		got, ok := byName[want.Name]
		if !ok {
			continue
		}
		nodes := s.bundleNodes(want)
		for _, b := range got.Bundles {
			if b.BundleIndex < 0 || b.BundleIndex >= len(nodes) || selectors[nodes[b.BundleIndex]] != nil {
				continue
			}
			selectors[nodes[b.BundleIndex]] = maps.Clone(b.LabelSelector)
			found = found || len(b.LabelSelector) > 0
		}
		if want.NodeIndex < 0 && len(got.TopologyStrategy) > 0 {
			s.TopologyStrategy = map[string]string{}
			for k, v := range got.TopologyStrategy {
				if k != NodeIDLabel {
					s.TopologyStrategy[k] = v
				}
			}
		}
	}
	if !found {
		return
	}
	for i, sel := range selectors {
		if sel == nil {
			selectors[i] = map[string]string{}
		}
	}
	s.NodeLabelSelectors = selectors
}
