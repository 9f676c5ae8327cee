package drift

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestGroupDrift(t *testing.T) {
	want := clusterspec.GroupRequest{Name: "vc-node0", Bundles: []topology.Resources{{"CPU": 1, "GPU": 1}, {"CPU": 1, "GPU": 1}}}
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
		// A node's loss is the plan's to judge (checkRecovery), not drift.
		{"rescheduling", raystate.PlacementGroup{PlacementGroupID: "a", State: "RESCHEDULING", Bundles: same}, RecordedGroup{ID: "a"}, ""},
		{"pending", raystate.PlacementGroup{PlacementGroupID: "a", State: "PENDING", Bundles: same}, RecordedGroup{ID: "a"}, "Ray reports state PENDING"},
		{"recreated and rescheduling", raystate.PlacementGroup{PlacementGroupID: "b", State: "RESCHEDULING", Bundles: same}, RecordedGroup{ID: "a"},
			"recreated outside Terraform (id b, recorded a); Ray reports state RESCHEDULING"},
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
		RecordedGroup{ID: "a", BundleNodes: map[int]string{0: "node-old"}}, ""})
	for _, c := range cases {
		c.got.Name = want.Name
		got := CompareGroups([]clusterspec.GroupRequest{want}, map[string]RecordedGroup{want.Name: c.rec}, []raystate.PlacementGroup{c.got})[0].Drift
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: drift %q, want %q", c.name, got, c.want)
		}
	}
}
