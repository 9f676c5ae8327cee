package acctest

// NodeClusterHCL is resource "ray_virtual_cluster" "t": one logical node of
// four one-GPU bundles with select_nodes, so it takes a whole 4-GPU node of
// the local cluster. It is the cluster of the tests of teams applying at the
// same moment and of the bench's race soak. mode is capacity_check,
// readyTimeout a duration string ("60s").
func NodeClusterHCL(name, mode, readyTimeout string, portLow, portHigh int) string {
	return NodeCluster(name, mode, readyTimeout, portLow, portHigh).String()
}

// NodeCluster is NodeClusterHCL's block, for configurations that add to it.
func NodeCluster(name, mode, readyTimeout string, portLow, portHigh int) VirtualCluster {
	return VirtualCluster{Name: name, Counts: []int{4}, GPUsPerNode: 4, SelectNodes: true, CapacityCheck: mode,
		ReadyTimeout: readyTimeout, PortLow: portLow, PortHigh: portHigh}
}
