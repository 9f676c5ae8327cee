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
#       the groups with plain ray.util.placement_group).
#
# Groups are detached, like the provider's. Whatever this process created
# is removed again if it fails or is interrupted (atexit).
import baseline_common as common  # first: it times `import ray`

import json  # noqa: E402
import time  # noqa: E402

import ray  # noqa: E402
from ray.util.placement_group import (  # noqa: E402
    get_placement_group,
    placement_group_table,
    remove_placement_group,
)

READY_TIMEOUT = 120.0


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


def cold_create(arg):
    groups = json.loads(arg)
    pgs, out = create(groups)
    out.update(remove(pgs, [g["name"] for g in groups]))
    return out


if __name__ == "__main__":
    common.main("usage: baseline.py serve|cold-remove|cold-create ...", handle,
                {"cold-remove": cold_remove, "cold-create": cold_create})
