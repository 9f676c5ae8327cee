# terraform-provider-ray placement-group driver.
#
# Runs as a Ray job: python -c '<bootstrap>' <base64(json spec)>.
# Creates, inspects or deletes detached, named placement groups (or only
# reads a cluster's record, for the ray_virtual_cluster data source) and reports
# back through its stdout (the job logs):
#   RAYTF_PROGRESS <json>   any number of progress lines
#   RAYTF_RESULT <json>     exactly one final line (exit code 1 when not ok)
# Python 3.9+ standard library plus ray only. Type-checked by mypy for
# Python 3.9 (scripts/mypy.ini, run by make lint); ray's objects are Any.

from __future__ import annotations

import base64
import json
import math
import os
import random
import signal
import socket
import sys
import threading
import time
import traceback
import zlib
from dataclasses import dataclass, fields
from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Set, Tuple, TypedDict, cast

# ray and its helpers: bound by import_ray(). A delete or record that reaches
# the GCS directly (GcsDirect) never imports ray, which saves about a second.
ray: Any = None
internal_kv: Any = None
PlacementGroupSchedulingStrategy: Any = None
get_placement_group: Any = None
placement_group: Any = None
placement_group_table: Any = None
remove_placement_group: Any = None

# Shapes of the JSON the driver reads and writes (Go's types are the source:
# contract.Request, contract.Result, record.Manifest).
Json = Dict[str, Any]  # a decoded JSON object: a request part, a record, a result
Resources = Dict[str, float]  # one bundle's resources
Bundle = Dict[str, Any]  # one bundle of a group result (probe target until probed)
NodeView = Dict[str, Dict[str, Any]]  # cluster_view: node id -> ip, resources, labels, total, free
Entry = Tuple[str, Any, bool]  # (group name, PlacementGroup, created by this run)


def import_ray() -> None:
    global ray, internal_kv, PlacementGroupSchedulingStrategy
    global get_placement_group, placement_group, placement_group_table, remove_placement_group
    import ray
    from ray.experimental import internal_kv
    from ray.util.placement_group import (
        get_placement_group,
        placement_group,
        placement_group_table,
        remove_placement_group,
    )
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

ACTIONS = ("create", "delete", "inspect", "record", "read")
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
    own: Optional[Json]  # ownership: record key, owner, manifest, node claims
    rank_order: Optional[Json]


class DriverError(Exception):
    """A failure as facts: kind, a code and the values Go words it from
    (contract.ResultError.Describe); the driver writes no sentence."""

    def __init__(self, kind: str, code: str, **facts: Any) -> None:
        Exception.__init__(self, code)
        self.kind = kind
        self.code = code
        self.facts = facts


class Run:
    """Everything one driver run keeps: the request's contract and topology
    source, what it created (removed again if it fails), what Go needs to
    explain a failure, and the connections it made."""

    def __init__(self) -> None:
        self.id = ""  # spec.run_id, echoed on every output line
        self.t0 = time.monotonic()
        self.spec: Optional[Spec] = None
        self._contract: Optional[Contract] = None
        self.topo = {"domain_label": "", "rank_label": ""}  # spec.probe.topology
        # Groups created by this run (name -> PlacementGroup), plus names whose
        # placement_group() call was in flight; removed again if the run fails.
        self.created: Dict[str, Any] = {}
        self.inflight: Set[str] = set()
        # Set when a create gives up waiting: the pending group names and the
        # cluster's per-node view, for Go to explain the shortage.
        self.failure: Json = {}
        self.new_record = False  # this run created the record (removed again if it fails)
        self.claim_token = ""  # set once this run claims nodes; its claims are released if it fails
        self.claimed: List[str] = []  # KV keys of the node claims this run wrote
        self.stop_signal: Optional[int] = None
        self.probe_task: Any = None  # the remote version of _probe_in_bundle, made once ray is imported
        self.gcs: Optional[GcsDirect] = None  # the GcsDirect a delete, record or read runs on, when it could connect
        self.gate = Gate()  # shared by the requests of a batch

    @property
    def contract(self) -> Contract:
        """The request's contract constants (set by parse_request)."""
        if self._contract is None:
            raise RuntimeError("the contract is read before the request was parsed")
        return self._contract

    @contract.setter
    def contract(self, c: Contract) -> None:
        self._contract = c


class Gate:
    """Group creation and record writes pass the gate; a stopped batch closes
    it, so its cleanup sees everything the requests still running made."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.closed = False

    def __enter__(self) -> Gate:
        self.lock.acquire()
        if self.closed:
            self.lock.release()
            raise DriverError("internal", "stopped", signal=0)
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def close(self) -> None:
        with self.lock:
            self.closed = True


EMIT_LOCK = threading.Lock()  # a batch's threads print whole lines


def emit(run: Run, tag: str, payload: Json, leading_newline: bool = False) -> None:
    if run.id:
        payload = dict(payload, run_id=run.id)
    line = "%s %s\n" % (tag, json.dumps(payload, sort_keys=True, separators=(",", ":")))
    if leading_newline:
        line = "\n" + line  # never share a line with partial output
    with EMIT_LOCK:
        sys.stdout.write(line)
        sys.stdout.flush()


def progress(run: Run, phase: str, **facts: Any) -> None:
    facts["phase"] = phase
    facts["elapsed"] = round(time.monotonic() - run.t0, 3)
    emit(run, "RAYTF_PROGRESS", facts)


# ---------------------------------------------------------------- spec
#
# Go builds and validates every request (contract.Request.Validate); the
# driver checks only the version and that each field has its type.


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_str_map(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())


# field -> (type check, expected type name for the report); "?" marks an optional field.
TYPES: Dict[str, Tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "string"),
    "int": (_is_int, "integer"),
    "num": (_is_number, "number"),
    "bool": (lambda v: isinstance(v, bool), "boolean"),
    "list": (lambda v: isinstance(v, list), "list"),
    "obj": (lambda v: isinstance(v, dict), "object"),
    "strmap": (_is_str_map, "string map"),
    "bundles": (lambda v: isinstance(v, list) and all(
        isinstance(b, dict) and all(isinstance(k, str) and _is_number(x) for k, x in b.items()) for b in v),
        "list of resource maps"),
    "selectors": (lambda v: isinstance(v, list) and all(_is_str_map(m) for m in v), "list of string maps"),
}
SHAPE = {
    "version": "int", "action": "str", "namespace": "str", "ready_timeout_seconds": "num", "groups": "list",
    "probe": "obj", "contract": "obj", "ownership": "?obj", "rank_order": "?obj", "run_id": "?str",
}
BATCH_SHAPE = {"version": "int", "action": "str", "namespace": "str", "batch": "list", "run_id": "?str"}
GROUP_SHAPE = {"name": "str", "strategy": "str", "bundles": "?bundles", "bundle_label_selector": "?selectors",
               "topology_strategy": "?strmap"}
PROBE_SHAPE = {"use_gpus": "bool", "port_range_low": "int", "port_range_high": "int", "topology": "obj"}
TOPOLOGY_SHAPE = {"domain_label": "?str", "rank_label": "?str"}
OWNERSHIP_SHAPE = {"kv_namespace": "str", "key": "str", "tombstone_key": "str", "owner": "str", "claim": "bool",
                   "manifest": "?obj", "node_claims": "?obj"}
NODE_CLAIMS_SHAPE = {"keys": "strmap", "prefix": "str", "cluster": "str", "groups": "list", "stale_seconds": "num"}
RANK_ORDER_SHAPE = {"segment_size": "?int", "gpus_per_node": "int"}
# Contract's fields; annotations are strings (from __future__ import annotations).
CONTRACT_SHAPE = {f.name: {"str": "str", "int": "int", "float": "num"}[str(f.type)] for f in fields(Contract)}


def check_shape(obj: Json, shape: Dict[str, str], where: str) -> None:
    """Raises when a field of obj is absent (unless optional) or of another type."""
    for key, kind in shape.items():
        optional = kind.startswith("?")
        ok, want = TYPES[kind.lstrip("?")]
        v = obj.get(key)
        if v is None and optional:
            continue
        if not ok(v):
            raise DriverError("invalid", "request_field", field=where + key, want=want)


def load_request(run: Run, argv: List[str]) -> Json:
    """Decodes the command-line request; checks a batch's own fields (its
    requests are read by parse_request, one by one)."""
    if len(argv) < 2:
        raise DriverError("invalid", "no_request")
    try:
        spec = json.loads(zlib.decompress(base64.b64decode(argv[1], validate=True)).decode("utf-8"))
    except Exception as e:  # noqa: BLE001
        raise DriverError("invalid", "undecodable", detail=str(e))
    if not isinstance(spec, dict):
        raise DriverError("invalid", "request_field", field="request", want="object")
    if isinstance(spec.get("run_id"), str):
        run.id = spec["run_id"]
    if spec.get("action") == BATCH:
        check_shape(spec, BATCH_SHAPE, "")
        check_version(spec)
    return spec


def check_version(spec: Json) -> None:
    if spec["version"] != REQUEST_VERSION:
        raise DriverError("invalid", "request_version", version=spec["version"], reads=REQUEST_VERSION)


def parse_request(run: Run, spec: object, where: str = "") -> Spec:
    if not isinstance(spec, dict):
        raise DriverError("invalid", "request_field", field=where or "request", want="object")
    check_shape(spec, SHAPE, where)
    check_version(spec)
    if spec["action"] not in ACTIONS:
        raise DriverError("invalid", "request_field", field=where + "action", want="one of " + ", ".join(ACTIONS))
    check_shape(spec["contract"], CONTRACT_SHAPE, where + "contract.")
    check_shape(spec["probe"], PROBE_SHAPE, where + "probe.")
    check_shape(spec["probe"]["topology"], TOPOLOGY_SHAPE, where + "probe.topology.")
    for i, g in enumerate(spec["groups"]):
        if not isinstance(g, dict):
            raise DriverError("invalid", "request_field", field=where + "groups[%d]" % i, want="object")
        check_shape(g, GROUP_SHAPE, where + "groups[%d]." % i)
    if spec.get("ownership") is not None:
        check_shape(spec["ownership"], OWNERSHIP_SHAPE, where + "ownership.")
        if spec["ownership"].get("node_claims") is not None:
            check_shape(spec["ownership"]["node_claims"], NODE_CLAIMS_SHAPE, where + "ownership.node_claims.")
    if spec.get("rank_order") is not None:
        check_shape(spec["rank_order"], RANK_ORDER_SHAPE, where + "rank_order.")
    run.contract = Contract.from_request(spec["contract"])
    run.topo = {k: spec["probe"]["topology"].get(k) or "" for k in run.topo}
    probe_spec = spec["probe"]
    return {
        "action": spec["action"],
        "namespace": spec["namespace"],
        "timeout": float(spec["ready_timeout_seconds"]),
        "groups": [{"name": g["name"], "strategy": g["strategy"], "bundles": g["bundles"],
                    "selector": g.get("bundle_label_selector"), "topology_strategy": g.get("topology_strategy")}
                   for g in spec["groups"]],
        "use_gpus": probe_spec["use_gpus"],
        "port_low": probe_spec["port_range_low"],
        "port_high": probe_spec["port_range_high"],
        "own": spec.get("ownership"),
        "rank_order": spec.get("rank_order"),
    }


# ---------------------------------------------------------------- helpers


def norm_bundle(b: Dict[str, Any]) -> Resources:
    # Ray drops zero-valued resources; compare and report without them.
    return {str(k): float(v) for k, v in b.items() if float(v) > 0}


def same_amount(run: Run, a: float, b: float) -> bool:
    # drift.SameAmount: less than one of Ray's amount units apart.
    unit = run.contract.amount_unit
    return abs(a / unit - b / unit) < 1 - 1e-6


def same_bundle(run: Run, a: Resources, b: Resources) -> bool:
    # drift.SameResources: an amount below one unit is absent for Ray.
    keys = set(a) | set(b)
    return all(same_amount(run, a.get(k, 0.0), b.get(k, 0.0)) for k in keys)


def table_bundles(table: Json) -> List[Resources]:
    bundles = table.get("bundles") or {}
    return [norm_bundle(bundles[k]) for k in sorted(bundles, key=int)]


def lookup(run: Run, name: str) -> Optional[Tuple[Any, Json]]:
    """Returns (PlacementGroup, table) for a live named group, else None."""
    try:
        pg = get_placement_group(name)
    except ValueError:
        return None
    table = placement_group_table(pg)
    if not table or table.get("state") == run.contract.state_removed:
        return None
    return pg, table


def is_detached(pg: Any) -> Optional[bool]:
    # Best effort: read the raw GCS record (private API); None if unknown.
    try:
        from ray.core.generated import gcs_pb2

        accessor = ray._private.state.state._connect_and_get_accessor()
        raw = accessor.get_placement_group_info(pg.id)
        if raw is None:
            return None
        return bool(gcs_pb2.PlacementGroupTableData.FromString(raw).is_detached)
    except Exception:  # noqa: BLE001
        return None


def is_resource_key(run: Run, k: str) -> bool:
    # Skip the per-placement-group bookkeeping resources (not node capacity).
    return run.contract.group_resource_marker not in k


def cluster_view(run: Run) -> NodeView:
    """Returns {node_id: {"ip", "total", "free", "resources"}} for live nodes."""
    nodes: NodeView = {}
    for n in ray.nodes():
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
        free = ray._private.state.available_resources_per_node()
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


# ---------------------------------------------------------------- ownership record


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def kv_get(run: Run, own: Json, key: str) -> Optional[Json]:
    if run.gcs:
        raw = run.gcs.kv_get(key, own["kv_namespace"])
    else:
        raw = internal_kv._internal_kv_get(key, namespace=own["kv_namespace"])
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return {"owner": "", "created_at": "", "unreadable": True}
    return value if isinstance(value, dict) else None


def kv_put(run: Run, own: Json, key: str, value: Json) -> None:
    raw = json.dumps(value, sort_keys=True)
    with run.gate:
        if run.gcs:
            run.gcs.kv_put(key, raw, own["kv_namespace"])
        else:
            internal_kv._internal_kv_put(key, raw, overwrite=True, namespace=own["kv_namespace"])


def kv_del(run: Run, own: Json, key: str) -> None:
    if run.gcs:
        run.gcs.kv_del(key, own["kv_namespace"])
    else:
        internal_kv._internal_kv_del(key, namespace=own["kv_namespace"])


def is_ours(own: Json, record: Optional[Json]) -> bool:
    # A state from before owners existed (owner "") may act on unrecorded groups only.
    if record is None:
        return own["owner"] == ""
    return own["owner"] != "" and record.get("owner") == own["owner"]


def other_owner(record: Optional[Json]) -> Json:
    """The facts Go describes another owner from (record.OtherOwner)."""
    record = record or {}
    return {"owner": str(record.get("owner") or ""), "created_at": str(record.get("created_at") or ""),
            "has_record": bool(record)}


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


# ---------------------------------------------------------------- probing


def _bind_free_ports(low: int, high: int, excluded: Iterable[int], tries: int, count: int) -> Optional[List[int]]:
    # count distinct ports in [low, high) that could be bound just now, none
    # excluded; None when tries random attempts found no port for one of them.
    taken = set(excluded)
    ports = []
    for _ in range(count):
        for _ in range(tries):
            port = random.randrange(low, high)
            if port in taken:
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("", port))
                s.listen(1)
                break
            except OSError:
                continue
            finally:
                s.close()
        else:
            return None
        taken.add(port)
        ports.append(port)
    return ports


def _probe_in_bundle(low: int, high: int, excluded: List[int], tries: int, count: int) -> Json:
    """Runs in one bundle: its GPU id (if it holds one), node and count free ports."""
    ids = ray.get_gpu_ids()
    gpu = None
    if ids:
        try:
            gpu = int(ids[0])
        except (TypeError, ValueError):
            gpu = None
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),
        "gpu_id": gpu,
        "ports": _bind_free_ports(low, high, excluded, tries, count),
    }


def _fire(run: Run, t: Bundle, ports: int, spec: Spec, excluded: Iterable[int]) -> Any:
    if run.probe_task is None:
        run.probe_task = ray.remote(max_retries=0)(_probe_in_bundle)
    wants_gpu = spec["use_gpus"] and t["resources"].get("GPU", 0.0) > 0
    return run.probe_task.options(
        num_cpus=0,
        num_gpus=run.contract.probe_gpu_fraction if wants_gpu else 0,
        scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=t["pg"], placement_group_bundle_index=t["index"]),
    ).remote(spec["port_low"], spec["port_high"], sorted(excluded), run.contract.port_tries, ports)


class NodeProbes:
    """The probe tasks of one node, run one at a time so that the node starts
    one worker and the later tasks reuse it (a worker start costs about a
    second, a task on a warm worker milliseconds). The first task also
    returns free ports for all the node's bundles; the others are needed only
    for GPU ids, or to replace a port that collided on a shared IP."""

    def __init__(self, bundles: List[Bundle], spec: Spec) -> None:
        self.queue: List[Tuple[Bundle, List[Bundle]]] = []  # (target, targets whose ports it returns)
        needs_gpu = [t for t in bundles if spec["use_gpus"] and t["resources"].get("GPU", 0.0) > 0]
        first = needs_gpu[0] if needs_gpu else bundles[0]
        self.queue.append((first, list(bundles)))
        self.queue.extend((t, []) for t in needs_gpu if t is not first)

    def next(self) -> Optional[Tuple[Bundle, List[Bundle]]]:
        return self.queue.pop(0) if self.queue else None


def _wait_one(inflight: Dict[Any, Any], deadline: float) -> List[Tuple[Any, Json]]:
    left = deadline - time.monotonic()
    if left <= 0:
        for r in inflight:
            try:
                ray.cancel(r, force=True)
            except Exception:  # noqa: BLE001
                pass
        raise DriverError("timeout", "probe_timeout", tasks=len(inflight))
    ready, _ = ray.wait(list(inflight), num_returns=1, timeout=min(1.0, left))
    out = []
    for r in ready:
        try:
            out.append((r, ray.get(r)))
        except ray.exceptions.RayError as e:
            lines = [l for l in str(e).splitlines() if l.strip()]
            raise DriverError("internal", "probe_failed", detail=lines[-1].strip() if lines else type(e).__name__)
    return out


# The requests of a batch probe a node one after another: their tasks then
# reuse the node's warm worker instead of starting one per request at once
# (50 one-bundle clusters on 3 nodes: 3 worker starts, not 50). Requests on
# other nodes probe in parallel.
NODE_LOCKS: Dict[str, threading.Lock] = {}
NODE_LOCKS_GUARD = threading.Lock()


def node_locks(targets: List[Bundle]) -> List[threading.Lock]:
    """The probe locks of the targets' nodes, in one order (no deadlock)."""
    with NODE_LOCKS_GUARD:
        return [NODE_LOCKS.setdefault(n, threading.Lock()) for n in sorted(set(t.get("node_id") or "" for t in targets))]


def probe(run: Run, targets: List[Bundle], spec: Spec, nodes: NodeView) -> None:
    """Fills node/gpu/port/topology into each target bundle; ports unique per IP.

    Nodes are probed in parallel (at most probe_batch at once), each node's
    tasks in sequence (NodeProbes)."""
    if not targets:
        return
    locks = node_locks(targets)
    for lock in locks:
        lock.acquire()
    try:
        probe_nodes(run, targets, spec, nodes)
    finally:
        for lock in locks:
            lock.release()
    for t in targets:
        t.pop("tries", None)
        domain, rank = node_topology(run, nodes.get(t["node_id"], {}))
        t["nvlink_domain"], t["topo_rank"] = domain, rank


def probe_nodes(run: Run, targets: List[Bundle], spec: Spec, nodes: NodeView) -> None:
    c = run.contract
    deadline = time.monotonic() + max(c.min_probe_seconds, spec["timeout"])
    by_node: Dict[Any, List[Bundle]] = {}
    for t in targets:
        t["node_ip"] = nodes.get(cast(str, t.get("node_id")), {}).get("ip")
        t["port"], t["tries"] = 0, 0
        by_node.setdefault(t.get("node_id") or id(t), []).append(t)
    waiting = [NodeProbes(b, spec) for b in by_node.values()]
    taken: Dict[Optional[str], Set[int]] = {}  # node ip (None: unknown) -> ports assigned so far
    inflight: Dict[Any, Tuple[NodeProbes, Bundle, List[Bundle]]] = {}  # ref -> (NodeProbes, target, targets whose ports it returns)
    reported = time.monotonic()
    no_port = DriverError("internal", "no_free_port", low=spec["port_low"], high=spec["port_high"], tries=c.port_tries,
                          rounds=c.port_rounds)

    def fire(node: NodeProbes) -> None:
        item = node.next()
        if item is None:
            return
        t, port_for = item
        inflight[_fire(run, t, len(port_for), spec, taken.get(t.get("node_ip"), ()))] = (node, t, port_for)

    while waiting or inflight:
        while waiting and len(inflight) < c.probe_batch:
            fire(waiting.pop(0))
        for ref, r in _wait_one(inflight, deadline):
            node, t, port_for = inflight.pop(ref)
            if r["ports"] is None:
                raise no_port
            t.update(node_id=r["node_id"], node_ip=r["node_ip"], gpu_id=r["gpu_id"])
            ports = taken.setdefault(r["node_ip"], set())
            for pt, port in zip(port_for, r["ports"]):
                pt["node_ip"] = r["node_ip"]
                if port in ports:  # another node on this IP took it meanwhile
                    pt["tries"] += 1
                    if pt["tries"] >= c.port_rounds:
                        raise no_port
                    node.queue.append((pt, [pt]))
                    continue
                ports.add(port)
                pt["port"] = port
            fire(node)
        if time.monotonic() - reported >= 0.5 or not (waiting or inflight):
            reported = time.monotonic()
            progress(run, "probing", ready=sum(1 for x in targets if x["port"]), total=len(targets))


def group_result(run: Run, name: str, pg: Any, table: Json, created: bool, nodes: NodeView) -> Json:
    bundles: List[Bundle] = []
    to_node = table.get("bundles_to_node_id") or {}
    for i, res in enumerate(table_bundles(table)):
        nid = to_node.get(i) or to_node.get(str(i)) or ""
        domain, rank = node_topology(run, nodes.get(nid, {}))
        bundles.append({
            "index": i, "resources": res, "node_id": nid,
            "node_ip": nodes.get(nid, {}).get("ip", ""), "gpu_id": None,
            "nvlink_domain": domain if nid else run.contract.domain_unknown,
            "topo_rank": rank if nid else run.contract.topo_rank_unknown,
            "port": 0, "pg": pg,
        })
    return {
        "name": name, "id": table.get("placement_group_id", pg.id.hex()),
        "state": table.get("state", ""), "strategy": table.get("strategy", ""),
        "created": created, "missing": False, "bundles": bundles,
    }


def probe_groups(run: Run, entries: List[Entry], spec: Spec) -> List[Json]:
    nodes = cluster_view(run)
    targets: List[Bundle] = []
    out: List[Json] = []
    for name, pg, created in entries:
        g = group_result(run, name, pg, placement_group_table(pg), created, nodes)
        out.append(g)
        if g["state"] == run.contract.state_created:
            targets.extend(g["bundles"])
    progress(run, "probing", ready=0, total=len(targets))
    probe(run, targets, spec, nodes)
    for g in out:
        for b in g["bundles"]:
            b.pop("pg", None)
    return out


# ---------------------------------------------------------------- node claims
#
# A cluster that selects its own nodes claims each of them in Ray's KV before
# it creates a group: one key per node, written only when absent, so two
# states applying at once can never both take a node. The loser gets the
# holders back (code nodes_claimed) and Go chooses again among the others.


def kv_put_new(run: Run, own: Json, key: str, value: Json, claimed: bool = False) -> bool:
    """Writes key only when it is absent; True when this call wrote it. With
    claimed, the key joins the run's claims inside the gate, so a stopped
    batch's cleanup sees every claim written."""
    raw = json.dumps(value, sort_keys=True)
    with run.gate:
        wrote = not internal_kv._internal_kv_put(key, raw, overwrite=False, namespace=own["kv_namespace"])
        if wrote and claimed:
            run.claimed.append(key)
        return wrote


def claim_is_stale(run: Run, claim: Json, stale_seconds: float) -> bool:
    """A claim whose groups are all gone for longer than stale_seconds was left
    by a run that died between claiming and creating, or by a cluster removed
    outside Terraform: it holds nothing any more."""
    if time.time() - float(claim.get("claimed_at") or 0) < stale_seconds:
        return False
    names = set(claim.get("groups") or [])
    live = placement_group_table() or {}
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
    for raw_key in internal_kv._internal_kv_list(prefix, namespace=own["kv_namespace"]) or []:
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


# ---------------------------------------------------------------- actions


def diff_group(run: Run, want: GroupSpec, table: Json, pg: Any) -> List[Json]:
    """How a live group differs from the wanted one, as facts (Go words
    them: contract.GroupDifference)."""
    diffs: List[Json] = []
    if table.get("strategy") != want["strategy"]:
        diffs.append({"field": "strategy", "have": table.get("strategy"), "want": want["strategy"]})
    have = table_bundles(table)
    wanted = [norm_bundle(b) for b in cast(List[Resources], want["bundles"])]  # a create's groups have bundles
    if len(have) != len(wanted):
        diffs.append({"field": "bundle_count", "have": len(have), "want": len(wanted)})
    else:
        for i, (h, w) in enumerate(zip(have, wanted)):
            if not same_bundle(run, h, w):
                diffs.append({"field": "bundle", "index": i, "have_resources": h, "want_resources": w})
    if is_detached(pg) is False:
        diffs.append({"field": "lifetime"})
    return diffs


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
        ready, pending = ray.wait(pending, num_returns=len(pending), timeout=min(1.0, left))
        for ref in ready:
            try:
                ray.get(ref)
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
            stats = placement_group_table(pg).get("stats") or {}
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
    record found by check_owner_for_create, or None)."""
    own = cast(Json, spec["own"])
    if record is None:
        run.new_record = True
    kv_put(run, own, own["key"], placed_record(run, own, [], record))
    kv_del(run, own, own["tombstone_key"])


def create_group(run: Run, g: GroupSpec) -> Any:
    """Creates one detached group of the spec and remembers it for cleanup."""
    name = g["name"]
    # Optional arguments only when set, so Ray versions without them still work.
    kwargs: Json = {"bundle_label_selector": g["selector"]} if g["selector"] else {}
    if g["topology_strategy"]:
        # Ray takes the node-level strategy inside topology_strategy, never both.
        kwargs["topology_strategy"] = g["topology_strategy"]
    else:
        kwargs["strategy"] = g["strategy"]
    try:
        with run.gate:
            run.inflight.add(name)
            pg = placement_group(bundles=g["bundles"], name=name, lifetime="detached", **kwargs)
    except Exception as e:  # noqa: BLE001
        run.inflight.discard(name)
        if "already exists" in str(e):
            raise DriverError("conflict", "created_concurrently", group=name)
        raise
    run.created[name] = pg
    run.inflight.discard(name)
    return pg


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
    claim_nodes(run, spec)  # before the record: a run that loses the race writes nothing
    if spec["own"]:
        record_owner_for_create(run, spec, record)
    entries: List[Entry] = []
    for g in groups:
        name = g["name"]
        hit = found[name]
        if hit:
            entries.append((name, hit[0], False))
            continue
        entries.append((name, create_group(run, g), True))
    progress(run, "created", created=len(run.created), adopted=len(entries) - len(run.created), total=len(entries))
    entries = wait_ready(run, entries, spec)
    out: Json = {"groups": probe_groups(run, entries, spec)}
    own = spec["own"]
    if own:
        out["record"] = placed_record(run, own, out["groups"], record, spec["rank_order"])
        kv_put(run, own, own["key"], out["record"])
    return out


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
    probed = {g["name"]: g for g in probe_groups(run, entries, spec)} if entries else {}
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
            record = placed_record(run, own, out, record if previous is None else None, spec["rank_order"])
            if previous is not None:
                record["created_at"] = previous["created_at"] or record["created_at"]
                result["previous_owner"] = previous
            kv_put(run, own, own["key"], record)
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
    own = cast(Json, spec["own"])  # Go sends a read action with its ownership
    groups: Groups = run.gcs or RayGroups(run)
    return {"record": kv_get(run, own, own["key"]), "tombstone": kv_get(run, own, own["tombstone_key"]),
            "missing": [g["name"] for g in spec["groups"] if groups.find(g["name"]) is None]}


class Groups(Protocol):
    """What a delete or read needs of named groups: RayGroups, or GcsDirect
    without ray."""

    def find(self, name: str) -> Any: ...

    def remove(self, pg: Any) -> None: ...

    def removed(self, pg: Any) -> bool: ...


class RayGroups:
    """Named groups through ray.util (after ray.init)."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def find(self, name: str) -> Any:
        hit = lookup(self.run, name)
        return hit[0] if hit else None

    @staticmethod
    def remove(pg: Any) -> None:
        remove_placement_group(pg)

    def removed(self, pg: Any) -> bool:
        removed = self.run.contract.state_removed
        return (placement_group_table(pg) or {}).get("state", removed) == removed


def wait_removed(groups: Groups, name: str, handle: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not groups.removed(handle):
        if time.monotonic() > deadline:
            raise DriverError("timeout", "not_removed", group=name, seconds=seconds)
        time.sleep(0.05)


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
        if own.get("node_claims"):
            release_cluster_claims(run, own)
        kv_del(run, own, own["key"])
        previous = other_owner(record)
        kv_put(run, own, own["tombstone_key"], {"deleted_by": own["owner"], "deleted_at": now(),
                                                 "record_owner": previous["owner"],
                                                 "record_created_at": previous["created_at"]})
    return {"removed": removed, "missing": missing}


# ---------------------------------------------------------------- GCS without ray (delete, record)

GENERATED = "_raytf_ray_generated"  # Ray's generated gRPC modules, loaded without ray/__init__
STATUS_OK, STATUS_NOT_FOUND = 0, 17  # ray::StatusCode


class GcsDirect:
    """The few GCS calls a delete or record needs, over gRPC with the stubs Ray ships,
    without importing ray (about a second) or ray.init (registering a
    driver). Used only when its first call works; otherwise the driver
    falls back to ray.init (e.g. an authentication it cannot present)."""

    def __init__(self, address: str, namespace: str, state_removed: str, call_seconds: float) -> None:
        import importlib
        import importlib.util
        import types

        root = cast(Any, importlib.util.find_spec("ray")).submodule_search_locations[0]
        if GENERATED not in sys.modules:
            pkg = types.ModuleType(GENERATED)
            pkg.__path__ = [os.path.join(root, "core", "generated")]
            sys.modules[GENERATED] = pkg
        import grpc

        stubs = importlib.import_module(GENERATED + ".gcs_service_pb2_grpc")
        self.pb = importlib.import_module(GENERATED + ".gcs_service_pb2")
        self.states = importlib.import_module(GENERATED + ".gcs_pb2").PlacementGroupTableData.PlacementGroupState
        channel = grpc.insecure_channel(address)
        self.kv = stubs.InternalKVGcsServiceStub(channel)
        self.pg = stubs.PlacementGroupInfoGcsServiceStub(channel)
        self.namespace = namespace
        self.state_removed = state_removed
        self.call_seconds = call_seconds
        self.metadata = auth_metadata()
        self.version = ray_version_of(root)

    def call(self, method: Any, request: Any) -> Any:
        reply = method(request, timeout=self.call_seconds, metadata=self.metadata)
        if reply.status.code not in (STATUS_OK, STATUS_NOT_FOUND):
            raise DriverError("internal", "gcs_status", status=reply.status.code, detail=reply.status.message)
        return reply

    def kv_get(self, key: str, ns: str) -> Optional[bytes]:
        reply = self.call(self.kv.InternalKVGet, self.pb.InternalKVGetRequest(key=key.encode(), namespace=ns.encode()))
        return reply.value if reply.status.code == STATUS_OK else None

    def kv_put(self, key: str, value: str, ns: str) -> None:
        self.call(self.kv.InternalKVPut, self.pb.InternalKVPutRequest(
            key=key.encode(), value=value.encode(), overwrite=True, namespace=ns.encode()))

    def kv_del(self, key: str, ns: str) -> None:
        self.call(self.kv.InternalKVDel, self.pb.InternalKVDelRequest(key=key.encode(), namespace=ns.encode()))

    def find(self, name: str) -> Optional[bytes]:
        reply = self.call(self.pg.GetNamedPlacementGroup, self.pb.GetNamedPlacementGroupRequest(
            name=name, ray_namespace=self.namespace))
        if not reply.HasField("placement_group_table_data"):
            return None
        data = reply.placement_group_table_data
        if not data.placement_group_id or self.states.Name(data.state) == self.state_removed:
            return None
        return data.placement_group_id

    def remove(self, pg_id: bytes) -> None:
        self.call(self.pg.RemovePlacementGroup, self.pb.RemovePlacementGroupRequest(placement_group_id=pg_id))

    def removed(self, pg_id: bytes) -> bool:
        reply = self.call(self.pg.GetPlacementGroup, self.pb.GetPlacementGroupRequest(placement_group_id=pg_id))
        return (not reply.HasField("placement_group_table_data")
                or self.states.Name(reply.placement_group_table_data.state) == self.state_removed)


def auth_metadata() -> Tuple[Tuple[str, str], ...]:
    """The token Ray's token authentication expects, from where ray would read it."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return ()
    token = os.environ.get("RAY_AUTH_TOKEN", "").strip()
    if not token:
        path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
        with open(path) as f:
            token = f.read().strip()
    if not token:
        raise ValueError("token authentication without a token")
    return (("authorization", "Bearer " + token),)


def ray_version_of(root: str) -> str:
    try:
        with open(os.path.join(root, "_version.py")) as f:
            for line in f:
                if line.startswith("version"):
                    return line.split("=", 1)[1].strip().strip("\"'")
    except OSError:
        pass
    return ""


# Actions that need only the internal KV and named placement groups (read: KV only).
DIRECT_ACTIONS = ("delete", "record", "read")


def connect_direct(run: Run, spec: Spec) -> bool:
    """Connects a delete, record or read to the GCS without ray; False (and a
    log line) when that does not work, so the caller uses ray.init."""
    address = os.environ.get("RAY_ADDRESS", "")
    if spec["action"] not in DIRECT_ACTIONS or "://" in address or ":" not in address:
        return False
    try:
        gcs = GcsDirect(address, spec["namespace"], run.contract.state_removed, run.contract.gcs_call_seconds)
        own = spec["own"]
        if own:  # the first call doubles as the connection check
            gcs.kv_get(own["key"], own["kv_namespace"])
        else:
            gcs.find(spec["groups"][0]["name"])
    except Exception as e:  # noqa: BLE001
        print("direct GCS connection unavailable (%s: %s); using ray.init" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return False
    run.gcs = gcs
    return True


# ---------------------------------------------------------------- main


def cleanup(run: Run) -> List[str]:
    """Removes the groups this run created; returns their names."""
    names: List[str] = []
    for name, pg in list(run.created.items()):
        try:
            remove_placement_group(pg)
            names.append(name)
        except Exception:  # noqa: BLE001
            pass
        run.created.pop(name, None)
    for name in list(run.inflight):  # interrupted inside placement_group()
        try:
            hit = lookup(run, name)
            if hit:
                remove_placement_group(hit[0])
                names.append(name)
        except Exception:  # noqa: BLE001
            pass
        run.inflight.discard(name)
    return names


def drop_new_record(run: Run) -> None:
    """Removes the record this failed run wrote for a cluster that was not there."""
    own = run.spec["own"] if run.spec else None
    if not own or not run.new_record:
        return
    try:
        if is_ours(own, kv_get(run, own, own["key"])):
            kv_del(run, own, own["key"])
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def ignore_signals() -> None:
    # Cleanup and the final report must not be interrupted half way. Only
    # the main thread may set handlers; a batch's threads leave them be.
    for s in (signal.SIGTERM, signal.SIGINT):
        try:
            signal.signal(s, signal.SIG_IGN)
        except (ValueError, OSError):
            pass


def signal_handler(run: Run) -> Callable[[int, Any], None]:
    def on_signal(signum: int, frame: Any) -> None:
        if run.stop_signal is not None:
            return
        run.stop_signal = signum
        ignore_signals()
        raise KeyboardInterrupt  # Ray converts this cleanly inside ray.get/wait

    return on_signal


def new_result(action: str) -> Json:
    return {"ok": False, "action": action, "error": None, "groups": [], "removed": [], "missing": [],
            "ray_version": ""}


def fail(run: Run, result: Json, e: BaseException) -> None:
    """Reports e in result and undoes what the run made."""
    ignore_signals()
    error: Json
    if run.stop_signal is not None:
        error = {"kind": "internal", "code": "stopped", "facts": {"signal": run.stop_signal}}
    elif isinstance(e, DriverError):
        error = {"kind": e.kind, "code": e.code, "facts": e.facts}
    elif isinstance(e, (KeyboardInterrupt, SystemExit)):
        error = {"kind": "internal", "code": "interrupted", "facts": {"type": type(e).__name__}}
    else:
        error = {"kind": "internal", "code": "exception", "facts": {"type": type(e).__name__, "detail": str(e)}}
        traceback.print_exc()
    result["ok"] = False
    result["removed"] = result["removed"] + cleanup(run)
    drop_new_record(run)
    if run.claimed and run.spec and run.spec["own"]:  # only a parsed create with ownership claims
        release_claims(run, run.spec["own"])
    result["groups"] = []
    result["error"] = error
    result.update(run.failure)


def connect(run: Run, specs: List[Spec], result: Json) -> float:
    """Connects for specs: straight to the GCS when every one of them allows
    it, else through ray.init. Sets the result's Ray version; returns the
    seconds spent importing ray."""
    if all(s["action"] in DIRECT_ACTIONS for s in specs) and connect_direct(run, specs[0]) and run.gcs:
        result["ray_version"] = run.gcs.version
        return 0.0
    t = time.monotonic()
    import_ray()
    imports = time.monotonic() - t
    result["ray_version"] = ray.__version__
    ray.init(namespace=specs[0]["namespace"], log_to_driver=False)
    return imports


def install_signal_handlers(run: Run) -> None:
    # ray.init installs its own SIGTERM handler; ours must come after it.
    signal.signal(signal.SIGTERM, signal_handler(run))
    signal.signal(signal.SIGINT, signal_handler(run))


ACTION_FUNCS: Dict[str, Callable[[Run, Spec], Json]] = {"create": do_create, "delete": do_delete, "inspect": do_inspect, "record": do_record, "read": do_read}


def run_single(run: Run, request: Json, result: Json) -> None:
    run.spec = spec = parse_request(run, request)
    result["action"] = spec["action"]
    imports = connect(run, [spec], result)
    install_signal_handlers(run)
    progress(run, "started", action=spec["action"], groups=len(spec["groups"]), imports=round(imports, 3),
             connect="gcs" if run.gcs else "ray.init")
    result.update(ACTION_FUNCS[spec["action"]](run, spec))
    ignore_signals()
    result["ok"] = True


def run_batch(run: Run, request: Json, result: Json) -> None:
    """Runs a batch's requests in threads, each with its own Run and result:
    one failing request fails (and cleans up) alone. A stop undoes every
    request that has not finished."""
    ops: List[Tuple[Run, Json]] = []
    for i, sub in enumerate(request["batch"]):
        op = Run()
        op.id, op.gate = "%s.%d" % (run.id, i), run.gate
        op_result = new_result(sub.get("action", "") if isinstance(sub, dict) else "")
        op_result["run_id"] = op.id
        try:
            op.spec = parse_request(op, sub, "batch[%d]." % i)
        except DriverError as e:
            fail(op, op_result, e)
        ops.append((op, op_result))
    result["batch"] = [r for _, r in ops]
    todo = [op for op, _ in ops if op.spec]
    if todo:
        run.contract = todo[0].contract
        connect(run, [op.spec for op in todo if op.spec], result)
    install_signal_handlers(run)
    progress(run, "started", action=BATCH, requests=len(ops), connect="gcs" if run.gcs else "ray.init")
    finished = set(i for i, (op, _) in enumerate(ops) if not op.spec)

    def work(i: int, op: Run, op_result: Json) -> None:
        spec = cast(Spec, op.spec)  # threads run only the parsed requests
        op.gcs = run.gcs
        op_result["ray_version"] = result["ray_version"]
        try:
            progress(op, "started", action=spec["action"], groups=len(spec["groups"]))
            op_result.update(ACTION_FUNCS[spec["action"]](op, spec))
            op_result["ok"] = True
        except BaseException as e:  # noqa: BLE001
            fail(op, op_result, e)
        with run.gate.lock:
            kept = not run.gate.closed
            if kept:
                finished.add(i)
        if kept:  # Go hands it to its caller before the batch ends
            progress(op, "result", result=op_result)

    threads = [threading.Thread(target=work, args=(i, op, r), daemon=True)
               for i, (op, r) in enumerate(ops) if op.spec]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)  # short joins, so a stop signal is handled at once
    except BaseException:
        ignore_signals()
        run.gate.close()
        for i, (op, op_result) in enumerate(ops):
            if i not in finished:
                op.stop_signal = run.stop_signal
                fail(op, op_result, KeyboardInterrupt())
        raise
    ignore_signals()
    result["ok"] = True


def main() -> None:
    run = Run()
    result = new_result("")
    try:
        request = load_request(run, sys.argv)
        if request.get("action") == BATCH:
            result["action"] = BATCH
            run_batch(run, request, result)
        else:
            run_single(run, request, result)
    except BaseException as e:  # noqa: BLE001
        fail(run, result, e)
        for op_result in result.get("batch", []):  # e.g. ray.init failed: the batch's error is theirs
            if not op_result["ok"] and op_result["error"] is None:
                op_result["error"] = result["error"]
    emit(run, "RAYTF_RESULT", result, leading_newline=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # The groups are detached and outlive us: skipping ray.shutdown() saves
    # about a second per job (and, when stopped, beats the supervisor's SIGKILL).
    os._exit(0 if result["ok"] else 1)


main()
