# NVLink segments: check at plan time, with a provider function, that the live
# topology has enough complete segments, then build a unified cluster that
# selects exactly those segments and whose ranks follow the physical topology.
provider "ray" {}

variable "name" {
  type    = string
  default = "segments"
}

variable "segment_size" {
  type    = number
  default = 2
}

variable "num_nodes" {
  type    = number
  default = 4
}

data "ray_cluster_topology" "all" {}

locals {
  # Fails the plan with "cannot form N complete segments ..." when impossible.
  selection = provider::ray::select_segment_nodes(data.ray_cluster_topology.all.topology, var.segment_size, var.num_nodes)
}

# The cluster applies the same rules at create and keeps its choice: a later
# change of topology elsewhere does not move it.
resource "ray_virtual_cluster" "t" {
  name                     = var.name
  bundle_ct_per_node_list  = [for _ in range(var.num_nodes) : 4]
  num_gpus_per_node        = 4
  use_unified_pg           = true
  placement_group_strategy = "PACK"
  segment_size             = var.segment_size
  select_nodes             = true
}

output "selected_nodes" {
  value = ray_virtual_cluster.t.selected_node_ids
}

output "selection_at_plan" {
  description = "What select_segment_nodes chose from the topology read for this plan."
  value       = local.selection.selected
}

output "rank_to_domain" {
  value = [for b in ray_virtual_cluster.t.bundles : "${b.rank}:${b.nvlink_domain}:${b.topo_rank}"]
}
