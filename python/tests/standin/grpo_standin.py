"""Runs the stand-in GRPO cluster setup and places one actor per bundle, as RayWorkerGroup does.

    python -m raytf_attach.run [--namespace N] -- grpo_standin.py --address GCS --num-nodes 3 \
        --gpus-per-node 4 --inference-nodes 1 [--segment-size 2]

Prints one JSON line: per cluster, whether it is a RayVirtualCluster, its
class, and for every worker (group by group, bundle by bundle) the group name,
bundle index, node id and GPU ids the actor saw.
"""

from __future__ import annotations

import argparse
import json

import ray
from ray.util.placement_group import placement_group_table
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from nemo_rl.algorithms.grpo_clusters import setup_clusters
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster


@ray.remote
class Worker:
    def where(self):
        ctx = ray.get_runtime_context()
        return ctx.get_node_id(), [int(g) for g in ray.get_gpu_ids()]


def place_workers(cluster) -> list[dict]:
    workers, slots = [], []
    for group in cluster.get_placement_groups():
        name = placement_group_table(group)["name"]
        for index in range(group.bundle_count):
            workers.append(Worker.options(
                num_cpus=0,
                num_gpus=1 / cluster.max_colocated_worker_groups if cluster.use_gpus else 0,
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=group, placement_group_bundle_index=index),
            ).remote())
            slots.append((name, index))
    try:
        seen = ray.get([w.where.remote() for w in workers], timeout=300)
    finally:
        for w in workers:
            ray.kill(w)
    return [{"placement_group": n, "bundle_index": i, "node_id": node, "gpu_ids": gpus}
            for (n, i), (node, gpus) in zip(slots, seen)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--address", required=True)
    p.add_argument("--num-nodes", type=int, required=True)
    p.add_argument("--gpus-per-node", type=int, required=True)
    p.add_argument("--inference-nodes", type=int, required=True)
    p.add_argument("--segment-size", type=int)
    p.add_argument("--master-port-range-low", type=int)
    p.add_argument("--master-port-range-high", type=int)
    a = p.parse_args()
    ray.init(address=a.address, log_to_driver=False)  # anonymous namespace, as NeMo-RL's init_ray
    cluster_config = {"num_nodes": a.num_nodes, "gpus_per_node": a.gpus_per_node}
    if a.master_port_range_low is not None:
        cluster_config["master_port_range_low"] = a.master_port_range_low
    if a.master_port_range_high is not None:
        cluster_config["master_port_range_high"] = a.master_port_range_high
    clusters = setup_clusters(cluster_config, {"num_nodes": a.inference_nodes, "gpus_per_node": a.gpus_per_node},
                              segment_size=a.segment_size)
    report = {}
    for cluster in clusters:
        master = cluster.get_master_address_and_port() if hasattr(cluster, "get_master_address_and_port") else None
        report[cluster.name] = {
            "is_ray_virtual_cluster": isinstance(cluster, RayVirtualCluster),
            "class": type(cluster).__name__,
            "master": list(master) if master else None,
            "workers": place_workers(cluster),
        }
    for cluster in clusters:
        cluster.shutdown()  # NeMo-RL ends with this; Terraform's groups stay
    print(json.dumps(report, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
