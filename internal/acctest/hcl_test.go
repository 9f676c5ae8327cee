package acctest

import "testing"

// The builder leaves zero fields out, aligns a block's attributes as
// terraform fmt does and writes nested blocks indented.
func TestHCL(t *testing.T) {
	got := HCL(
		Provider{Address: "http://127.0.0.1:1", MaxRetries: Retries(0)},
		VirtualCluster{Name: "vc", Counts: []int{2, 1}, NoGPUs: true,
			Constraints: []map[string]float64{{"node:10.0.0.1": 0.001, "b": 1}, {}}},
		Topology{Label: "all", NumNodes: 2},
		Output("n", "data.ray_cluster_topology.all.num_nodes"),
		List("mine", false, Attr{"name_prefix", Quote("vc")}),
		RawBlock("resource", []string{"ray_virtual_cluster", "bad"}, `gpus = 4`),
	)
	want := `provider "ray" {
  address     = "http://127.0.0.1:1"
  max_retries = 0
}

resource "ray_virtual_cluster" "t" {
  name                      = "vc"
  bundle_ct_per_node_list   = [2, 1]
  use_gpus                  = false
  node_resource_constraints = [{ "b" = 1, "node:10.0.0.1" = 0.001 }, {  }]
}

data "ray_cluster_topology" "all" {
  include_nodes = true
  num_nodes     = 2
}

output "n" {
  value = data.ray_cluster_topology.all.num_nodes
}

list "ray_virtual_cluster" "mine" {
  provider         = ray
  include_resource = false
  config {
    name_prefix = "vc"
  }
}

resource "ray_virtual_cluster" "bad" {
gpus = 4
}
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
