# One unified group for cross-node model parallelism on complete NVLink
# segments, ordered by topology. select_nodes chooses the nodes once, at
# create, and keeps the choice in state: nodes joining or leaving elsewhere
# never replace the cluster.
resource "ray_virtual_cluster" "unified" {
  name                     = "train"
  bundle_ct_per_node_list  = [4, 4]
  num_gpus_per_node        = 4
  use_unified_pg           = true
  placement_group_strategy = "PACK"
  segment_size             = 2
  select_nodes             = true
  port_range_low           = 1400
  port_range_high          = 1999
  ready_timeout            = "3m"

  timeouts {
    create = "10m"
  }
}

# One placement group per logical node (PACK), two GPU bundles each, on nodes
# the training cluster did not choose (its choice is stable in state).
resource "ray_virtual_cluster" "per_node" {
  name                    = "policy"
  bundle_ct_per_node_list = [2, 2]
  num_gpus_per_node       = 4
  select_nodes            = true
  exclude_node_ids        = ray_virtual_cluster.unified.selected_node_ids
}

# Ray-native placement on labelled nodes (`ray start --labels`): logical
# node 0 only on rackA's nodes, node 1 anywhere but rank 1; the unified
# group stays inside one value of the NVLink-domain label (Ray >= 2.60.0).
resource "ray_virtual_cluster" "labelled" {
  name                     = "rollout"
  bundle_ct_per_node_list  = [4, 4]
  num_gpus_per_node        = 4
  use_unified_pg           = true
  placement_group_strategy = "PACK"
  node_label_selectors = [
    { "raytf.io/nvlink-domain" = "rackA" },
    { "raytf.io/topo-rank" = "!1" },
  ]
  topology_strategy = { "raytf.io/nvlink-domain" = "STRICT_PACK" }
}

output "rollout_domain" {
  # The label value Ray chose, e.g. { "raytf.io/nvlink-domain" = "rackA" }.
  value = ray_virtual_cluster.labelled.topology_assignments
}
