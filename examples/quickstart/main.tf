# Quickstart: a unified GPU virtual cluster on complete NVLink segments. The
# cluster chooses its nodes once, at create, and keeps the choice in state, so
# nodes joining or leaving elsewhere never change the plan.
# Address from RAY_ADDRESS, else http://127.0.0.1:8265.
provider "ray" {}

variable "name" {
  type    = string
  default = "quickstart"
}

# Four nodes in complete 2-node NVLink segments, each logical node pinned to
# exactly the node it was given.
resource "ray_virtual_cluster" "training" {
  name                     = var.name
  bundle_ct_per_node_list  = [4, 4, 4, 4]
  num_gpus_per_node        = 4
  use_unified_pg           = true
  placement_group_strategy = "PACK"
  segment_size             = 2
  select_nodes             = true
}

output "nodes" {
  description = "The nodes the cluster chose, one per logical node."
  value       = ray_virtual_cluster.training.selected_node_ids
}

output "master" {
  value = "${ray_virtual_cluster.training.master_address}:${ray_virtual_cluster.training.master_port}"
}

output "world_size" {
  value = ray_virtual_cluster.training.world_size
}

output "placement" {
  description = "Bundles in rank order: where each worker of the training job will run."
  value = [for b in ray_virtual_cluster.training.bundles : {
    rank          = b.rank
    bundle        = b.global_index
    node_ip       = b.node_ip
    gpu_id        = b.gpu_id
    nvlink_domain = b.nvlink_domain
    topo_rank     = b.topo_rank
    port          = b.port
  }]
}
