# An inference fleet sized by a variable: one vLLM engine per logical node,
# each its own placement group (use_unified_pg = false, the default).
# Changing `engines` resizes the fleet in place: growing from 4 to 5 creates
# one group and leaves the 4 that serve traffic (and their workers) alone;
# shrinking removes the last engines' groups, once any added are ready.
# Changing `gpus_per_engine` changes every group, so that replaces the fleet.
# Address from RAY_ADDRESS, else http://127.0.0.1:8265.
provider "ray" {}

variable "name" {
  type    = string
  default = "vllm-fleet"
}

variable "engines" {
  description = "vLLM engines (logical nodes); change it to scale the fleet in place."
  type        = number
  default     = 4
}

variable "gpus_per_engine" {
  description = "Tensor-parallel size of each engine: GPUs (bundles) on one machine."
  type        = number
  default     = 1
}

resource "ray_virtual_cluster" "fleet" {
  name                    = var.name
  bundle_ct_per_node_list = [for _ in range(var.engines) : var.gpus_per_engine]
  num_gpus_per_node       = var.gpus_per_engine
  port_range_low          = 2100
  port_range_high         = 2200
}

output "engines" {
  description = "One line per engine: its placement group's name and id (kept across a resize)."
  value = [for g in ray_virtual_cluster.fleet.placement_groups :
    "${g.name} ${g.id}"
  ]
}

output "world_size" {
  value = ray_virtual_cluster.fleet.world_size
}
