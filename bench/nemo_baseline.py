# NeMo-RL's own RayVirtualCluster as a bench baseline: runs the module
# nemo_rl.distributed.virtual_cluster from the checkout named by $NEMO_RL_SRC
# (nothing of NeMo-RL is part of this repository). Its cold path, in this
# fresh process: import the module, build the cluster, create its placement
# groups (_init_placement_groups, which for a unified GPU group also runs the
# per-bundle GPU/topology tasks and the sort), the master address and port,
# the address/port batch of every bundle, then shutdown().
#
#   python nemo_baseline.py check <gcs address> <namespace>
#       Imports the module only; prints {"ok": true, "module": <file>} or why not.
#   python nemo_baseline.py cold <gcs address> <namespace> <name> <bundle_ct_per_node json>
#                                <num_gpus_per_node> <unified true|false> [<segment_size>]
#       The cold path above; prints one line with the phase times and time stamps.
#       With a segment_size, first what NeMo-RL's algorithm set-up does for it
#       (prepare_segment_topology: the nodes of complete NVLink segments, pinned
#       through node_resource_constraints), then RayVirtualCluster(segment_size=...).
#
# The module needs only Ray and the standard library, so it is imported as is
# (no stubs). Ray is joined with NeMo-RL's own init_ray (address "auto" =
# $RAY_ADDRESS, set here to the GCS address; a runtime_env carrying the whole
# environment, so the tasks run in workers of that environment). The checkout
# goes on PYTHONPATH as well, which init_ray passes on: the workers unpickle
# NeMo-RL's remote functions by module, as they would where nemo_rl is installed.
import baseline_common as common  # first: it times `import ray`

import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

# NeMo-RL's package logs its topology sort per rank at INFO; keep the bench's
# stderr readable unless the caller chose a level.
os.environ.setdefault("NRL_LOG_LEVEL", "WARNING")
MODULE = "nemo_rl.distributed.virtual_cluster"
T0 = time.time()
vc, IMPORT_ERROR = None, None
src = os.environ.get("NEMO_RL_SRC", "")
if not src:
    IMPORT_ERROR = "NEMO_RL_SRC is not set (point it at a NeMo-RL checkout)"
else:
    src = os.path.abspath(src)
    sys.path.insert(0, src)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    try:
        import importlib

        vc = importlib.import_module(MODULE)
    except Exception as e:  # noqa: BLE001
        IMPORT_ERROR = "cannot import %s from %s: %s: %s" % (MODULE, src, type(e).__name__, e)
NEMO_IMPORT_S = time.time() - T0


def check():
    if vc is None:
        return {"ok": False, "error": IMPORT_ERROR}
    return {"ok": True, "module": vc.__file__}


def cold(name, counts, gpus_per_node, unified, segment_size=""):
    if vc is None:
        raise RuntimeError(IMPORT_ERROR)
    import json

    t = {"nemo_import_s": NEMO_IMPORT_S}
    unified = unified == "true"
    counts = json.loads(counts)
    segment = int(segment_size) if segment_size else None
    t0 = time.perf_counter()
    constraints = None
    if segment is not None:
        # as nemo_rl.algorithms.dpo/grpo set up their cluster for a segment_size
        constraints, _, _ = vc.prepare_segment_topology(segment, len(counts))
    t["segment_topology_s"] = time.perf_counter() - t0
    cluster = vc.RayVirtualCluster(bundle_ct_per_node_list=counts, use_gpus=True,
                                   max_colocated_worker_groups=1, num_gpus_per_node=int(gpus_per_node),
                                   name=name, placement_group_strategy="PACK",
                                   segment_size=segment, node_resource_constraints=constraints)
    pgs = cluster._init_placement_groups(strategy="PACK", use_unified_pg=unified)
    t["init_groups_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    master = cluster.get_master_address_and_port()
    t["master_s"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    order = cluster._sorted_bundle_indices
    if unified:
        pairs = [(0, i) for i in (order if order is not None else range(cluster.world_size()))]
    else:
        pairs = [(g, i) for g, pg in enumerate(pgs) for i in range(len(pg.bundle_specs))]
    ports = cluster.get_available_addresses_and_ports_batch(pairs)
    t["port_batch_s"] = time.perf_counter() - t2
    t["create_s"] = time.perf_counter() - t0
    t3 = time.perf_counter()
    cluster.shutdown()
    t["remove_s"] = time.perf_counter() - t3
    t["bundles"] = len(ports)
    t["nodes"] = len({ip for ip, _ in ports})
    t["master"] = list(master)
    return t


def main():
    op = sys.argv[1] if len(sys.argv) > 1 else ""
    if op == "check":
        common.reply(check())
        return
    if op != "cold" or len(sys.argv) not in (8, 9):
        raise SystemExit("usage: nemo_baseline.py check|cold <gcs address> <namespace> <name> <counts> <gpus per node> <unified>"
                         " [<segment size>]")
    out = {"import_s": common.T_IMPORTED - common.T_FIRST, "t_first": common.T_FIRST}
    try:
        if vc is None:
            raise RuntimeError(IMPORT_ERROR)
        t = time.time()
        os.environ["RAY_ADDRESS"] = sys.argv[2]
        vc.init_ray()
        out["init_s"] = time.time() - t
        out.update(cold(*sys.argv[4:]))
        out["ok"] = True
    except Exception as e:  # noqa: BLE001
        out.update({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})
    out["t_last"] = time.time()
    common.reply(out)


if __name__ == "__main__":
    main()
