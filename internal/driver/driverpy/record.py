# The record a create or inspect writes: Go's manifest plus the placement
# the job observed, in rank order (record.NewManifest in Go).

from __future__ import annotations

from typing import Dict, List, Optional

from .contract import Json
from .runstate import Run
from .kv import now


def topology_order(run: Run, bundles: List[Json], rank_order: Json) -> Optional[List[int]]:
    """Rank order of a unified GPU cluster's bundles, sorted as Go's
    topology.SortBundleIndicesByTopology sorts them (a parity test runs both),
    so the record needs no second job. None when incomplete segments would
    drop bundles: Go reports that as an error. Go checks the record's order
    against its own and rewrites a record that differs."""
    keys = [(-1 if b["gpu_id"] is None else b["gpu_id"], b["nvlink_domain"], b["topo_rank"], b["node_id"] or "")
            for b in bundles]
    indices = list(range(len(keys)))
    if all(d == run.contract.domain_unknown and r == run.contract.topo_rank_unknown for _, d, r, _ in keys):
        return sorted(indices, key=lambda i: (keys[i][3], keys[i][0]))
    seg, gpus = rank_order.get("segment_size"), rank_order["gpus_per_node"]
    if seg is not None:
        by_domain: Dict[str, List[int]] = {}
        for i in indices:
            by_domain.setdefault(keys[i][1], []).append(i)
        kept: List[int] = []
        for members in by_domain.values():
            usable = len({keys[i][3] for i in members}) // seg * seg
            members.sort(key=lambda i: (keys[i][2], keys[i][0]))
            kept.extend(members[:usable * gpus])
        if len(kept) != len(indices):
            return None
        indices = kept
    lowest: Dict[str, int] = {}
    for _, d, r, _ in keys:
        lowest[d] = min(r, lowest.get(d, r))
    return sorted(indices, key=lambda i: (lowest[keys[i][1]], keys[i][2], keys[i][0]))


def placed_record(run: Run, own: Json, groups_out: List[Json], record: Optional[Json],
                  rank_order: Optional[Json] = None) -> Json:
    """Go's record (ownership.manifest) with the placement facts this run
    observed: the owner and times, each group's id, the probed bundles (in
    rank order when rank_order asks for the topology sort and it keeps every
    bundle, else in natural order; Go rewrites a record whose order differs),
    and the first-ranked bundle's address and port as the master's."""
    m = dict(own["manifest"])
    m["owner"] = own["owner"]
    stamp = now()
    m["created_at"] = (record or {}).get("created_at") or stamp
    m["updated_at"] = stamp
    by_name = {g["name"]: g for g in groups_out}
    groups: List[Json] = []
    bundles: List[Json] = []
    for tg in m["groups"]:
        g = by_name.get(tg["name"]) or {}
        groups.append(dict(tg, id=g.get("id", "")))
        for b in g.get("bundles", []):
            bundles.append({
                "rank": len(bundles), "placement_group": tg["name"], "bundle_index": b["index"],
                "global_index": len(bundles), "node_id": b["node_id"], "node_ip": b["node_ip"],
                "gpu_id": b["gpu_id"], "nvlink_domain": b["nvlink_domain"], "topo_rank": b["topo_rank"],
                "port": b["port"],
            })
    order = topology_order(run, bundles, rank_order) if rank_order and bundles else None
    if order is not None:
        bundles = [dict(bundles[gi], rank=rank) for rank, gi in enumerate(order)]
    m["groups"], m["bundles"] = groups, bundles
    m["sorted_bundle_indices"] = order if order is not None else list(range(len(bundles)))
    m["master_address"] = bundles[0]["node_ip"] if bundles else ""
    m["master_port"] = bundles[0]["port"] if bundles else 0
    return m
