# Namespace quotas: a cap on what the placement groups of one Ray namespace
# hold (GPUs, CPUs, custom resources), in all and on the nodes that carry
# given labels, kept in the provider's KV beside the reservations (Go's
# contract.QuotaRequest). A create checks it under the reservation lock, in
# the step that writes its reservation, so two states racing past a quota's
# last GPUs cannot both land. A cluster Ray places learns its nodes only once
# its groups are placed: its label limits are checked then, still under the
# lock, and a create over them fails and removes what it made.

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Set, Tuple, cast

from .contract import DriverError, Json, Resources, Spec
from .gcs_direct import group_of
from .kv import kv_del, kv_get, kv_put, kv_put_new, owner_prefix
from .rayapi import RAY
from .runstate import Run


def add_res(total: Resources, res: Dict[str, Any]) -> None:
    for k, v in (res or {}).items():
        total[k] = total.get(k, 0.0) + float(v)


def ask_of(spec: Spec) -> Resources:
    """What the cluster's bundles ask in all."""
    total: Resources = {}
    for g in spec["groups"]:
        for b in g["bundles"] or []:
            add_res(total, b)
    return total


def namespace_groups(run: Run) -> List[Json]:
    """Every group Ray has not removed, with its namespace."""
    if run.gcs:
        groups = run.gcs.all_groups()
    else:
        from ray._private.state import state
        from ray.core.generated import gcs_pb2

        table = gcs_pb2.PlacementGroupTableData
        groups = [group_of(d, table.PlacementGroupState.Name(d.state))
                  for d in (table.FromString(raw) for raw in state._connect_and_get_accessor().get_placement_group_table())]
    return [g for g in groups if g["state"] != run.contract.state_removed]


def usage(run: Run, quota: Json, reservations: List[Tuple[str, Json]], groups: List[Json], exclude: str,
          own_groups: Optional[List[str]] = None) -> List[Json]:
    """What each holder in the quota's namespace holds: the clusters by their
    reservations (per resource the more of what they reserved and what their
    groups hold, all bundles placed or not, so a create still making its
    groups counts whole) and every other group of the namespace (not a
    virtual cluster, or one older than reservations). Per node, a cluster
    whose groups are all placed holds where they are (after a node's loss its
    reservation may still name the dead node), else on each node the more of
    its reservation there and its placed bundles. exclude is the cluster
    being created ("<namespace>/<name>"), own_groups the names of its groups."""
    ns = quota["namespace"]
    named: Set[str] = set()
    holders: List[Json] = []
    for _, v in reservations:
        cluster = str(v.get("cluster") or "")
        mine = reservation_groups(v, groups)
        named.update(g["id"] for g in mine)
        if not cluster.startswith(ns + "/") or cluster == exclude:
            continue
        placed, placed_on = held_by(mine)
        shares = v.get("nodes") or {}
        reserved: Resources = {}
        for res in list(shares.values()) + list(v.get("unplaced") or []):  # unplaced: a cluster Ray is placing
            add_res(reserved, res)
        on_nodes = placed_on
        if len(mine) < len(v.get("groups") or []) or any(g["state"] != run.contract.state_created for g in mine):
            on_nodes = {n: larger(placed_on.get(n, {}), shares.get(n) or {}) for n in set(placed_on) | set(shares)}
        holders.append({"cluster": cluster, "owner": owner_prefix(v.get("owner"), quota["owner_prefix_length"]),
                        "resources": larger(placed, reserved), "nodes": on_nodes, "outside": False})
    skip = set(own_groups or [])
    for g in groups:
        if g["namespace"] != ns or g["id"] in named or g["name"] in skip:
            continue
        held, held_on = held_by([g])
        holders.append({"cluster": ns + "/" + g["name"], "owner": "", "resources": held, "nodes": held_on, "outside": True})
    return sorted(holders, key=lambda h: h["cluster"])


def reservation_groups(v: Json, groups: List[Json]) -> List[Json]:
    """The groups of reservation v: by id once its create recorded them,
    else by name in its cluster's namespace."""
    ids = set(v.get("group_ids") or [])
    if ids:
        return [g for g in groups if g["id"] in ids]
    names = {str(n) for n in v.get("groups") or []}
    own_ns = str(v.get("cluster") or "").split("/", 1)[0]
    return [g for g in groups if g["name"] in names and g["namespace"] == own_ns]


def held_by(groups: List[Json]) -> Tuple[Resources, Dict[str, Resources]]:
    """What the groups' bundles hold in all (placed or not) and on each node."""
    total: Resources = {}
    on_nodes: Dict[str, Resources] = {}
    for g in groups:
        nodes = g.get("nodes") or []
        for i, b in enumerate(g["bundles"]):
            add_res(total, b)
            if i < len(nodes) and nodes[i]:
                add_res(on_nodes.setdefault(nodes[i], {}), b)
    return total, on_nodes


def larger(a: Dict[str, Any], b: Dict[str, Any]) -> Resources:
    """Per resource, the more of a and b."""
    return {k: max(float(a.get(k, 0.0)), float(b.get(k, 0.0))) for k in set(a) | set(b)}


def alive_nodes() -> Dict[str, Json]:
    """Each alive node's labels and total resources (Go's plan reads the
    alive nodes too: a dead node's share counts on no label limit)."""
    return {str(n["NodeID"]): {"labels": dict(n.get("Labels") or {}),
                               "total": {k: float(v) for k, v in (n.get("Resources") or {}).items()}}
            for n in RAY.ray.nodes() if n.get("Alive")}


def fits(total: Resources, bundle: Dict[str, Any]) -> bool:
    return all(total.get(k, 0.0) >= float(v) for k, v in bundle.items())


def label_use(held: Json, holders: List[Json], nodes: Dict[str, Json], ask_nodes: Optional[Dict[str, Resources]],
              unplaced: Optional[List[Resources]] = None) -> List[Json]:
    """For each of the quota's label limits, what the holders hold on the
    alive nodes that carry all its labels, and what the create asks there
    (Go's contract.LabelUse): on its nodes, and each bundle Ray has not
    placed yet that one of those nodes could hold (it may land there once
    the lock is dropped)."""
    out = []
    for lim in held.get("label_limits") or []:
        want = {str(k): str(v) for k, v in (lim.get("labels") or {}).items()}
        match = {n for n, info in nodes.items() if all(info["labels"].get(k) == v for k, v in want.items())}
        used: Resources = {}
        ask: Resources = {}
        for h in holders:
            for node, res in h["nodes"].items():
                if node in match:
                    add_res(used, res)
        for node, res in (ask_nodes or {}).items():
            if node in match:
                add_res(ask, res)
        for b in unplaced or []:
            if any(fits(nodes[n]["total"], b) for n in match):
                add_res(ask, b)
        out.append({"labels": want, "limits": {k: float(v) for k, v in (lim.get("limits") or {}).items()},
                    "used": used, "ask": ask})
    return out


def fresh(quota: Json, reservations: List[Tuple[str, Json]], groups: List[Json]) -> List[Tuple[str, Json]]:
    """The reservations a create's Ledger would keep: not older than
    stale_seconds with none of their groups alive (a killed create's)."""
    return [(k, v) for k, v in reservations
            if time.time() - float(v.get("claimed_at") or 0) < quota["stale_seconds"] or reservation_groups(v, groups)]


def over_of(run: Run, limits: Dict[str, Any], used: Resources, ask: Resources) -> List[str]:
    """The resources whose use and ask together exceed limits."""
    return sorted(k for k, limit in limits.items()
                  if used.get(k, 0.0) + ask.get(k, 0.0) > float(limit) + run.contract.amount_unit / 2)  # sums of floats


def check_quota(run: Run, spec: Spec, reservations: List[Tuple[str, Json]], groups: List[Json], cluster: str,
                ask_nodes: Optional[Dict[str, Resources]], unplaced: Optional[List[Resources]] = None) -> Optional[Json]:
    """Refuses a create that would take its namespace over its quota, naming
    the quota, what each holder holds and what the create asks. ask_nodes is
    what it asks of each node: its label limits wait until it is known
    (None: a cluster Ray places, checked again once placed, with the bundles
    Ray has not placed yet, unplaced); groups: namespace_groups. Returns
    the quota (None: the namespace has none)."""
    quota = spec.get("quota")
    held = kv_get(run, quota, quota["key"]) if quota else None
    if held is not None:
        check_held(run, spec, held, reservations, groups, cluster, ask_nodes, unplaced)
    return held


def check_held(run: Run, spec: Spec, held: Json, reservations: List[Tuple[str, Json]], groups: List[Json], cluster: str,
               ask_nodes: Optional[Dict[str, Resources]], unplaced: Optional[List[Resources]] = None) -> None:
    """check_quota against the quota held (as the KV holds it)."""
    quota = cast(Json, spec["quota"])  # held was read through it
    limits = {k: float(v) for k, v in (held.get("limits") or {}).items()}
    # A resize's groups to remove are its own too, not outside groups.
    mine = [g["name"] for g in spec["groups"]] + list(spec.get("remove") or [])
    holders = usage(run, quota, reservations, groups, cluster, mine)
    ask = ask_of(spec)
    used: Resources = {}
    for h in holders:
        add_res(used, h["resources"])
    over = over_of(run, limits, used, ask)
    labels_over = []
    if ask_nodes is not None and held.get("label_limits"):
        # Only what the create asks on a limit's nodes: one Ray places elsewhere is not over.
        labels_over = [u for u in label_use(held, holders, alive_nodes(), ask_nodes, unplaced)
                       if over_of(run, {k: v for k, v in u["limits"].items() if u["ask"].get(k, 0.0) > run.contract.amount_unit / 2},
                                  u["used"], u["ask"])]
    if over or labels_over:
        raise DriverError("conflict", "quota_exceeded", namespace=quota["namespace"], cluster=cluster, limits=limits, ask=ask,
                          quota_holders=holders, over=over, label_use=labels_over)


def do_quota(run: Run, spec: Spec) -> Json:
    """Writes the namespace's quota (limits), or deletes it (no limits); a
    quota another state declared is refused, never overwritten, unless this
    state imported it (claim)."""
    quota = cast(Json, spec["quota"])  # Go sends the quota action with its quota
    key, owner = quota["key"], quota["owner"]
    held = kv_get(run, quota, key)
    if quota.get("limits") is None:
        if held is not None and held.get("owner") in ("", owner):
            kv_del(run, quota, key)
        return {"quota": None}
    value = {"namespace": quota["namespace"], "owner": owner, "limits": quota["limits"],
             "label_limits": quota.get("label_limits") or [], "updated_at": time.time()}
    if held is None and kv_put_new(run, quota, key, value):
        return {"quota": value}
    held = kv_get(run, quota, key)
    if held is not None and held.get("owner") not in ("", owner) and not quota["claim"]:
        raise DriverError("conflict", "quota_taken", namespace=quota["namespace"],
                          owner=owner_prefix(held.get("owner"), quota["owner_prefix_length"]))
    kv_put(run, quota, key, value)
    return {"quota": value}


def read_quota(run: Run, spec: Spec, reservations: List[Tuple[str, Json]]) -> Json:
    """The quota and what each holder holds in its namespace, in all and on
    each node (Go counts the label limits from it); reads only, and leaves out
    the stale reservations the next create deletes."""
    quota = cast(Json, spec["quota"])  # a read with usage
    groups = namespace_groups(run)
    return {"quota": kv_get(run, quota, quota["key"]), "quota_usage": usage(run, quota, fresh(quota, reservations, groups), groups, "")}
