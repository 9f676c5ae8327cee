package record

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

func TestInferSpec(t *testing.T) {
	b := func(res map[string]float64) raystate.Bundle { return raystate.Bundle{UnitResources: res} }
	gpu := map[string]float64{"CPU": 2, "GPU": 1, "nvlink_domain_x": 0.001}
	live := []raystate.PlacementGroup{
		{Name: "vc-node0", Bundles: []raystate.Bundle{b(gpu), b(gpu)}},
		{Name: "vc-node2", Bundles: []raystate.Bundle{b(gpu)}},
		{Name: "vc-nodeX", Bundles: []raystate.Bundle{b(gpu)}},
		{Name: "other-node1", Bundles: []raystate.Bundle{b(gpu)}},
	}
	s, ok, err := InferSpec("vc", live, nil)
	if !ok || err != nil || s.UseUnifiedPG || !s.UseGPUs || s.MaxColocatedWorkerGroups != 2 {
		t.Fatalf("per-node shape: %+v %v %v", s, ok, err)
	}
	if got := s.BundleCtPerNode; len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 1 {
		t.Fatalf("counts %v, want [2 0 1]", got)
	}
	if s.NodeResourceConstraints[0]["nvlink_domain_x"] != 0.001 || len(s.NodeResourceConstraints[1]) != 0 {
		t.Fatalf("constraints %v", s.NodeResourceConstraints)
	}
	if s.Ports != clusterspec.DefaultPorts || s.NumGPUsPerNode != clusterspec.DefaultNumGPUsPerNode || s.Strategy != clusterspec.DefaultStrategy {
		t.Fatalf("defaults not filled: %+v", s)
	}
	unified := []raystate.PlacementGroup{{Name: "u-unified", Bundles: []raystate.Bundle{b(gpu), b(gpu), b(gpu)}}}
	if s, ok, err := InferSpec("u", unified, []int{2, 1}); !ok || err != nil || !s.UseUnifiedPG || len(s.BundleCtPerNode) != 2 {
		t.Fatalf("unified shape: %+v %v", s, err)
	}
	if _, _, err := InferSpec("u", unified, []int{2, 2}); err == nil || !strings.Contains(err.Error(), "splits 4 bundles") {
		t.Fatalf("bad split accepted: %v", err)
	}
	if _, ok, _ := InferSpec("none", live, nil); ok {
		t.Fatal("found groups for an unknown name")
	}
}
