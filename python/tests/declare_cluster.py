"""Plays the provider for the integration tests, with plain ray.util only.

    python declare_cluster.py create <gcs address> <spec json>   -> prints the record JSON
    python declare_cluster.py remove <gcs address> <spec json>   -> removes groups and record
    python declare_cluster.py recreate <gcs address> <spec json> -> replaces one group (same name, new id)

Spec: {"name", "namespace", "groups": [{"name", "bundles": [{...}], "strategy", "node_index"}],
"unified": bool, "rank_order": [global indices] (optional), "port_low", "port_high"}.
Runs as its own driver in spec["namespace"], the way the provider's job does,
so the test driver (another namespace) attaches across namespaces.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys

import ray
from ray.experimental import internal_kv
from ray.util.placement_group import placement_group, placement_group_table, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

KV_NAMESPACE = "terraform-provider-ray"


@ray.remote(max_retries=0)
def where_am_i(low, high, excluded):
    ids = ray.get_gpu_ids()
    for _ in range(200):
        port = random.randrange(low, high)
        if port in excluded:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("", port))
                break
            except OSError:
                continue
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),
        "gpu_id": int(ids[0]) if ids else None,
        "port": port,
    }


def node_topology():
    out = {}
    for n in ray.nodes():
        if not n.get("Alive"):
            continue
        res = n.get("Resources", {})
        domains = [k for k in res if k.startswith("nvlink_domain_")]
        out[n["NodeID"]] = (domains[0] if domains else "unknown", int(res.get("topo_rank", -1)))
    return out


def create(spec):
    pgs = []
    for g in spec["groups"]:
        pg = placement_group(g["bundles"], strategy=g["strategy"], name=g["name"], lifetime="detached")
        pgs.append(pg)
    ray.get([pg.ready() for pg in pgs], timeout=60)
    topo = node_topology()
    flat = []
    taken = set()  # every test node shares this host, so keep ports unique host-wide
    for g, pg in zip(spec["groups"], pgs):
        for i, b in enumerate(g["bundles"]):
            info = ray.get(where_am_i.options(
                num_cpus=0, num_gpus=0.01 if b.get("GPU") else 0,
                scheduling_strategy=PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=i),
            ).remote(spec["port_low"], spec["port_high"], sorted(taken)), timeout=60)
            taken.add(info["port"])
            domain, rank = topo.get(info["node_id"], ("unknown", -1))
            flat.append(dict(info, placement_group=g["name"], bundle_index=i, global_index=len(flat),
                             nvlink_domain=domain, topo_rank=rank))
    order = spec.get("rank_order") or list(range(len(flat)))
    bundles = [dict(flat[gi], rank=rank) for rank, gi in enumerate(order)]
    record = {
        "schema_version": 1, "name": spec["name"], "namespace": spec["namespace"], "owner": "attach-test",
        "created_at": "2026-12-02T18:00:00Z", "updated_at": "2026-12-02T18:00:00Z", "provider_version": "test",
        "use_gpus": spec.get("use_gpus", True), "num_gpus_per_node": spec.get("num_gpus_per_node", 4),
        "max_colocated_worker_groups": 1, "use_unified_pg": spec["unified"],
        "placement_group_strategy": spec["groups"][0]["strategy"],
        "bundle_ct_per_node_list": spec["bundle_ct_per_node_list"],
        "groups": [
            {"name": g["name"], "id": pg.id.hex(), "node_index": g["node_index"],
             "bundle_count": len(g["bundles"]), "strategy": g["strategy"]}
            for g, pg in zip(spec["groups"], pgs)
        ],
        "bundles": bundles, "sorted_bundle_indices": order,
        "master_address": bundles[0]["node_ip"], "master_port": bundles[0]["port"],
        "port_range_low": spec["port_low"], "port_range_high": spec["port_high"],
    }
    key = f"vc/{spec['namespace']}/{spec['name']}".encode()
    internal_kv._internal_kv_put(key, json.dumps(record).encode(), overwrite=True, namespace=KV_NAMESPACE)
    return record


def remove(spec):
    for g in spec["groups"]:
        try:
            pg = ray.util.get_placement_group(g["name"])
        except ValueError:
            continue
        if placement_group_table(pg).get("state") != "REMOVED":
            remove_placement_group(pg)
    internal_kv._internal_kv_del(f"vc/{spec['namespace']}/{spec['name']}".encode(), namespace=KV_NAMESPACE)
    return {"removed": [g["name"] for g in spec["groups"]]}


def recreate(spec):
    g = spec["groups"][0]
    remove_placement_group(ray.util.get_placement_group(g["name"]))
    pg = placement_group(g["bundles"], strategy=g["strategy"], name=g["name"], lifetime="detached")
    ray.get(pg.ready(), timeout=60)
    return {"id": pg.id.hex()}


def main():
    action, address, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    os.environ.pop("RAY_ADDRESS", None)
    ray.init(address=address, namespace=spec["namespace"], log_to_driver=False)
    try:
        out = {"create": create, "remove": remove, "recreate": recreate}[action](spec)
    finally:
        ray.shutdown()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
