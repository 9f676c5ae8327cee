data "ray_cluster_topology" "all" {}

locals {
  training = provider::ray::prepare_segment_topology(data.ray_cluster_topology.all.topology, 2, 4)
}

resource "ray_virtual_cluster" "training" {
  name                      = "train"
  bundle_ct_per_node_list   = [4, 4, 4, 4]
  num_gpus_per_node         = 4
  use_unified_pg            = true
  segment_size              = 2
  node_resource_constraints = local.training.node_resource_constraints
}
