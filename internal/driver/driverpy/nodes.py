# The cluster's nodes as the job sees them: free and total resources, and
# each node's NVLink domain and topology rank (clusterspec.TopologySource in Go).

from __future__ import annotations

from typing import List, Tuple

from .contract import Json, NodeView
from .rayapi import RAY
from .runstate import Run


def is_resource_key(run: Run, k: str) -> bool:
    # Skip the per-placement-group bookkeeping resources (not node capacity).
    return run.contract.group_resource_marker not in k


def cluster_view(run: Run) -> NodeView:
    """Returns {node_id: {"ip", "total", "free", "resources"}} for live nodes."""
    nodes: NodeView = {}
    for n in RAY.ray.nodes():
        if not n.get("Alive"):
            continue
        res = n.get("Resources") or {}
        nodes[n["NodeID"]] = {
            "ip": n.get("NodeManagerAddress", ""),
            "resources": res,
            "labels": n.get("Labels") or {},
            "total": {k: float(v) for k, v in res.items() if is_resource_key(run, k)},
            "free": None,
        }
    try:
        free = RAY.ray._private.state.available_resources_per_node()
    except Exception:  # noqa: BLE001
        free = {}
    for nid, info in nodes.items():
        info["free"] = {k: float(v) for k, v in (free.get(nid) or {}).items() if is_resource_key(run, k)}
    return nodes


def node_view(nodes: NodeView) -> List[Json]:
    """The per-node free/total view Go explains a shortage from."""
    return [{"node_id": nid, "node_ip": info["ip"], "total": info["total"], "free": info["free"]}
            for nid, info in sorted(nodes.items())]


def rank_from_label(run: Run, v: object) -> int:
    # Same rule as Go's clusterspec.ParseRankLabel: only ASCII digits, else unknown.
    if isinstance(v, str) and 0 < len(v) <= run.contract.rank_label_digits and all("0" <= c <= "9" for c in v):
        return int(v)
    return run.contract.topo_rank_unknown


def node_topology(run: Run, node: Json) -> Tuple[str, int]:
    """(domain, rank) of a cluster_view entry, from labels or resources as the request says."""
    c = run.contract
    resources, labels = node.get("resources") or {}, node.get("labels") or {}
    domains = sorted(k for k in resources if k.startswith(c.domain_prefix))
    domain = domains[0] if domains else c.domain_unknown
    if run.topo["domain_label"]:
        domain = labels.get(run.topo["domain_label"]) or c.domain_unknown
    key = c.topo_rank_key
    if run.topo["rank_label"]:
        rank = rank_from_label(run, labels.get(run.topo["rank_label"]))
    else:
        try:
            rank = int(resources[key]) if key in resources else c.topo_rank_unknown
        except (TypeError, ValueError):
            rank = c.topo_rank_unknown
    return domain, rank
