# Async GRPO with on-policy distillation (OPD) from a teacher on GPUs of its own:
# NeMo-RL builds the colocated policy cluster grpo_policy_cluster and then one
# cluster per teacher alias, named teacher_<alias> (nemo_rl/algorithms/opd.py),
# reserved before any teacher model loads. Declared here, both attach through
#   uv run python -m raytf_attach.run -- examples/run_grpo.py --config <config>
#
# Matching NeMo-RL config (the sizes fit the local test cluster: nodes of 4 GPUs and
# 4 CPUs, and a colocated bundle takes 2 CPUs, so the policy uses 2 GPUs a node):
#   cluster.num_nodes: 3, cluster.gpus_per_node: 2, cluster.segment_size: 2
#   policy.generation.colocated.enabled: true (vLLM, async_engine: true)
#   on_policy_distillation.enabled: true
#   on_policy_distillation.teacher_model_by_agent_name: { math: <checkpoint> }
#   on_policy_distillation.non_colocated_teachers.enabled: true
#   on_policy_distillation.non_colocated_teachers.default_teacher_cfg:
#     { num_nodes: 1, gpus_per_node: 4 }
# GRPO subtracts the teachers' nodes from cluster.num_nodes: 3 - 1 = 2 policy
# nodes. With cluster.segment_size set, each teacher is one segment of its own
# node count (here 1), on nodes the policy does not hold.
provider "ray" {
  namespace = var.namespace
}

variable "prefix" {
  description = "Prefix of every cluster name (empty: NeMo-RL's own names); with one, launch with the --map lines of output launch."
  type        = string
  default     = ""
}

variable "namespace" {
  type    = string
  default = "terraform-ray"
}

locals {
  ports         = provider::ray::port_ranges()
  gpus_per_node = 2
  # on_policy_distillation.teacher_model_by_agent_name's aliases, each with
  # its non_colocated_teachers resources (num_nodes, gpus_per_node).
  teachers = { math = { num_nodes = 1, gpus_per_node = 4 } }
}

# Colocated generation: one cluster for training and vLLM, so two worker
# groups share each bundle (max_colocated_worker_groups = 2; 1 with the
# Megatron generation backend).
resource "ray_virtual_cluster" "policy" {
  name                        = "${var.prefix}grpo_policy_cluster"
  bundle_ct_per_node_list     = [local.gpus_per_node, local.gpus_per_node]
  num_gpus_per_node           = local.gpus_per_node
  max_colocated_worker_groups = 2
  segment_size                = 2
  select_nodes                = true
  port_range_low              = local.ports.master.low
  port_range_high             = local.ports.master.high
}

# One cluster per teacher: [gpus_per_node] * num_nodes, one worker group, its
# node span one NVLink segment, and NeMo-RL's default port range (it passes
# none for teachers).
resource "ray_virtual_cluster" "teacher" {
  for_each                    = local.teachers
  name                        = "${var.prefix}teacher_${each.key}"
  bundle_ct_per_node_list     = [for _ in range(each.value.num_nodes) : each.value.gpus_per_node]
  num_gpus_per_node           = each.value.gpus_per_node
  max_colocated_worker_groups = 1
  segment_size                = each.value.num_nodes
  select_nodes                = true
}

output "launch" {
  description = "The launch line, with a --map per cluster when the names carry a prefix."
  value = join(" ", concat(
    ["uv run python -m raytf_attach.run --namespace", var.namespace],
    var.prefix == "" ? [] : concat(
      ["--map grpo_policy_cluster=${ray_virtual_cluster.policy.name}"],
      [for alias, c in ray_virtual_cluster.teacher : "--map teacher_${alias}=${c.name}"],
    ),
    ["-- examples/run_grpo.py --config <your OPD config>"],
  ))
}

output "teacher_nodes" {
  value = { for alias, c in ray_virtual_cluster.teacher : alias => c.selected_node_ids }
}
