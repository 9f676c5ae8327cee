# Team A may hold at most 16 GPUs and 128 CPUs in its Ray namespace, and at
# most two bundles pinned to rack A's NVLink domain (node_resource_constraints
# of 0.001 nvlink_domain_rackA each).
resource "ray_namespace_quota" "team_a" {
  namespace = "team-a"
  gpus      = 16
  cpus      = 128
  resources = {
    nvlink_domain_rackA = 0.002
  }
}
