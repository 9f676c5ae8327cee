"""Builds the clusters the way grpo.py's setup() does without colocated inference.

Imports RayVirtualCluster at module import, as NeMo-RL's algorithm modules do,
which may be before raytf_attach's hook is installed.
"""

from __future__ import annotations

from nemo_rl.distributed.virtual_cluster import RayVirtualCluster


def setup_clusters(cluster_config: dict, inference_resources: dict, segment_size=None, inference_segment_size=None):
    """(train_cluster, inference_cluster) for cluster.num_nodes/gpus_per_node and the generation's resources."""
    inference_nodes = inference_resources["num_nodes"]
    train_nodes = cluster_config["num_nodes"] - inference_nodes
    return (
        _cluster("grpo_train_cluster", cluster_config["gpus_per_node"], train_nodes, segment_size, cluster_config),
        _cluster("grpo_inference_cluster", inference_resources["gpus_per_node"], inference_nodes,
                 inference_segment_size, cluster_config),
    )


def _cluster(name: str, gpus_per_node: int, nodes: int, segment_size, cluster_config: dict) -> RayVirtualCluster:
    # The keyword arguments grpo.py passes for both clusters.
    return RayVirtualCluster(
        name=name,
        bundle_ct_per_node_list=[gpus_per_node] * nodes,
        use_gpus=True,
        num_gpus_per_node=gpus_per_node,
        max_colocated_worker_groups=1,
        port_range_low=cluster_config.get("master_port_range_low"),
        port_range_high=cluster_config.get("master_port_range_high"),
        segment_size=segment_size,
        node_resource_constraints=None,
    )
