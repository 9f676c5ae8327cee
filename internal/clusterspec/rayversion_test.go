package clusterspec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
)

// Every Ray feature gate with the release that brought the feature (checked
// in the wheels of that release and the one before): moving a gate changes
// this list.
func TestRayFeatureGates(t *testing.T) {
	want := []string{
		"node_label_selectors placement_group(bundle_label_selector=...) 2.55.1",
		"pinning placement_group(bundle_label_selector=...) 2.55.1",
		"node_label_selectors GPU-domain scheduling of a ray.io/accelerator-type GB200 / GB300 selector (every bundle or none) 2.56.0 (rule)",
		"topology_strategy placement_group(topology_strategy=...) 2.57.0",
	}
	var got []string
	for _, g := range clusterspec.Gates {
		line := fmt.Sprintf("%s %s %s", g.Attribute, g.Feature, g.Version)
		if g.Rule {
			line += " (rule)"
		}
		got = append(got, line)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("gates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if clusterspec.MinRayVersion != "2.55.1" {
		t.Fatalf("MinRayVersion = %s", clusterspec.MinRayVersion)
	}
}

// topology_strategy is refused by the last Ray without it (2.56.x) and taken
// by the first with it (2.57.0), as is every other gate at its version.
func TestRayFeatureGateBoundaries(t *testing.T) {
	s := clusterspectest.LabelledSpec()
	s.UseUnifiedPG = true
	s.SelectNodes, s.Pinning = true, clusterspec.PinningNode
	s.TopologyStrategy = map[string]string{"d": clusterspec.TopologyLabelStrategy}
	for _, c := range []struct {
		server string
		errors []string
	}{
		{"2.55.0", []string{clusterspec.AttrNodeLabelSelectors, clusterspec.AttrPinning, clusterspec.AttrTopologyStrategy}},
		{"2.55.1", []string{clusterspec.AttrTopologyStrategy}},
		{"2.56.1", []string{clusterspec.AttrTopologyStrategy}},
		{"2.57.0", nil},
		{"2.57.1", nil},
		{"2.60.0", nil},
	} {
		var got []string
		for _, is := range s.VersionIssues(c.server) {
			if !is.Warning {
				got = append(got, is.Path)
				if !strings.Contains(is.Detail, "Ray "+c.server) {
					t.Errorf("%s: %q does not name the server's version", c.server, is.Detail)
				}
			}
		}
		if strings.Join(got, ",") != strings.Join(c.errors, ",") {
			t.Errorf("Ray %s: errors at %v, want %v", c.server, got, c.errors)
		}
	}
}

// gb200Spec is a unified group of logical nodes with the given
// ray.io/accelerator-type selector values ("" for none), one bundle each.
func gb200Spec(values ...string) clusterspec.Spec {
	s := clusterspec.Spec{Name: "vc", UseUnifiedPG: true, UseGPUs: true, NumGPUsPerNode: 4, MaxColocatedWorkerGroups: 1}
	for _, v := range values {
		s.BundleCtPerNode = append(s.BundleCtPerNode, 2)
		sel := map[string]string{}
		if v != "" {
			sel[clusterspec.AcceleratorTypeLabel] = v
		}
		s.NodeLabelSelectors = append(s.NodeLabelSelectors, sel)
	}
	return s.WithDefaults()
}

func gpuDomainErrors(s clusterspec.Spec, server string) []clusterspec.Issue {
	var out []clusterspec.Issue
	for _, is := range s.VersionIssues(server) {
		if is.Summary == "GPU-domain selector on only some bundles" {
			out = append(out, is)
		}
	}
	return out
}

// Ray >= 2.56 refuses a group selecting GB200/GB300 on some bundles only
// (exactly the same value on every bundle, as its
// _validate_bundle_label_selector); the plan names the selectors and the fix.
func TestGPUDomainSelectorOnSomeBundles(t *testing.T) {
	for _, c := range []struct {
		values []string
		path   string // "" for no error
		names  []string
	}{
		{[]string{"GB200", "GB200", "GB200"}, "", nil},
		{[]string{"GB300", "GB300"}, "", nil},
		{[]string{"H100", "", "A100"}, "", nil},  // no GPU-domain accelerator
		{[]string{"in(GB200)", "", ""}, "", nil}, // Ray compares the exact value
		{[]string{"", "", ""}, "", nil},          // no selector at all
		{[]string{"GB200", "", "GB200"}, "node_label_selectors[1]", []string{"node_label_selectors[1] (no ray.io/accelerator-type)"}},
		{[]string{"", "GB300", "H100"}, "node_label_selectors[0]", []string{"node_label_selectors[0] (no", `node_label_selectors[2] ("H100")`}},
		{[]string{"GB200", "GB300"}, "node_label_selectors[1]", []string{`node_label_selectors[1] ("GB300")`}},
		{[]string{"GB200", "in(GB200)"}, "node_label_selectors[1]", []string{`("in(GB200)")`}},
	} {
		s := gb200Spec(c.values...)
		if issues := s.Validate(); clusterspec.HasError(issues) {
			t.Fatalf("%v: invalid spec %+v", c.values, issues)
		}
		if got := gpuDomainErrors(s, "2.55.1"); len(got) != 0 {
			t.Errorf("%v: Ray 2.55.1 takes the selector as a plain label match, got %+v", c.values, got)
		}
		for _, server := range []string{"2.56.0", "2.60.0"} {
			got := gpuDomainErrors(s, server)
			if c.path == "" {
				if len(got) != 0 {
					t.Errorf("%v on %s: %+v", c.values, server, got)
				}
				continue
			}
			if len(got) != 1 || got[0].Path != c.path || got[0].Warning {
				t.Fatalf("%v on %s: %+v, want one error at %s", c.values, server, got, c.path)
			}
			for _, want := range append(c.names, `"vc-unified"`, "use_unified_pg = false", "every logical node", "2.56.0") {
				if !strings.Contains(got[0].Detail, want) {
					t.Errorf("%v: detail %q lacks %q", c.values, got[0].Detail, want)
				}
			}
		}
	}
	// Per-node groups: each group's bundles share one selector.
	s := gb200Spec("GB200", "", "GB300")
	s.UseUnifiedPG = false
	if got := gpuDomainErrors(s, "2.60.0"); len(got) != 0 {
		t.Errorf("per-node groups: %+v", got)
	}
	// A logical node without bundles adds none to the group.
	s = gb200Spec("GB200", "", "GB200")
	s.BundleCtPerNode[1] = 0
	if got := gpuDomainErrors(s, "2.60.0"); len(got) != 0 {
		t.Errorf("empty node: %+v", got)
	}
}

// A large group names 16 selectors and counts the rest.
func TestGPUDomainSelectorListIsBounded(t *testing.T) {
	values := []string{"GB200"}
	for i := 0; i < 40; i++ {
		values = append(values, "")
	}
	got := gpuDomainErrors(gb200Spec(values...), "2.60.0")
	if len(got) != 1 || !strings.Contains(got[0].Detail, "and 24 more") || !strings.Contains(got[0].Detail, "80 bundle(s)") ||
		strings.Contains(got[0].Detail, "node_label_selectors[17] ") {
		t.Fatalf("%+v", got)
	}
}
