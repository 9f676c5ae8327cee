# The two clusters NeMo-RL's GRPO builds when generation is not colocated
# (nemo_rl/algorithms/grpo.py's setup), declared in Terraform. Run GRPO with
#   uv run python -m raytf_attach.run -- examples/run_grpo.py ...
# and its RayVirtualCluster(name="grpo_train_cluster" / "grpo_inference_cluster")
# calls attach to these instead of creating placement groups.
#
# Matching NeMo-RL config (the sizes fit the local test cluster: 5 nodes x 4 GPUs):
#   cluster.num_nodes: 3                 -> 2 training nodes + 1 inference node
#   cluster.gpus_per_node: 4             -> num_gpus_per_node, bundles per node
#   cluster.segment_size: 2              -> the training cluster's segment_size
#   cluster.master_port_range_low/high   -> unset: both clusters use the master band
#   policy.generation.colocated.enabled: false
#   policy.generation.colocated.resources.num_nodes: 1, gpus_per_node: 4
#   policy.generation.vllm_cfg.tensor_parallel_size: 4 (one node per engine, so
#     GRPO passes no segment_size for the inference cluster)
provider "ray" {
  namespace = var.namespace # `--namespace` of raytf_attach.run; terraform-ray is its default too
}

variable "name" {
  description = "Prefix of the cluster names; NeMo-RL's are grpo_train_cluster and grpo_inference_cluster."
  type        = string
  default     = "grpo"
}

variable "namespace" {
  type    = string
  default = "terraform-ray"
}

locals {
  ports         = provider::ray::port_ranges()
  gpus_per_node = 4
}

# GRPO asks for [gpus_per_node] * (cluster.num_nodes - inference nodes),
# max_colocated_worker_groups = 1 and cluster.segment_size.
resource "ray_virtual_cluster" "train" {
  name                        = "${var.name}_train_cluster"
  bundle_ct_per_node_list     = [local.gpus_per_node, local.gpus_per_node]
  num_gpus_per_node           = local.gpus_per_node
  max_colocated_worker_groups = 1
  segment_size                = 2    # complete 2-node NVLink segments
  select_nodes                = true # chosen once, kept in state
  port_range_low              = local.ports.master.low
  port_range_high             = local.ports.master.high
}

# GRPO asks for [gpus_per_node] * inference num_nodes with the same master
# port band. Whole nodes: the plan chooses them around the ones training
# takes, so no exclude_node_ids chain is needed.
resource "ray_virtual_cluster" "inference" {
  name                        = "${var.name}_inference_cluster"
  bundle_ct_per_node_list     = [local.gpus_per_node]
  num_gpus_per_node           = local.gpus_per_node
  max_colocated_worker_groups = 1
  select_nodes                = true
  port_range_low              = local.ports.master.low
  port_range_high             = local.ports.master.high
}

output "launch" {
  description = "The launch line: raytf_attach.run maps NeMo-RL's names to these clusters when the prefix is not grpo."
  value = join(" ", concat(
    ["uv run python -m raytf_attach.run --namespace", var.namespace],
    var.name == "grpo" ? [] : [
      "--map grpo_train_cluster=${ray_virtual_cluster.train.name}",
      "--map grpo_inference_cluster=${ray_virtual_cluster.inference.name}",
    ],
    ["-- examples/run_grpo.py --config <your GRPO config>"],
  ))
}

output "train_nodes" {
  value = ray_virtual_cluster.train.selected_node_ids
}

output "inference_nodes" {
  value = ray_virtual_cluster.inference.selected_node_ids
}
