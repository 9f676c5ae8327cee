package resources

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestSelectNodeFields(t *testing.T) {
	if sel := selectNodeFields(nil); sel != nil {
		t.Errorf("unset node_attributes lists nodes: %v", sel)
	}
	all := selectNodeFields([]string{nodeAttributesAll})
	some := selectNodeFields([]string{"gpus", "labels"})
	for i, f := range nodeFields {
		if !all[i] {
			t.Errorf("all: %s not filled", f.name)
		}
		if want := f.name == "node_id" || f.name == "gpus" || f.name == "labels"; some[i] != want {
			t.Errorf("[gpus, labels]: %s filled = %t", f.name, some[i])
		}
	}
	if got := nodeAttributeChoices(); len(got) != len(nodeFields)+1 || got[0] != nodeAttributesAll {
		t.Errorf("choices %v", got)
	}
}

func TestBuildNodeOutputs(t *testing.T) {
	nodes := []rayclient.Node{
		{NodeID: "c", NodeIP: "10.0.0.3", ResourcesTotal: map[string]float64{"CPU": 4, "GPU": 4, "topo_rank": 3, "nvlink_domain_b": 1}},
		{NodeID: "a", NodeIP: "10.0.0.1", ResourcesTotal: map[string]float64{"CPU": 8, "GPU": 2, "topo_rank": 5, "nvlink_domain_a": 1,
			"CPU_group_0123": 1}, Labels: map[string]string{"ray.io/node-id": "a"}},
		{NodeID: "b", NodeIP: "10.0.0.2", IsHeadNode: true, ResourcesTotal: map[string]float64{"CPU": 2, "topo_rank": 1}},
	}
	topo := (&ClusterSnapshot{Nodes: nodes}).Topology()
	out := buildNodeOutputs(nodes, topo, selectNodeFields([]string{"node_ip", "resources"}))
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
		if !obj["gpus"].IsNull() || !obj["labels"].IsNull() || obj["node_ip"].IsNull() {
			t.Errorf("node %s: unselected attributes must be null, node_ip filled: %v", id, obj)
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

	empty := buildNodeOutputs(nodes, topo, nil)
	if err := empty.nodes.As(&list); err != nil || len(list) != 0 || empty.nodes.IsNull() {
		t.Errorf("without node_attributes nodes must be an empty list, got %v", empty.nodes)
	}
}
