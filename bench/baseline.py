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
#   python baseline.py cold-create|cold-remove <gcs address> <namespace> <json>
#       One operation in a fresh process (like a hand-written script), with
#       the time of the interpreter's imports and ray.init reported.
#
# Groups are detached, like the provider's. Whatever this process created
# is removed again if it fails or is interrupted (atexit), except groups
# that cold-create is meant to leave for cold-remove.
import json
import sys
import time

T_FIRST = time.time()  # before the imports, to time them

import atexit  # noqa: E402

import ray  # noqa: E402
from ray.util.placement_group import (  # noqa: E402
    get_placement_group,
    placement_group,
    placement_group_table,
    remove_placement_group,
)
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402,F401  (the driver imports it too)

T_IMPORTED = time.time()
READY_TIMEOUT = 120.0
OWNED = {}  # name -> PlacementGroup created here and not yet removed


def cleanup():
    for name, pg in list(OWNED.items()):
        try:
            remove_placement_group(pg)
        except Exception:  # noqa: BLE001
            pass
        OWNED.pop(name, None)


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
    pgs = []
    for g in groups:
        pg = placement_group(bundles=g["bundles"], strategy=g.get("strategy") or "PACK", name=g["name"],
                             lifetime="detached")
        OWNED[g["name"]] = pg
        pgs.append(pg)
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
    for n in names:
        OWNED.pop(n, None)
    return {"remove_s": time.perf_counter() - t0}


def lookup_all(names):
    pgs = []
    for n in names:
        try:
            pgs.append(get_placement_group(n))
        except ValueError:
            pass
    return pgs


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def connect(address, namespace):
    t0 = time.time()
    ray.init(address=address, namespace=namespace, log_to_driver=False, logging_level="ERROR")
    return time.time() - t0


def serve(address, namespace):
    init_s = connect(address, namespace)
    reply({"event": "ready", "import_s": T_IMPORTED - T_FIRST, "init_s": init_s,
           "ray_version": ray.__version__})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
            if cmd["op"] == "cycle":
                pgs, out = create(cmd["groups"])
                out.update(remove(pgs, [g["name"] for g in cmd["groups"]]))
            elif cmd["op"] == "create":
                _, out = create(cmd["groups"])
            elif cmd["op"] == "remove":
                pgs = [OWNED[n] for n in cmd["names"] if n in OWNED] or lookup_all(cmd["names"])
                out = remove(pgs, cmd["names"])
            else:
                raise ValueError("unknown op %r" % cmd.get("op"))
            out["ok"] = True
        except Exception as e:  # noqa: BLE001
            cleanup()
            out = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        reply(out)


def cold(op, address, namespace, arg):
    init_s = connect(address, namespace)
    out = {"import_s": T_IMPORTED - T_FIRST, "init_s": init_s, "t_first": T_FIRST}
    try:
        if op == "cold-create":
            groups = json.loads(arg)
            _, res = create(groups)
            OWNED.clear()  # created to outlive this process, like the provider's
        else:
            names = json.loads(arg)
            res = remove(lookup_all(names), names)
        out.update(res)
        out["ok"] = True
    except Exception as e:  # noqa: BLE001
        cleanup()
        out.update(ok=False, error="%s: %s" % (type(e).__name__, e))
    out["t_last"] = time.time()
    reply(out)


def main():
    atexit.register(cleanup)
    op = sys.argv[1]
    if op == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif op in ("cold-create", "cold-remove"):
        cold(op, sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        raise SystemExit("usage: baseline.py serve|cold-create|cold-remove ...")


if __name__ == "__main__":
    main()
