# A team's namespace with a quota, and what each of its clusters does when
# a node holding its bundles dies.
provider "ray" {
  namespace = var.namespace
}

variable "name" {
  type    = string
  default = "team"
}

variable "namespace" {
  type    = string
  default = "team-a"
}

# The team's cap: every plan that would create more in the namespace than
# this is refused (clusters of other states and groups made outside
# Terraform count too), and so is a create that races another state past it.
# At most 8 of them on the nodes of rack A (labelled by NVLink domain, as
# scripts/ray-cluster.sh labels its nodes): the cluster that would pass it
# is refused at plan when the plan chooses its nodes (select_nodes), else
# by its apply once Ray has placed it, which then removes what it made.
resource "ray_namespace_quota" "team" {
  namespace = var.namespace
  gpus      = 12
  node_label_limits = [
    { labels = { "raytf.io/nvlink-domain" = "rackA" }, gpus = 8 },
  ]
}

locals {
  ports = provider::ray::port_ranges()
}

# Placed by Ray (no select_nodes): Ray places a lost bundle again by itself,
# in the same placement group, as soon as a node has room, and the bundles on
# live nodes keep their workers. The plan waits for that, with a warning, and
# replaces the cluster only when Ray has not managed it 15 minutes after the
# node died. Then an apply probes the bundles Ray moved (an in-place update).
resource "ray_virtual_cluster" "rollout" {
  depends_on = [ray_namespace_quota.team] # plans and creates against this configuration's quota

  name                    = "${var.name}-rollout"
  bundle_ct_per_node_list = [2, 2]
  num_gpus_per_node       = 4
  recovery_timeout        = "15m"
  port_range_low          = local.ports.generation.low
  port_range_high         = local.ports.generation.high
}

# Pinned to the nodes it selected: Ray can never place its bundles elsewhere,
# so the first plan after one of those nodes died replaces the cluster on
# the nodes alive then.
resource "ray_virtual_cluster" "trainer" {
  depends_on = [ray_namespace_quota.team]

  name                    = "${var.name}-trainer"
  bundle_ct_per_node_list = [4]
  num_gpus_per_node       = 4
  select_nodes            = true
  port_range_low          = local.ports.master.low
  port_range_high         = local.ports.master.high
}

output "quota_gpus" {
  value = ray_namespace_quota.team.gpus
}

output "rollout_recovery_timeout" {
  value = ray_virtual_cluster.rollout.recovery_timeout
}
