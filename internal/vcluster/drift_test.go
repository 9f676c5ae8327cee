package vcluster

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestGroupDrift(t *testing.T) {
	want := GroupRequest{Name: "vc-node0", Bundles: []topology.Resources{{"CPU": 1, "GPU": 1}, {"CPU": 1, "GPU": 1}}}
	bundle := func(res map[string]float64) raystate.Bundle { return raystate.Bundle{UnitResources: res} }
	same := []raystate.Bundle{bundle(map[string]float64{"CPU": 1, "GPU": 1}), bundle(map[string]float64{"GPU": 1, "CPU": 1})}
	cases := []struct {
		name string
		got  raystate.PlacementGroup
		rec  RecordedGroup
		want string
	}{
		{"identical", raystate.PlacementGroup{PlacementGroupID: "a", State: "CREATED", Bundles: same}, RecordedGroup{ID: "a"}, ""},
		{"recreated", raystate.PlacementGroup{PlacementGroupID: "b", State: "CREATED", Bundles: same}, RecordedGroup{ID: "a"}, "recreated outside Terraform"},
		{"rescheduling", raystate.PlacementGroup{PlacementGroupID: "a", State: "RESCHEDULING", Bundles: same}, RecordedGroup{ID: "a"}, "Ray reports state RESCHEDULING"},
		{"fewer bundles", raystate.PlacementGroup{PlacementGroupID: "a", State: "CREATED", Bundles: same[:1]}, RecordedGroup{ID: "a"}, "has 1 bundles, the configuration wants 2"},
		{"other resources", raystate.PlacementGroup{PlacementGroupID: "a", State: "CREATED",
			Bundles: []raystate.Bundle{same[0], bundle(map[string]float64{"CPU": 2})}}, RecordedGroup{ID: "a"}, "bundle 1 reserves {CPU: 2}"},
	}
	moved := []raystate.Bundle{{BundleIndex: 0, NodeID: "node-new", UnitResources: same[0].UnitResources}, same[1]}
	cases = append(cases, struct {
		name string
		got  raystate.PlacementGroup
		rec  RecordedGroup
		want string
	}{"moved", raystate.PlacementGroup{PlacementGroupID: "a", State: "CREATED", Bundles: moved},
		RecordedGroup{ID: "a", BundleNodes: map[int]string{0: "node-old"}}, "bundle 0 moved from node node-old to node node-new"})
	for _, c := range cases {
		c.got.Name = want.Name
		got := CompareGroups([]GroupRequest{want}, map[string]RecordedGroup{want.Name: c.rec}, []raystate.PlacementGroup{c.got})[0].Drift
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: drift %q, want %q", c.name, got, c.want)
		}
	}
}

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
	if s.Ports != DefaultPorts || s.NumGPUsPerNode != DefaultNumGPUsPerNode || s.Strategy != DefaultStrategy {
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
