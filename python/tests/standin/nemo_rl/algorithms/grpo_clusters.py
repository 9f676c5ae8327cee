"""Builds the clusters the way grpo.py's setup() does without colocated inference.

Imports RayVirtualCluster at module import, as NeMo-RL's algorithm modules do,
which may be before raytf_attach's hook is installed.
"""

from __future__ import annotations

from nemo_rl.distributed.virtual_cluster import RayVirtualCluster


def setup_clusters(cluster_config: dict, inference_resources: dict, segment_size=None, inference_segment_size=None):
    """(train_cluster, inference_cluster) for cluster.num_nodes/gpus_per_node and the generation's resources."""
    inference_nodes = inference_resources["num_nodes"]
    inference_gpus_per_node = inference_resources["gpus_per_node"]
    train_nodes = cluster_config["num_nodes"] - inference_nodes
    train_gpus_per_node = cluster_config["gpus_per_node"]
    train_cluster = RayVirtualCluster(
        name="grpo_train_cluster",
        bundle_ct_per_node_list=[train_gpus_per_node] * train_nodes,
        use_gpus=True,
        num_gpus_per_node=train_gpus_per_node,
        max_colocated_worker_groups=1,
        port_range_low=cluster_config.get("master_port_range_low"),
        port_range_high=cluster_config.get("master_port_range_high"),
        segment_size=segment_size,
        node_resource_constraints=None,
    )
    inference_cluster = RayVirtualCluster(
        name="grpo_inference_cluster",
        bundle_ct_per_node_list=[inference_gpus_per_node] * inference_nodes,
        use_gpus=True,
        num_gpus_per_node=inference_gpus_per_node,
        max_colocated_worker_groups=1,
        port_range_low=cluster_config.get("master_port_range_low"),
        port_range_high=cluster_config.get("master_port_range_high"),
        segment_size=inference_segment_size,
        node_resource_constraints=None,
    )
    return train_cluster, inference_cluster
