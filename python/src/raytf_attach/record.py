"""The cluster record terraform-provider-ray keeps in Ray's internal KV.

One JSON document per cluster, written by the provider's driver at create and
update and deleted at destroy. Readers ignore unknown keys and refuse a
schema_version newer than SCHEMA_VERSION.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from .errors import RecordInvalidError, UnsupportedSchemaVersionError

KV_NAMESPACE = "terraform-provider-ray"
DEFAULT_NAMESPACE = "terraform-ray"
# Ray's state of a placed group (the state API's and ray.util's word).
STATE_CREATED = "CREATED"
# What a node advertises for the provider to see its NVLink domain and rank
# (raytf-node-topology): the custom resource <prefix><domain>, the topo_rank
# resource, and the domain name the provider gives a node without one.
NVLINK_DOMAIN_PREFIX = "nvlink_domain_"
TOPO_RANK_KEY = "topo_rank"
NVLINK_DOMAIN_UNKNOWN = "unknown"
# 2 adds every declared argument of the resource (select_nodes, pinning,
# exclude_node_ids, ...: what `terraform import` restores); version 1 records
# still read, and readers ignore the keys they do not use.
SCHEMA_VERSION = 2


def record_key(namespace: str, name: str) -> bytes:
    """KV key of a cluster's record: vc/<ray namespace>/<cluster name>."""
    return f"vc/{namespace}/{name}".encode("utf-8")


@dataclass(frozen=True)
class GroupRecord:
    name: str
    id: str
    node_index: int
    bundle_count: int
    strategy: str


@dataclass(frozen=True)
class BundleRecord:
    rank: int
    placement_group: str
    bundle_index: int
    global_index: int
    node_id: str
    node_ip: str
    gpu_id: Optional[int]
    nvlink_domain: str
    topo_rank: int
    port: int


@dataclass(frozen=True)
class ClusterRecord:
    schema_version: int
    name: str
    namespace: str
    owner: str
    provider_version: str
    created_at: str
    updated_at: str
    use_gpus: bool
    num_gpus_per_node: int
    max_colocated_worker_groups: int
    use_unified_pg: bool
    placement_group_strategy: str
    bundle_ct_per_node_list: tuple[int, ...]
    groups: tuple[GroupRecord, ...]  # declaration order (node_index; -1 for the unified group)
    bundles: tuple[BundleRecord, ...]  # in rank order
    sorted_bundle_indices: tuple[int, ...]
    master_address: str
    master_port: int
    port_range_low: int
    port_range_high: int
    # Optional: present when the resource sets them (schema 2 keeps every declared argument).
    segment_size: Optional[int] = None
    node_resource_constraints: Optional[tuple[dict, ...]] = None

    def group(self, name: str) -> GroupRecord:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    def bundle_at(self, group_name: str, bundle_index: int) -> Optional[BundleRecord]:
        for b in self.bundles:
            if b.placement_group == group_name and b.bundle_index == bundle_index:
                return b
        return None


class _Reader:
    """Typed field access that names the offending field in its errors."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, msg: str) -> RecordInvalidError:
        return RecordInvalidError(f"{self.where}: {msg}")

    def get(self, obj: dict, key: str, kind: type, *, optional: bool = False, nullable: bool = False) -> Any:
        if key not in obj:
            if optional:
                return None
            raise self.fail(f"missing field {key!r}")
        value = obj[key]
        if value is None and (nullable or optional):
            return None
        # bool is an int subclass; JSON true is not a count.
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            raise self.fail(f"field {key!r} must be {kind.__name__}, got {type(value).__name__} {value!r}")
        return value

    def int_list(self, obj: dict, key: str) -> tuple[int, ...]:
        values = self.get(obj, key, list)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise self.fail(f"field {key!r} must be a list of integers, got {values!r}")
        return tuple(values)


def parse_record(raw: bytes | str, where: str = "cluster record") -> ClusterRecord:
    """Parses and checks a record; raises RecordInvalidError or UnsupportedSchemaVersionError."""
    r = _Reader(where)
    try:
        doc = json.loads(raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw)
    except (UnicodeDecodeError, ValueError) as e:
        raise r.fail(f"not valid UTF-8 JSON ({e})") from None
    if not isinstance(doc, dict):
        raise r.fail(f"must be a JSON object, got {type(doc).__name__}")

    version = r.get(doc, "schema_version", int)
    if version > SCHEMA_VERSION:
        raise UnsupportedSchemaVersionError(
            f"{where}: schema_version {version} is newer than this raytf-attach understands "
            f"({SCHEMA_VERSION}); upgrade raytf-attach to match the provider "
            f"(record written by provider {doc.get('provider_version', '?')})"
        )
    if version < 1:
        raise r.fail(f"schema_version must be >= 1, got {version}")

    groups = []
    for i, g in enumerate(r.get(doc, "groups", list)):
        gr = _Reader(f"{where}: groups[{i}]")
        if not isinstance(g, dict):
            raise gr.fail("must be an object")
        groups.append(GroupRecord(
            name=gr.get(g, "name", str),
            id=gr.get(g, "id", str).lower(),
            node_index=gr.get(g, "node_index", int),
            bundle_count=gr.get(g, "bundle_count", int),
            strategy=gr.get(g, "strategy", str),
        ))

    bundles = []
    for i, b in enumerate(r.get(doc, "bundles", list)):
        br = _Reader(f"{where}: bundles[{i}]")
        if not isinstance(b, dict):
            raise br.fail("must be an object")
        bundles.append(BundleRecord(
            rank=br.get(b, "rank", int),
            placement_group=br.get(b, "placement_group", str),
            bundle_index=br.get(b, "bundle_index", int),
            global_index=br.get(b, "global_index", int),
            node_id=br.get(b, "node_id", str),
            node_ip=br.get(b, "node_ip", str),
            gpu_id=br.get(b, "gpu_id", int, nullable=True),
            nvlink_domain=br.get(b, "nvlink_domain", str),
            topo_rank=br.get(b, "topo_rank", int),
            port=br.get(b, "port", int),
        ))

    constraints = r.get(doc, "node_resource_constraints", list, optional=True)
    record = ClusterRecord(
        schema_version=version,
        name=r.get(doc, "name", str),
        namespace=r.get(doc, "namespace", str),
        owner=r.get(doc, "owner", str, optional=True) or "",
        provider_version=r.get(doc, "provider_version", str, optional=True) or "",
        created_at=r.get(doc, "created_at", str, optional=True) or "",
        updated_at=r.get(doc, "updated_at", str, optional=True) or "",
        use_gpus=r.get(doc, "use_gpus", bool),
        num_gpus_per_node=r.get(doc, "num_gpus_per_node", int),
        max_colocated_worker_groups=r.get(doc, "max_colocated_worker_groups", int),
        use_unified_pg=r.get(doc, "use_unified_pg", bool),
        placement_group_strategy=r.get(doc, "placement_group_strategy", str),
        bundle_ct_per_node_list=r.int_list(doc, "bundle_ct_per_node_list"),
        groups=tuple(groups),
        bundles=tuple(bundles),
        sorted_bundle_indices=r.int_list(doc, "sorted_bundle_indices"),
        master_address=r.get(doc, "master_address", str),
        master_port=r.get(doc, "master_port", int),
        port_range_low=r.get(doc, "port_range_low", int),
        port_range_high=r.get(doc, "port_range_high", int),
        segment_size=r.get(doc, "segment_size", int, optional=True),
        node_resource_constraints=tuple(constraints) if constraints is not None else None,
    )
    _check_consistency(record, r)
    return record


def _check_consistency(rec: ClusterRecord, r: _Reader) -> None:
    if not rec.groups:
        raise r.fail("no groups")
    if rec.port_range_low >= rec.port_range_high:
        raise r.fail(f"empty port range [{rec.port_range_low}, {rec.port_range_high})")
    names = [g.name for g in rec.groups]
    if len(set(names)) != len(names):
        raise r.fail(f"duplicate group names {names}")
    by_name = {g.name: g for g in rec.groups}
    total = sum(g.bundle_count for g in rec.groups)
    if len(rec.bundles) != total:
        raise r.fail(f"{len(rec.bundles)} bundles listed but the groups hold {total}")
    if sum(rec.bundle_ct_per_node_list) != total:
        raise r.fail(f"bundle_ct_per_node_list {list(rec.bundle_ct_per_node_list)} sums to "
                     f"{sum(rec.bundle_ct_per_node_list)} but the groups hold {total} bundles")
    seen = set()
    for i, b in enumerate(rec.bundles):
        if b.rank != i:
            raise r.fail(f"bundles must be in rank order: bundles[{i}] has rank {b.rank}")
        g = by_name.get(b.placement_group)
        if g is None:
            raise r.fail(f"bundles[{i}] names group {b.placement_group!r}, not among {names}")
        if not 0 <= b.bundle_index < g.bundle_count:
            raise r.fail(f"bundles[{i}] bundle_index {b.bundle_index} outside group "
                         f"{g.name!r} of {g.bundle_count} bundles")
        if (b.placement_group, b.bundle_index) in seen:
            raise r.fail(f"bundles[{i}] repeats bundle {b.bundle_index} of group {g.name!r}")
        seen.add((b.placement_group, b.bundle_index))
    # sorted_bundle_indices is the global index of each rank's bundle.
    expected = [b.global_index for b in rec.bundles]
    if list(rec.sorted_bundle_indices) != expected:
        raise r.fail(f"sorted_bundle_indices {list(rec.sorted_bundle_indices)} disagree with the "
                     f"bundles' global_index in rank order {expected}")
    if sorted(expected) != list(range(total)):
        raise r.fail(f"global_index values {expected} are not a permutation of 0..{total - 1}")
