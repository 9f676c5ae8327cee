# Reservations: before it makes any group, a create reserves what its bundles
# ask of each node (Go's contract.Reservation). Under one lock key (written
# only when absent) the driver checks the ask against each node's total,
# minus every other reservation's share there and the placed groups no
# reservation names, and writes the reservation in the same step. Clusters
# share a node whenever it holds them all. A create that does not fit gets
# the holders back (code nodes_claimed) and Go chooses again. A cluster Ray
# places (no select_nodes) waits until no reservation is pending, reserves
# its ask on no node yet (placing), creates its groups and waits for Ray
# without the lock, then settles the reservation where Ray put them under
# the lock again. The lock is held for KV work only.

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
import traceback
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple, cast

from .contract import DriverError, GroupSpec, Json, Resources, Spec
from .kv import kv_del, kv_get, kv_keys, kv_put, kv_put_new, owner_prefix
from .quotas import add_res, alive_nodes, check_quota, fits, namespace_groups
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


def take_lock(run: Run, own: Json, resv: Json, wait_seconds: float) -> None:
    """Takes the reservation lock, taking over one older than
    lock_stale_seconds (its run was killed); reports a conflict naming no
    holder when it stays busy for wait_seconds."""
    key, token = resv["lock_key"], run_token(run)
    deadline = time.time() + wait_seconds
    asked = time.monotonic()
    while True:
        run.lock_key = key  # first: a run stopped mid-put still drops a lock it may hold (by token)
        if kv_put_new(run, own, key, {"token": token, "at": time.time()}):
            run.lock_since = time.monotonic()
            run.lock_waited = run.lock_since - asked
            return
        run.lock_key = ""
        held = kv_get(run, own, key)
        if held is not None and time.time() - float(held.get("at") or 0) > resv["lock_stale_seconds"]:
            take_stale_key(run, own, key, held)
            continue
        if time.time() > deadline:
            raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=[], claimed=[])
        time.sleep(random.uniform(0.02, 0.08))


def renew_key(run: Run, own: Json, key: str, field: str, gated: bool = True) -> None:
    """Sets key's time field to now while the key holds this run's token."""
    held = kv_get(run, own, key)
    if held is not None and held.get("token") == run.claim_token:
        held[field] = time.time()
        kv_put(run, own, key, held, gated=gated)


def refresh_lock(run: Run, own: Json, gated: bool = True) -> None:
    """Renews the lock's time while this run holds it (a long hold is not stale)."""
    key = run.lock_key
    if key:
        renew_key(run, own, key, "at", gated)


def drop_lock(run: Run, own: Json, wave: int = 1) -> None:
    """Deletes the lock while it still holds this run's token; never raises
    (it runs on the way out of errors it must not hide). wave: how many
    creates the hold served."""
    key = run.lock_key
    if not key:
        return
    try:
        held = kv_get(run, own, key)
        if held is not None and held.get("token") == run.claim_token:
            kv_del(run, own, key)
        run.lock_key = ""
        # The bench reports the longest hold and the longest wait for the lock.
        progress(run, "unlocked", lock_held_seconds=round(time.monotonic() - run.lock_since, 3),
                 lock_wait_seconds=round(run.lock_waited, 3), wave=wave)
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def holder(node_id: str, value: Json, resv: Json, resources: Optional[Resources] = None, pending: bool = False) -> Json:
    """The facts Go names a holder from (contract.NodeHolder); only a prefix
    of another state's owner digest."""
    return {"node_id": node_id, "cluster": str(value.get("cluster") or ""),
            "owner": owner_prefix(value.get("owner"), resv["owner_prefix_length"]),
            "groups": [str(g) for g in value.get("groups") or []], "claimed_at": float(value.get("claimed_at") or 0),
            "resources": dict(resources or {}), "pending": pending}


def add_to(out: Dict[str, Resources], node: str, res: Dict[str, Any]) -> None:
    """Adds res to out's share of node (no entry for an empty res)."""
    if res:
        add_res(out.setdefault(node, {}), res)


def share_on(value: Json, strays: Dict[str, Resources], node: str) -> Resources:
    """What a reservation holds on node: its named share and its strays there."""
    out: Dict[str, Resources] = {}
    add_to(out, node, (value.get("nodes") or {}).get(node) or {})
    add_to(out, node, strays.get(node) or {})
    return out.get(node, {})


def group_shares(tables: List[Json]) -> Dict[str, Resources]:
    """What the groups' placed bundles hold, per node."""
    out: Dict[str, Resources] = {}
    for t in tables:
        to_node = {str(k): str(v) for k, v in (t.get("bundles_to_node_id") or {}).items()}
        for idx, b in (t.get("bundles") or {}).items():
            if to_node.get(str(idx)):
                add_to(out, to_node[str(idx)], b)
    return out


class Seen:
    """What one hold of the lock reads once, however many creates it serves:
    Ray's live groups and their namespaces, the reservations (kept current
    with what the hold writes and deletes), the nodes' totals."""

    def __init__(self, run: Run, own: Json, prefix: str) -> None:
        tables = (RAY.placement_group_table() or {}).values()
        self.live = [t for t in tables if t.get("state") != run.contract.state_removed]
        # The table leaves out each group's Ray namespace, and names repeat across namespaces. Read once
        # per hold: a wave's quota checks use it too, so no hold lists them per member.
        self.groups = namespace_groups(run)
        self.ns_of = {str(g["id"]): str(g["namespace"]) for g in self.groups}
        self.reservations = read_reservations(run, own, prefix)
        self._totals: Optional[Dict[str, Resources]] = None

    def totals(self) -> Dict[str, Resources]:
        if self._totals is None:
            self._totals = node_totals()
        return self._totals

    def put(self, key: str, value: Optional[Json]) -> None:
        """Notes what the hold wrote at key (None: deleted)."""
        self.reservations = [(k, v) for k, v in self.reservations if k != key]
        if value is not None:
            self.reservations.append((key, value))


class Ledger:
    """The reservations and groups as they are while the lock is held. Each
    other reservation counts its share of every node it names, placed or
    not; placed groups that no reservation names (clusters from before
    reservations, imported, or made outside Terraform) count by their
    bundles. Nothing is counted twice. seen: what the hold read already;
    siblings: the clusters of this create's wave, never waited for (they
    reserve in the same hold, and are placed after it)."""

    def __init__(self, run: Run, own: Json, resv: Json, seen: Optional[Seen] = None,
                 siblings: Optional[Set[str]] = None) -> None:
        self.run, self.resv = run, resv
        self.seen = seen = seen or Seen(run, own, resv["prefix"])
        self.live, self.ns_of = seen.live, seen.ns_of
        self.siblings = siblings or set()
        self.others: List[Tuple[str, Json]] = []
        self.previous: Optional[Json] = None  # this cluster's own reservation (a retry), restored if this run fails
        self.taken: Optional[Json] = None  # another state's reservation of this same cluster name
        for key, value in list(seen.reservations):
            if self.stale(value) or (key == resv["key"] and self.removed(value)):
                kv_del(run, own, key)  # under the lock: nobody rewrites it meanwhile
                seen.put(key, None)
            elif key == resv["key"] and (value.get("owner") in ("", own["owner"]) or own.get("claim")):  # "": from before owners
                self.previous = value
            elif key == resv["key"]:
                self.taken = value
            else:
                self.others.append((key, value))
        named = {id(t) for _, v in self.others for t in self.groups_of(v)}
        self.strays = [self.strays_of(v) for _, v in self.others]  # by position in others
        mine = set(resv["groups"])
        # Placed groups no reservation names, this cluster's own (in its namespace) aside.
        self.unnamed = [t for t in self.live if t.get("state") == run.contract.state_created and id(t) not in named
                        and not (str(t.get("name")) in mine and self.in_namespace(t, resv["cluster"]))]

    def in_namespace(self, table: Json, cluster: str) -> bool:
        """Whether the group lives in the Ray namespace of cluster ("<namespace>/<name>")."""
        return self.ns_of.get(str(table.get("placement_group_id"))) == cluster.split("/", 1)[0]

    def groups_of(self, value: Json) -> List[Json]:
        """value's live groups: by id once its create recorded them, else by name."""
        ids = set(value.get("group_ids") or [])
        if ids:
            return [t for t in self.live if t.get("placement_group_id") in ids]
        names = {str(g) for g in value.get("groups") or []}
        cluster = str(value.get("cluster") or "")
        return [t for t in self.live if str(t.get("name")) in names and self.in_namespace(t, cluster)]

    def strays_of(self, value: Json) -> Dict[str, Resources]:
        """What value's placed bundles hold on each node beyond the share it
        names there: Ray placed them again after a node's loss, before their
        owner's next apply had the reservation follow (follow_moved_groups)."""
        named = value.get("nodes") or {}
        out: Dict[str, Resources] = {}
        for node, res in group_shares(self.groups_of(value)).items():
            for k, v in res.items():
                extra = float(v) - float((named.get(node) or {}).get(k, 0.0))
                if extra > self.run.contract.amount_unit / 2:
                    out.setdefault(node, {})[k] = extra
        return out

    def stale(self, value: Json) -> bool:
        """Old, and none of its groups lives: its create died, or the cluster
        was removed outside Terraform."""
        if time.time() - float(value.get("claimed_at") or 0) < self.resv["stale_seconds"]:
            return False
        return not self.groups_of(value)

    def removed(self, value: Json) -> bool:
        """Its groups were placed (their ids recorded) and none lives: the
        cluster was removed outside Terraform, so its name is free now. A
        create still making its groups has no ids yet."""
        return bool(value.get("group_ids")) and not self.groups_of(value)

    def pending(self, value: Json) -> bool:
        """Its groups are not all placed: Ray's free resources lack its share."""
        if value.get("placing"):
            return True
        created = [t for t in self.groups_of(value) if t.get("state") == self.run.contract.state_created]
        return bool(value.get("nodes")) and len(created) < len(value.get("groups") or [])

    def placing(self, value: Json) -> bool:
        """A cluster Ray places, between its reservation and settling where
        Ray put it, renewed within stale_seconds (a killed run's is not)."""
        return bool(value.get("placing")) and time.time() - float(value.get("claimed_at") or 0) < self.resv["stale_seconds"]

    def could_land(self, value: Json, totals: Dict[str, Resources]) -> Dict[str, Resources]:
        """The nodes where a bundle Ray has not placed yet of value could
        land (by the node's total), each with all such bundles' ask."""
        out: Dict[str, Resources] = {}
        for b in value.get("unplaced") or []:
            for node, total in totals.items():
                if fits(total, b):
                    add_to(out, node, b)
        return out

    def landing(self, totals: Dict[str, Resources], nodes: List[str], placing_only: bool) -> List[Json]:
        """Holders of the other reservations whose unplaced bundles could land
        on one of nodes (placing_only: only those still being placed)."""
        out = []
        for _, v in self.others:
            if placing_only and not self.placing(v) or not v.get("unplaced") or v.get("cluster") in self.siblings:
                continue
            out += [holder(node, v, self.resv, res, True) for node, res in sorted(self.could_land(v, totals).items()) if node in nodes]
        return out

    def short_nodes(self, totals: Dict[str, Resources]) -> List[str]:
        """The nodes that cannot hold this cluster's ask: short of a resource,
        reserved whole by another cluster, or (exclusive_nodes) used by any.
        Placed groups no reservation names refuse a node unless the cluster
        queues in Ray (capacity_check = "none")."""
        used: Dict[str, Resources] = {}
        for (_, v), strays in zip(self.others, self.strays):
            for node, res in list((v.get("nodes") or {}).items()) + list(strays.items()):
                add_to(used, node, res)
        unnamed = group_shares(self.unnamed)
        if self.resv["count_live"]:
            for node, res in unnamed.items():
                add_to(used, node, res)
        whole = self.whole_nodes()
        # A bundle Ray has not placed yet may land on any node that holds it: no exclusive create takes those.
        landing = {h["node_id"] for h in self.landing(totals, list(totals), False)} if self.resv["exclusive"] else set()
        short = []
        for node, want in sorted((self.resv["nodes"] or {}).items()):
            total = totals.get(node)
            if total is None:
                continue  # not alive: Ray itself refuses the group
            if node in whole or self.resv["exclusive"] and (node in used or node in unnamed or node in landing):
                short.append(node)
                continue
            for k, v in want.items():
                free = total.get(k, 0.0) - used.get(node, {}).get(k, 0.0)
                if float(v) > free + self.run.contract.amount_unit / 2:  # sums of floats
                    short.append(node)
                    break
        return short

    def whole_nodes(self) -> Set[str]:
        """The nodes other clusters reserved whole (exclusive_nodes)."""
        return {node for _, v in self.others if v.get("exclusive") for node in (v.get("nodes") or {})}

    def holders_on(self, nodes: List[str], totals: Optional[Dict[str, Resources]] = None) -> List[Json]:
        """Every other reservation on the nodes (with totals, also those
        whose unplaced bundles could land there) and the placed groups there
        no reservation names; a node with neither is named alone."""
        out = []
        for node in nodes:
            found = [holder(node, v, self.resv, share_on(v, strays, node), self.pending(v))
                     for (_, v), strays in zip(self.others, self.strays) if node in (v.get("nodes") or {}) or node in strays]
            named = {h["cluster"] for h in found}
            found += [h for h in (self.landing(totals, [node], False) if totals else []) if h["cluster"] not in named]
            found += [holder(node, {"groups": [t.get("name")]}, self.resv) for t in self.unnamed
                      if node in {str(n) for n in (t.get("bundles_to_node_id") or {}).values()}]
            out += found or [holder(node, {}, self.resv)]
        return out

    def pending_holders(self, totals: Optional[Dict[str, Resources]] = None) -> List[Json]:
        """Every node share of a pending reservation, for Go to count; a
        cluster Ray is placing counts on every node it could land on."""
        out = []
        for _, value in self.others:
            if not self.pending(value):
                continue
            shares: Dict[str, Resources] = {}
            for node, res in (value.get("nodes") or {}).items():
                add_to(shares, node, res)
            if totals is not None and self.placing(value):
                for node, res in self.could_land(value, totals).items():
                    add_to(shares, node, res)
            out += [holder(node, value, self.resv, res, True) for node, res in sorted(shares.items())]
        return out


def read_reservations(run: Run, own: Json, prefix: str) -> List[Tuple[str, Json]]:
    out = []
    for key in kv_keys(run, own, prefix):
        if "/takeover/" in key:
            continue
        value = kv_get(run, own, key)
        if value is not None:
            out.append((key, value))
    return out


def node_totals() -> Dict[str, Resources]:
    return {nid: info["total"] for nid, info in alive_nodes().items()}


def write_reservation(run: Run, own: Json, resv: Json, nodes: Dict[str, Resources],
                      unplaced: Optional[List[Resources]] = None) -> Json:
    """Writes this cluster's reservation (reserve noted the one it replaces).
    unplaced: a cluster Ray places, its bundles before Ray placed them."""
    if resv["key"] not in run.reserved:
        run.reserved.append(resv["key"])  # first: a stopped run's cleanup deletes what it may have written
    value: Json = {"cluster": resv["cluster"], "owner": own["owner"], "groups": resv["groups"], "nodes": nodes,
                   "exclusive": resv["exclusive"], "token": run_token(run), "claimed_at": time.time()}
    if unplaced is not None:
        value["placing"], value["unplaced"] = True, unplaced
    kv_put(run, own, resv["key"], value)
    return value


@contextlib.contextmanager
def keep_reservation(run: Run, spec: Spec) -> Iterator[None]:
    """While a create makes its groups, renews its reservation's time and
    the lock (each while it holds this run's token), so a create whose group
    call hangs is never taken for a killed one. Stops once the groups exist."""
    resv, own = reservation(spec), spec["own"]
    if resv is None or own is None or (resv["key"] not in run.reserved and not run.lock_key):
        yield
        return
    period = min(float(resv["stale_seconds"]), float(resv["lock_stale_seconds"])) / 3
    done = run.keeping = threading.Event()

    def renew() -> None:
        while not done.wait(period):
            with run.keeping_lock:
                if done.is_set() or run.gate.closed:
                    return
                try:
                    refresh_lock(run, own, gated=False)  # the group call holds the gate
                    if resv["key"] in run.reserved:
                        renew_key(run, own, resv["key"], "claimed_at", gated=False)
                except Exception:  # noqa: BLE001
                    traceback.print_exc()

    keeper = threading.Thread(target=renew, name="raytf-keep-reservation", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop_keeping(run)
        keeper.join(timeout=period)


def stop_keeping(run: Run) -> None:
    """Stops keep_reservation's renewals; none is written after it returns."""
    with run.keeping_lock:
        if run.keeping is not None:
            run.keeping.set()
            run.keeping = None


def reserve(run: Run, spec: Spec) -> None:
    """Reserves the cluster's ask on its chosen nodes, or reports the holders
    of the nodes that cannot hold it. A cluster Ray places waits until no
    reservation younger than stale_seconds is pending (older pending ones
    queue in Ray), then reserves its bundles as unplaced (placing): its
    create calls place_reserved once its groups exist. A chosen node a
    cluster Ray is placing could land on is waited for likewise. Waits are
    bounded by the request's ready_timeout too, and hold no lock."""
    resv = reservation(spec)
    own = spec["own"]
    if resv is None or own is None:
        return
    deadline = time.time() + min(run.contract.pending_wait_seconds, spec["timeout"])
    while True:
        take_lock(run, own, resv, min(run.contract.lock_wait_seconds, spec["timeout"]))
        try:
            if reserve_locked(run, spec, resv, own, time.time() > deadline):
                return
        finally:
            drop_lock(run, own)
        time.sleep(run.contract.retry_seconds)


def reserve_locked(run: Run, spec: Spec, resv: Json, own: Json, last: bool, seen: Optional[Seen] = None,
                   siblings: Optional[Set[str]] = None, avoid: Optional[Set[str]] = None) -> bool:
    """reserve's one step under the lock: True once reserved, False to wait
    (last: report the holders waited for instead). seen, siblings: a wave's
    hold (Ledger); what this writes is noted in seen for the next sibling;
    avoid: the nodes the siblings chose, which no alternative takes."""
    ledger = Ledger(run, own, resv, seen, siblings)
    if ledger.taken is not None:
        # Another state declared this cluster and reserved it first: never overwritten.
        raise DriverError("conflict", "groups_exist", cluster=own["manifest"]["name"], namespace=spec["namespace"],
                          other={"owner": str(ledger.taken.get("owner") or ""), "has_record": True,
                                 "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(ledger.taken.get("claimed_at") or 0)))})
    check_quota(run, spec, ledger.others, ledger.seen.groups, resv["cluster"], resv["nodes"])
    # A failure of this run restores what it replaces: a retry's
    # reservation, whose adopted groups it still stands for.
    run.replaced.setdefault(resv["key"], ledger.previous)
    totals = ledger.seen.totals()
    if resv["nodes"] is not None:
        waiting = ledger.landing(totals, list(resv["nodes"]), True)
        short = ledger.short_nodes(totals)
        if short or waiting:
            taken, tried = take_alternative(run, spec, ledger, totals, avoid or set())
            if taken is None and waiting and not last:
                return False
            if taken is None:
                raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"],
                                  holders=ledger.holders_on(short, totals) + waiting + tried, claimed=ledger.pending_holders(totals))
            resv, own = taken, cast(Json, spec["own"])
        ledger.seen.put(resv["key"], write_reservation(run, own, resv, resv["nodes"]))
        progress(run, "reserved", nodes=len(resv["nodes"]), alternative=run.alternative)
        return True
    waiting = [h for h in ledger.pending_holders()
               if time.time() - h["claimed_at"] < resv["stale_seconds"] and h["cluster"] not in ledger.siblings]
    if waiting and last:
        raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=waiting, claimed=waiting)
    if waiting:
        return False
    unplaced = [{k: float(v) for k, v in b.items()} for g in spec["groups"] for b in g["bundles"] or []]
    ledger.seen.put(resv["key"], write_reservation(run, own, resv, {}, unplaced))
    progress(run, "reserved", nodes=0)
    return True


def take_alternative(run: Run, spec: Spec, ledger: Ledger, totals: Dict[str, Resources],
                     avoid: Set[str]) -> Tuple[Optional[Json], List[Json]]:
    """The first of the create's alternatives (other nodes, chosen by Go's
    rules) that fits where its first choice did not, made the create's own
    (use_alternative). Else None, with the holders of the alternatives'
    nodes (Go chooses again around them). An alternative on a node a
    sibling of the wave chose, or that the namespace's quota refuses, is
    passed over."""
    first = ledger.resv
    tried: List[Json] = []
    for k, alt in enumerate(spec.get("alternatives") or [], 1):
        if avoid & set(alt["nodes"]):
            continue
        ledger.resv = dict(first, nodes=alt["nodes"])
        short = ledger.short_nodes(totals)
        waiting = ledger.landing(totals, list(alt["nodes"]), True)
        if not short and not waiting and within_quota(run, spec, ledger, alt["nodes"]):
            return use_alternative(run, spec, k), tried
        tried += ledger.holders_on(short, totals) + waiting
    ledger.resv = first
    return None, tried


def use_alternative(run: Run, spec: Spec, k: int) -> Json:
    """Makes the create's alternative k (1-based) its choice: its groups,
    record and reservation ask; Go learns it from the result. Returns the
    reservation."""
    alt = (spec.get("alternatives") or [])[k - 1]
    own = cast(Json, spec["own"])
    own["reservation"] = dict(own["reservation"], nodes=alt["nodes"])
    own["manifest"] = alt["manifest"]
    spec["groups"], spec["alternatives"] = alt["groups"], []
    run.alternative = k
    return cast(Json, own["reservation"])


def recorded_choice(run: Run, spec: Spec, record: Optional[Json]) -> None:
    """A create that adopts groups its own earlier run made (a relaunched
    job) keeps the choice that run recorded: the alternative whose nodes the
    record names, else its first choice. It takes no other."""
    ids = (record or {}).get("selected_node_ids")
    for k, alt in enumerate(spec.get("alternatives") or [], 1):
        if ids and alt["manifest"].get("selected_node_ids") == ids:
            use_alternative(run, spec, k)
            break
    spec["alternatives"] = []


def within_quota(run: Run, spec: Spec, ledger: Ledger, nodes: Dict[str, Resources]) -> bool:
    """Whether the namespace's quota (its label limits count by node) lets
    the create ask nodes."""
    try:
        check_quota(run, spec, ledger.others, ledger.seen.groups, ledger.resv["cluster"], nodes)
    except DriverError:
        return False
    return True


def reserve_resize(run: Run, spec: Spec, kept: List[Any], added: List[GroupSpec]) -> None:
    """A resize's reserve: its kept groups are its own. A shrink (nothing
    added) only rewrites its reservation under the lock: no wait, no quota
    or fit check. A grow of chosen nodes reserves as a create; one Ray
    places keeps its kept groups where they are, only the added bundles
    unplaced, checked and waited for as a create's."""
    resv, own = reservation(spec), spec["own"]
    if resv is None or own is None:
        return
    if added and resv["nodes"] is not None:
        reserve(run, spec)
        return
    deadline = time.time() + min(run.contract.pending_wait_seconds, spec["timeout"])
    while True:
        take_lock(run, own, resv, min(run.contract.lock_wait_seconds, spec["timeout"]))
        try:
            ledger = Ledger(run, own, resv)
            if added:
                check_quota(run, spec, ledger.others, ledger.seen.groups, resv["cluster"], resv["nodes"])
                waiting = [h for h in ledger.pending_holders() if time.time() - h["claimed_at"] < resv["stale_seconds"]]
                if waiting and time.time() > deadline:
                    raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=waiting, claimed=waiting)
            if not added or not waiting:
                run.replaced.setdefault(resv["key"], ledger.previous)
                unplaced = [{k: float(v) for k, v in b.items()} for g in added for b in g["bundles"] or []]
                nodes = resv["nodes"] if resv["nodes"] is not None else placed_nodes(run, kept)[0]
                write_reservation(run, own, resv, nodes, unplaced if added else None)
                return
        finally:
            drop_lock(run, own)
        time.sleep(run.contract.retry_seconds)


def placed_nodes(run: Run, groups: List[Any]) -> Tuple[Dict[str, Resources], List[str], bool]:
    """Where Ray put the groups' bundles, their ids, and whether all are placed."""
    tables = [RAY.placement_group_table(pg) for pg in groups]
    placed = all(t.get("state") == run.contract.state_created for t in tables)
    return group_shares(tables), [str(t.get("placement_group_id")) for t in tables], placed


def unplaced_bundles(groups: List[Any]) -> List[Resources]:
    """The groups' bundles Ray has not placed yet."""
    out = []
    for pg in groups:
        t = RAY.placement_group_table(pg)
        to_node = {str(k): str(v) for k, v in (t.get("bundles_to_node_id") or {}).items()}
        out += [{k: float(v) for k, v in b.items()} for idx, b in (t.get("bundles") or {}).items() if not to_node.get(str(idx))]
    return out


def place_reserved(run: Run, spec: Spec, groups: List[Any]) -> None:
    """For a cluster Ray places, once its groups exist: waits up to
    place_wait_seconds for Ray to place them (no lock held; the reservation
    renewed), then under the lock refuses a node another cluster reserved
    whole (a label selector keeping Ray off it would show as the group's
    drift), checks the quota (label limits where Ray put them, each bundle
    still unplaced on every limit with a node that could hold it) and
    settles the reservation there. Refused, the create fails and removes
    its groups."""
    resv, own = reservation(spec), spec["own"]
    if resv is None or own is None or resv["nodes"] is not None:
        return
    where = wait_placed(run, resv, own, groups)
    take_lock(run, own, resv, min(run.contract.lock_wait_seconds, spec["timeout"]))
    try:
        place_locked(run, spec, groups, where)
    finally:
        drop_lock(run, own)


def wait_placed(run: Run, resv: Json, own: Json, groups: List[Any]) -> Tuple[Dict[str, Resources], List[str], bool]:
    """place_reserved's wait, no lock held: up to place_wait_seconds for Ray
    to place the groups, the reservation renewed. Returns placed_nodes."""
    deadline = time.time() + run.contract.place_wait_seconds
    renewed = time.time()
    while True:
        nodes, ids, placed = placed_nodes(run, groups)
        if placed or time.time() > deadline:
            return nodes, ids, placed
        if time.time() - renewed > resv["stale_seconds"] / 3:
            renew_key(run, own, resv["key"], "claimed_at")
            renewed = time.time()
        time.sleep(0.1)


def place_locked(run: Run, spec: Spec, groups: List[Any], where: Tuple[Dict[str, Resources], List[str], bool],
                 seen: Optional[Seen] = None) -> bool:
    """place_reserved's step under the lock, where = wait_placed's answer
    (seen: a wave's hold, noted with what this writes). True: settled."""
    resv, own = cast(Json, reservation(spec)), cast(Json, spec["own"])
    nodes, ids, placed = where
    ledger = Ledger(run, own, resv, seen)
    whole = sorted(ledger.whole_nodes() & set(nodes))
    if whole:
        raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=ledger.holders_on(whole),
                          claimed=ledger.pending_holders())
    unplaced = [] if placed else unplaced_bundles(groups)
    check_quota(run, spec, ledger.others, ledger.seen.groups, resv["cluster"], nodes, unplaced)
    held = kv_get(run, own, resv["key"])
    if held is None or held.get("token") != run.claim_token:
        raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=[], claimed=[])
    held.update(nodes=nodes, group_ids=ids, unplaced=unplaced, placing=False, claimed_at=time.time())
    kv_put(run, own, resv["key"], held)
    ledger.seen.put(resv["key"], held)
    return True


def settle_reservation(run: Run, spec: Spec, groups: List[Any]) -> None:
    """Once the groups are placed: the reservation names where Ray put them
    (with pinning = "domain", or a cluster Ray places, that may differ from
    the ask) and their ids (group names repeat across Ray namespaces). Only
    this cluster writes its key."""
    resv, own = reservation(spec), spec["own"]
    if resv is None or own is None or resv["key"] not in run.reserved:
        return
    held = kv_get(run, own, resv["key"])
    if held is None or held.get("token") != run.claim_token:
        return
    held["nodes"], held["group_ids"], _ = placed_nodes(run, groups)
    if held.get("unplaced") and resv["nodes"] is None:
        # A bundle Ray placed after place_reserved: no exclusive create took a node it could land on
        # meanwhile (they count it there), but one reserved whole before may be where it landed.
        whole = [holder(n, v, resv) for k, v in read_reservations(run, own, resv["prefix"])
                 if k != resv["key"] and v.get("exclusive") for n in sorted(v.get("nodes") or {}) if n in held["nodes"]]
        if whole:
            raise DriverError("conflict", "nodes_claimed", cluster=resv["cluster"], holders=whole, claimed=[])
    held["unplaced"], held["placing"] = [], False
    kv_put(run, own, resv["key"], held)


def release_run_reservation(run: Run, own: Json) -> None:
    """After a failed create: drops the lock if held, and while the
    reservation still holds this run's token, restores the one it replaced
    or deletes it."""
    stop_keeping(run)  # first: no renewal may write back what this deletes
    drop_lock(run, own)
    for key in run.reserved:
        held = kv_get(run, own, key)
        if held is not None and held.get("token") == run.claim_token:
            previous = run.replaced.get(key)
            if previous is not None:
                kv_put(run, own, key, previous)
            else:
                kv_del(run, own, key)
    run.reserved = []


def release_cluster_reservation(run: Run, own: Json) -> None:
    """After a delete: deletes the cluster's reservation while it is still
    this state's. Only this cluster writes its key, so no lock is needed."""
    resv = own.get("reservation")
    if not resv:
        return
    held = kv_get(run, own, resv["key"])
    if held is not None and held.get("cluster") == resv["cluster"] and held.get("owner") in ("", own["owner"]):
        kv_del(run, own, resv["key"])


def adopt_reservation(run: Run, own: Json) -> None:
    """An import that takes a cluster over takes its reservation too, so
    that the new owner's delete releases it (the old owner's no longer
    may). Only this cluster writes its key, so no lock is needed."""
    resv = own.get("reservation")
    if not resv:
        return
    held = kv_get(run, own, resv["key"])
    if held is not None and held.get("cluster") == resv["cluster"] and held.get("owner") != own["owner"]:
        held["owner"] = own["owner"]
        kv_put(run, own, resv["key"], held)


def follow_moved_groups(run: Run, own: Json, groups: List[Any]) -> None:
    """Once Ray placed a cluster's lost bundles again (a node's loss), its
    reservation names the nodes they are on now. Only this cluster writes
    its key, so no lock is needed (the Ledger counts such bundles meanwhile)."""
    resv = own.get("reservation")
    if not resv:
        return
    held = kv_get(run, own, resv["key"])
    if held is None or held.get("cluster") != resv["cluster"] or held.get("owner") not in ("", own["owner"]):
        return
    nodes, ids, placed = placed_nodes(run, groups)
    if placed and not same_shares(run, held.get("nodes") or {}, nodes):
        held["nodes"], held["group_ids"] = nodes, ids
        kv_put(run, own, resv["key"], held)


def same_shares(run: Run, a: Dict[str, Resources], b: Dict[str, Resources]) -> bool:
    unit = run.contract.amount_unit / 2
    return set(a) == set(b) and all(abs(float(a[n].get(k, 0.0)) - float(b[n].get(k, 0.0))) <= unit
                                    for n in a for k in set(a[n]) | set(b[n]))


def listed_reservations(run: Run, own: Json) -> List[Json]:
    """Every reservation as terraform query shows it (contract
    ListedReservation); reads only. Its age is the driver's clock against
    the writer's, both Ray nodes' clocks."""
    out = []
    for key, value in read_reservations(run, own, own["list_reservations"]):
        out.append({"key": key, "cluster": str(value.get("cluster") or ""), "owner": str(value.get("owner") or ""),
                    "groups": [str(g) for g in value.get("groups") or []],
                    "group_ids": [str(g) for g in value.get("group_ids") or []],
                    "nodes": value.get("nodes") or {}, "exclusive": bool(value.get("exclusive")),
                    "age_seconds": max(0.0, time.time() - float(value.get("claimed_at") or 0))})
    return out
