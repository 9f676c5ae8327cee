# The actions: create, inspect, record, read and delete, with the waits
# and the recreate loop of a create.

from __future__ import annotations

import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

from .contract import DriverError, Entry, GroupSpec, Json, Spec
from .rayapi import RAY
from .runstate import Run, progress
from .nodes import cluster_view, node_view
from .groups import Groups, RayGroups, create_group, diff_group, lookup, wait_removed
from .kv import is_ours, kv_del, kv_get, kv_put, now, other_owner, rewrite_plain_owner
from .record import placed_record
from .probe import kept_bundles, probe_groups
from .quotas import do_quota, read_quota
from .reservations import adopt_reservation, follow_moved_groups, keep_reservation, listed_reservations, read_reservations, place_reserved, recorded_choice, release_cluster_reservation, reserve, reserve_resize, settle_reservation


def wait_ready(run: Run, entries: List[Entry], spec: Spec) -> List[Entry]:
    """Waits for every group; returns the entries, with any group that was
    removed meanwhile (e.g. by the cleanup of a killed earlier run whose group
    this run adopted) replaced by a new one, at most max_recreates times per
    group (after that the removal is reported instead of fought)."""
    deadline = time.monotonic() + spec["timeout"]
    wanted = {g["name"]: g for g in spec["groups"]}
    entries = list(entries)
    refs = {pg.ready(): i for i, (_, pg, _) in enumerate(entries)}  # ready ref -> index in entries
    recreated: Dict[str, int] = {}
    pending = list(refs)
    total, last = len(refs), -1
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, pending = RAY.ray.wait(pending, num_returns=len(pending), timeout=min(1.0, left))
        for ref in ready:
            try:
                RAY.ray.get(ref)
            except Exception as e:  # noqa: BLE001
                i = refs[ref]
                name = entries[i][0]
                if type(e).__name__ != "TaskPlacementGroupRemoved" or recreated.get(name, 0) >= run.contract.max_recreates:
                    raise
                recreated[name] = recreated.get(name, 0) + 1
                pg, created = replace_removed(run, wanted[name])
                entries[i] = (name, pg, created)
                new_ref = pg.ready()
                refs[new_ref] = i
                pending.append(new_ref)
        if total - len(pending) != last:
            last = total - len(pending)
            progress(run, "waiting", ready=last, total=total)
    if not pending:
        return entries
    late = [entries[refs[r]][:2] for r in pending]
    infeasible = False
    for _, pg in late:
        try:
            stats = RAY.placement_group_table(pg).get("stats") or {}
            infeasible = infeasible or stats.get("scheduling_state") == "INFEASIBLE"
        except Exception:  # noqa: BLE001
            pass
    run.failure["pending"] = [name for name, _ in late]
    try:
        run.failure["nodes"] = node_view(cluster_view(run))
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        run.failure["nodes"] = []
    raise DriverError("infeasible" if infeasible else "timeout", "not_ready", late=len(late), total=total,
                      seconds=spec["timeout"], infeasible=infeasible)


def replace_removed(run: Run, g: GroupSpec) -> Tuple[Any, bool]:
    """Returns (group, created by this run) for a group removed during the
    wait: the same-shaped group someone made meanwhile, else a new one."""
    name = g["name"]
    hit = lookup(run, name)
    if hit:
        diffs = diff_group(run, g, hit[1], hit[0])
        if diffs:
            raise DriverError("conflict", "replaced_during_wait", group=name, differences=diffs)
        run.created.pop(name, None)  # someone else's: never this run's to clean up
    pg = hit[0] if hit else create_group(run, g)
    progress(run, "recreated", name=name, adopted=bool(hit))
    return pg, not hit


def check_owner_for_create(run: Run, spec: Spec, found: Dict[str, Optional[Tuple[Any, Json]]]) -> Optional[Json]:
    """Checks that existing groups are this state's; returns the record found
    when it is this state's. Writes nothing."""
    own = cast(Json, spec["own"])  # do_create calls it only with ownership
    record = kv_get(run, own, own["key"])
    if any(found.values()) and not is_ours(own, record) and not own["claim"]:
        raise DriverError("conflict", "groups_exist", cluster=own["manifest"]["name"], namespace=spec["namespace"],
                          other=other_owner(record))
    return record if is_ours(own, record) else None


def record_owner_for_create(run: Run, spec: Spec, record: Optional[Json]) -> None:
    """Records the owner before any group is created (record: this state's
    record found by check_owner_for_create, or None). A record another
    state wrote since the lookup is never overwritten, unless its cluster is
    gone (every recorded group removed)."""
    own = cast(Json, spec["own"])
    now_held = kv_get(run, own, own["key"])
    if now_held is not None and not is_ours(own, now_held) and not own["claim"]:
        # A record whose groups were all placed (their ids recorded) and none of which lives is a cluster
        # removed outside Terraform: a new create may write over it. A create still making its groups
        # (ids not recorded yet) is another state's, racing this one.
        ids = {str(g.get("id") or "") for g in now_held.get("groups") or []}
        live = {str(t.get("placement_group_id")) for t in (RAY.placement_group_table() or {}).values()
                if t.get("state") != run.contract.state_removed}
        if not ids or "" in ids or ids & live:
            raise DriverError("conflict", "groups_exist", cluster=own["manifest"]["name"], namespace=spec["namespace"],
                              other=other_owner(now_held))
    if record is None:
        run.new_record = True
    kv_put(run, own, own["key"], placed_record(run, own, [], record))
    kv_del(run, own, own["tombstone_key"])


def do_create(run: Run, spec: Spec) -> Json:
    groups = spec["groups"]
    progress(run, "lookup", total=len(groups))
    found = {g["name"]: lookup(run, g["name"]) for g in groups}
    record = check_owner_for_create(run, spec, found) if spec["own"] else None
    conflicts = []
    for g in groups:
        hit = found[g["name"]]
        if hit:
            d = diff_group(run, g, hit[1], hit[0])
            if d:
                conflicts.append({"group": g["name"], "differences": d})
    if conflicts:
        raise DriverError("conflict", "groups_differ", groups=conflicts)
    if any(found.values()):
        recorded_choice(run, spec, record)
    # Before the record: a run that loses the race writes nothing. A wave's creates reserve together.
    if run.wave:
        run.wave.reserve(run, spec)
    else:
        reserve(run, spec)
    groups = spec["groups"]  # an alternative's, when its first choice was reserved first (take_alternative)
    entries: List[Entry] = []
    with keep_reservation(run, spec):
        if run.wave:
            run.wave.wait_for_pinned(run, spec)
        if spec["own"]:
            record_owner_for_create(run, spec, record)
        for g in groups:
            name = g["name"]
            hit = found[name]
            if hit:
                entries.append((name, hit[0], False))
                continue
            entries.append((name, create_group(run, g), True))
    if run.wave:
        run.wave.place(run, spec, [e[1] for e in entries])
    else:
        place_reserved(run, spec, [e[1] for e in entries])
    progress(run, "created", created=len(run.created), adopted=len(entries) - len(run.created), total=len(entries))
    entries = wait_ready(run, entries, spec)
    settle_reservation(run, spec, [e[1] for e in entries])
    out: Json = {"groups": probe_groups(run, entries, spec)}
    if run.alternative:
        out["alternative"] = run.alternative
    own = spec["own"]
    if own:
        out["record"] = placed_record(run, own, out["groups"], record, spec["rank_order"])
        kv_put(run, own, own["key"], out["record"])
    return out


def do_resize(run: Run, spec: Spec) -> Json:
    """Changes a per-node cluster's nodes in place: adopts the groups that
    live (the kept nodes', which must be this state's and of their shape),
    reserves the new shape, creates the added groups and waits for them, and
    only then removes the groups of the removed nodes, so that the cluster
    never holds less than either shape. A failure before the removals undoes
    only what this run added (main.fail) and restores the reservation. The
    kept bundles keep their recorded GPU ids and ports: their workers may
    hold every GPU a probe would need."""
    own = cast(Json, spec["own"])  # Go sends a resize with its ownership
    record = kv_get(run, own, own["key"])
    if not is_ours(own, record):
        raise DriverError("conflict", "taken_over", cluster=own["manifest"]["name"], namespace=spec["namespace"],
                          other=other_owner(record))
    groups = spec["groups"]
    progress(run, "lookup", total=len(groups))
    found = {g["name"]: lookup(run, g["name"]) for g in groups}
    conflicts = []
    for g in groups:
        hit = found[g["name"]]
        d = diff_group(run, g, hit[1], hit[0]) if hit else []
        if d:
            conflicts.append({"group": g["name"], "differences": d})
    if conflicts:
        raise DriverError("conflict", "groups_differ", groups=conflicts)
    reserve_resize(run, spec, [hit[0] for hit in found.values() if hit], [g for g in groups if not found[g["name"]]])
    entries: List[Entry] = []
    with keep_reservation(run, spec):
        for g in groups:
            hit = found[g["name"]]
            entries.append((g["name"], hit[0], False) if hit else (g["name"], create_group(run, g), True))
    added = [e for e in entries if e[2]]
    progress(run, "created", created=len(added), adopted=len(entries) - len(added), total=len(entries))
    if added:  # a shrink's kept groups are placed, and within what it held
        place_reserved(run, spec, [e[1] for e in entries])
    ready = {e[0]: e for e in wait_ready(run, added, spec)} if added else {}
    entries = [ready.get(e[0], e) for e in entries]
    settle_reservation(run, spec, [e[1] for e in entries])
    out: Json = {"groups": probe_groups(run, entries, spec, kept_bundles(record))}
    out["record"] = placed_record(run, own, out["groups"], record, spec["rank_order"])
    kv_put(run, own, own["key"], out["record"])
    # Committed: the new shape is recorded and reserved. What follows must
    # not undo it, so a removal that fails or is stopped is reported, not
    # raised; a stop after it (a failed result) still says so.
    run.created.clear()
    run.reserved, run.replaced = [], {}
    run.failure = dict(out, committed=True, not_removed=spec["remove"])
    out["removed"], out["not_removed"] = remove_groups(run, spec)
    return out


def remove_groups(run: Run, spec: Spec) -> Tuple[List[str], List[str]]:
    """Removes the groups spec["remove"] names; returns (removed, not
    removed: still there after the wait, or not tried once stopped)."""
    groups: Groups = run.gcs or RayGroups(run)
    removed: List[str] = []
    left: List[str] = []
    c = run.contract
    for i, name in enumerate(spec["remove"]):
        try:
            hit = groups.find(name)
            if hit is None:
                continue
            groups.remove(hit)
            wait_removed(groups, name, hit, min(c.remove_wait_seconds, max(c.min_remove_wait_seconds, spec["timeout"])))
            removed.append(name)
        except BaseException as e:  # noqa: BLE001
            traceback.print_exc()
            if not isinstance(e, Exception):  # stopped: the rest is left, reported at once
                return removed, spec["remove"][i:]
            left.append(name)
        progress(run, "removing", removed=len(removed), total=len(spec["remove"]))
    return removed, left


def do_inspect(run: Run, spec: Spec) -> Json:
    own = spec["own"]
    record = kv_get(run, own, own["key"]) if own else None
    writes = own is not None and own.get("manifest") is not None
    previous = None
    if own is not None and writes and not is_ours(own, record):
        if not own["claim"]:
            raise DriverError("conflict", "taken_over", cluster=own["manifest"]["name"], namespace=spec["namespace"],
                              other=other_owner(record))
        previous = other_owner(record)
    entries: List[Entry] = []
    missing: List[str] = []
    for g in spec["groups"]:
        hit = lookup(run, g["name"])
        if hit:
            entries.append((g["name"], hit[0], False))
        else:
            missing.append(g["name"])
    # The record's own placement, whoever owns it: an import's read (no
    # manifest) or takeover (claim) must not run tasks in the GPUs its
    # workers may hold; a write that is not ours stopped above.
    kept = kept_bundles(record) if spec["keep_recorded"] and own is not None else None
    probed = {g["name"]: g for g in probe_groups(run, entries, spec, kept)} if entries else {}
    out: List[Json] = []
    for g in spec["groups"]:
        if g["name"] in probed:
            out.append(probed[g["name"]])
        else:
            out.append({"name": g["name"], "id": "", "state": run.contract.state_missing, "strategy": "",
                        "created": False, "missing": True, "bundles": []})
    result: Json = {"groups": out, "missing": missing}
    if own:
        result["tombstone"] = kv_get(run, own, own["tombstone_key"])
        if writes and not missing:
            follow_moved_groups(run, own, [pg for _, pg, _ in entries])
            record = placed_record(run, own, out, record if previous is None else None, spec["rank_order"])
            if previous is not None:
                record["created_at"] = previous["created_at"] or record["created_at"]
                result["previous_owner"] = previous
            kv_put(run, own, own["key"], record)
            if own["claim"]:
                adopt_reservation(run, own)
            elif own.get("reservation"):
                rewrite_plain_owner(run, own, own["reservation"]["key"])
        result["record"] = record
    return result


def do_record(run: Run, spec: Spec) -> Json:
    own = cast(Json, spec["own"])  # Go sends a record action with its ownership
    record = kv_get(run, own, own["key"])
    if not is_ours(own, record):
        raise DriverError("conflict", "record_taken", key=own["key"], other=other_owner(record))
    m = dict(own["manifest"])
    m["owner"] = own["owner"]
    m["created_at"] = (record or {}).get("created_at") or now()
    m["updated_at"] = now()
    kv_put(run, own, own["key"], m)
    return {"record": m}


def do_read(run: Run, spec: Spec) -> Json:
    """Returns the record and tombstone as they are, and which of the named
    groups do not live in this namespace; writes nothing."""
    quota = spec["quota"]
    if quota is not None and quota["usage"]:
        return read_quota(run, spec, read_reservations(run, quota, quota["reservation_prefix"]))
    own = cast(Json, spec["own"])  # Go sends a read action with its ownership (a quota read aside)
    if own.get("list_reservations"):
        return {"reservations": listed_reservations(run, own)}
    groups: Groups = run.gcs or RayGroups(run)
    return {"record": kv_get(run, own, own["key"]), "tombstone": kv_get(run, own, own["tombstone_key"]),
            "missing": [g["name"] for g in spec["groups"] if groups.find(g["name"]) is None]}


def do_delete(run: Run, spec: Spec) -> Json:
    own = spec["own"]
    groups: Groups = run.gcs or RayGroups(run)
    record = kv_get(run, own, own["key"]) if own else None
    if own and not is_ours(own, record):
        # Not this state's cluster: touch nothing.
        return {"other_owner": other_owner(record),
                "missing": [g["name"] for g in spec["groups"] if groups.find(g["name"]) is None]}
    removed: List[str] = []
    missing: List[str] = []
    for g in spec["groups"]:
        name = g["name"]
        gone = 0
        hit = groups.find(name)
        # A name resolves to one live group at a time; the bound stops a
        # name that keeps coming back.
        c = run.contract
        while hit is not None and gone < c.max_removals_per_name:
            groups.remove(hit)
            gone += 1
            wait_removed(groups, name, hit, min(c.remove_wait_seconds, max(c.min_remove_wait_seconds, spec["timeout"])))
            hit = groups.find(name)
        (removed if gone else missing).append(name)
        progress(run, "removing", removed=len(removed), missing=len(missing), total=len(spec["groups"]))
    if own:
        release_cluster_reservation(run, own)
        kv_del(run, own, own["key"])
        previous = other_owner(record)
        kv_put(run, own, own["tombstone_key"], {"deleted_by": own["owner"], "deleted_at": now(),
                                                 "record_owner": previous["owner"],
                                                 "record_created_at": previous["created_at"]})
    return {"removed": removed, "missing": missing}


ACTION_FUNCS: Dict[str, Callable[[Run, Spec], Json]] = {"create": do_create, "delete": do_delete, "inspect": do_inspect, "record": do_record, "read": do_read,
                                                        "quota": do_quota, "resize": do_resize}
