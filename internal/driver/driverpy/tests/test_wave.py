"""A wave: the creates of one batch reserve in one hold of the lock, each
checked against the others' reservations and the members before it (a
member that does not fit fails naming the holders, a sibling included;
the quota counts the wave); the clusters Ray places settle in one more
hold; no member waits for a sibling, nor for one that failed."""

from __future__ import annotations

import copy
import sys
import threading
import time
from typing import Any, Dict, List, Optional

import fake_ray
from driverpy import actions, main, wave
from test_quotas import set_quota
from test_reservations import foreign, lock_free, ns, resv


def named(r: Dict[str, Any], name: str, nodes: Optional[Dict[str, Dict[str, float]]] = None) -> Dict[str, Any]:
    """r as the create of cluster name (nodes: its chosen nodes' ask, one group of one bundle each)."""
    r = copy.deepcopy(r)
    own, rv = r["ownership"], r["ownership"]["reservation"]
    if nodes is not None:
        r["groups"] = [{"name": "%s-node%d" % (name, i), "strategy": "PACK", "bundles": [dict(ask)],
                        "bundle_label_selector": [{"ray.io/node-id": node}]} for i, (node, ask) in enumerate(nodes.items())]
        rv["nodes"] = nodes
    else:
        for i, g in enumerate(r["groups"]):
            g["name"] = "%s-node%d" % (name, i)
    own["key"], own["tombstone_key"] = "vc/terraform-ray/" + name, "tombstone/terraform-ray/" + name
    own["manifest"] = dict(own["manifest"], name=name, groups=[dict(own["manifest"]["groups"][0], name=g["name"], node_index=i)
                                                              for i, g in enumerate(r["groups"])])
    rv.update(key=rv["prefix"] + "terraform-ray/" + name, cluster="terraform-ray/" + name, groups=[g["name"] for g in r["groups"]])
    r["run_id"] = name
    return r


def batch(*subs: Dict[str, Any]) -> Dict[str, Any]:
    return {"version": subs[0]["version"], "action": "batch", "namespace": subs[0]["namespace"], "run_id": "w", "batch": list(subs)}


def holds(d: Any) -> List[Dict[str, Any]]:
    return [p for p in d.progress if p["phase"] == "unlocked"]


def gathered(monkeypatch: Any) -> List[bool]:
    """Whether each round of a wave's meetings was served as every member
    expected had arrived (False: only once the gathering bound ran out)."""
    out: List[bool] = []
    serve = wave.Meeting.serve_round

    def noted(self: wave.Meeting) -> None:
        out.append(self.expected <= set(self.arrived))
        serve(self)

    monkeypatch.setattr(wave.Meeting, "serve_round", noted)
    return out


def test_clusters_ray_places_reserve_and_settle_in_one_hold_each(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                                                  monkeypatch: Any) -> None:
    """Three one-GPU clusters Ray places: one hold reserves all three, one
    settles all three; none waits for its siblings' placing reservations."""
    one = copy.deepcopy(requests["create"])
    one["groups"] = one["groups"][:1]
    subs = [named(one, "w%d" % i) for i in range(3)]
    rounds = gathered(monkeypatch)
    d = drive(batch(*subs))
    assert [r["ok"] for r in d.result["batch"]] == [True] * 3, d.result
    assert [h["wave"] for h in holds(d)] == [3, 3] and rounds == [True, True]  # nobody waited for a sibling's placing
    for r in subs:
        held = cluster.kv_value(resv(r)["key"], ns(r))
        assert not held["placing"] and held["unplaced"] == [] and len(held["group_ids"]) == 1
        assert sum(res.get("GPU", 0.0) for res in held["nodes"].values()) == 1.0
    assert lock_free(cluster, subs[0])


def test_a_member_that_does_not_fit_fails_naming_its_sibling(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """As one request in the batch's order: the third asks node-2's GPUs
    the second took; it fails naming the second, the others are made."""
    r = requests["create_selected"]
    subs = [named(r, "a", {"node-1": {"GPU": 2.0}}), named(r, "b", {"node-2": {"GPU": 2.0}}),
            named(r, "c", {"node-2": {"GPU": 1.0}})]
    d = drive(batch(*subs))
    a, b, c = d.result["batch"]
    assert a["ok"] and b["ok"] and not c["ok"], d.result
    assert c["error"]["code"] == "nodes_claimed"
    assert [(h["node_id"], h["cluster"]) for h in c["error"]["facts"]["holders"]] == [("node-2", "terraform-ray/b")]
    assert [h["wave"] for h in holds(d)] == [3]
    assert cluster.kv_value(resv(subs[2])["key"], ns(r)) is None and cluster.kv_value(subs[2]["ownership"]["key"], ns(r)) is None
    assert sorted(g.name for g in cluster.groups if g.state != "REMOVED") == ["a-node0", "b-node0"] and lock_free(cluster, r)


def test_the_quota_counts_the_wave(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create_selected"]
    set_quota(cluster, r, {"GPU": 3.0})
    subs = [named(r, "a", {"node-1": {"GPU": 2.0}}), named(r, "b", {"node-2": {"GPU": 2.0}})]
    a, b = drive(batch(*subs)).result["batch"]
    assert a["ok"] and b["error"]["code"] == "quota_exceeded", b
    assert [h["cluster"] for h in b["error"]["facts"]["quota_holders"]] == ["terraform-ray/a"]
    assert cluster.kv_value(resv(subs[1])["key"], ns(r)) is None


def test_a_sibling_that_fails_early_is_not_waited_for(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                                      monkeypatch: Any) -> None:
    """A member whose group exists, made outside Terraform, fails before it
    reserves (its cleanup lasting until the others reserved); the rest
    reserve at once, and a cluster Ray places waits for the chosen one's
    groups only until they are placed."""
    r = requests["create_selected"]
    pg = __import__("ray.util.placement_group", fromlist=["x"])
    pg.placement_group([{"CPU": 1.0}], name="bad-node0")
    cluster.groups[0].namespace = "terraform-ray"
    cluster.schedule()
    plain = copy.deepcopy(requests["create"])
    plain["groups"] = plain["groups"][:1]
    subs = [named(r, "bad", {"node-1": {"GPU": 1.0}}), named(r, "sel", {"node-2": {"GPU": 1.0}}), named(plain, "ray")]
    rounds, clean, served, waited = gathered(monkeypatch), main.cleanup, threading.Event(), []
    serve = wave.Meeting.serve_round

    def noted(self: wave.Meeting) -> None:
        serve(self)
        served.set()

    def slow_cleanup(run: Any) -> Any:
        waited.append(served.wait(30))  # a hang guard: done() after the cleanup leaves the others to the bound
        return clean(run)

    monkeypatch.setattr(wave.Meeting, "serve_round", noted)
    monkeypatch.setattr(main, "cleanup", slow_cleanup)
    d = drive(batch(*subs))
    bad, sel, ray = d.result["batch"]
    assert bad["error"]["code"] == "groups_exist" and sel["ok"] and ray["ok"], d.result
    assert [h["wave"] for h in holds(d)] == [2, 1] and rounds == [True, True] and waited == [True]
    assert lock_free(cluster, r)


def test_groups_pinned_to_nodes_come_first(cluster: fake_ray.Cluster, requests: Any, drive: Any, monkeypatch: Any) -> None:
    """Ray picks the node of a domain-pinned or unpinned group: those are
    made only once the groups pinned to nodes are placed, whatever the
    batch's order."""
    pg = sys.modules["ray.util.placement_group"]
    make, calls = pg.placement_group, []

    def slow_pinned(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("name", "").startswith("pin"):
            time.sleep(0.5)  # the pinned group comes late unless waited for
        calls.append(kwargs.get("name"))
        return make(*args, **kwargs)

    monkeypatch.setattr(pg, "placement_group", slow_pinned)
    r = requests["create_selected"]
    domain = named(r, "dom", {"node-2": {"GPU": 1.0}})
    domain["ownership"]["manifest"]["pinning"] = "domain"
    plain = copy.deepcopy(requests["create"])
    plain["groups"] = plain["groups"][:1]
    d = drive(batch(named(plain, "ray"), domain, named(r, "pin", {"node-1": {"GPU": 1.0}})))
    assert all(x["ok"] for x in d.result["batch"]), d.result
    assert calls == ["pin-node0", "dom-node0", "ray-node0"]


def test_a_member_that_reserved_goes_on_while_a_sibling_waits(cluster: fake_ray.Cluster, requests: Any, drive: Any,
                                                               monkeypatch: Any) -> None:
    """A cluster Ray places waits for another state's pending reservation;
    its pinned sibling, reserved in the same hold, makes its groups
    meanwhile with its reservation in place (never taken for stale while it
    waited), and that state's create finishing once they exist lets the
    waiting one reserve."""
    r = requests["create_selected"]
    plain = copy.deepcopy(requests["create"])
    plain["groups"] = plain["groups"][:1]
    a, b = named(r, "a", {"node-1": {"GPU": 1.0}}), named(plain, "b")
    for s in (a, b):
        resv(s)["stale_seconds"] = 2
    other = foreign(cluster, r, "other", {"node-2": {"GPU": 1.0}}, time.time())  # pending: no group placed
    stop, lock, seen = threading.Event(), threading.Lock(), []

    def keep_fresh() -> None:  # that state's create renewing its reservation
        while not stop.wait(0.1):
            with lock:
                if not stop.is_set():
                    cluster.kv_set(other, dict(cluster.kv_value(other, ns(r)) or {}, claimed_at=time.time()), ns(r))

    pg = sys.modules["ray.util.placement_group"]
    make = pg.placement_group

    def made(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("name", "").startswith("a-"):
            seen.append(cluster.kv_value(resv(a)["key"], ns(r)))
            with lock:  # that state's create ends
                stop.set()
                cluster.kv.pop((ns(r), other), None)
        return make(*args, **kwargs)

    monkeypatch.setattr(pg, "placement_group", made)
    keeper = threading.Thread(target=keep_fresh, daemon=True)
    keeper.start()
    try:
        d = drive(batch(a, b))
    finally:
        stop.set()
        keeper.join()
    assert [x["ok"] for x in d.result["batch"]] == [True, True], d.result
    assert len(seen) == 1 and seen[0] is not None and seen[0]["cluster"] == resv(a)["cluster"]
    assert cluster.kv_value(resv(a)["key"], ns(r)) is not None and lock_free(cluster, r)


def test_a_cluster_ray_places_waits_for_its_pinned_siblings_placed_not_ready(cluster: fake_ray.Cluster, requests: Any,
                                                                             drive: Any, monkeypatch: Any) -> None:
    """Ready takes a worker started in a group, which can be slow: the
    cluster Ray places makes its groups once the pinned sibling's are placed
    (its placing reservation held no longer), while that sibling still
    waits for them to be ready."""
    pg = sys.modules["ray.util.placement_group"]
    make, ray_made = pg.placement_group, threading.Event()

    def made(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("name", "").startswith("ray-"):
            ray_made.set()
        return make(*args, **kwargs)

    ready, waited = actions.wait_ready, []

    def slow_ready(run: Any, entries: Any, spec: Any) -> Any:
        if entries[0][0].startswith("pin-"):
            waited.append(ray_made.wait(30))  # a hang guard: without the fix it waits out pending_wait_seconds (60 s)
        return ready(run, entries, spec)

    monkeypatch.setattr(pg, "placement_group", made)
    monkeypatch.setattr(actions, "wait_ready", slow_ready)
    plain = copy.deepcopy(requests["create"])
    plain["groups"] = plain["groups"][:1]
    d = drive(batch(named(requests["create_selected"], "pin", {"node-1": {"GPU": 1.0}}), named(plain, "ray")))
    assert all(x["ok"] for x in d.result["batch"]) and waited == [True], d.result
