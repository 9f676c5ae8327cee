package clusterspec

import (
	"fmt"
	"strconv"
	"strings"
)

// Ray versions the provider knows. MinRayVersion is the oldest it supports
// (the lowest NeMo-RL accepts); the feature minimums are the oldest
// versions whose placement_group() takes the argument (checked in the
// installed 2.55.1 and 2.60.0 sources).
const (
	MinRayVersion = "2.55.1"
	// BundleLabelSelectorMinRayVersion: bundle_label_selector
	// (node_label_selectors, pinning = "node").
	BundleLabelSelectorMinRayVersion = "2.55.1"
	// TopologyStrategyMinRayVersion: topology_strategy, and the state API's
	// topology_strategy / topology_assignments columns.
	TopologyStrategyMinRayVersion = "2.60.0"
)

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

// VersionIssues checks the spec against the connected Ray's version: an
// error for each feature the server lacks (naming the attribute and both
// versions), and a warning when the server is older than MinRayVersion.
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
	need := func(attr, minVersion, what string) {
		if v.Less(mustRayVersion(minVersion)) {
			out = append(out, Issue{Path: attr, Summary: "Feature not available in this Ray version",
				Detail: fmt.Sprintf("%s needs Ray %s or newer (%s); the Ray cluster runs Ray %s. Nothing was created.", attr, minVersion, what, v)})
		}
	}
	if s.NodeLabelSelectors != nil {
		need(AttrNodeLabelSelectors, BundleLabelSelectorMinRayVersion, "placement_group(bundle_label_selector=...)")
	}
	if s.SelectNodes && s.Pinning == PinningNode {
		need(AttrPinning, BundleLabelSelectorMinRayVersion, "placement_group(bundle_label_selector=...)")
	}
	if s.TopologyStrategy != nil {
		need(AttrTopologyStrategy, TopologyStrategyMinRayVersion, "placement_group(topology_strategy=...)")
	}
	return out
}
