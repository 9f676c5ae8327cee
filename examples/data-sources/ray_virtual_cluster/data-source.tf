# In an application's configuration: use the cluster the infrastructure
# repository declared (and owns) without owning it.
data "ray_virtual_cluster" "train" {
  name = "train"
  # namespace defaults to the provider's
}

output "master" {
  value = "${data.ray_virtual_cluster.train.master_address}:${data.ray_virtual_cluster.train.master_port}"
}

# Where each rank runs, e.g. for a launcher's host list.
output "ranks" {
  value = [for b in data.ray_virtual_cluster.train.bundles : "${b.rank} ${b.node_ip} gpu ${coalesce(b.gpu_id, -1)}"]
}
