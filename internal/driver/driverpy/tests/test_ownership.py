"""The ownership decisions: a run acts only on the cluster its record says is
this state's (is_ours), and never touches another owner's record or groups."""

from __future__ import annotations

from typing import Any, Dict

import fake_ray
from driverpy.kv import owner_digest


def own(r: Dict[str, Any]) -> Dict[str, Any]:
    return r["ownership"]


def set_record(cluster: fake_ray.Cluster, r: Dict[str, Any], owner: str) -> None:
    cluster.kv_set(own(r)["key"], {"owner": owner, "created_at": "2026-12-02T18:00:00Z"}, own(r)["kv_namespace"])


def record(cluster: fake_ray.Cluster, r: Dict[str, Any], key: str = "key") -> Any:
    return cluster.kv_value(own(r)[key], own(r)["kv_namespace"])


def make_groups(cluster: fake_ray.Cluster, r: Dict[str, Any]) -> None:
    placement_group = __import__("ray.util.placement_group", fromlist=["x"]).placement_group
    for g in r["groups"]:
        placement_group([{"CPU": 1.0, "GPU": 1.0}], name=g["name"], lifetime="detached")


def test_delete_leaves_other_owners_groups_alone(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["delete"]
    make_groups(cluster, r)
    set_record(cluster, r, "other")
    d = drive(r)
    assert d.result["ok"] and d.result["removed"] == [] and d.result["missing"] == []
    assert d.result["other_owner"] == {"owner": owner_digest("other"), "created_at": "2026-12-02T18:00:00Z", "has_record": True}
    assert record(cluster, r)["owner"] == "other"
    assert all(g.state == "CREATED" for g in cluster.groups)
    # Groups without any record are not this state's either.
    cluster.kv.clear()
    d = drive(r)
    assert d.result["ok"] and d.result["other_owner"]["has_record"] is False and d.result["removed"] == []
    # A state from before owners existed (owner "") may delete unrecorded groups.
    own(r)["owner"] = ""
    d = drive(r)
    assert d.result["ok"] and "other_owner" not in d.result
    assert sorted(d.result["removed"]) == sorted(g["name"] for g in r["groups"])


def test_delete_by_owner_leaves_tombstone(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["delete"]
    set_record(cluster, r, own(r)["owner"])
    d = drive(r)
    assert d.result["ok"] and "other_owner" not in d.result and len(d.result["missing"]) == len(r["groups"])
    assert record(cluster, r) is None
    tomb = record(cluster, r, "tombstone_key")
    assert tomb["deleted_by"] == own(r)["owner"] and tomb["record_owner"] == own(r)["owner"] and tomb["deleted_at"]
    # An inspect reports it, for a state that finds its cluster gone.
    i = requests["inspect_nowrite"]
    own(i)["owner"] = "former"
    d = drive(i)
    assert d.result["ok"] and d.result["tombstone"]["deleted_by"] == own(r)["owner"]


def test_create_refuses_groups_it_does_not_own(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["create"]
    make_groups(cluster, r)
    set_record(cluster, r, "other")
    d = drive(r)
    err = d.result["error"]
    assert not d.result["ok"] and err["kind"] == "conflict" and err["code"] == "groups_exist"
    assert err["facts"]["other"] == {"owner": owner_digest("other"), "created_at": "2026-12-02T18:00:00Z", "has_record": True}
    assert record(cluster, r)["owner"] == "other"
    cluster.kv.clear()
    d = drive(r)
    assert d.result["error"]["code"] == "groups_exist" and d.result["error"]["facts"]["other"]["has_record"] is False
    assert cluster.kv == {}  # a refused create writes nothing
    assert len(cluster.groups) == len(r["groups"])  # nor removes what it did not make


def test_update_refuses_another_owners_cluster(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["inspect"]
    set_record(cluster, r, "other")
    d = drive(r)
    assert d.result["error"]["code"] == "taken_over" and d.result["error"]["facts"]["other"]["owner"] == owner_digest("other")
    assert record(cluster, r)["owner"] == "other"


def test_import_takes_over_and_keeps_creation_time(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["inspect"]
    make_groups(cluster, r)
    set_record(cluster, r, "other")
    own(r)["claim"] = True
    d = drive(r)
    assert d.result["ok"] and d.result["previous_owner"]["owner"] == owner_digest("other")
    stored = record(cluster, r)
    assert stored["owner"] == own(r)["owner"] and stored["created_at"] == "2026-12-02T18:00:00Z"


def test_record_rewrites_only_its_own_record(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["record"]
    set_record(cluster, r, own(r)["owner"])
    d = drive(r)
    assert d.result["ok"] and d.result["record"]["created_at"] == "2026-12-02T18:00:00Z" and d.result["record"]["updated_at"]
    stored = record(cluster, r)
    assert stored["owner"] == own(r)["owner"] and stored["groups"] == own(r)["manifest"]["groups"]
    set_record(cluster, r, "other")
    d = drive(r)
    assert d.result["error"]["kind"] == "conflict" and d.result["error"]["code"] == "record_taken"
    assert record(cluster, r)["owner"] == "other"


def test_read_writes_nothing(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["read"]
    set_record(cluster, r, "someone")
    before = dict(cluster.kv)
    d = drive(r)
    assert d.result["ok"] and d.result["record"]["owner"] == owner_digest("someone") and d.result["tombstone"] is None
    assert d.result["missing"] == [g["name"] for g in r["groups"]]
    assert cluster.kv == before
    cluster.kv.clear()
    d = drive(r)
    assert d.result["ok"] and d.result["record"] is None and cluster.kv == {}


def test_read_reports_the_groups_outside_its_namespace(cluster: Any, requests: Any, drive: Any) -> None:
    r = requests["read"]
    make_groups(cluster, {"groups": r["groups"][:1]})
    d = drive(r)
    assert d.result["ok"] and d.result["missing"] == [r["groups"][1]["name"]]


def winner_after_lookup(cluster: fake_ray.Cluster, r: Dict[str, Any], monkeypatch: Any, reserved: bool, recorded: bool) -> None:
    """Another state declaring the same cluster (owner "winner") applies
    right after this run's lookups found nothing: it reserves, records and
    creates the groups before this run reserves."""
    actions = __import__("driverpy.actions", fromlist=["x"])
    real = __import__("driverpy.groups", fromlist=["x"]).lookup
    names = [g["name"] for g in r["groups"]]

    def lookup(run: Any, name: str) -> Any:
        hit = real(run, name)
        if name == names[-1]:
            resv = own(r)["reservation"]
            if reserved:
                cluster.kv_set(resv["key"], {"cluster": resv["cluster"], "owner": "winner", "groups": resv["groups"], "nodes": {},
                                             "token": "t-winner", "claimed_at": 1e10}, own(r)["kv_namespace"])
            if recorded:
                set_record(cluster, r, "winner")
            make_groups(cluster, r)
        return hit

    monkeypatch.setattr(actions, "lookup", lookup)


def test_a_same_name_race_leaves_the_winner_whole(cluster: Any, requests: Any, drive: Any, monkeypatch: Any) -> None:
    for reserved, recorded in ((True, True), (True, False), (False, True)):
        cluster.kv.clear()
        cluster.groups.clear()
        r = requests["create"]
        winner_after_lookup(cluster, r, monkeypatch, reserved, recorded)
        d = drive(r)
        assert d.result["error"]["code"] == "groups_exist", (reserved, recorded, d.result)
        assert d.result["error"]["facts"]["other"]["owner"] == owner_digest("winner")
        assert d.result["removed"] == [] and [g.state for g in cluster.groups] == ["CREATED", "CREATED"]
        held = cluster.kv_value(own(r)["reservation"]["key"], own(r)["kv_namespace"])
        assert (held["token"] == "t-winner") if reserved else held is None
        assert (record(cluster, r)["owner"] == "winner") if recorded else record(cluster, r) is None
        assert cluster.kv_value(own(r)["reservation"]["lock_key"], own(r)["kv_namespace"]) is None


def test_a_cluster_removed_outside_terraform_frees_its_name(cluster: Any, requests: Any, drive: Any) -> None:
    """Its groups removed out of band, a cluster is planned anew with a new owner token: the old owner's record and
    reservation, whose recorded groups are all gone, do not refuse the create."""
    r = requests["create"]
    assert drive(r).result["ok"]
    for g in list(cluster.groups):
        cluster.remove(g)
    again = dict(r, ownership=dict(own(r), owner=owner_digest("new-owner")))
    again["ownership"]["reservation"] = dict(own(r)["reservation"], owner=owner_digest("new-owner"))
    d = drive(again)
    assert d.result["ok"], d.result
    assert record(cluster, r)["owner"] == owner_digest("new-owner")
