"""A wave: the creates of one batch reserve in one hold of the lock, each
checked against the others' reservations and the members before it (a
member that does not fit fails naming the holders, a sibling included;
the quota counts the wave); the clusters Ray places settle in one more
hold; no member waits for a sibling, nor for one that failed."""

from __future__ import annotations

import copy
import sys
import time
from typing import Any, Dict, List, Optional

import fake_ray
from test_quotas import set_quota
from test_reservations import lock_free, ns, resv


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


def test_clusters_ray_places_reserve_and_settle_in_one_hold_each(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """Three one-GPU clusters Ray places: one hold reserves all three, one
    settles all three; none waits for its siblings' placing reservations."""
    one = copy.deepcopy(requests["create"])
    one["groups"] = one["groups"][:1]
    subs = [named(one, "w%d" % i) for i in range(3)]
    started = time.monotonic()
    d = drive(batch(*subs))
    assert [r["ok"] for r in d.result["batch"]] == [True] * 3, d.result
    assert time.monotonic() - started < 3  # no pending wait (0.5 s steps) nor the gathering bound (5 s)
    assert [(h["wave"], h["lock_held_seconds"] < 1.0, h["lock_wait_seconds"] >= 0) for h in holds(d)] == [(3, True, True)] * 2
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


def test_a_sibling_that_fails_early_is_not_waited_for(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    """A member whose group exists, made outside Terraform, fails before it
    reserves; the rest reserve at once, and a cluster Ray places waits for
    the chosen one's groups only until they are placed."""
    r = requests["create_selected"]
    pg = __import__("ray.util.placement_group", fromlist=["x"])
    pg.placement_group([{"CPU": 1.0}], name="bad-node0")
    cluster.groups[0].namespace = "terraform-ray"
    cluster.schedule()
    plain = copy.deepcopy(requests["create"])
    plain["groups"] = plain["groups"][:1]
    subs = [named(r, "bad", {"node-1": {"GPU": 1.0}}), named(r, "sel", {"node-2": {"GPU": 1.0}}), named(plain, "ray")]
    started = time.monotonic()
    d = drive(batch(*subs))
    bad, sel, ray = d.result["batch"]
    assert bad["error"]["code"] == "groups_exist" and sel["ok"] and ray["ok"], d.result
    assert time.monotonic() - started < 3
    assert [h["wave"] for h in holds(d)] == [2, 1]
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
