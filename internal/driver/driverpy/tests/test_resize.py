"""A resize: the kept groups are adopted untouched (their recorded GPU ids
and ports stay, nothing runs in their bundles), the added ones are created
and waited for before the removed ones go, and a failure removes only what
the run added."""

from __future__ import annotations

from typing import Any, Dict

import fake_ray


def names(cluster: fake_ray.Cluster) -> list:
    return sorted(g.name for g in cluster.groups if g.state != "REMOVED")


def probing_total(d: Any) -> int:
    return [p for p in d.progress if p["phase"] == "probing"][-1]["total"]


def created(requests: Dict[str, Any], drive: Any) -> Dict[str, Any]:
    d = drive(requests["create"])
    assert d.result["ok"], d.result
    return d.result


def test_grow_keeps_groups_and_probes_only_the_added(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    before = created(requests, drive)
    r = requests["resize_grow"]
    d = drive(r)
    assert d.result["ok"], d.result
    groups = d.result["groups"]
    assert [g["name"] for g in groups] == ["vc-node0", "vc-node1", "vc-node2"]
    assert [g["created"] for g in groups] == [False, False, True]
    assert [g["id"] for g in groups[:2]] == [g["id"] for g in before["groups"]]
    assert [g["bundles"] for g in groups[:2]] == [g["bundles"] for g in before["groups"]]  # GPU ids and ports kept
    assert probing_total(d) == 1  # only the added bundle was probed
    stored = cluster.kv_value(r["ownership"]["key"], r["ownership"]["kv_namespace"])
    assert stored == d.result["record"] and [g["name"] for g in stored["groups"]] == ["vc-node0", "vc-node1", "vc-node2"]
    assert stored["created_at"] == before["record"]["created_at"] and len(stored["bundles"]) == 3
    assert names(cluster) == ["vc-node0", "vc-node1", "vc-node2"]


def test_shrink_removes_after_and_keeps_the_rest(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    created(requests, drive)
    assert drive(requests["resize_grow"]).result["ok"]
    kept_id = [g.id for g in cluster.groups if g.name == "vc-node0"]
    d = drive(requests["resize_shrink"])
    assert d.result["ok"], d.result
    assert sorted(d.result["removed"]) == ["vc-node1", "vc-node2"] and not d.result.get("not_removed")
    assert [g["name"] for g in d.result["groups"]] == ["vc-node0"] and d.result["groups"][0]["created"] is False
    assert names(cluster) == ["vc-node0"] and [g.id for g in cluster.groups if g.name == "vc-node0"] == kept_id
    assert probing_total(d) == 0
    assert [g["name"] for g in d.result["record"]["groups"]] == ["vc-node0"]


def test_failed_grow_removes_only_what_it_added(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    before = created(requests, drive)
    r = requests["resize_grow"]
    r["groups"][2]["bundles"] = [{"CPU": 1.0, "GPU": 64.0}]  # never fits
    r["ready_timeout_seconds"] = 1
    d = drive(r)
    assert not d.result["ok"] and d.result["removed"] == ["vc-node2"]
    assert names(cluster) == ["vc-node0", "vc-node1"]
    stored = cluster.kv_value(r["ownership"]["key"], r["ownership"]["kv_namespace"])
    assert stored == before["record"]  # the record still holds the kept shape


def test_resize_of_another_states_cluster_is_refused(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    created(requests, drive)
    r = requests["resize_grow"]
    r["ownership"]["owner"] = "sha256:" + "0" * 64
    d = drive(r)
    assert d.result["error"]["code"] == "taken_over" and names(cluster) == ["vc-node0", "vc-node1"]
