# Any GPU cluster: no NVLink domains, no topo_rank, no node labels needed. One
# placement group per logical node (strategy PACK: each node's bundles on one
# machine), as NeMo-RL's RayVirtualCluster does with use_unified_pg = False.
# Address from RAY_ADDRESS, else http://127.0.0.1:8265.
provider "ray" {}

variable "name" {
  type    = string
  default = "workers"
}

variable "nodes" {
  description = "Logical nodes (one placement group each)."
  type        = number
  default     = 2
}

variable "gpus_per_node" {
  description = "GPUs (bundles) per logical node; every node of the Ray cluster that holds one needs this many free GPUs."
  type        = number
  default     = 1
}

resource "ray_virtual_cluster" "workers" {
  name                    = var.name
  bundle_ct_per_node_list = [for _ in range(var.nodes) : var.gpus_per_node]
  num_gpus_per_node       = var.gpus_per_node
}

output "world_size" {
  value = ray_virtual_cluster.workers.world_size
}

output "master" {
  value = "${ray_virtual_cluster.workers.master_address}:${ray_virtual_cluster.workers.master_port}"
}

output "placement" {
  description = "Bundles in rank order: where each worker runs."
  value       = [for b in ray_virtual_cluster.workers.bundles : "${b.rank} ${b.node_ip} gpu ${b.gpu_id} port ${b.port}"]
}
