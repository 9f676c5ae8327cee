package resources

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestGroupDrift(t *testing.T) {
	want := topology.GroupRequest{Name: "vc-node0", Bundles: []topology.Resources{{"CPU": 1, "GPU": 1}, {"CPU": 1, "GPU": 1}}}
	bundle := func(res map[string]float64) rayclient.Bundle { return rayclient.Bundle{UnitResources: res} }
	same := []rayclient.Bundle{bundle(map[string]float64{"CPU": 1, "GPU": 1}), bundle(map[string]float64{"GPU": 1, "CPU": 1})}
	cases := []struct {
		name string
		got  rayclient.PlacementGroup
		rec  RecordedGroup
		want string
	}{
		{"identical", rayclient.PlacementGroup{PlacementGroupID: "a", State: "CREATED", Bundles: same}, RecordedGroup{ID: "a"}, ""},
		{"recreated", rayclient.PlacementGroup{PlacementGroupID: "b", State: "CREATED", Bundles: same}, RecordedGroup{ID: "a"}, "recreated outside Terraform"},
		{"rescheduling", rayclient.PlacementGroup{PlacementGroupID: "a", State: "RESCHEDULING", Bundles: same}, RecordedGroup{ID: "a"}, "Ray reports state RESCHEDULING"},
		{"fewer bundles", rayclient.PlacementGroup{PlacementGroupID: "a", State: "CREATED", Bundles: same[:1]}, RecordedGroup{ID: "a"}, "has 1 bundles, the configuration wants 2"},
		{"other resources", rayclient.PlacementGroup{PlacementGroupID: "a", State: "CREATED",
			Bundles: []rayclient.Bundle{same[0], bundle(map[string]float64{"CPU": 2})}}, RecordedGroup{ID: "a"}, "bundle 1 reserves {CPU: 2}"},
	}
	moved := []rayclient.Bundle{{BundleIndex: 0, NodeID: "node-new", UnitResources: same[0].UnitResources}, same[1]}
	cases = append(cases, struct {
		name string
		got  rayclient.PlacementGroup
		rec  RecordedGroup
		want string
	}{"moved", rayclient.PlacementGroup{PlacementGroupID: "a", State: "CREATED", Bundles: moved},
		RecordedGroup{ID: "a", BundleNodes: map[int]string{0: "node-old"}}, "bundle 0 moved from node node-old to node node-new"})
	for _, c := range cases {
		got := groupDrift(want, c.got, c.rec)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: drift %q, want %q", c.name, got, c.want)
		}
	}
}

func TestShapeFromGroups(t *testing.T) {
	b := func(res map[string]float64) rayclient.Bundle { return rayclient.Bundle{UnitResources: res} }
	gpu := map[string]float64{"CPU": 2, "GPU": 1, "nvlink_domain_x": 0.001}
	live := []rayclient.PlacementGroup{
		{Name: "vc-node0", Bundles: []rayclient.Bundle{b(gpu), b(gpu)}},
		{Name: "vc-node2", Bundles: []rayclient.Bundle{b(gpu)}},
		{Name: "vc-nodeX", Bundles: []rayclient.Bundle{b(gpu)}},
		{Name: "other-node1", Bundles: []rayclient.Bundle{b(gpu)}},
	}
	s, ok := shapeFromGroups("vc", live, nil)
	if !ok || s.err != "" || s.unified || !s.useGPUs || s.cpus != 2 {
		t.Fatalf("per-node shape: %+v %v", s, ok)
	}
	if got := s.counts; len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 1 {
		t.Fatalf("counts %v, want [2 0 1]", got)
	}
	if s.constraints[0]["nvlink_domain_x"] != 0.001 || len(s.constraints[1]) != 0 {
		t.Fatalf("constraints %v", s.constraints)
	}
	unified := []rayclient.PlacementGroup{{Name: "u-unified", Bundles: []rayclient.Bundle{b(gpu), b(gpu), b(gpu)}}}
	if s, ok := shapeFromGroups("u", unified, []int64{2, 1}); !ok || !s.unified || len(s.counts) != 2 {
		t.Fatalf("unified shape: %+v", s)
	}
	if s, _ := shapeFromGroups("u", unified, []int64{2, 2}); !strings.Contains(s.err, "splits 4 bundles") {
		t.Fatalf("bad split accepted: %+v", s)
	}
	if _, ok := shapeFromGroups("none", live, nil); ok {
		t.Fatal("found groups for an unknown name")
	}
}

func TestClaimPortsReportsOverlaps(t *testing.T) {
	d := &ProviderData{}
	if clash := d.ClaimPorts("train", topology.PortRange{Low: 1400, High: 1999}); len(clash) != 0 {
		t.Fatalf("first claim clashed: %v", clash)
	}
	if clash := d.ClaimPorts("infer", topology.PortRange{Low: 3000, High: 4999}); len(clash) != 0 {
		t.Fatalf("disjoint ranges clashed: %v", clash)
	}
	clash := d.ClaimPorts("policy", topology.PortRange{Low: 1900, High: 2100})
	if len(clash) != 1 || !strings.HasPrefix(clash[0], "train [1400, 1999)") {
		t.Fatalf("overlap not reported: %v", clash)
	}
	if clash := d.ClaimPorts("train", topology.PortRange{Low: 1400, High: 1999}); len(clash) != 1 {
		t.Fatalf("re-claiming the same cluster: %v", clash)
	}
}

func TestIssuePath(t *testing.T) {
	if got := issuePath("node_resource_constraints[2]").String(); got != "node_resource_constraints[2]" {
		t.Fatalf("indexed path %q", got)
	}
	if got := issuePath("segment_size").String(); got != "segment_size" {
		t.Fatalf("plain path %q", got)
	}
}
