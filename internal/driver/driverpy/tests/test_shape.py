"""The driver checks a request's version and each field's type (Go checks the
values: contract.Request.Validate), and reports a bad one as facts."""

from __future__ import annotations

from typing import Any, Callable, Dict

import pytest


def group(r: Dict[str, Any]) -> Dict[str, Any]:
    return r["groups"][0]


def drop(d: Dict[str, Any], key: str) -> None:
    del d[key]


# (change to a valid create, the field reported, the type it wants)
BAD_FIELDS = [
    (lambda r: drop(r, "version"), "version", "integer"),
    (lambda r: r.update(action="explode"), "action", "one of create, delete, inspect, record, read, quota, resize"),
    (lambda r: drop(r, "contract"), "contract", "object"),
    (lambda r: drop(r["contract"], "domain_prefix"), "contract.domain_prefix", "string"),
    (lambda r: r["contract"].update(port_tries=1.5), "contract.port_tries", "integer"),
    (lambda r: r["contract"].update(amount_unit="x"), "contract.amount_unit", "number"),
    (lambda r: drop(r["contract"], "takeover_seconds"), "contract.takeover_seconds", "integer"),
    (lambda r: r.update(namespace=3), "namespace", "string"),
    (lambda r: r.update(ready_timeout_seconds="soon"), "ready_timeout_seconds", "number"),
    (lambda r: r.update(groups={}), "groups", "list"),
    (lambda r: r.update(groups=["a"]), "groups[0]", "object"),
    (lambda r: group(r).update(name=None), "groups[0].name", "string"),
    (lambda r: group(r).update(strategy=None), "groups[0].strategy", "string"),
    (lambda r: group(r).update(bundles=[{"CPU": True}]), "groups[0].bundles", "list of resource maps"),
    (lambda r: group(r).update(bundle_label_selector=[1]), "groups[0].bundle_label_selector", "list of string maps"),
    (lambda r: r["probe"].update(port_range_low="9"), "probe.port_range_low", "integer"),
    (lambda r: r.update(ownership={"key": "k"}), "ownership.kv_namespace", "string"),
    (lambda r: r.update(rank_order={"segment_size": 2}), "rank_order.gpus_per_node", "integer"),
    (lambda r: r["ownership"]["reservation"].update(count_live="yes"), "ownership.reservation.count_live", "boolean"),
]


@pytest.mark.parametrize("change,field,want", BAD_FIELDS, ids=[f for _, f, _ in BAD_FIELDS])
def test_reports_each_wrong_field(cluster: Any, requests: Any, drive: Any,
                                  change: Callable[[Dict[str, Any]], None], field: str, want: str) -> None:
    r = requests["create_selected"]
    change(r)
    d = drive(r)
    assert d.code == 1 and not d.result["ok"]
    assert d.result["error"] == {"kind": "invalid", "code": "request_field", "facts": {"field": field, "want": want}}
    assert not cluster.groups and not cluster.kv and not cluster.inits  # nothing reached Ray


def test_reports_another_version(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["create"]
    r["version"] += 1
    d = drive(r)
    assert d.result["error"] == {"kind": "invalid", "code": "request_version",
                                 "facts": {"version": r["version"], "reads": r["version"] - 1}}


@pytest.mark.parametrize("arg,code", [("%%%", "undecodable"), ("[1, 2]", None)])
def test_reports_undecodable_and_non_object_requests(cluster: Any, drive: Any, arg: str, code: Any) -> None:
    d = drive(arg) if code else drive([1, 2])
    assert d.code == 1 and d.result["error"]["kind"] == "invalid"
    if code:
        assert d.result["error"]["code"] == code
    else:
        assert d.result["error"]["facts"] == {"field": "request", "want": "object"}


def test_reports_a_failed_ray_init_with_its_run(cluster: Any, requests: Any, drive: Any) -> None:
    cluster.init_error = "no cluster here"
    r = requests["delete"]
    r["run_id"] = "r1"
    d = drive(r)
    assert d.code == 1
    assert d.result["run_id"] == "r1" and d.result["action"] == "delete" and d.result["ray_version"] == cluster.version
    assert d.result["error"] == {"kind": "internal", "code": "exception",
                                 "facts": {"type": "ConnectionError", "detail": "no cluster here"}}
