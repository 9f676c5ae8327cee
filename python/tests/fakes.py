"""A fake cluster record and a fake Ray layer: unit tests run without Ray."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from raytf_attach.ray_layer import LiveGroup
from raytf_attach.record import KV_NAMESPACE, record_key

NODE_IPS = ["127.0.0.11", "127.0.0.12"]


def node_id(i: int) -> str:
    return f"{i + 1:02x}" * 28


def record_doc(name="train", namespace="terraform-ray", unified=False, use_gpus=True):
    """A per-node [2, 2] GPU cluster (or one unified group of 4 bundles in topology order)."""
    bundles = []
    if unified:
        groups = [{"name": f"{name}-unified", "id": "aa" * 18, "node_index": -1, "bundle_count": 4, "strategy": "PACK"}]
        # Topology order puts node 1 (lower topo_rank) first.
        order = [2, 3, 0, 1]
        for rank, gi in enumerate(order):
            node = gi // 2
            bundles.append({
                "rank": rank, "placement_group": f"{name}-unified", "bundle_index": gi, "global_index": gi,
                "node_id": node_id(node), "node_ip": NODE_IPS[node], "gpu_id": gi % 2 if use_gpus else None,
                "nvlink_domain": f"nvlink_domain_rack{'AB'[node]}", "topo_rank": 3 - node, "port": 1500 + rank,
            })
    else:
        order = [0, 1, 2, 3]
        groups = [
            {"name": f"{name}-node{n}", "id": f"{n + 1:02x}" * 18, "node_index": n, "bundle_count": 2,
             "strategy": "PACK"}
            for n in range(2)
        ]
        for gi in order:
            node = gi // 2
            bundles.append({
                "rank": gi, "placement_group": f"{name}-node{node}", "bundle_index": gi % 2, "global_index": gi,
                "node_id": node_id(node), "node_ip": NODE_IPS[node], "gpu_id": gi % 2 if use_gpus else None,
                "nvlink_domain": "unknown", "topo_rank": -1, "port": 1500 + gi,
            })
    return {
        "schema_version": 1, "name": name, "namespace": namespace, "owner": "ab12",
        "created_at": "2026-12-02T18:00:00Z", "updated_at": "2026-12-02T18:00:00Z", "provider_version": "0.2.0",
        "use_gpus": use_gpus, "num_gpus_per_node": 2, "max_colocated_worker_groups": 1,
        "use_unified_pg": unified, "placement_group_strategy": "SPREAD",
        "bundle_ct_per_node_list": [2, 2], "groups": groups, "bundles": bundles,
        "sorted_bundle_indices": order,
        "master_address": bundles[0]["node_ip"], "master_port": bundles[0]["port"],
        "port_range_low": 1400, "port_range_high": 1999,
    }


@dataclass(eq=False)
class FakeHandle:
    """Stands in for ray.util.placement_group.PlacementGroup."""

    name: str
    bundle_count: int

    @property
    def bundle_specs(self):
        return [{"CPU": 1.0, "GPU": 1.0}] * self.bundle_count


class FakeRay:
    """The layer interface over in-memory state. Probes check ports like the real
    task does but deterministically (lowest free port), so two concurrent probes
    on one node collide, which exercises re-probing."""

    def __init__(self, doc=None):
        self.initialized = True
        self.kv: dict = {}
        self.groups: dict = {}  # (namespace, name) -> LiveGroup
        self.not_ready: set = set()  # group names whose ready() never resolves
        self.busy: dict = {}  # node ip -> ports already bound on that node
        self.hang: set = set()  # group names whose probe tasks never finish
        self.probe_calls: list = []
        self.bundle_ip: dict = {}  # (group name, bundle index) -> ip
        if doc is not None:
            self.load(doc)

    def load(self, doc):
        doc = copy.deepcopy(doc)
        self.put_record(doc)
        for g in doc["groups"]:
            nodes = {}
            for b in doc["bundles"]:
                if b["placement_group"] == g["name"]:
                    nodes[b["bundle_index"]] = b["node_id"]
                    self.bundle_ip[(g["name"], b["bundle_index"])] = b["node_ip"]
            self.groups[(doc["namespace"], g["name"])] = LiveGroup(
                handle=FakeHandle(g["name"], g["bundle_count"]), id=g["id"], name=g["name"],
                state="CREATED", bundle_count=g["bundle_count"], bundle_nodes=nodes,
            )

    def put_record(self, doc):
        raw = doc if isinstance(doc, (bytes, str)) else json.dumps(doc)
        raw = raw.encode() if isinstance(raw, str) else raw
        key = record_key(doc["namespace"], doc["name"]) if isinstance(doc, dict) else None
        self.kv[(KV_NAMESPACE, key)] = raw

    def live(self, name, namespace="terraform-ray") -> LiveGroup:
        return self.groups[(namespace, name)]

    # ---- layer interface

    def is_initialized(self):
        return self.initialized

    def kv_get(self, key, namespace):
        return self.kv.get((namespace, key))

    def find_group(self, name, namespace):
        g = self.groups.get((namespace, name))
        return None if g is None or g.state == "REMOVED" else copy.copy(g)

    def refresh(self, handle):
        for g in self.groups.values():
            if g.handle is handle:
                return copy.copy(g)
        raise KeyError(handle)

    def wait_ready(self, handles, timeout_s):
        return [h.name not in self.not_ready for h in handles]

    def probe_ports(self, requests, timeout_s, batch_size):
        self.probe_calls.append((list(requests), batch_size))
        out = []
        for r in requests:
            if r.handle.name in self.hang:
                out.append(None)
                continue
            ip = self.bundle_ip[(r.handle.name, r.bundle_index)]
            busy = self.busy.get(ip, set())
            skip = set(r.excluded)
            if r.candidate is not None and r.candidate not in skip and r.candidate not in busy:
                out.append((ip, r.candidate))
                continue
            free = [p for p in range(r.low, r.high) if p not in skip and p not in busy and p != r.candidate]
            out.append((ip, free[0] if free else None))
        return out
