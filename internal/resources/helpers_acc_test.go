package resources_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// logNodes prints the nodes Ray reported, so the test log shows the real cluster.
func logNodes(t *testing.T, name string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[name]
		if !ok {
			return fmt.Errorf("%s not in state", name)
		}
		a := rs.Primary.Attributes
		t.Logf("Ray reports %s nodes (ray %s, session %s):", a["nodes.#"], a["ray_version"], a["id"])
		for i := 0; ; i++ {
			id, ok := a[fmt.Sprintf("nodes.%d.node_id", i)]
			if !ok {
				break
			}
			t.Logf("  node %s ip=%s head=%s gpus=%s cpus=%s nvlink_domain=%s topo_rank=%s", id[:12],
				a[fmt.Sprintf("nodes.%d.node_ip", i)], a[fmt.Sprintf("nodes.%d.is_head_node", i)],
				a[fmt.Sprintf("nodes.%d.gpus", i)], a[fmt.Sprintf("nodes.%d.cpus", i)],
				a[fmt.Sprintf("nodes.%d.nvlink_domain", i)], a[fmt.Sprintf("nodes.%d.topo_rank", i)])
		}
		return nil
	}
}
