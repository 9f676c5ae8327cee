package vcluster

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Cases taken from the examples in Ray's label_utils.py comments.
func TestLabelSyntaxAsRayAcceptsIt(t *testing.T) {
	for _, k := range []string{"a", "raytf.io/nvlink-domain", "ray.io/node-id", "sub.domain.example/x_y", "123.456/a"} {
		if err := ValidateLabelKey(k); err != nil {
			t.Errorf("key %q rejected: %v", k, err)
		}
	}
	for _, k := range []string{"", "-abc", "abc-", "my@label", "prefix_/a", "sub..domain/", strings.Repeat("a", 64)} {
		if ValidateLabelKey(k) == nil {
			t.Errorf("key %q accepted", k)
		}
	}
	for _, v := range []string{"", "spot", "!GPU", "213521", "in(A123, B456, C789)", "!in(spot, on-demand)", "in(a,b)", "(a, b)", "valid-value"} {
		if why := validateSelectorValue("k", v); why != "" {
			t.Errorf("value %q rejected: %s", v, why)
		}
	}
	for _, v := range []string{"-spot", "spot_", "in()", "in(spot,", "in(H100, TPU!GPU)", "!!!in(H100, TPU)", "in(a,  b)", strings.Repeat("v", 64)} {
		if validateSelectorValue("k", v) == "" {
			t.Errorf("value %q accepted", v)
		}
	}
}

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
		if got := SelectorMatches(c.sel, node); got != c.want {
			t.Errorf("%v on %v = %v, want %v", c.sel, node, got, c.want)
		}
	}
}

func labelledSpec() Spec {
	s := validSpec()
	s.BundleCtPerNode = []int{2, 1}
	s.NodeLabelSelectors = []map[string]string{{"raytf.io/nvlink-domain": "rackA"}, {}}
	return s.WithDefaults()
}

func TestValidateSelectorsAndTopologyStrategy(t *testing.T) {
	if issues := labelledSpec().Validate(); HasError(issues) {
		t.Fatalf("valid selectors rejected: %+v", issues)
	}
	cases := []struct {
		name string
		edit func(*Spec)
		path string
		text string
	}{
		{"length", func(s *Spec) { s.NodeLabelSelectors = s.NodeLabelSelectors[:1] }, AttrNodeLabelSelectors, "length (1) must match"},
		{"bad key", func(s *Spec) { s.NodeLabelSelectors[1] = map[string]string{"bad key": "x"} }, "node_label_selectors[1]", "the name must be"},
		{"bad value", func(s *Spec) { s.NodeLabelSelectors[0]["x"] = "in(a," }, "node_label_selectors[0]", "not a value Ray accepts"},
		{"topology without unified", func(s *Spec) { s.TopologyStrategy = map[string]string{"raytf.io/nvlink-domain": "STRICT_PACK"} },
			AttrTopologyStrategy, "use_unified_pg = true"},
		{"topology other strategy", func(s *Spec) {
			s.UseUnifiedPG = true
			s.TopologyStrategy = map[string]string{"raytf.io/nvlink-domain": "PACK"}
		}, AttrTopologyStrategy, "only \"STRICT_PACK\""},
		{"topology node id", func(s *Spec) {
			s.UseUnifiedPG = true
			s.TopologyStrategy = map[string]string{NodeIDLabel: "STRICT_PACK"}
		}, AttrTopologyStrategy, "placement_group_strategy"},
		{"two topology labels", func(s *Spec) {
			s.UseUnifiedPG = true
			s.TopologyStrategy = map[string]string{"a/x": "STRICT_PACK", "a/y": "STRICT_PACK"}
		}, AttrTopologyStrategy, "at most 1"},
	}
	for _, c := range cases {
		s := labelledSpec()
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

func TestRequestCarriesSelectorsAndTopologyStrategy(t *testing.T) {
	s := labelledSpec()
	req := s.Request(ActionCreate)
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := req.Groups[0].BundleLabelSelector; !reflect.DeepEqual(got, []map[string]string{{"raytf.io/nvlink-domain": "rackA"}, {"raytf.io/nvlink-domain": "rackA"}}) {
		t.Fatalf("node 0 selectors: %v", got)
	}
	if got := req.Groups[1].BundleLabelSelector; got != nil {
		t.Fatalf("node 1 has no selector, got %v", got)
	}
	if req.Groups[0].TopologyStrategy != nil {
		t.Fatal("per-node group got a topology strategy")
	}
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"raytf.io/nvlink-domain": TopologyLabelStrategy}
	req = s.Request(ActionCreate)
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	g := req.Groups[0]
	if len(g.BundleLabelSelector) != 3 || len(g.BundleLabelSelector[2]) != 0 || g.BundleLabelSelector[0]["raytf.io/nvlink-domain"] != "rackA" {
		t.Fatalf("unified selectors: %v", g.BundleLabelSelector)
	}
	if !reflect.DeepEqual(g.TopologyStrategy, map[string]string{NodeIDLabel: s.Strategy, "raytf.io/nvlink-domain": TopologyLabelStrategy}) {
		t.Fatalf("topology strategy: %v", g.TopologyStrategy)
	}
	// Without selectors or pins, requests stay as before (Ray 2.55.1 gets no new argument).
	plain := validSpec().Request(ActionCreate)
	for _, g := range plain.Groups {
		if g.BundleLabelSelector != nil || g.TopologyStrategy != nil {
			t.Fatalf("plain spec sends native arguments: %+v", g)
		}
	}
}

func TestPinsReplaceSelectorOnNodeID(t *testing.T) {
	s := selectingSpec(1, 1)
	s.SelectedNodeIDs = []string{"a1", "a2"}
	s.NodeLabelSelectors = []map[string]string{{NodeIDLabel: "!b1", "x": "y"}, nil}
	got := s.Request(ActionCreate).Groups
	if !reflect.DeepEqual(got[0].BundleLabelSelector, []map[string]string{{NodeIDLabel: "a1", "x": "y"}}) ||
		!reflect.DeepEqual(got[1].BundleLabelSelector, []map[string]string{{NodeIDLabel: "a2"}}) {
		t.Fatalf("merged: %v / %v", got[0].BundleLabelSelector, got[1].BundleLabelSelector)
	}
}

var testLabels = map[string]map[string]string{
	"head": {NodeIDLabel: "head"},
	"a1":   {NodeIDLabel: "a1", "d": "rackA", "r": "3"},
	"a2":   {NodeIDLabel: "a2", "d": "rackA", "r": "2"},
	"b1":   {NodeIDLabel: "b1", "d": "rackB", "r": "5"},
	"b2":   {NodeIDLabel: "b2", "d": "rackB", "r": "4"},
	"c1":   {NodeIDLabel: "c1", "d": "rackC", "r": "6"},
}

func TestChooseLabelledNodes(t *testing.T) {
	s := selectingSpec(1, 1)
	s.NodeLabelSelectors = []map[string]string{{"d": "rackB"}, {"d": "rackB"}}
	ids, _, issues := s.ChooseLabelledNodes(testTopo, nil, testLabels)
	if len(issues) != 0 || !reflect.DeepEqual(ids, []string{"b2", "b1"}) {
		t.Fatalf("rackB only: %v %+v", ids, issues)
	}
	// A node-id selector the choice contradicts is an error naming the entry and pinning.
	s.NodeLabelSelectors = []map[string]string{{"d": "rackB"}, {NodeIDLabel: "c1"}}
	_, _, issues = s.ChooseLabelledNodes(testTopo, nil, testLabels)
	if len(issues) != 1 || issues[0].Path != "node_label_selectors[0]" && issues[0].Path != "node_label_selectors[1]" {
		t.Fatalf("contradiction: %+v", issues)
	}
	if !strings.Contains(issues[len(issues)-1].Detail, "does not satisfy") {
		t.Fatalf("detail: %s", issues[0].Detail)
	}
	s.NodeLabelSelectors = []map[string]string{{"d": "rackZ"}, {"d": "rackZ"}}
	if _, _, issues = s.ChooseLabelledNodes(testTopo, nil, testLabels); len(issues) != 1 || issues[0].Path != AttrSelectNodes {
		t.Fatalf("nothing matches: %+v", issues)
	}
}

func capacityOf(gpus float64) []topology.NodeCapacity {
	var out []topology.NodeCapacity
	for _, n := range testTopo {
		r := topology.Resources{"CPU": 4, "GPU": gpus}
		if n.ID == "head" {
			r["GPU"] = 0
		}
		out = append(out, topology.NodeCapacity{ID: n.ID, Total: r, Available: r})
	}
	return out
}

func TestLiveChecksHonourSelectors(t *testing.T) {
	s := validSpec()
	s.NumGPUsPerNode = 4
	s.BundleCtPerNode = []int{4, 4}
	s.NodeLabelSelectors = []map[string]string{{"d": "rackC"}, {"d": "rackC"}}
	s = s.WithDefaults()
	if issues := s.CheckSelectors(testLabels); len(issues) != 0 {
		t.Fatalf("rackC exists: %+v", issues)
	}
	// Both logical nodes need rackC's one 4-GPU node: capacity fails only with labels.
	if sh, _ := s.CheckCapacity(capacityOf(4), testLabels, nil); len(sh.Errors) == 0 {
		t.Fatal("two rackC-only nodes fit one rackC node")
	}
	if sh, _ := s.CheckCapacity(capacityOf(4), nil, nil); len(sh.Errors) != 0 {
		t.Fatalf("without labels the check cannot judge selectors: %v", sh.Errors)
	}
	if sh, _ := s.CheckSnapshotCapacity(snapshotOf(4), nil); len(sh.Errors) == 0 {
		t.Fatal("snapshot check: two rackC-only nodes fit one rackC node")
	}
	s.NodeLabelSelectors[1] = map[string]string{"d": "rackA"}
	if sh, _ := s.CheckCapacity(capacityOf(4), testLabels, nil); len(sh.Errors) != 0 {
		t.Fatalf("rackC + rackA fits: %v", sh.Errors)
	}
	s.NodeLabelSelectors[1] = map[string]string{"d": "rackZ"}
	if issues := s.CheckSelectors(testLabels); len(issues) != 1 || issues[0].Path != "node_label_selectors[1]" {
		t.Fatalf("rackZ: %+v", issues)
	}
}

// snapshotOf is testTopo as a snapshot: 4 CPUs each, gpus GPUs on every
// node but the head, testLabels as labels.
func snapshotOf(gpus float64) *Snapshot {
	snap := &Snapshot{}
	for _, n := range testTopo {
		total := map[string]float64{"CPU": 4, "GPU": gpus}
		if n.ID == "head" {
			total["GPU"] = 0
		}
		snap.Nodes = append(snap.Nodes, raystate.Node{NodeID: n.ID, ResourcesTotal: total, Labels: testLabels[n.ID]})
	}
	return snap
}

func TestCheckTopologyStrategy(t *testing.T) {
	s := validSpec()
	s.NumGPUsPerNode = 4
	s.UseUnifiedPG = true
	s.BundleCtPerNode = []int{4, 4}
	s.TopologyStrategy = map[string]string{"d": TopologyLabelStrategy}
	s = s.WithDefaults()
	if why := s.CheckTopologyStrategy(snapshotOf(4)); why != "" {
		t.Fatalf("8 GPUs fit rackA: %s", why)
	}
	s.BundleCtPerNode = []int{4, 4, 4}
	if why := s.CheckTopologyStrategy(snapshotOf(4)); !strings.Contains(why, `label "d"`) {
		t.Fatalf("12 GPUs fit no rack: %q", why)
	}
	if issues := s.CheckSelectors(map[string]map[string]string{"a1": {"x": "y"}}); len(issues) != 1 || issues[0].Path != AttrTopologyStrategy {
		t.Fatalf("no node has the label: %+v", issues)
	}
}

func TestNativeDrift(t *testing.T) {
	s := labelledSpec()
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"d": TopologyLabelStrategy}
	want := s.Groups()[0]
	bundle := func(i int, sel map[string]string) raystate.Bundle {
		return raystate.Bundle{BundleIndex: i, UnitResources: want.Bundles[i], LabelSelector: sel}
	}
	a := map[string]string{"raytf.io/nvlink-domain": "rackA"}
	live := raystate.PlacementGroup{Name: want.Name, PlacementGroupID: "p", State: "CREATED",
		Bundles:          []raystate.Bundle{bundle(0, a), bundle(1, a), bundle(2, map[string]string{})},
		TopologyStrategy: map[string]string{"d": TopologyLabelStrategy}}
	rec := map[string]RecordedGroup{want.Name: {ID: "p"}}
	if c := s.CompareLive(rec, []raystate.PlacementGroup{live}); c[0].Drift != "" {
		t.Fatalf("matching group drifted: %s", c[0].Drift)
	}
	other := live
	other.TopologyStrategy = nil
	if c := s.CompareLive(rec, []raystate.PlacementGroup{other}); !strings.Contains(c[0].Drift, "topology strategy") {
		t.Fatalf("lost topology strategy: %q", c[0].Drift)
	}
	other = live
	other.Bundles = []raystate.Bundle{bundle(0, a), bundle(1, map[string]string{"raytf.io/nvlink-domain": "rackB"}), bundle(2, nil)}
	if c := s.CompareLive(rec, []raystate.PlacementGroup{other}); !strings.Contains(c[0].Drift, "bundle 1 has label selector") {
		t.Fatalf("changed selector: %q", c[0].Drift)
	}
	// in(a, b) as Ray echoes it equals in(a,b) as configured.
	s.NodeLabelSelectors[0] = map[string]string{"r": "in(2,3)"}
	other = live
	echo := map[string]string{"r": "in(2, 3)"}
	other.Bundles = []raystate.Bundle{bundle(0, echo), bundle(1, echo), bundle(2, map[string]string{})}
	if c := s.CompareLive(rec, []raystate.PlacementGroup{other}); c[0].Drift != "" {
		t.Fatalf("spacing drifted: %s", c[0].Drift)
	}
	// A server that reports no label selectors at all shows no selector drift.
	other.Bundles = []raystate.Bundle{bundle(0, nil), bundle(1, nil), bundle(2, nil)}
	if c := s.CompareLive(rec, []raystate.PlacementGroup{other}); c[0].Drift != "" {
		t.Fatalf("unreported selectors drifted: %s", c[0].Drift)
	}
}

func TestRayVersionGating(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{{"2.55.1", "2.60.0", true}, {"2.60.0", "2.55.1", false}, {"2.9.0", "2.10.0", true}, {"3.0.0.dev0", "2.60.0", false}, {"2.60.0rc1", "2.60.0", false}} {
		a, err := ParseRayVersion(c.a)
		if err != nil {
			t.Fatal(err)
		}
		if a.Less(mustRayVersion(c.b)) != c.less {
			t.Errorf("%s < %s != %v", c.a, c.b, c.less)
		}
	}
	if _, err := ParseRayVersion("nightly"); err == nil {
		t.Error("nightly parsed")
	}
	s := labelledSpec()
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"d": TopologyLabelStrategy}
	issues := s.VersionIssues("2.55.1")
	if len(issues) != 1 || issues[0].Path != AttrTopologyStrategy || issues[0].Warning ||
		!strings.Contains(issues[0].Detail, "Ray 2.55.1") || !strings.Contains(issues[0].Detail, TopologyStrategyMinRayVersion) {
		t.Fatalf("2.55.1: %+v", issues)
	}
	if issues := s.VersionIssues("2.60.0"); len(issues) != 0 {
		t.Fatalf("2.60.0: %+v", issues)
	}
	issues = s.VersionIssues("2.50.0")
	if len(issues) != 3 || !issues[0].Warning || issues[1].Path != AttrNodeLabelSelectors {
		t.Fatalf("2.50.0: %+v", issues)
	}
	if issues := validSpec().VersionIssues("2.54.0"); len(issues) != 1 || !issues[0].Warning {
		t.Fatalf("old server must warn: %+v", issues)
	}
}

func TestInferNativeFromLiveGroups(t *testing.T) {
	s := labelledSpec()
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"d": TopologyLabelStrategy}
	req := s.Request(ActionCreate).Groups[0]
	live := raystate.PlacementGroup{Name: req.Name, TopologyStrategy: map[string]string{"d": TopologyLabelStrategy}}
	for i, sel := range req.BundleLabelSelector {
		live.Bundles = append(live.Bundles, raystate.Bundle{BundleIndex: i, LabelSelector: sel})
	}
	imported := s
	imported.NodeLabelSelectors, imported.TopologyStrategy = nil, nil
	imported.InferNative([]raystate.PlacementGroup{live})
	if !reflect.DeepEqual(imported.NodeLabelSelectors, s.NodeLabelSelectors) || !reflect.DeepEqual(imported.TopologyStrategy, s.TopologyStrategy) {
		t.Fatalf("inferred %v %v", imported.NodeLabelSelectors, imported.TopologyStrategy)
	}
	plain := validSpec()
	plain.InferNative([]raystate.PlacementGroup{{Name: "vc-node0", Bundles: []raystate.Bundle{{LabelSelector: map[string]string{}}}}})
	if plain.NodeLabelSelectors != nil || plain.TopologyStrategy != nil {
		t.Fatalf("plain groups inferred %v %v", plain.NodeLabelSelectors, plain.TopologyStrategy)
	}
}
