# Declare a GPU virtual cluster in Terraform; workloads attach to it with
# raytf_attach (see train.py) instead of creating placement groups themselves.
provider "ray" {
  # The Ray namespace of the groups; the workload attaches with the same one.
  namespace = var.namespace
}

variable "name" {
  type    = string
  default = "train"
}

variable "namespace" {
  type    = string
  default = "terraform-ray"
}

# Two logical nodes with two GPU bundles each: one placement group per node.
resource "ray_virtual_cluster" "train" {
  name                    = var.name
  bundle_ct_per_node_list = [2, 2]
  num_gpus_per_node       = 4
}

# What `python train.py --name ... --namespace ...` needs.
output "attach" {
  value = {
    name      = ray_virtual_cluster.train.name
    namespace = ray_virtual_cluster.train.namespace
  }
}

output "master" {
  value = "${ray_virtual_cluster.train.master_address}:${ray_virtual_cluster.train.master_port}"
}

# Where each rank of the attached workload will run.
output "placement" {
  value = [for b in ray_virtual_cluster.train.bundles : {
    rank    = b.rank
    node_id = b.node_id
    gpu_id  = b.gpu_id
  }]
}
