package acctest

import "fmt"

// NodeClusterHCL is resource "ray_virtual_cluster" "t": one logical node of
// four one-GPU bundles with select_nodes, so it takes a whole 4-GPU node of
// the local cluster. It is the cluster of the tests of teams applying at the
// same moment and of the bench's race soak. mode is capacity_check,
// readyTimeout a duration string ("60s").
func NodeClusterHCL(name, mode, readyTimeout string, portLow, portHigh int) string {
	return fmt.Sprintf(`
resource "ray_virtual_cluster" "t" {
  name                    = %q
  bundle_ct_per_node_list = [4]
  num_gpus_per_node       = 4
  select_nodes            = true
  capacity_check          = %q
  ready_timeout           = %q
  port_range_low          = %d
  port_range_high         = %d
}
`, name, mode, readyTimeout, portLow, portHigh)
}
