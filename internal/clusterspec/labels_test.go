package clusterspec_test

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
)

func TestSelectorMatchesLikeRay(t *testing.T) {
	node := map[string]string{"d": "rackA", "r": "3"}
	cases := []struct {
		sel  map[string]string
		want bool
	}{
		{map[string]string{"d": "rackA"}, true},
		{map[string]string{"d": "rackB"}, false},
		{map[string]string{"d": "!rackB"}, true},
		{map[string]string{"d": "!rackA"}, false},
		{map[string]string{"r": "in(2, 3)"}, true},
		{map[string]string{"r": "!in(2,3)"}, false},
		{map[string]string{"missing": "x"}, false},
		{map[string]string{"missing": "!x"}, true},
		{map[string]string{"missing": "!in(x, y)"}, true},
		{map[string]string{"d": "rackA", "r": "4"}, false},
		{map[string]string{"d": ""}, true}, // cannot judge: never rejects
		{nil, true},
	}
	for _, c := range cases {
		if got := clusterspec.SelectorMatches(c.sel, node); got != c.want {
			t.Errorf("%v on %v = %v, want %v", c.sel, node, got, c.want)
		}
	}
}

func TestValidateSelectorsAndTopologyStrategy(t *testing.T) {
	if issues := clusterspectest.LabelledSpec().Validate(); clusterspec.HasError(issues) {
		t.Fatalf("valid selectors rejected: %+v", issues)
	}
	cases := []struct {
		name string
		edit func(*clusterspec.Spec)
		path string
		text string
	}{
		{"length", func(s *clusterspec.Spec) { s.NodeLabelSelectors = s.NodeLabelSelectors[:1] }, clusterspec.AttrNodeLabelSelectors, "length (1) must match"},
		{"bad key", func(s *clusterspec.Spec) { s.NodeLabelSelectors[1] = map[string]string{"bad key": "x"} }, "node_label_selectors[1]", "the name must be"},
		{"bad value", func(s *clusterspec.Spec) { s.NodeLabelSelectors[0]["x"] = "in(a," }, "node_label_selectors[0]", "not a value Ray accepts"},
		{"topology without unified", func(s *clusterspec.Spec) {
			s.TopologyStrategy = map[string]string{"raytf.io/nvlink-domain": "STRICT_PACK"}
		},
			clusterspec.AttrTopologyStrategy, "use_unified_pg = true"},
		{"topology other strategy", func(s *clusterspec.Spec) {
			s.UseUnifiedPG = true
			s.TopologyStrategy = map[string]string{"raytf.io/nvlink-domain": "PACK"}
		}, clusterspec.AttrTopologyStrategy, "only \"STRICT_PACK\""},
		{"topology node id", func(s *clusterspec.Spec) {
			s.UseUnifiedPG = true
			s.TopologyStrategy = map[string]string{clusterspec.NodeIDLabel: "STRICT_PACK"}
		}, clusterspec.AttrTopologyStrategy, "placement_group_strategy"},
		{"two topology labels", func(s *clusterspec.Spec) {
			s.UseUnifiedPG = true
			s.TopologyStrategy = map[string]string{"a/x": "STRICT_PACK", "a/y": "STRICT_PACK"}
		}, clusterspec.AttrTopologyStrategy, "at most 1"},
	}
	for _, c := range cases {
		s := clusterspectest.LabelledSpec()
		s.NodeLabelSelectors = []map[string]string{{"raytf.io/nvlink-domain": "rackA"}, {}}
		c.edit(&s)
		found := false
		for _, is := range s.Validate() {
			if !is.Warning && is.Path == c.path && strings.Contains(is.Detail, c.text) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no error at %s containing %q: %+v", c.name, c.path, c.text, s.Validate())
		}
	}
}

func TestRayVersionGating(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{{"2.55.1", "2.60.0", true}, {"2.60.0", "2.55.1", false}, {"2.9.0", "2.10.0", true}, {"3.0.0.dev0", "2.60.0", false}, {"2.60.0rc1", "2.60.0", false}} {
		a, errA := clusterspec.ParseRayVersion(c.a)
		b, errB := clusterspec.ParseRayVersion(c.b)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if a.Less(b) != c.less {
			t.Errorf("%s < %s != %v", c.a, c.b, c.less)
		}
	}
	if _, err := clusterspec.ParseRayVersion("nightly"); err == nil {
		t.Error("nightly parsed")
	}
	s := clusterspectest.LabelledSpec()
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"d": clusterspec.TopologyLabelStrategy}
	issues := s.VersionIssues("2.55.1")
	if len(issues) != 1 || issues[0].Path != clusterspec.AttrTopologyStrategy || issues[0].Warning ||
		!strings.Contains(issues[0].Detail, "Ray 2.55.1") || !strings.Contains(issues[0].Detail, clusterspec.TopologyStrategyMinRayVersion) {
		t.Fatalf("2.55.1: %+v", issues)
	}
	if issues := s.VersionIssues("2.60.0"); len(issues) != 0 {
		t.Fatalf("2.60.0: %+v", issues)
	}
	issues = s.VersionIssues("2.50.0")
	if len(issues) != 3 || !issues[0].Warning || issues[1].Path != clusterspec.AttrNodeLabelSelectors {
		t.Fatalf("2.50.0: %+v", issues)
	}
	if issues := clusterspectest.ValidSpec().VersionIssues("2.54.0"); len(issues) != 1 || !issues[0].Warning {
		t.Fatalf("old server must warn: %+v", issues)
	}
}
