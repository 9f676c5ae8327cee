# Probing: one task per bundle learns its node, GPU id and free ports; ports
# are unique per IP (a collision is probed again), each node's tasks run in sequence.

from __future__ import annotations

import random
import socket
import threading
import time
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple, cast

from .contract import Bundle, DriverError, Entry, Json, NodeView, Spec
from .rayapi import RAY
from .runstate import Run, progress
from .nodes import cluster_view, node_topology
from .groups import table_bundles


def _bind_free_ports(low: int, high: int, excluded: Iterable[int], tries: int, count: int) -> Optional[List[int]]:
    # count distinct ports in [low, high) that could be bound just now, none
    # excluded; None when tries random attempts found no port for one of them.
    taken = set(excluded)
    ports = []
    for _ in range(count):
        for _ in range(tries):
            port = random.randrange(low, high)
            if port in taken:
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("", port))
                s.listen(1)
                break
            except OSError:
                continue
            finally:
                s.close()
        else:
            return None
        taken.add(port)
        ports.append(port)
    return ports


def _probe_in_bundle(low: int, high: int, excluded: List[int], tries: int, count: int) -> Json:
    """Runs in one bundle: its GPU id (if it holds one), node and count free ports."""
    # Imported here: Ray ships this function to the bundle's worker, where the
    # driver's RAY is not bound.
    import ray

    ids = ray.get_gpu_ids()
    gpu = None
    if ids:
        try:
            gpu = int(ids[0])
        except (TypeError, ValueError):
            gpu = None
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),
        "gpu_id": gpu,
        "ports": _bind_free_ports(low, high, excluded, tries, count),
    }


def _fire(run: Run, t: Bundle, ports: int, spec: Spec, excluded: Iterable[int]) -> Any:
    if run.probe_task is None:
        run.probe_task = RAY.ray.remote(max_retries=0)(_probe_in_bundle)
    wants_gpu = spec["use_gpus"] and t["resources"].get("GPU", 0.0) > 0
    return run.probe_task.options(
        num_cpus=0,
        num_gpus=run.contract.probe_gpu_fraction if wants_gpu else 0,
        scheduling_strategy=RAY.PlacementGroupSchedulingStrategy(placement_group=t["pg"], placement_group_bundle_index=t["index"]),
    ).remote(spec["port_low"], spec["port_high"], sorted(excluded), run.contract.port_tries, ports)


class NodeProbes:
    """The probe tasks of one node, run one at a time so that the node starts
    one worker and the later tasks reuse it (a worker start costs about a
    second, a task on a warm worker milliseconds). The first task also
    returns free ports for all the node's bundles; the others are needed only
    for GPU ids, or to replace a port that collided on a shared IP."""

    def __init__(self, bundles: List[Bundle], spec: Spec) -> None:
        self.queue: List[Tuple[Bundle, List[Bundle]]] = []  # (target, targets whose ports it returns)
        needs_gpu = [t for t in bundles if spec["use_gpus"] and t["resources"].get("GPU", 0.0) > 0]
        first = needs_gpu[0] if needs_gpu else bundles[0]
        self.queue.append((first, list(bundles)))
        self.queue.extend((t, []) for t in needs_gpu if t is not first)

    def next(self) -> Optional[Tuple[Bundle, List[Bundle]]]:
        return self.queue.pop(0) if self.queue else None


def _wait_one(inflight: Dict[Any, Any], deadline: float) -> List[Tuple[Any, Json]]:
    left = deadline - time.monotonic()
    if left <= 0:
        for r in inflight:
            try:
                RAY.ray.cancel(r, force=True)
            except Exception:  # noqa: BLE001
                pass
        raise DriverError("timeout", "probe_timeout", tasks=len(inflight))
    ready, _ = RAY.ray.wait(list(inflight), num_returns=1, timeout=min(1.0, left))
    out = []
    for r in ready:
        try:
            out.append((r, RAY.ray.get(r)))
        except RAY.ray.exceptions.RayError as e:
            lines = [l for l in str(e).splitlines() if l.strip()]
            raise DriverError("internal", "probe_failed", detail=lines[-1].strip() if lines else type(e).__name__)
    return out


# The requests of a batch probe a node one after another: their tasks then
# reuse the node's warm worker instead of starting one per request at once
# (50 one-bundle clusters on 3 nodes: 3 worker starts, not 50). Requests on
# other nodes probe in parallel.
NODE_LOCKS: Dict[str, threading.Lock] = {}
NODE_LOCKS_GUARD = threading.Lock()


def node_locks(targets: List[Bundle]) -> List[threading.Lock]:
    """The probe locks of the targets' nodes, in one order (no deadlock)."""
    with NODE_LOCKS_GUARD:
        return [NODE_LOCKS.setdefault(n, threading.Lock()) for n in sorted(set(t.get("node_id") or "" for t in targets))]


def probe(run: Run, targets: List[Bundle], spec: Spec, nodes: NodeView, kept_ports: Optional[Dict[str, Set[int]]] = None) -> None:
    """Fills node/gpu/port/topology into each target bundle; ports unique per
    IP, the kept bundles' ports (by IP) included.

    Nodes are probed in parallel (at most probe_batch at once), each node's
    tasks in sequence (NodeProbes)."""
    if not targets:
        return
    locks = node_locks(targets)
    for lock in locks:
        lock.acquire()
    try:
        probe_nodes(run, targets, spec, nodes, kept_ports or {})
    finally:
        for lock in locks:
            lock.release()
    for t in targets:
        t.pop("tries", None)
        domain, rank = node_topology(run, nodes.get(t["node_id"], {}))
        t["nvlink_domain"], t["topo_rank"] = domain, rank


def probe_nodes(run: Run, targets: List[Bundle], spec: Spec, nodes: NodeView, kept_ports: Dict[str, Set[int]]) -> None:
    c = run.contract
    deadline = time.monotonic() + max(c.min_probe_seconds, spec["timeout"])
    by_node: Dict[Any, List[Bundle]] = {}
    for t in targets:
        t["node_ip"] = nodes.get(cast(str, t.get("node_id")), {}).get("ip")
        t["port"], t["tries"] = 0, 0
        by_node.setdefault(t.get("node_id") or id(t), []).append(t)
    waiting = [NodeProbes(b, spec) for b in by_node.values()]
    # node ip (None: unknown) -> ports assigned so far
    taken: Dict[Optional[str], Set[int]] = {ip: set(ports) for ip, ports in kept_ports.items()}
    inflight: Dict[Any, Tuple[NodeProbes, Bundle, List[Bundle]]] = {}  # ref -> (NodeProbes, target, targets whose ports it returns)
    reported = time.monotonic()
    no_port = DriverError("internal", "no_free_port", low=spec["port_low"], high=spec["port_high"], tries=c.port_tries,
                          rounds=c.port_rounds)

    def fire(node: NodeProbes) -> None:
        item = node.next()
        if item is None:
            return
        t, port_for = item
        inflight[_fire(run, t, len(port_for), spec, taken.get(t.get("node_ip"), ()))] = (node, t, port_for)

    while waiting or inflight:
        while waiting and len(inflight) < c.probe_batch:
            fire(waiting.pop(0))
        for ref, r in _wait_one(inflight, deadline):
            node, t, port_for = inflight.pop(ref)
            if r["ports"] is None:
                raise no_port
            t.update(node_id=r["node_id"], node_ip=r["node_ip"], gpu_id=r["gpu_id"])
            ports = taken.setdefault(r["node_ip"], set())
            for pt, port in zip(port_for, r["ports"]):
                pt["node_ip"] = r["node_ip"]
                if port in ports:  # another node on this IP took it meanwhile
                    pt["tries"] += 1
                    if pt["tries"] >= c.port_rounds:
                        raise no_port
                    node.queue.append((pt, [pt]))
                    continue
                ports.add(port)
                pt["port"] = port
            fire(node)
        if time.monotonic() - reported >= 0.5 or not (waiting or inflight):
            reported = time.monotonic()
            progress(run, "probing", ready=sum(1 for x in targets if x["port"]), total=len(targets))


def group_result(run: Run, name: str, pg: Any, table: Json, created: bool, nodes: NodeView) -> Json:
    bundles: List[Bundle] = []
    to_node = table.get("bundles_to_node_id") or {}
    for i, res in enumerate(table_bundles(table)):
        nid = to_node.get(i) or to_node.get(str(i)) or ""
        domain, rank = node_topology(run, nodes.get(nid, {}))
        bundles.append({
            "index": i, "resources": res, "node_id": nid,
            "node_ip": nodes.get(nid, {}).get("ip", ""), "gpu_id": None,
            "nvlink_domain": domain if nid else run.contract.domain_unknown,
            "topo_rank": rank if nid else run.contract.topo_rank_unknown,
            "port": 0, "pg": pg,
        })
    return {
        "name": name, "id": table.get("placement_group_id", pg.id.hex()),
        "state": table.get("state", ""), "strategy": table.get("strategy", ""),
        "created": created, "missing": False, "bundles": bundles,
    }


def kept_bundles(record: Optional[Json]) -> Dict[Tuple[str, int], Json]:
    """The record's bundles by (group, index), each with its group's recorded id, for probe_groups to keep."""
    ids = {str(g.get("name")): str(g.get("id") or "") for g in (record or {}).get("groups") or []}
    return {(str(b.get("placement_group")), int(b.get("bundle_index") or 0)): dict(b, group_id=ids.get(str(b.get("placement_group")), ""))
            for b in (record or {}).get("bundles") or [] if b.get("node_id")}


def probe_groups(run: Run, entries: List[Entry], spec: Spec, kept: Optional[Dict[Tuple[str, int], Json]] = None) -> List[Json]:
    """Probes the bundles of the created groups, but keeps the recorded GPU
    id and port of each kept bundle Ray still has in the recorded group on its recorded node
    (running workers may hold the GPU a probe needs), and every kept bundle
    of a group Ray is placing again (the plan's recovery judges it)."""
    nodes = cluster_view(run)
    kept = kept or {}
    kept_ports: Dict[str, Set[int]] = {}
    targets: List[Bundle] = []
    out: List[Json] = []
    for name, pg, created in entries:
        g = group_result(run, name, pg, RAY.placement_group_table(pg), created, nodes)
        out.append(g)
        placed = g["state"] == run.contract.state_created
        for b in g["bundles"]:
            k = kept.get((name, b["index"]))
            # Only the group the record names (a group made again under the name is probed anew).
            if k is not None and k["group_id"] == g["id"] and spec["port_low"] <= int(k.get("port") or 0) < spec["port_high"] and \
                    (not placed or b["node_id"] == k["node_id"]):
                b.update({f: k[f] for f in b.keys() & k.keys()})  # node, address, GPU id, port, domain and rank
                kept_ports.setdefault(k["node_ip"], set()).add(k["port"])
            elif placed:
                targets.append(b)
    progress(run, "probing", ready=0, total=len(targets))
    probe(run, targets, spec, nodes, kept_ports)
    for g in out:
        for b in g["bundles"]:
            b.pop("pg", None)
    return out
