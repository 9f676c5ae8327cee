"""Node claims: every node or none, holders reported, stale claims taken over
once (the takeover key), takeover keys of killed runs removed after
takeover_seconds, and only this run's (or on delete, this cluster's) claims released."""

from __future__ import annotations

import time
from typing import Any, Dict

import fake_ray


def claims(r: Dict[str, Any]) -> Dict[str, Any]:
    return r["ownership"]["node_claims"]


def ns(r: Dict[str, Any]) -> str:
    return r["ownership"]["kv_namespace"]


def hold(c: fake_ray.Cluster, r: Dict[str, Any], node: str, claimed_at: float, **extra: Any) -> None:
    value = {"cluster": "ns/elsewhere", "owner": "other", "groups": ["elsewhere-node0"], "token": "t-other",
             "claimed_at": claimed_at}
    value.update(extra)
    c.kv_set(claims(r)["keys"][node], value, ns(r))


def test_claims_every_node_then_delete_releases_them(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_claims"]
    d = drive(r)
    assert d.result["ok"] and "claimed" in d.phases()
    for key in claims(r)["keys"].values():
        assert cluster.kv_value(key, ns(r))["cluster"] == claims(r)["cluster"]
    d = drive(requests["delete_claims"])
    assert d.result["ok"] and all(cluster.kv_value(k, ns(r)) is None for k in claims(r)["keys"].values())


def test_a_held_node_fails_the_claim_and_takes_nothing(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_claims"]
    hold(cluster, r, "node-2", time.time())
    d = drive(r)
    err = d.result["error"]
    assert err["kind"] == "conflict" and err["code"] == "nodes_claimed"
    assert [h["node_id"] for h in err["facts"]["holders"]] == ["node-2"]
    assert [h["node_id"] for h in err["facts"]["claimed"]] == ["node-2"]
    assert cluster.kv_value(claims(r)["keys"]["node-1"], ns(r)) is None  # released again
    assert cluster.kv_value(r["ownership"]["key"], ns(r)) is None and cluster.groups == []  # no record, no group


def test_a_stale_claim_is_taken_over(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_claims"]
    hold(cluster, r, "node-2", time.time() - claims(r)["stale_seconds"] - 1)
    d = drive(r)
    assert d.result["ok"], d.result
    assert cluster.kv_value(claims(r)["keys"]["node-2"], ns(r))["cluster"] == claims(r)["cluster"]
    assert not [k for _, k in cluster.kv if "/takeover/" in k]


def test_a_stale_claim_whose_group_lives_is_kept(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_claims"]
    __import__("ray.util.placement_group", fromlist=["x"]).placement_group([{"CPU": 1.0}], name="elsewhere-node0")
    hold(cluster, r, "node-2", time.time() - claims(r)["stale_seconds"] - 1)
    assert drive(r).result["error"]["code"] == "nodes_claimed"


def test_a_takeover_key_of_a_killed_run_is_removed_once_old(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_claims"]
    hold(cluster, r, "node-2", time.time() - claims(r)["stale_seconds"] - 1)
    takeover = claims(r)["keys"]["node-2"] + "/takeover/t-other"
    cluster.kv_set(takeover, {"by": "killed", "at": time.time()}, ns(r))
    assert drive(r).result["error"]["code"] == "nodes_claimed"  # a live takeover: another run is at it
    assert cluster.kv_value(takeover, ns(r)) is not None
    cluster.kv_set(takeover, {"by": "killed", "at": time.time() - r["contract"]["takeover_seconds"] - 1}, ns(r))
    assert drive(r).result["error"]["code"] == "nodes_claimed"  # removes the old key ...
    assert cluster.kv_value(takeover, ns(r)) is None
    assert drive(r).result["ok"]  # ... so the next run takes the claim over


def test_a_failed_create_releases_only_its_own_claims(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_claims"]
    r["ready_timeout_seconds"] = 0.2
    r["groups"][0]["bundles"] = [{"GPU": 4.0}]  # infeasible: the create fails after claiming
    hold(cluster, r, "node-2", time.time(), cluster=claims(r)["cluster"], token="t-earlier")  # this cluster's own claim
    d = drive(r)
    assert d.result["error"]["code"] == "not_ready"
    assert cluster.kv_value(claims(r)["keys"]["node-1"], ns(r)) is None
    assert cluster.kv_value(claims(r)["keys"]["node-2"], ns(r))["token"] == "t-earlier"
