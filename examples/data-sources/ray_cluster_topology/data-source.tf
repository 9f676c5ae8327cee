# Every alive node with its NVLink domain and topo_rank.
data "ray_cluster_topology" "all" {}

# Four training nodes in complete 2-node NVLink segments.
data "ray_cluster_topology" "training" {
  segment_size = 2
  num_nodes    = 4
}

# The inference cluster's node, chosen from what training left.
data "ray_cluster_topology" "inference" {
  segment_size     = 1
  num_nodes        = 1
  exclude_node_ids = data.ray_cluster_topology.training.selected_node_ids
  role             = "inference"
}
