# Baseline for bench/: the same placement groups the provider makes, made
# directly with ray.util.placement_group from a driver connected with
# ray.init(address=...).
#
#   python baseline.py serve <gcs address> <namespace>
#       Connects once, prints one JSON line {"event": "ready", ...}, then reads
#       JSON commands from stdin, one per line, answering each with one line:
#         {"op": "cycle",  "groups": [...]}  create, wait ready, remove, wait removed
#         {"op": "create", "groups": [...]}  create and wait ready (keeps them)
#         {"op": "remove", "names": [...]}   remove named groups, wait removed
#       where a group is {"name", "strategy", "bundles"}.
#   python baseline.py cold-remove <gcs address> <namespace> <json names>
#       The removal in a fresh process (like a hand-written script), with
#       the time of the interpreter's imports and ray.init reported.
#   python baseline.py cold-create <gcs address> <namespace> <json groups>
#       The placement in a fresh process: create, wait ready, then remove;
#       with the same times (the apply's floor: one python process placing
#       the groups with plain ray.util.placement_group). Between ready and
#       remove it also times the plain probe (probe_s, not part of that
#       floor): each bundle's GPU id and a free port on its node, one task
#       per bundle, a node's tasks in sequence so that each node starts one
#       worker, the nodes in parallel: what reporting GPU ids and ports
#       costs on top of placing when it is done after the groups are ready.
#
# Groups are detached, like the provider's. Whatever this process created
# is removed again if it fails or is interrupted (atexit).
import baseline_common as common  # first: it times `import ray`

import json  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import ray  # noqa: E402
from ray.util.placement_group import (  # noqa: E402
    get_placement_group,
    placement_group_table,
    remove_placement_group,
)
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402

READY_TIMEOUT = 120.0
PROBE_GPU_FRACTION = float(os.environ["RAYTF_BENCH_PROBE_GPU_FRACTION"])  # the driver's, from bench (Baseline.env)


def wait_removed(pgs, timeout=60.0):
    deadline = time.monotonic() + timeout
    left = list(pgs)
    while left:
        left = [pg for pg in left if (placement_group_table(pg) or {}).get("state", "REMOVED") != "REMOVED"]
        if not left:
            return
        if time.monotonic() > deadline:
            raise RuntimeError("%d group(s) not REMOVED after %gs" % (len(left), timeout))
        time.sleep(0.01)


def create(groups):
    t0 = time.perf_counter()
    pgs = common.create_groups(groups)
    t1 = time.perf_counter()
    ready, pending = ray.wait([pg.ready() for pg in pgs], num_returns=len(pgs), timeout=READY_TIMEOUT)
    if pending:
        raise RuntimeError("%d of %d group(s) not ready after %gs (resources busy?)" % (
            len(pending), len(pgs), READY_TIMEOUT))
    ray.get(ready)
    t2 = time.perf_counter()
    ids = {g["name"]: pg.id.hex() for g, pg in zip(groups, pgs)}
    return pgs, {"create_calls_s": t1 - t0, "ready_s": t2 - t0, "ids": ids}


def remove(pgs, names):
    t0 = time.perf_counter()
    for pg in pgs:
        remove_placement_group(pg)
    wait_removed(pgs)
    common.forget(names)
    return {"remove_s": time.perf_counter() - t0}


def lookup_all(names):
    pgs = []
    for n in names:
        try:
            pgs.append(get_placement_group(n))
        except ValueError:
            pass
    return pgs


def handle(cmd):
    if cmd["op"] == "cycle":
        pgs, out = create(cmd["groups"])
        out.update(remove(pgs, [g["name"] for g in cmd["groups"]]))
        return out
    if cmd["op"] == "create":
        return create(cmd["groups"])[1]
    if cmd["op"] == "remove":
        pgs = [common.OWNED[n] for n in cmd["names"] if n in common.OWNED] or lookup_all(cmd["names"])
        return remove(pgs, cmd["names"])
    raise ValueError("unknown op %r" % cmd.get("op"))


def cold_remove(arg):
    names = json.loads(arg)
    return remove(lookup_all(names), names)


def _gpu_and_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("", 0))
        port = s.getsockname()[1]
    finally:
        s.close()
    ids = ray.get_gpu_ids()
    return (int(ids[0]) if ids else None), port


def plain_probe(pgs, groups):
    """Seconds to learn every bundle's GPU id and a free port on its node."""
    t0 = time.perf_counter()
    task = ray.remote(max_retries=0)(_gpu_and_port)
    by_node = {}
    for pg, g in zip(pgs, groups):
        to_node = placement_group_table(pg).get("bundles_to_node_id") or {}
        for i, bundle in enumerate(g["bundles"]):
            node = to_node.get(i) or to_node.get(str(i))
            by_node.setdefault(node, []).append((pg, i, bundle.get("GPU", 0) > 0))
    failed = []

    def node_probe(bundles):
        try:
            for pg, i, gpu in bundles:
                ray.get(task.options(num_cpus=0, num_gpus=PROBE_GPU_FRACTION if gpu else 0, scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=pg, placement_group_bundle_index=i)).remote(), timeout=READY_TIMEOUT)
        except Exception as e:  # noqa: BLE001
            failed.append(e)

    threads = [threading.Thread(target=node_probe, args=(b,)) for b in by_node.values()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    return time.perf_counter() - t0


def cold_create(arg):
    groups = json.loads(arg)
    pgs, out = create(groups)
    out["probe_s"] = plain_probe(pgs, groups)
    out.update(remove(pgs, [g["name"] for g in groups]))
    return out


if __name__ == "__main__":
    common.main("usage: baseline.py serve|cold-remove|cold-create ...", handle,
                {"cold-remove": cold_remove, "cold-create": cold_create})
