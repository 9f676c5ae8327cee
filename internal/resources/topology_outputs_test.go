package resources

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestBuildNodeOutputs(t *testing.T) {
	nodes := []raystate.Node{
		{NodeID: "c", NodeIP: "10.0.0.3", ResourcesTotal: map[string]float64{"CPU": 4, "GPU": 4, "topo_rank": 3, "nvlink_domain_b": 1}},
		{NodeID: "a", NodeIP: "10.0.0.1", ResourcesTotal: map[string]float64{"CPU": 8, "GPU": 2, "topo_rank": 5, "nvlink_domain_a": 1,
			"CPU_group_0123": 1}, Labels: map[string]string{"ray.io/node-id": "a"}},
		{NodeID: "b", NodeIP: "10.0.0.2", IsHeadNode: true, ResourcesTotal: map[string]float64{"CPU": 2, "topo_rank": 1}},
	}
	topo := clusterspec.TopologySource{}.NodeTopology(nodes)
	out := buildNodeOutputs(nodes, topo, true)
	if out.totalCPUs != 14 || out.totalGPUs != 6 {
		t.Errorf("totals %d CPUs %d GPUs", out.totalCPUs, out.totalGPUs)
	}
	var list []tftypes.Value
	if err := out.nodes.As(&list); err != nil || len(list) != 3 {
		t.Fatalf("nodes: %v %v", list, err)
	}
	var order []string
	for _, v := range list {
		var obj map[string]tftypes.Value
		_ = v.As(&obj)
		var id string
		_ = obj["node_id"].As(&id)
		order = append(order, id)
		for name, v := range obj {
			if v.IsNull() {
				t.Errorf("node %s: %s is null", id, name)
			}
		}
		var res map[string]tftypes.Value
		_ = obj["resources"].As(&res)
		if _, ok := res["CPU_group_0123"]; ok {
			t.Errorf("placement-group resource listed as the node's own: %v", res)
		}
	}
	// Head (rank 1, unknown domain), then domain b (lowest rank 3), then a.
	if order[0] != "b" || order[1] != "c" || order[2] != "a" {
		t.Errorf("order %v", order)
	}
	var entries map[string]tftypes.Value
	if err := out.topology.As(&entries); err != nil || len(entries) != 3 {
		t.Fatalf("topology %v %v", entries, err)
	}
	var entry map[string]tftypes.Value
	_ = entries["b"].As(&entry)
	var domain string
	_ = entry["nvlink_domain"].As(&domain)
	if domain != topology.NVLinkDomainUnknown {
		t.Errorf("head domain %q", domain)
	}

	empty := buildNodeOutputs(nodes, topo, false)
	if err := empty.nodes.As(&list); err != nil || len(list) != 0 || empty.nodes.IsNull() {
		t.Errorf("without include_nodes, nodes must be an empty list, got %v", empty.nodes)
	}
}
