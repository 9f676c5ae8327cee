# Adopt placement groups that already exist in Ray (created by hand, by an
# older tool, or by a lost state file) with an import block.
provider "ray" {}

variable "name" {
  type    = string
  default = "legacy"
}

import {
  to = ray_virtual_cluster.legacy
  id = var.name # per-node groups <name>-node<i>; for a unified group use "<name>:<counts>", e.g. "legacy:2,2"
}

resource "ray_virtual_cluster" "legacy" {
  name                    = var.name
  bundle_ct_per_node_list = [1, 1]
  num_gpus_per_node       = 4
}

output "groups" {
  value = [for g in ray_virtual_cluster.legacy.placement_groups : "${g.name}=${g.state}"]
}
