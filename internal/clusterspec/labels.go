package clusterspec

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

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

// SameSelector compares two selectors by canonical values; nil and empty
// are the same.
func SameSelector(a, b map[string]string) bool {
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

// NodeSelector is logical node i's user selector (nil for none).
func (s Spec) NodeSelector(i int) map[string]string {
	if i < len(s.NodeLabelSelectors) && len(s.NodeLabelSelectors[i]) > 0 {
		return s.NodeLabelSelectors[i]
	}
	return nil
}

// BundleSelectors is the bundle_label_selector of g: each bundle gets its
// logical node's selector merged with its pin (pinSelector), the pin
// winning on a key both set (ChooseLabelledNodes has checked that the
// chosen node satisfies the selector). Nil when no bundle has one.
func (s Spec) BundleSelectors(g GroupRequest) []map[string]string {
	pins := s.PinsNodes() || s.PinsLabelDomains()
	if !pins && s.NodeLabelSelectors == nil {
		return nil
	}
	nodes := s.BundleNodes(g)
	out := make([]map[string]string, len(nodes))
	some := false
	for i, n := range nodes {
		sel := map[string]string{}
		maps.Copy(sel, s.NodeSelector(n))
		maps.Copy(sel, s.pinSelector(n))
		out[i] = sel
		some = some || len(sel) > 0
	}
	if !some {
		return nil
	}
	return out
}

// GroupTopologyStrategy is what the driver passes as Ray's
// topology_strategy for g: the node-level strategy under NodeIDLabel plus
// the configured topology labels. Nil without topology_strategy.
func (s Spec) GroupTopologyStrategy(g GroupRequest) map[string]string {
	if len(s.TopologyStrategy) == 0 || g.NodeIndex >= 0 {
		return nil
	}
	out := map[string]string{NodeIDLabel: g.Strategy}
	maps.Copy(out, s.TopologyStrategy)
	return out
}

// AcceleratorTypeLabel is the node label Ray sets to the GPU type.
const AcceleratorTypeLabel = "ray.io/accelerator-type"

// GPUDomainAccelerators are the ray.io/accelerator-type values whose bundle
// selector asks Ray (from GPUDomainSelectorMinRayVersion) for GPU-domain
// scheduling of the whole group.
var GPUDomainAccelerators = []string{"GB200", "GB300"}

// maxListedSelectors bounds how many selector indices one issue names.
const maxListedSelectors = 16

// gpuDomainSelectorIssues finds, as Ray's _validate_bundle_label_selector
// does, each group whose bundle selectors select a GPU-domain accelerator
// (exactly "GB200" or "GB300") on some bundles but not exactly the same
// value on every bundle: one error per group, at the first logical node's
// selector that lacks it, naming every such logical node and the fix.
// Per-node groups never fail (their bundles share one selector).
func (s Spec) gpuDomainSelectorIssues() []Issue {
	var out []Issue
	for _, g := range s.Groups() {
		sels := s.BundleSelectors(g)
		if sels == nil {
			continue
		}
		nodes := s.BundleNodes(g)
		accel, first := "", -1
		for i, sel := range sels {
			if slices.Contains(GPUDomainAccelerators, sel[AcceleratorTypeLabel]) {
				accel, first = sel[AcceleratorTypeLabel], nodes[i]
				break
			}
		}
		if accel == "" {
			continue
		}
		var lacking []string
		firstLacking, bundles := -1, 0
		for i, sel := range sels {
			if sel[AcceleratorTypeLabel] == accel {
				continue
			}
			bundles++
			if firstLacking < 0 || nodes[i] != nodes[i-1] || sel[AcceleratorTypeLabel] != sels[i-1][AcceleratorTypeLabel] {
				if firstLacking < 0 {
					firstLacking = nodes[i]
				}
				lacking = append(lacking, describeAccelerator(nodes[i], sel[AcceleratorTypeLabel]))
			}
		}
		if firstLacking < 0 {
			continue
		}
		if len(lacking) > maxListedSelectors {
			lacking = append(lacking[:maxListedSelectors], fmt.Sprintf("and %d more", len(lacking)-maxListedSelectors))
		}
		out = append(out, Issue{Path: fmt.Sprintf("%s[%d]", AttrNodeLabelSelectors, firstLacking), Summary: "GPU-domain selector on only some bundles",
			Detail: fmt.Sprintf("Group %q: %s[%d] selects %s = %q, which makes Ray %s and newer schedule the whole group in one GPU domain "+
				"and refuse it unless every bundle selects exactly %q; %d bundle(s) do not: %s. "+
				"Set %s = %q in the selector of every logical node of the group (an empty selector included), or remove it from all of them; "+
				"or set use_unified_pg = false (each per-node group is checked on its own). Nothing was created.",
				g.Name, AttrNodeLabelSelectors, first, AcceleratorTypeLabel, accel, GPUDomainSelectorMinRayVersion, accel, bundles,
				strings.Join(lacking, ", "), AcceleratorTypeLabel, accel)})
	}
	return out
}

// describeAccelerator is logical node n's ray.io/accelerator-type selector
// value for gpuDomainSelectorIssues' list.
func describeAccelerator(n int, value string) string {
	if value == "" {
		return fmt.Sprintf("%s[%d] (no %s)", AttrNodeLabelSelectors, n, AcceleratorTypeLabel)
	}
	return fmt.Sprintf("%s[%d] (%q)", AttrNodeLabelSelectors, n, value)
}
