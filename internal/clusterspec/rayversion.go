package clusterspec

import (
	"fmt"
	"strconv"
	"strings"
)

// Ray versions the provider knows. MinRayVersion is the oldest it supports
// (the lowest NeMo-RL accepts); each feature minimum is the first Ray
// release that brought the feature, checked in that release's wheel and the
// one before it (ray/util/placement_group.py, ray/util/state/common.py).
// Gates lists them with the attribute each one gates.
const (
	MinRayVersion = "2.55.1"
	// BundleLabelSelectorMinRayVersion: bundle_label_selector
	// (node_label_selectors, pinning = "node"). Ray had the argument before
	// 2.55.1, but its selector syntax is only checked from 2.55.1, the
	// oldest Ray the provider supports.
	BundleLabelSelectorMinRayVersion = "2.55.1"
	// GPUDomainSelectorMinRayVersion: from Ray 2.56.0 a bundle selector of
	// ray.io/accelerator-type "GB200" or "GB300" asks for GPU-domain
	// scheduling, and Ray refuses a group where some bundles select it and
	// others do not (2.55.1 takes the selector as a plain label match).
	GPUDomainSelectorMinRayVersion = "2.56.0"
	// TopologyStrategyMinRayVersion: topology_strategy, and the state API's
	// topology_strategy / topology_assignments columns (Ray 2.57.0).
	TopologyStrategyMinRayVersion = "2.57.0"
)

// Gate is one Ray feature the provider uses: the first Ray release with it
// and the attribute that needs it. A gate with Rule set brings a
// restriction instead: Ray at Version or newer refuses what the rule's
// check finds, an older Ray accepts it.
type Gate struct {
	Attribute string
	Feature   string
	Version   string
	Rule      bool
	// uses reports whether a spec needs the feature (feature gates); check
	// returns the rule's errors for a spec (rule gates).
	uses  func(Spec) bool
	check func(Spec) []Issue
}

// Gates is every version gate, the one table VersionIssues, the schema's
// descriptions and the docs read.
var Gates = []Gate{
	{Attribute: AttrNodeLabelSelectors, Feature: "placement_group(bundle_label_selector=...)", Version: BundleLabelSelectorMinRayVersion,
		uses: func(s Spec) bool { return s.NodeLabelSelectors != nil }},
	{Attribute: AttrPinning, Feature: "placement_group(bundle_label_selector=...)", Version: BundleLabelSelectorMinRayVersion,
		uses: func(s Spec) bool { return s.SelectNodes && s.Pinning == PinningNode }},
	{Attribute: AttrNodeLabelSelectors, Feature: "GPU-domain scheduling of a ray.io/accelerator-type GB200 / GB300 selector (every bundle or none)",
		Version: GPUDomainSelectorMinRayVersion, Rule: true, check: Spec.gpuDomainSelectorIssues},
	{Attribute: AttrTopologyStrategy, Feature: "placement_group(topology_strategy=...)", Version: TopologyStrategyMinRayVersion,
		uses: func(s Spec) bool { return s.TopologyStrategy != nil }},
}

// RayVersion is a parsed Ray release "major.minor.patch"; suffixes such as
// ".dev0" or "rc1" are ignored.
type RayVersion struct{ Major, Minor, Patch int }

// ParseRayVersion reads "2.60.0" (or "3.0.0.dev0").
func ParseRayVersion(s string) (RayVersion, error) {
	parts := strings.SplitN(strings.TrimSpace(s), ".", 4)
	if len(parts) < 3 {
		return RayVersion{}, fmt.Errorf("version %q is not major.minor.patch", s)
	}
	var n [3]int
	for i := 0; i < 3; i++ {
		digits := parts[i]
		if end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); end >= 0 {
			digits = digits[:end]
		}
		v, err := strconv.Atoi(digits)
		if err != nil {
			return RayVersion{}, fmt.Errorf("version %q is not major.minor.patch", s)
		}
		n[i] = v
	}
	return RayVersion{n[0], n[1], n[2]}, nil
}

// Less reports whether v is older than w.
func (v RayVersion) Less(w RayVersion) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

func (v RayVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

func mustRayVersion(s string) RayVersion {
	v, err := ParseRayVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// VersionIssues checks the spec against the connected Ray's version (Gates):
// an error for each feature the server lacks (naming the attribute and both
// versions), the errors of each rule the server enforces, and a warning
// when the server is older than MinRayVersion.
// An unparsable version only warns.
func (s Spec) VersionIssues(server string) []Issue {
	v, err := ParseRayVersion(server)
	if err != nil {
		return []Issue{{Warning: true, Summary: "Unknown Ray version",
			Detail: fmt.Sprintf("The Ray dashboard reports version %q, which the provider cannot compare with the versions it supports (from %s).", server, MinRayVersion)}}
	}
	var out []Issue
	if v.Less(mustRayVersion(MinRayVersion)) {
		out = append(out, Issue{Warning: true, Summary: "Ray version older than supported",
			Detail: fmt.Sprintf("The Ray cluster runs Ray %s; the provider supports Ray %s and newer. Placement may fail or behave differently.", v, MinRayVersion)})
	}
	for _, g := range Gates {
		older := v.Less(mustRayVersion(g.Version))
		switch {
		case g.Rule && !older:
			out = append(out, g.check(s)...)
		case !g.Rule && older && g.uses(s):
			out = append(out, Issue{Path: g.Attribute, Summary: "Feature not available in this Ray version",
				Detail: fmt.Sprintf("%s needs Ray %s or newer (%s); the Ray cluster runs Ray %s. Nothing was created.", g.Attribute, g.Version, g.Feature, v)})
		}
	}
	return out
}
