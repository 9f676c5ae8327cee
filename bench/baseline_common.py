# What bench's Python baselines (baseline.py, reference_baseline.py) share:
# the timed imports, detached named groups owned until removed, the serving
# driver's line protocol and the one-shot cold process. Written next to the
# script that imports it (Baseline.writeScript).
import json
import sys
import time

T_FIRST = time.time()  # before `import ray`, to time it

import atexit  # noqa: E402

import ray  # noqa: E402
from ray.util.placement_group import placement_group, remove_placement_group  # noqa: E402

T_IMPORTED = time.time()
OWNED = {}  # name -> PlacementGroup created here and not yet removed


def create_groups(groups):
    """Creates detached named groups ({"name", "strategy", "bundles"}); they
    are removed at exit unless forgotten or removed first."""
    pgs = []
    for g in groups:
        pg = placement_group(bundles=g["bundles"], strategy=g.get("strategy") or "PACK", name=g["name"],
                             lifetime="detached")
        OWNED[g["name"]] = pg
        pgs.append(pg)
    return pgs


def forget(names):
    for n in names:
        OWNED.pop(n, None)


def cleanup():
    for name, pg in list(OWNED.items()):
        try:
            remove_placement_group(pg)
        except Exception:  # noqa: BLE001
            pass
        OWNED.pop(name, None)


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def connect(address, namespace):
    t0 = time.time()
    ray.init(address=address, namespace=namespace, log_to_driver=False, logging_level="ERROR")
    return time.time() - t0


def _error(e):
    cleanup()
    return {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}


def serve(address, namespace, handle):
    """A driver connected once: prints {"event": "ready", ...}, then answers
    each JSON command line with handle(command) plus "ok"."""
    init_s = connect(address, namespace)
    reply({"event": "ready", "import_s": T_IMPORTED - T_FIRST, "init_s": init_s, "ray_version": ray.__version__})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = handle(json.loads(line))
            out["ok"] = True
        except Exception as e:  # noqa: BLE001
            out = _error(e)
        reply(out)


def cold(address, namespace, run):
    """One operation in this fresh process: prints one line with run()'s
    answer, the imports, ray.init and the first/last time stamps."""
    out = {"import_s": T_IMPORTED - T_FIRST, "init_s": connect(address, namespace), "t_first": T_FIRST}
    try:
        out.update(run())
        out["ok"] = True
    except Exception as e:  # noqa: BLE001
        out.update(_error(e))
    out["t_last"] = time.time()
    reply(out)


def main(usage, handle, cold_ops):
    """argv: serve <gcs address> <namespace>, or <cold op> <gcs address>
    <namespace> <args...> where cold_ops maps the op to run(*args)."""
    atexit.register(cleanup)
    op = sys.argv[1] if len(sys.argv) > 1 else ""
    if op == "serve":
        serve(sys.argv[2], sys.argv[3], handle)
    elif op in cold_ops:
        cold(sys.argv[2], sys.argv[3], lambda: cold_ops[op](*sys.argv[4:]))
    else:
        raise SystemExit(usage)
