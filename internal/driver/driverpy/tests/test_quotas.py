"""Namespace quotas: a create that would take its namespace over its quota
is refused under the reservation lock, naming the quota, what each holder
holds (groups outside Terraform in the namespace too, none of another
namespace) and the ask; the quota action writes, refuses another state's
quota and deletes; a read reports the usage and writes nothing."""

from __future__ import annotations

import copy
import time
from typing import Any, Dict

import fake_ray
from test_reservations import ns, resv
from driverpy.kv import owner_digest, owner_prefix


def quota(requests: Any, owner: str = "owner-q", limits: Any = None, usage: bool = False) -> Dict[str, Any]:
    """The quota reference Go builds (requests.json), for another owner, limits or a usage read."""
    q = copy.deepcopy(requests["quota_write"]["quota"])
    q.update(owner=owner, limits=limits, label_limits=None, usage=usage)
    return q


def set_quota(c: fake_ray.Cluster, r: Dict[str, Any], limits: Dict[str, float], label_limits: Any = None) -> None:
    c.kv_set("quota/terraform-ray", {"namespace": "terraform-ray", "owner": "owner-q", "limits": limits,
                                     "label_limits": label_limits or []}, ns(r))


RACK_A_ONE_GPU = [{"labels": {"rack": "A"}, "limits": {"GPU": 1.0}}]


def racks(c: fake_ray.Cluster) -> None:
    """node-1 in rack A, node-2 in rack B."""
    c.nodes["node-1"]["labels"], c.nodes["node-2"]["labels"] = {"rack": "A"}, {"rack": "B"}


def outside_group(c: fake_ray.Cluster, name: str, gpus: float, namespace: str = "terraform-ray") -> None:
    """A group on node-3 (added here) that no reservation names."""
    if "node-3" not in c.nodes:
        c.add_node("node-3", "10.0.0.3", {"CPU": 8.0, "GPU": 4.0})
    g = fake_ray.Group(c, name, [{"GPU": gpus}], "PACK", True)
    g.state, g.nodes, g.namespace = "CREATED", {0: "node-3"}, namespace
    c.groups.append(g)


def test_a_create_over_the_quota_is_refused_naming_every_holder(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = copy.deepcopy(requests["create_selected"])  # asks 2 GPUs; Go sends the namespace's quota with a create
    assert r["quota"] == dict(quota(requests, owner=""), owner_prefix_length=r["quota"]["owner_prefix_length"])
    set_quota(cluster, r, {"GPU": 3.0})
    cluster.kv_set(resv(r)["prefix"] + "terraform-ray/other", {"cluster": "terraform-ray/other", "owner": "owner-of-other-state",
                   "groups": ["other-node0"], "nodes": {"node-3": {"GPU": 1.0}}, "token": "t", "claimed_at": time.time()}, ns(r))
    outside_group(cluster, "by-hand", 1.0)
    outside_group(cluster, "elsewhere", 2.0, namespace="another-team")  # another namespace: not counted
    d = drive(r)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_exceeded", d.result
    facts = d.result["error"]["facts"]
    assert facts["namespace"] == "terraform-ray" and facts["limits"] == {"GPU": 3.0} and facts["over"] == ["GPU"]
    assert facts["ask"] == {"CPU": 2.0, "GPU": 2.0}
    # The other cluster's groups do not exist yet: it holds what it reserved; its owner shows by prefix only.
    assert [(h["cluster"], h["owner"], h["resources"], h["outside"]) for h in facts["quota_holders"]] == [
        ("terraform-ray/by-hand", "", {"GPU": 1.0}, True), ("terraform-ray/other", owner_prefix("owner-of-other-state", 8), {"GPU": 1.0}, False)]
    assert cluster.live("vc-node0") is None and cluster.kv_value(resv(r)["key"], ns(r)) is None  # nothing made


def test_a_create_within_the_quota_lands(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = copy.deepcopy(requests["create_selected"])
    set_quota(cluster, r, {"GPU": 3.0})
    outside_group(cluster, "by-hand", 1.0)
    outside_group(cluster, "elsewhere", 2.0, namespace="another-team")
    assert drive(r).result["ok"]
    # The next GPU is over: the cluster's own groups now count by its reservation.
    more = copy.deepcopy(r)
    for g in more["groups"]:
        g["name"] = g["name"].replace("vc-", "vc2-")
    more["groups"] = more["groups"][:1]
    more["ownership"]["reservation"].update(key=resv(r)["key"] + "2", cluster="terraform-ray/vc2", groups=["vc2-node0"])
    more["ownership"]["key"] += "2"
    d = drive(more)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_exceeded"
    held = {h["cluster"]: h["resources"] for h in d.result["error"]["facts"]["quota_holders"]}
    assert held[resv(r)["cluster"]] == {"CPU": 2.0, "GPU": 2.0} and held["terraform-ray/by-hand"] == {"GPU": 1.0}


def test_the_quota_action_writes_refuses_another_owner_and_deletes(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    w = copy.deepcopy(requests["quota_write"])
    assert drive(w).result["ok"]
    stored = cluster.kv_value("quota/terraform-ray", ns(requests["create_selected"]))
    assert stored is not None and stored["limits"] == {"GPU": 8.0} and stored["owner"] == owner_digest("owner-q")
    assert stored["label_limits"] == [{"labels": {"rack": "A"}, "limits": {"GPU": 4.0}}]
    other = dict(w, quota=quota(requests, owner="owner-z", limits={"GPU": 1.0}))
    d = drive(other)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_taken" and d.result["error"]["facts"]["owner"] == owner_prefix("owner-q", 8)
    gone = dict(w, quota=quota(requests, owner="owner-z"))  # another owner's delete: nothing
    assert drive(gone).result["ok"] and cluster.kv_value("quota/terraform-ray", ns(requests["create_selected"])) is not None
    assert drive(dict(w, quota=quota(requests))).result["ok"]
    assert cluster.kv_value("quota/terraform-ray", ns(requests["create_selected"])) is None


def test_a_read_reports_the_usage_and_writes_nothing(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    c = requests["create_selected"]
    set_quota(cluster, c, {"GPU": 4.0})
    outside_group(cluster, "by-hand", 1.0)
    before = copy.deepcopy(cluster.kv)
    d = drive(requests["quota_usage"])
    assert d.result["ok"] and cluster.kv == before
    assert d.result["quota"]["limits"] == {"GPU": 4.0}
    assert [(h["cluster"], h["resources"]) for h in d.result["quota_usage"]] == [("terraform-ray/by-hand", {"GPU": 1.0})]


def test_a_cluster_still_making_its_groups_counts_whole(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = copy.deepcopy(requests["create_selected"])  # asks 2 GPUs
    set_quota(cluster, r, {"GPU": 5.0})
    # Another cluster reserved 2 + 2 GPUs and has made one of its two groups so far.
    outside_group(cluster, "half-node0", 2.0)
    cluster.kv_set(resv(r)["prefix"] + "terraform-ray/half", {"cluster": "terraform-ray/half", "owner": "owner-of-half",
                   "groups": ["half-node0", "half-node1"], "nodes": {"node-3": {"GPU": 4.0}}, "token": "t",
                   "claimed_at": time.time()}, ns(r))
    d = drive(r)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_exceeded"
    held = {h["cluster"]: h["resources"] for h in d.result["error"]["facts"]["quota_holders"]}
    assert held == {"terraform-ray/half": {"GPU": 4.0}}


def test_only_the_clusters_own_groups_are_left_out(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = copy.deepcopy(requests["create_selected"])  # cluster vc, groups vc-node0 and vc-node1
    set_quota(cluster, r, {"GPU": 3.0})
    outside_group(cluster, "vc-eval-node0", 2.0)  # another cluster's group, named like this one
    d = drive(r)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_exceeded"
    assert [h["cluster"] for h in d.result["error"]["facts"]["quota_holders"]] == ["terraform-ray/vc-eval-node0"]


def test_a_read_leaves_out_stale_reservations(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    c = requests["create_selected"]
    set_quota(cluster, c, {"GPU": 4.0})
    for name, at in (("killed", time.time() - 600), ("starting", time.time())):
        cluster.kv_set(resv(c)["prefix"] + "terraform-ray/" + name, {"cluster": "terraform-ray/" + name, "owner": "o",
                       "groups": [name + "-node0"], "nodes": {"node-1": {"GPU": 1.0}}, "token": "t", "claimed_at": at}, ns(c))
    d = drive(requests["quota_usage"])
    assert [h["cluster"] for h in d.result["quota_usage"]] == ["terraform-ray/starting"]


def test_a_create_over_a_label_limit_on_its_chosen_nodes_is_refused(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    racks(cluster)
    r = copy.deepcopy(requests["create_selected"])  # 1 GPU on node-1 (rack A), 1 on node-2 (rack B)
    set_quota(cluster, r, {"GPU": 8.0}, RACK_A_ONE_GPU)
    g = fake_ray.Group(cluster, "by-hand", [{"GPU": 1.0}], "PACK", True)
    g.state, g.nodes = "CREATED", {0: "node-1"}
    cluster.groups.append(g)
    d = drive(r)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_exceeded", d.result
    facts = d.result["error"]["facts"]
    assert facts["over"] == [] and facts["label_use"] == [
        {"labels": {"rack": "A"}, "limits": {"GPU": 1.0}, "used": {"GPU": 1.0}, "ask": {"CPU": 1.0, "GPU": 1.0}}]
    assert cluster.live("vc-node0") is None and cluster.kv_value(resv(r)["key"], ns(r)) is None  # nothing made
    cluster.remove(g)
    assert drive(r).result["ok"]  # 1 GPU in rack A: within


def test_a_cluster_ray_places_over_a_label_limit_is_undone(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    racks(cluster)
    r = copy.deepcopy(requests["create"])  # Ray places both 1-GPU bundles on node-1 (rack A)
    set_quota(cluster, r, {"GPU": 8.0}, RACK_A_ONE_GPU)
    d = drive(r)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_exceeded", d.result
    assert d.result["error"]["facts"]["label_use"][0]["ask"] == {"CPU": 2.0, "GPU": 2.0}
    # The groups it made are removed, and nothing holds the lock or a reservation.
    assert cluster.live("vc-node0") is None and cluster.live("vc-node1") is None
    assert cluster.kv_value(resv(r)["key"], ns(r)) is None and cluster.kv_value(resv(r)["lock_key"], ns(r)) is None
    set_quota(cluster, r, {"GPU": 8.0}, [{"labels": {"rack": "A"}, "limits": {"GPU": 2.0}}])
    assert drive(r).result["ok"]


def test_a_read_reports_what_each_holder_holds_on_each_node(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    set_quota(cluster, requests["create_selected"], {"GPU": 8.0}, RACK_A_ONE_GPU)
    for name, node in (("a", "node-1"), ("b", "node-2")):
        g = fake_ray.Group(cluster, name, [{"GPU": 1.0}, {"GPU": 0.5}], "PACK", True)
        g.state, g.nodes = "CREATED", {0: node, 1: node}
        cluster.groups.append(g)
    d = drive(requests["quota_usage"])
    assert d.result["quota"]["label_limits"] == RACK_A_ONE_GPU
    assert [h["nodes"] for h in d.result["quota_usage"]] == [{"node-1": {"GPU": 1.5}}, {"node-2": {"GPU": 1.5}}]


def test_a_create_that_asks_nothing_on_a_label_limits_nodes_is_not_over_it(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    racks(cluster)
    r = copy.deepcopy(requests["create"])
    set_quota(cluster, r, {"GPU": 8.0}, RACK_A_ONE_GPU)
    g = fake_ray.Group(cluster, "by-hand", [{"GPU": 2.0}], "PACK", True)  # rack A already over its limit
    g.state, g.nodes = "CREATED", {0: "node-1"}
    cluster.groups.append(g)
    assert drive(r).result["ok"]  # Ray places both bundles on node-2 (rack B)
    assert cluster.live("vc-node0").nodes == {0: "node-2"}


def test_bundles_ray_has_not_placed_count_where_they_could_land(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    racks(cluster)
    r = copy.deepcopy(requests["create"])
    r["contract"]["place_wait_seconds"] = 0
    r["ready_timeout_seconds"] = 1
    set_quota(cluster, r, {"GPU": 8.0}, RACK_A_ONE_GPU)
    for name, node in (("full-a", "node-1"), ("full-b", "node-2")):  # another team's: the create's bundles wait
        g = fake_ray.Group(cluster, name, [{"GPU": 2.0}], "PACK", True)
        g.state, g.nodes, g.namespace = "CREATED", {0: node}, "elsewhere"
        cluster.groups.append(g)
    d = drive(r)
    assert not d.result["ok"] and d.result["error"]["code"] == "quota_exceeded", d.result
    # Rack A's node could hold both pending bundles once the lock is dropped.
    assert d.result["error"]["facts"]["label_use"][0]["ask"] == {"CPU": 2.0, "GPU": 2.0}
    assert cluster.live("vc-node0") is None and cluster.live("vc-node1") is None


def test_a_cluster_placed_again_after_a_node_loss_counts_where_it_is_now(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    racks(cluster)
    c = requests["create_selected"]
    set_quota(cluster, c, {"GPU": 8.0}, RACK_A_ONE_GPU)
    g = fake_ray.Group(cluster, "moved-node0", [{"GPU": 1.0}], "PACK", True)
    g.state, g.nodes = "CREATED", {0: "node-2"}  # Ray placed it again on node-2; the reservation still names node-1
    cluster.groups.append(g)
    cluster.kv_set(resv(c)["prefix"] + "terraform-ray/moved", {"cluster": "terraform-ray/moved", "owner": "o", "groups": ["moved-node0"],
                   "group_ids": [g.id.hex()], "nodes": {"node-1": {"GPU": 1.0}}, "token": "t", "claimed_at": time.time()}, ns(c))
    d = drive(requests["quota_usage"])
    assert [(h["cluster"], h["resources"], h["nodes"]) for h in d.result["quota_usage"]] == [
        ("terraform-ray/moved", {"GPU": 1.0}, {"node-2": {"GPU": 1.0}})]
