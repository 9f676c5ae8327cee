# Node claims: a cluster that selects its own nodes claims each of them in
# Ray's KV before it creates a group: one key per node, written only when
# absent, so two states applying at once can never both take a node. The
# loser gets the holders back (code nodes_claimed) and Go chooses again.

from __future__ import annotations

import os
import random
import time
import traceback
from typing import Callable, List

from .contract import DriverError, Json, Spec
from .rayapi import RAY
from .runstate import Run, progress
from .kv import kv_del, kv_get, kv_put_new


def claim_is_stale(run: Run, claim: Json, stale_seconds: float) -> bool:
    """A claim whose groups are all gone for longer than stale_seconds was left
    by a run that died between claiming and creating, or by a cluster removed
    outside Terraform: it holds nothing any more."""
    if time.time() - float(claim.get("claimed_at") or 0) < stale_seconds:
        return False
    names = set(claim.get("groups") or [])
    live = RAY.placement_group_table() or {}
    return not any(t.get("name") in names and t.get("state") != run.contract.state_removed for t in live.values())


def take_stale_claim(run: Run, own: Json, key: str, stale: Json) -> None:
    """Deletes a stale claim once, whoever else found it stale too: the takeover
    key of its token admits one run, which checks the claim is unchanged. A
    takeover key left by a killed run is removed once it is old."""
    gc_key = key + "/takeover/" + str(stale.get("token") or "")
    if not kv_put_new(run, own, gc_key, {"by": run.claim_token, "at": time.time()}):
        held = kv_get(run, own, gc_key)
        if held is not None and time.time() - float(held.get("at") or 0) > run.contract.takeover_seconds:
            kv_del(run, own, gc_key)
        return
    try:
        now_claim = kv_get(run, own, key)
        if now_claim is not None and now_claim.get("token") == stale.get("token"):
            kv_del(run, own, key)
    finally:
        kv_del(run, own, gc_key)


def claim_holder(node_id: str, claim: Json) -> Json:
    """The facts Go names a holder from (contract.NodeHolder)."""
    return {"node_id": node_id, "cluster": str(claim.get("cluster") or ""), "owner": str(claim.get("owner") or ""),
            "groups": [str(g) for g in claim.get("groups") or []], "claimed_at": float(claim.get("claimed_at") or 0)}


def claim_nodes(run: Run, spec: Spec) -> None:
    """Claims every node of the request, in node id order, or none: on the first
    node another cluster holds, releases what it took and reports the holders."""
    own = spec["own"]
    claims = own.get("node_claims") if own else None
    if not own or not claims:
        return
    run.claim_token = run.claim_token or "%s-%d-%d" % (run.id or "run", os.getpid(), random.getrandbits(48))
    mine = {"cluster": claims["cluster"], "owner": own["owner"], "groups": claims["groups"],
            "token": run.claim_token, "claimed_at": time.time()}
    holders: List[Json] = []
    for node_id in sorted(claims["keys"]):
        key = claims["keys"][node_id]
        for _ in range(2):  # a second try after removing a stale claim
            if kv_put_new(run, own, key, mine, claimed=True):
                break
            held = kv_get(run, own, key)
            if held is None:
                continue  # released meanwhile
            if held.get("cluster") == claims["cluster"]:
                # This cluster's own claim (a retry adopting its groups): kept
                # as it is, and never released by this run, whose failure
                # leaves the adopted groups in place.
                break
            if not claim_is_stale(run, held, claims["stale_seconds"]):
                holders.append(claim_holder(node_id, held))
                break
            take_stale_claim(run, own, key, held)
        else:
            held = kv_get(run, own, key)
            holders.append(claim_holder(node_id, held or {}))
    if holders:
        release_claims(run, own)
        raise DriverError("conflict", "nodes_claimed", cluster=claims["cluster"], holders=holders,
                          claimed=claimed_elsewhere(run, own, claims))
    progress(run, "claimed", nodes=len(run.claimed))


def claimed_elsewhere(run: Run, own: Json, claims: Json) -> List[Json]:
    """Every node other clusters claim now, with its holder, so that Go chooses
    again around all of them at once rather than learning them one lost race
    at a time, and queues until their groups are gone."""
    prefix = claims["prefix"]
    nodes: List[Json] = []
    for raw_key in RAY.internal_kv._internal_kv_list(prefix, namespace=own["kv_namespace"]) or []:
        key = raw_key.decode() if isinstance(raw_key, bytes) else str(raw_key)
        node_id = key[len(prefix):]
        if "/" in node_id:
            continue  # a takeover key
        held = kv_get(run, own, key)
        if held is not None and held.get("cluster") != claims["cluster"]:
            nodes.append(claim_holder(node_id, held))
    return sorted(nodes, key=lambda h: str(h["node_id"]))


def delete_claims_if(run: Run, own: Json, keys: List[str], holds: Callable[[Json], bool]) -> None:
    """Deletes each claim key whose current value holds says is still ours."""
    for key in keys:
        try:
            held = kv_get(run, own, key)
            if held is not None and holds(held):
                kv_del(run, own, key)
        except Exception:  # noqa: BLE001
            traceback.print_exc()


def release_claims(run: Run, own: Json) -> None:
    """Deletes the node claims this run wrote, each only while it still holds
    this run's token."""
    delete_claims_if(run, own, list(run.claimed), lambda held: held.get("token") == run.claim_token)
    run.claimed = []


def release_cluster_claims(run: Run, own: Json) -> None:
    """Deletes the claims of the cluster a delete removed, each only while it
    is still that cluster's."""
    claims = own["node_claims"]
    delete_claims_if(run, own, list(claims["keys"].values()), lambda held: held.get("cluster") == claims["cluster"])
