# Rank order of three bundles: domain with the lowest topo_rank first.
output "rank_order" {
  value = provider::ray::sort_bundles([
    { gpu_id = 0, nvlink_domain = "nvlink_domain_A", topo_rank = 3, node_id = "n1" },
    { gpu_id = 1, nvlink_domain = "nvlink_domain_A", topo_rank = 3, node_id = "n1" },
    { gpu_id = 0, nvlink_domain = "nvlink_domain_B", topo_rank = 1, node_id = "n2" },
  ], null, null) # => [2, 0, 1]; null leaves segment_size and gpus_per_node unset
}
