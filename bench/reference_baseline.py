# The reference's own work for a virtual cluster, as a baseline for bench/:
# what a training script does with the reference API (RayVirtualCluster)
# between "I want these placement groups" and "I have ranks, GPU ids, NVLink
# domains and ports", then its shutdown. Written from the API description in
# /work/shared/reference/virtual_cluster_api.md:
#
#   1. create the placement groups (per-node PACK groups or one unified group)
#      and wait until all are ready (_init_placement_groups);
#   2. one short-lived task per bundle reading its GPU id, NVLink domain and
#      topo_rank (get_reordered_bundle / _get_gpu_id_info: the node's custom
#      resources are looked up from ray.nodes() inside the task), then the
#      topology sort of the bundle indices;
#   3. the master address: one task on the first sorted bundle returning its
#      node IP and a free port (get_master_address_and_port);
#   4. the address/port batch: one task per bundle fired up front, collected
#      with ray.wait in batches of 256 (get_available_addresses_and_ports_batch);
#   5. shutdown: remove every group.
#
#   python reference_baseline.py serve <gcs address> <namespace>
#       A driver connected once: prints {"event": "ready", ...}, then answers
#       one JSON line per command {"op": "cycle", "groups": [...], "use_gpus": bool}
#       with the phase times of steps 1-5 (a warm training driver).
#   python reference_baseline.py cold <gcs address> <namespace> <groups json> <use_gpus>
#       Steps 1-5 in a fresh process, as a script would run them; prints one
#       line with the phase times and time stamps, then exits (ray.shutdown at
#       exit, like any driver).
import baseline_common as common  # first: it times `import ray`

import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402

import ray  # noqa: E402
from ray.util.placement_group import remove_placement_group  # noqa: E402
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402

# The reference's defaults (its 180 s wait, DEFAULT_MASTER_PORT_RANGE_LOW/HIGH),
# passed by bench/baseline.go from the provider's constants (clusterspec).
READY_TIMEOUT = float(os.environ["RAYTF_BENCH_READY_TIMEOUT_S"])
PORT_LOW, PORT_HIGH = (int(p) for p in os.environ["RAYTF_BENCH_PORT_RANGE"].split(","))
BATCH = 256
DOMAIN_PREFIX, TOPO_RANK_KEY = "nvlink_domain_", "topo_rank"


@ray.remote
def gpu_domain_rank():
    ids = ray.get_gpu_ids()
    gpu = int(ids[0]) if ids else -1
    me = ray.get_runtime_context().get_node_id()
    domain, rank = "unknown", -1
    for node in ray.nodes():
        if node.get("NodeID") != me:
            continue
        for key, value in (node.get("Resources") or {}).items():
            if key.startswith(DOMAIN_PREFIX):
                domain = key
            elif key == TOPO_RANK_KEY:
                rank = int(value)
    return gpu, domain, rank, me


@ray.remote
def ip_and_free_port(low, high):
    ip = ray.util.get_node_ip_address()
    for _ in range(50):
        port = random.randrange(low, high)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("", port))
            return ip, port
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError("no free port in [%d, %d)" % (low, high))


def sort_by_topology(infos):
    # (domain's lowest topo_rank, topo_rank, gpu id) with topology; else (node id, gpu id).
    idx = list(range(len(infos)))
    if all(d == "unknown" and r == -1 for _, d, r, _ in infos):
        return sorted(idx, key=lambda i: (infos[i][3], infos[i][0]))
    low = {}
    for _, d, r, _ in infos:
        low[d] = min(r, low.get(d, r))
    return sorted(idx, key=lambda i: (low[infos[i][1]], infos[i][2], infos[i][0]))


def in_bundle(pg, index):
    return PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=index)


def cycle(groups, use_gpus):
    t = {}
    t0 = time.perf_counter()
    pgs = common.create_groups(groups)
    ray.get([pg.ready() for pg in pgs], timeout=READY_TIMEOUT)
    t["create_ready_s"] = time.perf_counter() - t0

    t1 = time.perf_counter()
    pairs = [(pg, i) for pg, g in zip(pgs, groups) for i in range(len(g["bundles"]))]
    info_opts = {"num_cpus": 0.01, "num_gpus": 0.01 if use_gpus else 0}
    infos = ray.get([gpu_domain_rank.options(scheduling_strategy=in_bundle(pg, i), **info_opts).remote()
                     for pg, i in pairs])
    order = sort_by_topology(infos)
    t["gpu_probes_s"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    first_pg, first_index = pairs[order[0]]
    master = ray.get(ip_and_free_port.options(scheduling_strategy=in_bundle(first_pg, first_index), num_cpus=0)
                     .remote(PORT_LOW, PORT_HIGH))
    t["master_s"] = time.perf_counter() - t2

    t3 = time.perf_counter()
    refs = [ip_and_free_port.options(scheduling_strategy=in_bundle(pg, i), num_cpus=0).remote(PORT_LOW, PORT_HIGH)
            for pg, i in pairs]
    pending, got = list(refs), 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=min(BATCH, len(pending)))
        got += len(ray.get(ready))
    t["port_batch_s"] = time.perf_counter() - t3
    t["create_s"] = time.perf_counter() - t0

    t4 = time.perf_counter()
    for pg in pgs:
        remove_placement_group(pg)
    common.forget(g["name"] for g in groups)
    t["remove_s"] = time.perf_counter() - t4
    t["bundles"] = len(pairs)
    t["nodes"] = len({info[3] for info in infos})
    t["master"] = list(master)
    return t


def handle(cmd):
    if cmd.get("op") != "cycle":
        raise ValueError("unknown op %r" % cmd.get("op"))
    return cycle(cmd["groups"], cmd.get("use_gpus", True))


def cold(groups, use_gpus):
    return cycle(json.loads(groups), use_gpus == "true")


if __name__ == "__main__":
    common.main("usage: reference_baseline.py serve|cold ...", handle, {"cold": cold})
