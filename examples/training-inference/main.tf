# A training cluster on complete NVLink segments and an inference cluster on
# nodes the training cluster did not take: prepare_segment_topology's
# remaining_node_ids, as the reference intends.
provider "ray" {}

variable "name" {
  type    = string
  default = "rl"
}

data "ray_cluster_topology" "training" {
  segment_size = 2
  num_nodes    = 2
  role         = "training"
}

data "ray_cluster_topology" "inference" {
  segment_size     = 1
  num_nodes        = 2
  exclude_node_ids = data.ray_cluster_topology.training.selected_node_ids
  role             = "inference"
}

locals {
  ports = provider::ray::port_ranges()
}

resource "ray_virtual_cluster" "training" {
  name                      = "${var.name}-train"
  bundle_ct_per_node_list   = [4, 4]
  num_gpus_per_node         = 4
  use_unified_pg            = true
  placement_group_strategy  = "PACK"
  segment_size              = 2
  node_resource_constraints = data.ray_cluster_topology.training.node_resource_constraints
  port_range_low            = local.ports.master.low
  port_range_high           = local.ports.master.high
}

# Per-node groups for generation engines, in the generation port band so the
# two clusters never hand out the same port on a node.
resource "ray_virtual_cluster" "inference" {
  name                      = "${var.name}-infer"
  bundle_ct_per_node_list   = [2, 2]
  num_gpus_per_node         = 4
  node_resource_constraints = data.ray_cluster_topology.inference.node_resource_constraints
  port_range_low            = local.ports.generation.low
  port_range_high           = local.ports.generation.high
}

output "training_master" {
  value = "${ray_virtual_cluster.training.master_address}:${ray_virtual_cluster.training.master_port}"
}

output "training_domains" {
  value = distinct(ray_virtual_cluster.training.nvlink_domain_per_bundle)
}

output "inference_domains" {
  value = distinct([for b in ray_virtual_cluster.inference.bundles : b.nvlink_domain])
}

output "inference_nodes" {
  value = data.ray_cluster_topology.inference.selected_node_ids
}
