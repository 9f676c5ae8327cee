# Per-node groups (<name>-node<i>) are imported by name.
terraform import ray_virtual_cluster.per_node policy

# A unified group (<name>-unified) also takes its logical-node split.
terraform import ray_virtual_cluster.unified train:4,4
