# A cluster this provider created is imported by name: its record in Ray
# restores every declared argument.
terraform import ray_virtual_cluster.per_node policy

# Groups without a record: a unified group (<name>-unified) also takes its
# logical-node split.
terraform import ray_virtual_cluster.unified train:4,4
