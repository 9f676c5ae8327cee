"""A create: claims, the record before any group, groups created or adopted,
the wait with its recreate loop and its infeasible-or-timeout verdict, the
probe (ports unique per IP) and the record with the placement; a failure
undoes what the run made."""

from __future__ import annotations

from typing import Any, Dict

import fake_ray


def own(r: Dict[str, Any]) -> Dict[str, Any]:
    return r["ownership"]


def test_create_places_probes_and_records(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    d = drive(r)
    assert d.code == 0 and d.result["ok"], d.result
    assert [p for p in d.phases() if p != "unlocked"][:4] == ["started", "lookup", "reserved", "created"] and "probing" in d.phases()
    groups = d.result["groups"]
    assert [g["name"] for g in groups] == [g["name"] for g in r["groups"]] and all(g["created"] for g in groups)
    ports = {}
    for g in groups:
        for b in g["bundles"]:
            low, high = r["probe"]["port_range_low"], r["probe"]["port_range_high"]
            assert b["node_ip"] == cluster.nodes[b["node_id"]]["ip"] and low <= b["port"] < high
            assert b["gpu_id"] == b["index"]  # the probe took a GPU fraction: its bundle's GPU
            ports.setdefault(b["node_ip"], set()).add(b["port"])
    stored = cluster.kv_value(own(r)["key"], own(r)["kv_namespace"])
    assert stored == d.result["record"] and stored["owner"] == own(r)["owner"]
    assert [b["port"] for b in stored["bundles"]] == [g["bundles"][0]["port"] for g in groups]
    assert stored["master_address"] == stored["bundles"][0]["node_ip"]


def test_create_adopts_its_own_groups(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    assert drive(r).result["ok"]
    d = drive(r)
    assert d.result["ok"] and not any(g["created"] for g in d.result["groups"]) and len(cluster.groups) == 2


def test_create_refuses_a_group_of_another_shape(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    assert drive(r).result["ok"]
    r["groups"][0]["bundles"] = [{"CPU": 2.0, "GPU": 1.0}]
    d = drive(r)
    assert d.result["error"]["code"] == "groups_differ"
    assert d.result["error"]["facts"]["groups"][0]["differences"][0]["field"] == "bundle"


def test_group_removed_during_wait_is_created_again(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    removed = []

    def remove_once(c: fake_ray.Cluster) -> None:
        if not removed:
            removed.append(c.groups[0].name)
            c.remove(c.groups[0])

    cluster.on_wait = remove_once
    d = drive(r)
    assert d.result["ok"], d.result
    assert "recreated" in d.phases() and removed == [r["groups"][0]["name"]]
    assert [g.state for g in cluster.groups] == ["REMOVED", "CREATED", "CREATED"]


def test_recreates_are_bounded(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    cluster.on_wait = lambda c: [c.remove(g) for g in c.groups if g.state == "CREATED"]
    d = drive(r)
    assert d.result["error"]["code"] == "exception" and d.result["error"]["facts"]["type"] == "TaskPlacementGroupRemoved"
    first = r["groups"][0]["name"]
    assert [p["name"] for p in d.progress if p["phase"] == "recreated"].count(first) == r["contract"]["max_recreates"]


def test_unschedulable_groups_are_infeasible(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    r["ready_timeout_seconds"] = 0.3
    r["groups"][1]["bundles"] = [{"CPU": 1.0, "GPU": 4.0}]  # no node has 4 GPUs
    d = drive(r)
    err = d.result["error"]
    assert err["kind"] == "infeasible" and err["code"] == "not_ready" and err["facts"]["infeasible"] is True
    assert d.result["pending"] == [r["groups"][1]["name"]] and len(d.result["nodes"]) == 2
    # The run undoes what it made, and the record it wrote for a new cluster.
    assert sorted(d.result["removed"]) == sorted(g["name"] for g in r["groups"])
    assert all(g.state == "REMOVED" for g in cluster.groups) and cluster.kv_value(own(r)["key"], own(r)["kv_namespace"]) is None


def test_groups_that_fit_later_time_out(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    r["ready_timeout_seconds"] = 0.3
    r["groups"][1]["bundles"] = [{"CPU": 1.0, "GPU": 2.0}]
    r["groups"][0]["bundles"] = [{"CPU": 1.0, "GPU": 2.0}]
    blocker = __import__("ray.util.placement_group", fromlist=["x"]).placement_group([{"GPU": 2.0}], name="other")
    assert blocker.state == "CREATED"
    d = drive(r)
    err = d.result["error"]
    assert err["kind"] == "timeout" and err["code"] == "not_ready" and err["facts"]["infeasible"] is False
