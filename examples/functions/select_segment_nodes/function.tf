data "ray_cluster_topology" "all" {}

# Which nodes would four training nodes in 2-node NVLink segments use?
output "training_nodes" {
  value = provider::ray::select_segment_nodes(data.ray_cluster_topology.all.topology, 2, 4).selected
}
