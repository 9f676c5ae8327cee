# Every alive node with its NVLink domain and topo_rank.
data "ray_cluster_topology" "all" {}

# Where four training nodes in complete 2-node NVLink segments would go now
# (read again on every plan). Clusters choose their own nodes with
# ray_virtual_cluster's select_nodes, which keeps the choice.
data "ray_cluster_topology" "training" {
  segment_size = 2
  num_nodes    = 4
}

# What an inference node could get from what training left.
data "ray_cluster_topology" "inference" {
  segment_size     = 1
  num_nodes        = 1
  exclude_node_ids = data.ray_cluster_topology.training.selected_node_ids
  role             = "inference"
}
