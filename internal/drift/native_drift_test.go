package drift

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

func TestNativeDrift(t *testing.T) {
	s := clusterspectest.LabelledSpec()
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"d": clusterspec.TopologyLabelStrategy}
	want := s.Groups()[0]
	bundle := func(i int, sel map[string]string) raystate.Bundle {
		return raystate.Bundle{BundleIndex: i, UnitResources: want.Bundles[i], LabelSelector: sel}
	}
	a := map[string]string{"raytf.io/nvlink-domain": "rackA"}
	live := raystate.PlacementGroup{Name: want.Name, PlacementGroupID: "p", State: "CREATED",
		Bundles:          []raystate.Bundle{bundle(0, a), bundle(1, a), bundle(2, map[string]string{})},
		TopologyStrategy: map[string]string{"d": clusterspec.TopologyLabelStrategy}}
	rec := map[string]RecordedGroup{want.Name: {ID: "p"}}
	if c := CompareLive(s, rec, []raystate.PlacementGroup{live}); c[0].Drift != "" {
		t.Fatalf("matching group drifted: %s", c[0].Drift)
	}
	other := live
	other.TopologyStrategy = nil
	if c := CompareLive(s, rec, []raystate.PlacementGroup{other}); !strings.Contains(c[0].Drift, "topology strategy") {
		t.Fatalf("lost topology strategy: %q", c[0].Drift)
	}
	other = live
	other.Bundles = []raystate.Bundle{bundle(0, a), bundle(1, map[string]string{"raytf.io/nvlink-domain": "rackB"}), bundle(2, nil)}
	if c := CompareLive(s, rec, []raystate.PlacementGroup{other}); !strings.Contains(c[0].Drift, "bundle 1 has label selector") {
		t.Fatalf("changed selector: %q", c[0].Drift)
	}
	// in(a, b) as Ray echoes it equals in(a,b) as configured.
	s.NodeLabelSelectors[0] = map[string]string{"r": "in(2,3)"}
	other = live
	echo := map[string]string{"r": "in(2, 3)"}
	other.Bundles = []raystate.Bundle{bundle(0, echo), bundle(1, echo), bundle(2, map[string]string{})}
	if c := CompareLive(s, rec, []raystate.PlacementGroup{other}); c[0].Drift != "" {
		t.Fatalf("spacing drifted: %s", c[0].Drift)
	}
	// A server that reports no label selectors at all shows no selector drift.
	other.Bundles = []raystate.Bundle{bundle(0, nil), bundle(1, nil), bundle(2, nil)}
	if c := CompareLive(s, rec, []raystate.PlacementGroup{other}); c[0].Drift != "" {
		t.Fatalf("unreported selectors drifted: %s", c[0].Drift)
	}
}
