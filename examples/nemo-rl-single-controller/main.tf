# NeMo-RL's SingleController path for async RL (examples/run_grpo_single_controller.py,
# nemo_rl/algorithms/single_controller_utils/setup.py) builds its clusters under
# names of its own: sc_policy_cluster when generation is colocated, else
# sc_train_cluster and sc_inference_cluster, declared here. It passes no
# segment_size and no node constraints, so neither cluster sets segment_size.
# Launch with
#   uv run python -m raytf_attach.run -- examples/run_grpo_single_controller.py --config <config>
#
# Matching NeMo-RL config (two of the local test cluster's 4-GPU nodes):
#   cluster.num_nodes: 2, cluster.gpus_per_node: 4
#   cluster.master_port_range_low/high: unset (both clusters use the master band)
#   policy.generation.colocated.enabled: false (not the Megatron backend)
#   policy.generation.colocated.resources: { num_nodes: 1, gpus_per_node: 4 }
# With several nodes, training takes cluster.num_nodes - 1 whole nodes; on one
# node it takes gpus_per_node - the inference GPUs instead.
provider "ray" {
  namespace = var.namespace
}

variable "prefix" {
  description = "Prefix of both cluster names (empty: NeMo-RL's own names); with one, launch with the --map lines of output launch."
  type        = string
  default     = ""
}

variable "namespace" {
  type    = string
  default = "terraform-ray"
}

locals {
  ports         = provider::ray::port_ranges()
  gpus_per_node = 4
}

resource "ray_virtual_cluster" "train" {
  name                        = "${var.prefix}sc_train_cluster"
  bundle_ct_per_node_list     = [local.gpus_per_node]
  num_gpus_per_node           = local.gpus_per_node
  max_colocated_worker_groups = 1
  select_nodes                = true
  port_range_low              = local.ports.master.low
  port_range_high             = local.ports.master.high
}

resource "ray_virtual_cluster" "inference" {
  name                        = "${var.prefix}sc_inference_cluster"
  bundle_ct_per_node_list     = [local.gpus_per_node]
  num_gpus_per_node           = local.gpus_per_node
  max_colocated_worker_groups = 1
  select_nodes                = true
  port_range_low              = local.ports.master.low
  port_range_high             = local.ports.master.high
}

output "launch" {
  description = "The launch line, with --map when the names carry a prefix."
  value = join(" ", concat(
    ["uv run python -m raytf_attach.run --namespace", var.namespace],
    var.prefix == "" ? [] : [
      "--map sc_train_cluster=${ray_virtual_cluster.train.name}",
      "--map sc_inference_cluster=${ray_virtual_cluster.inference.name}",
    ],
    ["-- examples/run_grpo_single_controller.py --config <your config>"],
  ))
}
