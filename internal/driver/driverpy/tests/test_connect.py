"""Connecting: a delete, record or read goes straight to the GCS when it can,
and falls back to ray.init when the direct connection does not work."""

from __future__ import annotations

from typing import Any

import pytest

import fake_ray
from driverpy.kv import owner_digest


def test_falls_back_to_ray_init(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # host:port: a direct GCS address; the fake ray has no stubs
    d = drive(requests["delete"])
    assert d.result["ok"] and "direct GCS connection unavailable" in d.output
    assert d.progress[0]["connect"] == "ray.init" and len(cluster.inits) == 1


@pytest.mark.parametrize("address", ["http://127.0.0.1:8265", ""])
def test_a_dashboard_address_uses_ray_init(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                           monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    monkeypatch.setenv("RAY_ADDRESS", address)
    d = drive(requests["read"])
    assert d.result["ok"] and "direct GCS" not in d.output and d.progress[0]["connect"] == "ray.init"


def test_create_never_goes_direct(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    d = drive(requests["create"])
    assert d.result["ok"] and "direct GCS" not in d.output


def test_a_batch_fails_its_requests_alone(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    good, bad = requests["create"], requests["read"]
    bad["version"] = "x"
    batch = {"version": good["version"], "action": "batch", "namespace": good["namespace"], "run_id": "b",
             "batch": [good, bad]}
    d = drive(batch)
    assert d.result["ok"] and d.code == 0
    first, second = d.result["batch"]
    assert first["ok"] and first["run_id"] == "b.0" and len(first["groups"]) == 2
    assert not second["ok"] and second["error"]["code"] == "request_field"
    assert [p["result"]["run_id"] for p in d.progress if p["phase"] == "result"] == ["b.0"]


def test_a_batch_runs_each_request_to_its_own_result(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    delete, rewrite = requests["delete"], requests["record"]
    key, kv_ns = delete["ownership"]["key"], delete["ownership"]["kv_namespace"]
    cluster.kv_set(key, {"owner": "other", "created_at": "2026-12-02T18:00:00Z"}, kv_ns)
    __import__("ray.util.placement_group", fromlist=["x"]).placement_group([{"CPU": 1.0}], name=delete["groups"][0]["name"])
    rewrite["ownership"]["owner"] = "other"
    spoiled = requests["read"]
    spoiled["version"] = 99
    batch = {"version": delete["version"], "action": "batch", "namespace": delete["namespace"], "run_id": "b1",
             "batch": [delete, rewrite, spoiled]}
    d = drive(batch)
    assert d.result["ok"] and [r["run_id"] for r in d.result["batch"]] == ["b1.0", "b1.1", "b1.2"]
    non_owner, owner, bad = d.result["batch"]
    assert non_owner["ok"] and non_owner["other_owner"]["owner"] == owner_digest("other") and non_owner["removed"] == []
    assert owner["ok"] and owner["record"]["owner"] == owner_digest("other")
    assert bad["error"]["code"] == "request_version" and bad["error"]["facts"]["version"] == 99
    assert cluster.groups[0].state == "CREATED"


def test_a_batch_that_cannot_connect_fails_each_request(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    cluster.init_error = "no cluster here"
    create = requests["create"]
    batch = {"version": create["version"], "action": "batch", "namespace": create["namespace"], "run_id": "b2",
             "batch": [create, requests["inspect"]]}
    d = drive(batch)
    assert not d.result["ok"] and len(d.result["batch"]) == 2
    for sub in d.result["batch"]:
        assert not sub["ok"] and sub["error"]["facts"]["detail"] == "no cluster here"


def test_direct_gcs_reads_ray_version_from_package_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from driverpy.gcs_direct import installed_ray_version

    asked = []
    monkeypatch.setattr(importlib.metadata, "version", lambda name: asked.append(name) or "2.60.0")
    assert installed_ray_version() == "2.60.0" and asked == ["ray"]

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert installed_ray_version() == ""  # ray on PYTHONPATH without its dist-info
