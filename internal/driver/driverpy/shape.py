# The request: Go builds and validates every request (contract.Request.Validate);
# the driver checks only the version and that each field has its type.

from __future__ import annotations

import base64
import json
import math
import zlib
from dataclasses import fields
from typing import Any, Callable, Dict, List, Tuple

from .contract import ACTIONS, BATCH, Contract, DriverError, GroupSpec, Json, REQUEST_VERSION, Spec
from .runstate import Run


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
    "quota": "?obj", "remove_groups": "?list", "alternatives": "?list",
}
BATCH_SHAPE = {"version": "int", "action": "str", "namespace": "str", "batch": "list", "run_id": "?str"}
ALTERNATIVE_SHAPE = {"groups": "list", "manifest": "obj", "nodes": "obj"}
GROUP_SHAPE = {"name": "str", "strategy": "str", "bundles": "?bundles", "bundle_label_selector": "?selectors",
               "topology_strategy": "?strmap"}
PROBE_SHAPE = {"use_gpus": "bool", "port_range_low": "int", "port_range_high": "int", "topology": "obj", "keep_recorded": "?bool"}
TOPOLOGY_SHAPE = {"domain_label": "?str", "rank_label": "?str"}
OWNERSHIP_SHAPE = {"kv_namespace": "str", "key": "str", "tombstone_key": "str", "owner": "str", "claim": "bool",
                   "manifest": "?obj", "reservation": "?obj", "list_reservations": "?str"}
RESERVATION_SHAPE = {"key": "str", "prefix": "str", "lock_key": "str", "cluster": "str", "groups": "list", "nodes": "?obj",
                     "count_live": "bool", "exclusive": "bool", "stale_seconds": "num", "lock_stale_seconds": "num",
                     "owner_prefix_length": "int"}
QUOTA_SHAPE = {"kv_namespace": "str", "key": "str", "namespace": "str", "reservation_prefix": "str", "owner": "str",
               "owner_prefix_length": "int", "limits": "?obj", "usage": "bool", "claim": "bool", "stale_seconds": "num"}
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
        spec = json.loads(zlib.decompress(base64.b85decode(argv[1])).decode("utf-8"))
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
    groups = parse_groups(spec["groups"], where)
    alternatives = []
    for i, alt in enumerate(spec.get("alternatives") or []):
        at = where + "alternatives[%d]" % i
        if not isinstance(alt, dict):
            raise DriverError("invalid", "request_field", field=at, want="object")
        check_shape(alt, ALTERNATIVE_SHAPE, at + ".")
        alternatives.append({"groups": parse_groups(alt["groups"], at + "."), "manifest": alt["manifest"], "nodes": alt["nodes"]})
    if spec.get("ownership") is not None:
        check_shape(spec["ownership"], OWNERSHIP_SHAPE, where + "ownership.")
        if spec["ownership"].get("reservation") is not None:
            check_shape(spec["ownership"]["reservation"], RESERVATION_SHAPE, where + "ownership.reservation.")
    if spec.get("rank_order") is not None:
        check_shape(spec["rank_order"], RANK_ORDER_SHAPE, where + "rank_order.")
    if spec.get("quota") is not None:
        check_shape(spec["quota"], QUOTA_SHAPE, where + "quota.")
    run.contract = Contract.from_request(spec["contract"])
    run.topo = {k: spec["probe"]["topology"].get(k) or "" for k in run.topo}
    probe_spec = spec["probe"]
    return {
        "action": spec["action"],
        "namespace": spec["namespace"],
        "timeout": float(spec["ready_timeout_seconds"]),
        "groups": groups,
        "alternatives": alternatives,
        "use_gpus": probe_spec["use_gpus"],
        "port_low": probe_spec["port_range_low"],
        "port_high": probe_spec["port_range_high"],
        "keep_recorded": bool(probe_spec.get("keep_recorded")),
        "own": spec.get("ownership"),
        "rank_order": spec.get("rank_order"),
        "quota": spec.get("quota"),
        "remove": [str(n) for n in spec.get("remove_groups") or []],
    }


def parse_groups(raw: List[Any], where: str) -> List[GroupSpec]:
    """The groups of a request (or of one of its alternatives), checked."""
    out: List[GroupSpec] = []
    for i, g in enumerate(raw):
        if not isinstance(g, dict):
            raise DriverError("invalid", "request_field", field=where + "groups[%d]" % i, want="object")
        check_shape(g, GROUP_SHAPE, where + "groups[%d]." % i)
        out.append({"name": g["name"], "strategy": g["strategy"], "bundles": g["bundles"],
                    "selector": g.get("bundle_label_selector"), "topology_strategy": g.get("topology_strategy")})
    return out
