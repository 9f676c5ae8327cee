"""Reservations by resource: a create reserves what its bundles ask of each
chosen node, checked against the node's total minus placed groups and
pending reservations; clusters share a node that holds them; holders and
pending shares are reported; stale reservations and locks are taken over;
a failed create releases only its own reservation, a delete its cluster's;
a cluster Ray places waits for pending reservations, then reserves where
Ray put it."""

from __future__ import annotations

import copy
import sys
import threading
import time
from typing import Any, Dict

import fake_ray
from driverpy.kv import owner_digest, owner_prefix


def resv(r: Dict[str, Any]) -> Dict[str, Any]:
    return r["ownership"]["reservation"]


def ns(r: Dict[str, Any]) -> str:
    return r["ownership"]["kv_namespace"]


def foreign(c: fake_ray.Cluster, r: Dict[str, Any], name: str, nodes: Dict[str, Dict[str, float]], claimed_at: float,
            groups: Any = None) -> str:
    key = resv(r)["prefix"] + "ns/" + name
    c.kv_set(key, {"cluster": "ns/" + name, "owner": "owner-of-" + name, "groups": groups or [name + "-node0"],
                   "nodes": nodes, "token": "t-" + name, "claimed_at": claimed_at}, ns(r))
    return key


def lock_free(c: fake_ray.Cluster, r: Dict[str, Any]) -> bool:
    return c.kv_value(resv(r)["lock_key"], ns(r)) is None


def test_reserves_each_nodes_ask_then_delete_releases_it(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    d = drive(r)
    assert d.result["ok"] and "reserved" in d.phases()
    held = cluster.kv_value(resv(r)["key"], ns(r))
    # Settled to where Ray put the bundles (the fake ignores pins), with the groups' ids.
    assert held["cluster"] == resv(r)["cluster"] and len(held["group_ids"]) == 2
    assert sum(res["GPU"] for res in held["nodes"].values()) == 2.0
    assert lock_free(cluster, r)
    assert drive(requests["delete_selected"]).result["ok"]
    assert cluster.kv_value(resv(r)["key"], ns(r)) is None


def test_shares_a_node_that_holds_both(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    other = foreign(cluster, r, "other", {"node-2": {"GPU": 1.0}}, time.time())  # pending: its group is not placed yet
    assert drive(r).result["ok"]
    assert cluster.kv_value(other, ns(r)) is not None and cluster.kv_value(resv(r)["key"], ns(r)) is not None


def test_a_node_short_of_gpus_fails_naming_the_holder(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    foreign(cluster, r, "other", {"node-2": {"GPU": 2.0}}, time.time())
    err = drive(r).result["error"]
    assert err["kind"] == "conflict" and err["code"] == "nodes_claimed"
    assert [(h["node_id"], h["cluster"], h["pending"]) for h in err["facts"]["holders"]] == [("node-2", "ns/other", True)]
    assert [(h["node_id"], h["resources"]) for h in err["facts"]["claimed"]] == [("node-2", {"GPU": 2.0})]
    assert cluster.kv_value(resv(r)["key"], ns(r)) is None and cluster.groups == []  # nothing reserved or made
    assert cluster.kv_value(r["ownership"]["key"], ns(r)) is None and lock_free(cluster, r)


def test_placed_groups_count_once(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """A reservation whose group is placed is counted from Ray's groups, not twice."""
    r = requests["create_selected"]
    pg = __import__("ray.util.placement_group", fromlist=["x"])
    pg.placement_group([{"GPU": 1.0}], name="other-node0")
    cluster.groups[0].namespace = "ns"  # the reservation's cluster's
    cluster.schedule()
    foreign(cluster, r, "other", {cluster.groups[0].nodes[0]: {"GPU": 1.0}}, time.time())
    assert drive(r).result["ok"]


def test_unreserved_groups_are_named_as_holders(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    pg = __import__("ray.util.placement_group", fromlist=["x"])
    pg.placement_group([{"GPU": 2.0}], name="legacy-node0")
    cluster.schedule()
    err = drive(r).result["error"]
    assert [(h["node_id"], h["cluster"], h["groups"]) for h in err["facts"]["holders"]] == [("node-1", "", ["legacy-node0"])]


def test_capacity_check_none_counts_only_reservations(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """Its groups queue in Ray, so placed groups do not refuse it."""
    r = requests["create_selected"]
    resv(r)["count_live"] = False
    r["ready_timeout_seconds"] = 0.2
    pg = __import__("ray.util.placement_group", fromlist=["x"])
    pg.placement_group([{"GPU": 2.0}], name="legacy-node0")
    cluster.schedule()
    d = drive(r)
    assert "reserved" in d.phases() and (d.result["ok"] or d.result["error"]["code"] != "nodes_claimed")


def test_a_stale_reservation_is_deleted(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    ghost = foreign(cluster, r, "ghost", {"node-2": {"GPU": 2.0}}, time.time() - resv(r)["stale_seconds"] - 1)
    assert drive(r).result["ok"]
    assert cluster.kv_value(ghost, ns(r)) is None


def hang_group_calls(monkeypatch: Any, seconds: float, check: Any) -> None:
    """Every group call of the fake ray sleeps, then runs check()."""
    pg = sys.modules["ray.util.placement_group"]
    make = pg.placement_group

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(seconds)
        check()
        return make(*args, **kwargs)

    monkeypatch.setattr(pg, "placement_group", slow)


def test_a_slow_create_keeps_its_reservation_fresh(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                                   monkeypatch: Any) -> None:
    """A create whose group calls hang past stale_seconds renews its
    reservation meanwhile: another run would not find it stale."""
    r = requests["create_selected"]
    resv(r)["stale_seconds"] = 1.5  # renewed every 0.5 s: a scheduling stall under 1 s is tolerated
    ages = []
    hang_group_calls(monkeypatch, 2.0, lambda: ages.append(time.time() - cluster.kv_value(resv(r)["key"], ns(r))["claimed_at"]))
    assert drive(r).result["ok"]
    assert ages and max(ages) < resv(r)["stale_seconds"]
    assert [t.name for t in threading.enumerate() if t.name == "raytf-keep-reservation"] == []  # stopped


def test_a_cluster_ray_places_holds_the_lock_only_for_kv_work(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                                             monkeypatch: Any) -> None:
    """It reserves its ask as placing, creates its groups and waits for Ray
    without the lock (its reservation kept fresh meanwhile), then settles
    the reservation where Ray put them."""
    r = requests["create"]  # no select_nodes: Ray places it
    resv(r)["stale_seconds"] = 1.5
    seen = []
    hang_group_calls(monkeypatch, 2.0, lambda: seen.append((lock_free(cluster, r), cluster.kv_value(resv(r)["key"], ns(r)), time.time())))
    d = drive(r)
    assert d.result["ok"], d.result
    assert all(free for free, _, _ in seen) and all(v["placing"] and len(v["unplaced"]) == 2 for _, v, _ in seen)
    assert max(at - v["claimed_at"] for _, v, at in seen) < resv(r)["stale_seconds"]  # renewed: not stale to another run
    held = cluster.kv_value(resv(r)["key"], ns(r))
    assert not held["placing"] and held["unplaced"] == [] and len(held["group_ids"]) == 2
    assert sum(res.get("GPU", 0.0) for res in held["nodes"].values()) == 2.0
    holds = [p["lock_held_seconds"] for p in d.progress if p["phase"] == "unlocked"]
    assert len(holds) == 2 and lock_free(cluster, r)  # the 2 s group calls ran unlocked (seen above)


def placed_foreign(c: fake_ray.Cluster, r: Dict[str, Any], name: str, node: str, exclusive: bool) -> str:
    """Another state's placed cluster on node (one CPU), reserving it whole when exclusive."""
    g = fake_ray.Group(c, name + "-node0", [{"CPU": 1.0}], "PACK", True)
    g.state, g.nodes, g.namespace = "CREATED", {0: node}, "ns"
    c.groups.append(g)
    key = foreign(c, r, name, {node: {"CPU": 1.0}}, time.time())
    c.kv_set(key, dict(c.kv_value(key, ns(r)), exclusive=exclusive, group_ids=[g.id.hex()]), ns(r))
    return key


def test_a_cluster_ray_places_on_a_node_reserved_whole_fails_cleanly(cluster: fake_ray.Cluster, requests: Any,
                                                                     drive: Any) -> None:
    r = requests["create"]
    other = placed_foreign(cluster, r, "whole", "node-1", True)  # the fake places on node-1 first
    d = drive(r)
    err = d.result["error"]
    assert err["code"] == "nodes_claimed" and [(h["node_id"], h["cluster"]) for h in err["facts"]["holders"]] == [("node-1", "ns/whole")]
    assert sorted(d.result["removed"]) == ["vc-node0", "vc-node1"] and [g.name for g in cluster.groups if g.state != "REMOVED"] == ["whole-node0"]
    assert cluster.kv_value(resv(r)["key"], ns(r)) is None and cluster.kv_value(r["ownership"]["key"], ns(r)) is None
    assert cluster.kv_value(other, ns(r))["exclusive"] and lock_free(cluster, r)


def test_a_bundle_ray_has_not_placed_counts_on_every_node_it_could_land_on(cluster: fake_ray.Cluster, requests: Any,
                                                                           drive: Any) -> None:
    """While a cluster Ray places is being placed, a create choosing one of
    the nodes it could land on waits for it (refused once the wait ends);
    a bundle still unplaced after that keeps exclusive creates off those nodes."""
    r = requests["create_selected"]
    r["contract"]["pending_wait_seconds"] = 0
    key = foreign(cluster, r, "placing", {}, time.time())
    cluster.kv_set(key, dict(cluster.kv_value(key, ns(r)), placing=True, unplaced=[{"GPU": 1.0}]), ns(r))
    err = drive(r).result["error"]
    assert err["code"] == "nodes_claimed" and {h["cluster"] for h in err["facts"]["holders"]} == {"ns/placing"}
    assert {h["node_id"] for h in err["facts"]["claimed"]} == {"node-1", "node-2"}  # pending on every node it could land on
    assert cluster.groups == [] and lock_free(cluster, r)
    cluster.kv_set(key, dict(cluster.kv_value(key, ns(r)), placing=False), ns(r))  # settled, one bundle still queued in Ray
    excl = copy.deepcopy(r)
    resv(excl)["exclusive"] = True
    err = drive(excl).result["error"]
    assert err["code"] == "nodes_claimed" and {h["cluster"] for h in err["facts"]["holders"]} == {"ns/placing"}
    assert drive(r).result["ok"]  # a share is not kept off: the queued bundle waits in Ray


def test_a_stale_reservation_is_reclaimed_whatever_other_namespaces_hold(cluster: fake_ray.Cluster, requests: Any,
                                                                         drive: Any) -> None:
    """Its groups are looked for in its own Ray namespace: a live group of the
    same name in another namespace is not one of them."""
    r = requests["create_selected"]
    g = fake_ray.Group(cluster, "ghost-node0", [{"CPU": 1.0}], "PACK", True)
    g.state, g.nodes, g.namespace = "CREATED", {0: "node-1"}, "other"
    cluster.groups.append(g)
    ghost = foreign(cluster, r, "ghost", {"node-2": {"GPU": 2.0}}, time.time() - resv(r)["stale_seconds"] - 1)
    assert drive(r).result["ok"]
    assert cluster.kv_value(ghost, ns(r)) is None


def test_an_old_reservation_whose_group_lives_is_kept(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """Not stale while a group of it lives, and its share still counts."""
    r = requests["create_selected"]
    pg = __import__("ray.util.placement_group", fromlist=["x"])
    pg.placement_group([{"CPU": 1.0}], name="old-node0")
    cluster.groups[0].namespace = "ns"
    cluster.schedule()
    old = foreign(cluster, r, "old", {"node-2": {"GPU": 2.0}}, time.time() - resv(r)["stale_seconds"] - 1)
    err = drive(r).result["error"]
    assert err["code"] == "nodes_claimed" and [h["cluster"] for h in err["facts"]["holders"]] == ["ns/old"]
    assert cluster.kv_value(old, ns(r)) is not None


def test_placed_reservations_count_even_for_capacity_check_none(cluster: fake_ray.Cluster, requests: Any,
                                                                 drive: Any) -> None:
    r = requests["create_selected"]
    resv(r)["count_live"] = False
    foreign(cluster, r, "other", {"node-2": {"GPU": 2.0}}, time.time())
    err = drive(r).result["error"]
    assert err["code"] == "nodes_claimed" and err["facts"]["holders"][0]["owner"] == owner_prefix("owner-of-other", resv(r)["owner_prefix_length"])  # a prefix only


def test_a_failed_retry_restores_the_reservation_it_replaced(cluster: fake_ray.Cluster, requests: Any,
                                                             drive: Any) -> None:
    r = requests["create_selected"]
    r["ready_timeout_seconds"] = 0.2
    r["groups"][0]["bundles"] = [{"GPU": 4.0}]  # infeasible: the create fails after reserving
    earlier = {"cluster": resv(r)["cluster"], "owner": r["ownership"]["owner"], "groups": resv(r)["groups"],
               "nodes": resv(r)["nodes"], "token": "t-earlier", "claimed_at": time.time()}
    cluster.kv_set(resv(r)["key"], earlier, ns(r))
    assert drive(r).result["error"]["code"] == "not_ready"
    assert cluster.kv_value(resv(r)["key"], ns(r))["token"] == "t-earlier"


def test_a_held_lock_is_waited_for_then_reported(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    r["contract"]["lock_wait_seconds"] = 0
    cluster.kv_set(resv(r)["lock_key"], {"token": "t-busy", "at": time.time()}, ns(r))
    err = drive(r).result["error"]
    assert err["code"] == "nodes_claimed" and err["facts"]["holders"] == []
    assert cluster.kv_value(resv(r)["lock_key"], ns(r))["token"] == "t-busy"  # never another run's lock


def test_a_stale_lock_is_taken_over(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    cluster.kv_set(resv(r)["lock_key"], {"token": "t-killed", "at": time.time() - resv(r)["lock_stale_seconds"] - 1}, ns(r))
    assert drive(r).result["ok"]
    assert lock_free(cluster, r) and not [k for _, k in cluster.kv if "/takeover/" in k]


def test_a_failed_create_releases_only_its_own_reservation(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    r["ready_timeout_seconds"] = 0.2
    r["groups"][0]["bundles"] = [{"GPU": 4.0}]  # infeasible: the create fails after reserving
    resv(r)["nodes"] = {"node-1": {"GPU": 1.0}}
    other = foreign(cluster, r, "other", {"node-2": {"GPU": 1.0}}, time.time())
    d = drive(r)
    assert d.result["error"]["code"] == "not_ready"
    assert cluster.kv_value(resv(r)["key"], ns(r)) is None and cluster.kv_value(other, ns(r)) is not None
    assert lock_free(cluster, r)


def test_a_cluster_ray_places_waits_for_pending_reservations(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    assert resv(r)["nodes"] is None
    r["contract"]["pending_wait_seconds"] = 0
    pending = foreign(cluster, r, "other", {"node-2": {"GPU": 1.0}}, time.time())
    err = drive(r).result["error"]
    assert err["code"] == "nodes_claimed" and [h["cluster"] for h in err["facts"]["holders"]] == ["ns/other"]
    assert cluster.groups == [] and lock_free(cluster, r)
    cluster.kv.pop((ns(r), pending))
    assert drive(r).result["ok"]
    held = cluster.kv_value(resv(r)["key"], ns(r))
    assert sum(res.get("GPU", 0.0) for res in held["nodes"].values()) == 2.0  # where Ray put its two bundles
    assert lock_free(cluster, r)


def test_exclusive_nodes_take_no_used_node_and_share_none(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    resv(r)["exclusive"] = True
    foreign(cluster, r, "other", {"node-2": {"GPU": 1.0}}, time.time())  # a share would fit, but the node is used
    err = drive(r).result["error"]
    assert err["code"] == "nodes_claimed" and [h["node_id"] for h in err["facts"]["holders"]] == ["node-2"]
    cluster.kv.clear()
    assert drive(r).result["ok"] and cluster.kv_value(resv(r)["key"], ns(r))["exclusive"] is True
    late = copy.deepcopy(r)
    late["ownership"]["reservation"]["key"] = resv(late)["prefix"] + "ns/late"
    late["ownership"]["reservation"]["cluster"] = "ns/late"
    late["ownership"]["key"] = "vc/ns/late"
    late["ownership"]["reservation"]["nodes"] = {"node-1": {"CPU": 1.0}}  # fits, but node-1 is reserved whole
    late["groups"] = [dict(late["groups"][0], name="late-node0")]
    late["ownership"]["reservation"]["groups"] = ["late-node0"]
    err = drive(late).result["error"]
    assert err["code"] == "nodes_claimed" and [h["cluster"] for h in err["facts"]["holders"]] == [resv(r)["cluster"]]


def test_listing_reads_every_reservation_and_writes_nothing(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    foreign(cluster, r, "other", {"node-2": {"GPU": 1.0}}, time.time() - 40)
    before = copy.deepcopy(cluster.kv)
    d = drive(requests["reservations"])
    assert d.result["ok"] and cluster.kv == before
    (listed,) = d.result["reservations"]
    assert listed["cluster"] == "ns/other" and listed["owner"] == owner_digest("owner-of-other") and "token" not in listed
    assert listed["nodes"] == {"node-2": {"GPU": 1.0}} and listed["age_seconds"] >= 40


def test_an_import_takes_the_reservation_over(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    assert drive(r).result["ok"]
    held = cluster.kv_value(resv(r)["key"], ns(r))
    took = copy.deepcopy(requests["inspect"])
    took["ownership"].update(owner="owner-b", claim=True, reservation=resv(r))
    took["groups"] = r["groups"]
    assert drive(took).result["ok"]
    now_held = cluster.kv_value(resv(r)["key"], ns(r))
    assert now_held["owner"] == owner_digest("owner-b") and now_held["nodes"] == held["nodes"] and now_held["token"] == held["token"]
    gone = copy.deepcopy(requests["delete_selected"])
    gone["ownership"]["owner"] = "owner-b"
    assert drive(gone).result["ok"]
    assert cluster.kv_value(resv(r)["key"], ns(r)) is None


def test_a_bundle_ray_places_late_on_a_node_reserved_whole_fails_cleanly(cluster: fake_ray.Cluster, requests: Any,
                                                                          drive: Any) -> None:
    """Ray places the cluster only after its reservation was settled (the
    GPUs were busy): landing on a node reserved whole, it fails all the same."""
    r = requests["create"]
    r["contract"]["place_wait_seconds"] = 0
    placed_foreign(cluster, r, "whole", "node-1", True)
    busy = []
    for node in ("node-1", "node-2"):
        g = fake_ray.Group(cluster, "busy-" + node, [{"GPU": 2.0}], "PACK", True)
        g.state, g.nodes, g.namespace = "CREATED", {0: node}, "other"
        busy.append(g)
    cluster.groups += busy

    def free(c: fake_ray.Cluster) -> None:
        for g in busy:
            g.state = "REMOVED"

    cluster.on_wait = free
    d = drive(r)
    err = d.result["error"]
    assert err["code"] == "nodes_claimed" and [(h["node_id"], h["cluster"]) for h in err["facts"]["holders"]] == [("node-1", "ns/whole")]
    assert sorted(d.result["removed"]) == ["vc-node0", "vc-node1"] and cluster.kv_value(resv(r)["key"], ns(r)) is None


def test_a_create_whose_nodes_were_reserved_first_takes_its_alternative_in_the_same_run(
        cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_alternative"]
    other = foreign(cluster, r, "other", {"node-1": {"GPU": 1.0}}, time.time())  # node-1 keeps one GPU free: too few
    d = drive(r)
    assert d.result["ok"] and d.result["alternative"] == 1, d.result
    alt = r["alternatives"][0]
    held = cluster.kv_value(resv(r)["key"], ns(r))
    assert held["group_ids"] and cluster.kv_value(other, ns(r)) is not None
    record = cluster.kv_value(r["ownership"]["key"], ns(r))
    assert record["selected_node_ids"] == alt["manifest"]["selected_node_ids"] == ["node-2"]
    assert [g.label_selector for g in cluster.groups] == [alt["groups"][0]["bundle_label_selector"]]
    assert lock_free(cluster, r)


def test_a_create_whose_alternatives_are_all_held_names_every_holder(cluster: fake_ray.Cluster, requests: Any,
                                                                   drive: Any) -> None:
    r = requests["create_alternative"]
    foreign(cluster, r, "one", {"node-1": {"GPU": 1.0}}, time.time())
    foreign(cluster, r, "two", {"node-2": {"GPU": 2.0}}, time.time())
    err = drive(r).result["error"]
    assert err["kind"] == "conflict" and err["code"] == "nodes_claimed"
    assert sorted((h["node_id"], h["cluster"]) for h in err["facts"]["holders"]) == [("node-1", "ns/one"), ("node-2", "ns/two")]
    assert cluster.kv_value(resv(r)["key"], ns(r)) is None and cluster.groups == []
    assert cluster.kv_value(r["ownership"]["key"], ns(r)) is None and lock_free(cluster, r)


def test_a_create_whose_first_choice_fits_takes_it(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_alternative"]
    d = drive(r)
    assert d.result["ok"] and "alternative" not in d.result
    assert cluster.kv_value(r["ownership"]["key"], ns(r))["selected_node_ids"] == ["node-1"]


def test_a_relaunched_create_keeps_the_alternative_its_killed_run_recorded(cluster: fake_ray.Cluster, requests: Any,
                                                                           drive: Any) -> None:
    r = requests["create_alternative"]
    foreign(cluster, r, "other", {"node-1": {"GPU": 1.0}}, time.time())
    assert drive(copy.deepcopy(r)).result["alternative"] == 1
    again = drive(copy.deepcopy(r)).result  # the same request again: Go relaunched a job it lost
    assert again["ok"] and again["alternative"] == 1, again
    assert cluster.kv_value(r["ownership"]["key"], ns(r))["selected_node_ids"] == ["node-2"]
    assert [n for n in cluster.kv_value(resv(r)["key"], ns(r))["nodes"]] == [cluster.groups[0].nodes[0]]
