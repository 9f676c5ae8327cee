# Team A may hold at most 16 GPUs and 128 CPUs in its Ray namespace, at
# most two bundles pinned to rack A's NVLink domain (node_resource_constraints
# of 0.001 nvlink_domain_rackA each), and at most 8 GPUs on the H100 nodes
# (Ray labels each GPU node with its accelerator type).
resource "ray_namespace_quota" "team_a" {
  namespace = "team-a"
  gpus      = 16
  cpus      = 128
  resources = {
    nvlink_domain_rackA = 0.002
  }
  node_label_limits = [
    { labels = { "ray.io/accelerator-type" = "H100" }, gpus = 8 },
  ]
}
