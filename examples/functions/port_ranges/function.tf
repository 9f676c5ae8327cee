locals {
  ports = provider::ray::port_ranges()
}

# The inference cluster probes the generation band, training the master band.
resource "ray_virtual_cluster" "inference" {
  name                    = "infer"
  bundle_ct_per_node_list = [2, 2]
  port_range_low          = local.ports.generation.low
  port_range_high         = local.ports.generation.high
}
