"""Attach to the virtual cluster Terraform declared and start one actor per bundle, in rank order.

Run it as a Ray job (ray job submit -- python train.py --name train) or as a
local driver with --address <gcs host:port>. It prints one JSON line: where
each rank runs and the master address/port, for the workload (or a test) to use.
"""

import argparse
import json

import ray
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

import raytf_attach


@ray.remote
class Worker:
    def placement(self):
        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "gpu_ids": [int(g) for g in ray.get_gpu_ids()],
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--name", default="train", help="ray_virtual_cluster name")
    parser.add_argument("--namespace", default="terraform-ray", help="ray_virtual_cluster namespace")
    parser.add_argument("--address", default=None, help="Ray GCS address; omit inside a Ray job")
    args = parser.parse_args()

    ray.init(address=args.address, log_to_driver=False)
    cluster = raytf_attach.attach(args.name, namespace=args.namespace)
    master_address, master_port = cluster.get_master_address_and_port()

    # One worker per bundle, rank i on the bundle Terraform ranked i.
    gpus_per_worker = 1 / cluster.max_colocated_worker_groups if cluster.use_gpus else 0
    workers = []
    for rank in range(cluster.world_size()):
        pg, bundle_index = cluster.placement_for_rank(rank)
        workers.append(Worker.options(
            num_cpus=0,
            num_gpus=gpus_per_worker,
            scheduling_strategy=PlacementGroupSchedulingStrategy(
                placement_group=pg, placement_group_bundle_index=bundle_index
            ),
        ).remote())
    placements = ray.get([w.placement.remote() for w in workers])

    print(json.dumps({
        "name": cluster.name,
        "namespace": cluster.namespace,
        "world_size": cluster.world_size(),
        "master_address": master_address,
        "master_port": master_port,
        "ranks": [dict(p, rank=rank) for rank, p in enumerate(placements)],
    }), flush=True)
    for w in workers:
        ray.kill(w)


if __name__ == "__main__":
    main()
