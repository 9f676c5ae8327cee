# Reservations: before it makes any group, a create reserves what its bundles
# ask of each node (Go's contract.Reservation). Under one lock key (written
# only when absent) the driver checks the ask against each node's total,
# minus what Ray's groups hold there and what other reservations hold whose
# groups are not placed yet, and writes the reservation in the same step.
# Clusters share a node whenever it holds them all. A create that does not
# fit gets the holders back (code nodes_claimed) and Go chooses again. A
# cluster Ray places (no select_nodes) waits until no reservation is
# pending, creates its groups under the lock and reserves where Ray put them.

from __future__ import annotations

import os
import random
import time
from typing import Any, Dict, List, Optional, Tuple, cast

from .contract import DriverError, Json, Resources, Spec
from .kv import kv_del, kv_get, kv_put, kv_put_new
from .rayapi import RAY
from .runstate import Run, progress

def reservation(spec: Spec) -> Optional[Json]:
    own = spec["own"]
    return own.get("reservation") if own else None


def run_token(run: Run) -> str:
    run.claim_token = run.claim_token or "%s-%d-%d" % (run.id or "run", os.getpid(), random.getrandbits(48))
    return run.claim_token


def take_stale_key(run: Run, own: Json, key: str, stale: Json) -> None:
    """Deletes a stale key once, whoever else found it stale too: the takeover
    key of its token admits one run, which checks the key is unchanged. A
    takeover key left by a killed run is removed once it is old."""
    gc_key = key + "/takeover/" + str(stale.get("token") or "")
    if not kv_put_new(run, own, gc_key, {"by": run_token(run), "at": time.time()}):
        held = kv_get(run, own, gc_key)
        if held is not None and time.time() - float(held.get("at") or 0) > run.contract.takeover_seconds:
            kv_del(run, own, gc_key)
        return
    try:
        now_held = kv_get(run, own, key)
        if now_held is not None and now_held.get("token") == stale.get("token"):
            kv_del(run, own, key)
    finally:
        kv_del(run, own, gc_key)


def take_lock(run: Run, own: Json, resv: Json) -> None:
    """Takes the reservation lock, taking over one older than
    lock_stale_seconds (its run was killed); reports a conflict naming no
    holder when it stays busy for lock_wait_seconds."""
    key, token = resv["lock_key"], run_token(run)
    deadline = time.time() + run.contract.lock_wait_seconds
    while True:
        if kv_put_new(run, own, key, {"token": token, "at": time.time()}):
            run.lock_key = key
            return
        held = kv_get(run, own, key)
        if held is not None and time.time() - float(held.get("at") or 0) > resv["lock_stale_seconds"]:
            take_stale_key(run, own, key, held)
            continue
        if time.time() > deadline:
            raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=[], claimed=[])
        time.sleep(random.uniform(0.02, 0.08))


def drop_lock(run: Run, own: Json) -> None:
    """Deletes the lock while it still holds this run's token."""
    key, run.lock_key = run.lock_key, ""
    if key:
        held = kv_get(run, own, key)
        if held is not None and held.get("token") == run.claim_token:
            kv_del(run, own, key)


def holder(node_id: str, value: Json, resources: Optional[Resources] = None, pending: bool = False) -> Json:
    """The facts Go names a holder from (contract.NodeHolder)."""
    return {"node_id": node_id, "cluster": str(value.get("cluster") or ""), "owner": str(value.get("owner") or ""),
            "groups": [str(g) for g in value.get("groups") or []], "claimed_at": float(value.get("claimed_at") or 0),
            "resources": dict(resources or {}), "pending": pending}


class Ledger:
    """The reservations and groups as they are while the lock is held."""

    def __init__(self, run: Run, own: Json, resv: Json) -> None:
        self.resv = resv
        tables = (RAY.placement_group_table() or {}).values()
        self.live = {str(t.get("name")): t for t in tables if t.get("state") != run.contract.state_removed}
        self.created = {n for n, t in self.live.items() if t.get("state") == run.contract.state_created}
        self.others: List[Tuple[str, Json]] = []
        for key, value in read_reservations(run, own, resv["prefix"]):
            if key == resv["key"]:
                continue  # this cluster's own (a retry): rewritten below
            if self.stale(value):
                kv_del(run, own, key)  # under the lock: nobody rewrites it meanwhile
                continue
            self.others.append((key, value))

    def stale(self, value: Json) -> bool:
        """Old, and none of its groups lives: its create died, or the cluster
        was removed outside Terraform."""
        if time.time() - float(value.get("claimed_at") or 0) < self.resv["stale_seconds"]:
            return False
        return not any(str(g) in self.live for g in value.get("groups") or [])

    def pending(self, value: Json) -> bool:
        """Its groups are not all placed: Ray does not count its share yet."""
        return bool(value.get("nodes")) and not all(str(g) in self.created for g in value.get("groups") or [])

    def held_by_groups(self) -> Dict[str, Resources]:
        """What placed groups other than this cluster's hold, per node."""
        mine = set(self.resv["groups"])
        out: Dict[str, Resources] = {}
        for name in self.created - mine:
            t = self.live[name]
            to_node = {str(k): str(v) for k, v in (t.get("bundles_to_node_id") or {}).items()}
            for idx, b in (t.get("bundles") or {}).items():
                node = to_node.get(str(idx), "")
                for k, v in (b or {}).items():
                    out.setdefault(node, {})[k] = out.get(node, {}).get(k, 0.0) + float(v)
        return out

    def pending_on(self) -> Dict[str, Resources]:
        out: Dict[str, Resources] = {}
        for _, value in self.others:
            if self.pending(value):
                for node, res in (value.get("nodes") or {}).items():
                    for k, v in res.items():
                        out.setdefault(node, {})[k] = out.get(node, {}).get(k, 0.0) + float(v)
        return out

    def short_nodes(self, run: Run, totals: Dict[str, Resources]) -> List[str]:
        """The nodes that cannot hold this cluster's ask: short of a resource,
        reserved whole by another cluster, or (exclusive_nodes) used by any."""
        placed = self.held_by_groups()
        used = placed if self.resv["count_live"] else {}
        pending = self.pending_on()
        reserved = {node for _, v in self.others for node in (v.get("nodes") or {})}
        whole = {node for _, v in self.others if v.get("exclusive") for node in (v.get("nodes") or {})}
        short = []
        for node, want in sorted((self.resv["nodes"] or {}).items()):
            total = totals.get(node)
            if total is None:
                continue  # not alive: Ray itself refuses the group
            if node in whole or self.resv["exclusive"] and (node in reserved or node in placed):
                short.append(node)
                continue
            for k, v in want.items():
                free = total.get(k, 0.0) - used.get(node, {}).get(k, 0.0) - pending.get(node, {}).get(k, 0.0)
                if float(v) > free + run.contract.amount_unit / 2:  # sums of floats
                    short.append(node)
                    break
        return short

    def holders_on(self, nodes: List[str]) -> List[Json]:
        """Every other reservation on the nodes, and the placed groups there
        that none names (older or imported clusters, or ones made outside
        Terraform)."""
        named = {str(g) for _, v in self.others for g in v.get("groups") or []} | set(self.resv["groups"])
        out = []
        for node in nodes:
            for _, value in self.others:
                if node in (value.get("nodes") or {}):
                    out.append(holder(node, value, value["nodes"][node], self.pending(value)))
            for name in sorted(self.created - named):
                t = self.live[name]
                if node in {str(v) for v in (t.get("bundles_to_node_id") or {}).values()}:
                    out.append(holder(node, {"groups": [name]}))
        return out

    def pending_holders(self) -> List[Json]:
        """Every node share of a pending reservation, for Go to count."""
        return [holder(node, value, res, True) for _, value in self.others if self.pending(value)
                for node, res in sorted((value.get("nodes") or {}).items())]


def read_reservations(run: Run, own: Json, prefix: str) -> List[Tuple[str, Json]]:
    out = []
    for raw in RAY.internal_kv._internal_kv_list(prefix, namespace=own["kv_namespace"]) or []:
        key = raw.decode() if isinstance(raw, bytes) else str(raw)
        if "/takeover/" in key:
            continue
        value = kv_get(run, own, key)
        if value is not None:
            out.append((key, value))
    return out


def node_totals() -> Dict[str, Resources]:
    return {str(n["NodeID"]): {k: float(v) for k, v in (n.get("Resources") or {}).items()}
            for n in RAY.ray.nodes() if n.get("Alive")}


def write_reservation(run: Run, own: Json, resv: Json, nodes: Dict[str, Resources]) -> None:
    run.reserved.append(resv["key"])  # first: a stopped run's cleanup deletes what it may have written
    kv_put(run, own, resv["key"], {"cluster": resv["cluster"], "owner": own["owner"], "groups": resv["groups"],
                                   "nodes": nodes, "exclusive": resv["exclusive"], "token": run_token(run),
                                   "claimed_at": time.time()})


def reserve(run: Run, spec: Spec) -> bool:
    """Reserves the cluster's ask on its chosen nodes, or reports the holders
    of the nodes that cannot hold it. For a cluster Ray places, waits until
    no reservation younger than stale_seconds is pending (older pending ones
    queue in Ray) and returns True holding the lock: its create then calls
    reserve_placed."""
    resv = reservation(spec)
    own = spec["own"]
    if resv is None or own is None:
        return False
    deadline = time.time() + run.contract.pending_wait_seconds
    while True:
        take_lock(run, own, resv)
        keep = False
        try:
            ledger = Ledger(run, own, resv)
            if resv["nodes"] is not None:
                short = ledger.short_nodes(run, node_totals())
                if short:
                    raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"],
                                      holders=ledger.holders_on(short), claimed=ledger.pending_holders())
                write_reservation(run, own, resv, resv["nodes"])
                progress(run, "reserved", nodes=len(resv["nodes"]))
                return False
            waiting = [h for h in ledger.pending_holders() if time.time() - h["claimed_at"] < resv["stale_seconds"]]
            if not waiting:
                keep = True
                progress(run, "reserved", nodes=0)
                return True
            if time.time() > deadline:
                raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=waiting, claimed=waiting)
        finally:
            if not keep:
                drop_lock(run, own)
        time.sleep(0.5)


def reserve_placed(run: Run, spec: Spec, groups: List[Any]) -> None:
    """For a cluster Ray places, holding the lock: waits up to
    place_wait_seconds for Ray to place its groups, reserves where Ray put
    them and drops the lock."""
    resv, own = cast(Json, reservation(spec)), cast(Json, spec["own"])  # reserve returned True: both are set
    try:
        deadline = time.time() + run.contract.place_wait_seconds
        nodes: Dict[str, Resources] = {}
        while True:
            tables = [RAY.placement_group_table(pg) for pg in groups]
            if all(t.get("state") == run.contract.state_created for t in tables) or time.time() > deadline:
                break
            time.sleep(0.1)
        for t in tables:
            to_node = {str(k): str(v) for k, v in (t.get("bundles_to_node_id") or {}).items()}
            for idx, b in (t.get("bundles") or {}).items():
                node = to_node.get(str(idx))
                if node:
                    for k, v in (b or {}).items():
                        nodes.setdefault(node, {})[k] = nodes.get(node, {}).get(k, 0.0) + float(v)
        write_reservation(run, own, resv, nodes)
    finally:
        drop_lock(run, own)


def release_run_reservation(run: Run, own: Json) -> None:
    """After a failed create: drops the lock if held, and deletes the
    reservation this run wrote while it still holds this run's token."""
    drop_lock(run, own)
    for key in run.reserved:
        held = kv_get(run, own, key)
        if held is not None and held.get("token") == run.claim_token:
            kv_del(run, own, key)
    run.reserved = []


def release_cluster_reservation(run: Run, own: Json) -> None:
    """After a delete: deletes the cluster's reservation while it is still
    that cluster's. Only this cluster writes its key, so no lock is needed."""
    resv = own.get("reservation")
    if not resv:
        return
    held = kv_get(run, own, resv["key"])
    if held is not None and held.get("cluster") == resv["cluster"]:
        kv_del(run, own, resv["key"])
