# A training cluster on complete NVLink segments and an inference cluster on
# nodes the training cluster does not hold. Each cluster chooses its nodes
# once, at create; the inference cluster excludes the training cluster's
# choice, which is stable in state.
provider "ray" {}

variable "name" {
  type    = string
  default = "rl"
}

locals {
  ports = provider::ray::port_ranges()
}

resource "ray_virtual_cluster" "training" {
  name                     = "${var.name}-train"
  bundle_ct_per_node_list  = [4, 4]
  num_gpus_per_node        = 4
  use_unified_pg           = true
  placement_group_strategy = "PACK"
  segment_size             = 2
  select_nodes             = true
  port_range_low           = local.ports.master.low
  port_range_high          = local.ports.master.high
}

# Per-node groups for generation engines, in the generation port band so the
# two clusters never hand out the same port on a node. exclude_node_ids keeps
# inference off training's nodes on purpose (siblings need no chain to fit).
resource "ray_virtual_cluster" "inference" {
  name                    = "${var.name}-infer"
  bundle_ct_per_node_list = [2, 2]
  num_gpus_per_node       = 4
  select_nodes            = true
  exclude_node_ids        = ray_virtual_cluster.training.selected_node_ids
  port_range_low          = local.ports.generation.low
  port_range_high         = local.ports.generation.high
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
  value = ray_virtual_cluster.inference.selected_node_ids
}
