"""A resize: the kept groups are adopted untouched (their recorded GPU ids
and ports stay, nothing runs in their bundles), the added ones are created
and waited for before the removed ones go, and a failure removes only what
the run added."""

from __future__ import annotations

import contextlib
import time
from typing import Any, Dict, Iterator

import fake_ray
from driverpy import actions


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


def kv(cluster: fake_ray.Cluster, r: Dict[str, Any], key: str) -> Any:
    return cluster.kv_value(key, r["ownership"]["kv_namespace"])


def test_a_shrink_under_a_lowered_quota_lands(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """The groups it removes are its own, not outside ones: a team gets
    under its quota by shrinking; a grow still counts its kept groups."""
    created(requests, drive)  # 2 GPUs held
    r = requests["resize_grow"]
    cluster.kv_set("quota/terraform-ray", {"namespace": "terraform-ray", "owner": "q", "limits": {"GPU": 2.0}},
                   r["ownership"]["kv_namespace"])
    err = drive(r).result["error"]
    assert err["code"] == "quota_exceeded" and err["facts"]["quota_holders"] == [], err
    cluster.kv_set("quota/terraform-ray", {"namespace": "terraform-ray", "owner": "q", "limits": {"GPU": 1.0}},
                   r["ownership"]["kv_namespace"])
    d = drive(requests["resize_shrink"])
    assert d.result["ok"], d.result
    assert names(cluster) == ["vc-node0"]


def test_a_shrink_of_a_cluster_ray_places_waits_for_nobody(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """Another state's create still being placed is no reason for a shrink to wait or fail."""
    created(requests, drive)
    r = requests["resize_shrink"]
    r["contract"]["pending_wait_seconds"] = 0
    resv = r["ownership"]["reservation"]
    other = resv["prefix"] + "ns/placing"
    cluster.kv_set(other, {"cluster": "ns/placing", "owner": "o", "groups": ["placing-node0"], "nodes": {"node-3": {"GPU": 1.0}}, "token": "t",
                           "claimed_at": time.time(), "placing": True, "unplaced": [{"GPU": 1.0}]}, r["ownership"]["kv_namespace"])
    d = drive(r)
    assert d.result["ok"], d.result
    held = kv(cluster, r, resv["key"])
    assert held["groups"] == ["vc-node0"] and sum(v.get("GPU", 0.0) for v in held["nodes"].values()) == 1.0
    assert kv(cluster, r, resv["lock_key"]) is None


def test_a_grow_of_a_cluster_ray_places_lists_only_the_added_bundles_unplaced(cluster: fake_ray.Cluster, requests: Any,
                                                                              drive: Any, monkeypatch: Any) -> None:
    """Its kept groups stay reserved where they are: another state's
    pinned create does not take them for bundles that may land anywhere."""
    created(requests, drive)
    r = requests["resize_grow"]
    resv = r["ownership"]["reservation"]
    seen = []

    @contextlib.contextmanager
    def watch(run: Any, spec: Any) -> Iterator[None]:
        seen.append(kv(cluster, r, resv["key"]))
        yield

    monkeypatch.setattr(actions, "keep_reservation", watch)
    assert drive(r).result["ok"]
    assert seen[0]["placing"] and seen[0]["unplaced"] == [{"CPU": 1.0, "GPU": 1.0}]
    assert sum(v.get("GPU", 0.0) for v in seen[0]["nodes"].values()) == 2.0  # the kept bundles, where they are
    held = kv(cluster, r, resv["key"])
    assert not held["placing"] and held["unplaced"] == [] and len(held["group_ids"]) == 3


def test_a_stop_while_removing_leaves_the_rest_and_reports_the_resize(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                                                       monkeypatch: Any) -> None:
    """After the record is written the resize stands: a stop (an update's
    timeout) ends the removals, which it reports as left, not as a failure."""
    created(requests, drive)
    assert drive(requests["resize_grow"]).result["ok"]

    def stopped(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(actions, "wait_removed", stopped)
    d = drive(requests["resize_shrink"])
    assert d.result["ok"], d.result
    assert d.result["removed"] == [] and d.result["not_removed"] == ["vc-node1", "vc-node2"]
    assert [g["name"] for g in d.result["record"]["groups"]] == ["vc-node0"]


def test_a_failure_after_the_commit_says_it_committed(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                                      monkeypatch: Any) -> None:
    created(requests, drive)

    def stopped(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(actions, "remove_groups", stopped)
    d = drive(requests["resize_grow"])
    assert not d.result["ok"] and d.result["committed"] and d.result["not_removed"] == []
    assert [g["name"] for g in d.result["groups"]] == ["vc-node0", "vc-node1", "vc-node2"]
    assert names(cluster) == ["vc-node0", "vc-node1", "vc-node2"]  # nothing undone
    stored = kv(cluster, requests["resize_grow"], requests["resize_grow"]["ownership"]["key"])
    assert stored == d.result["record"]
