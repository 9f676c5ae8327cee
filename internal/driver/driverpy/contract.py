# The request's and result's shapes, and the contract constants a request
# carries (contract.Contract in Go): the driver has no constants of its own.

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Dict, List, Optional, Tuple, TypedDict


# Shapes of the JSON the driver reads and writes (Go's types are the source:
# contract.Request, contract.Result, record.Manifest).
Json = Dict[str, Any]  # a decoded JSON object: a request part, a record, a result
Resources = Dict[str, float]  # one bundle's resources
Bundle = Dict[str, Any]  # one bundle of a group result (probe target until probed)
NodeView = Dict[str, Dict[str, Any]]  # cluster_view: node id -> ip, resources, labels, total, free
Entry = Tuple[str, Any, bool]  # (group name, PlacementGroup, created by this run)
ACTIONS = ("create", "delete", "inspect", "record", "read", "quota", "resize")
BATCH = "batch"  # runs the requests in spec["batch"] concurrently, one result each
# The request format this driver reads (contract.RequestVersion).
REQUEST_VERSION = 1


@dataclass(frozen=True)
class Contract:
    """The contract constants (contract.Contract), built once from the
    request's "contract"; the driver has none of its own. Field names and
    types are Go's JSON fields (TestDriverContractFieldsMatch)."""

    domain_prefix: str
    domain_unknown: str
    topo_rank_key: str
    state_created: str
    state_removed: str
    state_missing: str
    group_resource_marker: str
    topo_rank_unknown: int
    port_tries: int
    port_rounds: int
    probe_batch: int
    min_probe_seconds: int
    remove_wait_seconds: int
    min_remove_wait_seconds: int
    rank_label_digits: int
    max_recreates: int
    max_removals_per_name: int
    gcs_call_seconds: int
    amount_unit: float
    probe_gpu_fraction: float
    takeover_seconds: int
    lock_wait_seconds: int
    pending_wait_seconds: int
    place_wait_seconds: int
    gather_seconds: int
    retry_seconds: float

    @classmethod
    def from_request(cls, raw: Json) -> Contract:
        """raw is the request's contract object, checked against CONTRACT_SHAPE."""
        return cls(**{f.name: raw[f.name] for f in fields(cls)})


class GroupSpec(TypedDict):
    """One wanted group, as parse_request reads it."""

    name: str
    strategy: str
    bundles: Optional[List[Resources]]
    selector: Optional[List[Dict[str, str]]]
    topology_strategy: Optional[Dict[str, str]]


class Spec(TypedDict):
    """One request, as parse_request reads it."""

    action: str
    namespace: str
    timeout: float
    groups: List[GroupSpec]
    use_gpus: bool
    port_low: int
    port_high: int
    keep_recorded: bool  # an inspect keeps bundles as the record holds them where Ray still has them (import included)
    own: Optional[Json]  # ownership: record key, owner, manifest, node claims
    rank_order: Optional[Json]
    quota: Optional[Json]  # the namespace's quota: checked by a create, written by "quota", read by a read
    remove: List[str]  # the groups a resize removes once its added groups are ready
    alternatives: List[Json]  # a create's other choices of nodes: groups, manifest and reserved nodes each


class DriverError(Exception):
    """A failure as facts: kind, a code and the values Go words it from
    (contract.ResultError.Describe); the driver writes no sentence."""

    def __init__(self, kind: str, code: str, **facts: Any) -> None:
        Exception.__init__(self, code)
        self.kind = kind
        self.code = code
        self.facts = facts
