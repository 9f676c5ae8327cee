"""A node's loss: Ray places the lost bundles of a group again elsewhere
(same group id). The inspect of the recovery apply probes only the bundles
that moved, keeps the others' GPU ids and ports (running workers may hold
the GPU a probe needs), and the cluster's reservation follows the moved
bundles; until it does, other creates count them where they are."""

from __future__ import annotations

import copy
import time
from typing import Any, Dict, List

import fake_ray
from test_reservations import foreign, ns, resv


def kept(result: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{"group": g["name"], "index": b["index"], "node_id": b["node_id"], "node_ip": b["node_ip"],
             "gpu_id": b["gpu_id"], "port": b["port"]} for g in result["groups"] for b in g["bundles"]]


def recovery(requests: Any, keep: bool = True) -> Dict[str, Any]:
    """The inspect of an update: the create's groups, ownership and reservation, keeping recorded bundles."""
    r = copy.deepcopy(requests["inspect"])
    r["groups"] = requests["create_selected"]["groups"]
    r["ownership"]["reservation"] = resv(requests["create_selected"])
    r["probe"]["keep_recorded"] = keep
    return r


def test_only_moved_bundles_are_probed_and_the_reservation_follows(cluster: fake_ray.Cluster, requests: Any,
                                                                    drive: Any) -> None:
    r = requests["create_selected"]
    created = drive(r).result
    assert created["ok"]
    before = {b["group"]: b for b in kept(created)}
    # vc-node1's node dies and Ray places its bundle again, on node-2 (the fake placed both on node-1).
    g1 = cluster.live("vc-node1")
    assert g1 is not None and g1.nodes[0] == "node-1"
    g1.nodes[0] = "node-2"
    d = drive(recovery(requests))
    assert d.result["ok"], d.result
    after = {g["name"]: g["bundles"][0] for g in d.result["groups"]}
    kept0 = before["vc-node0"]
    assert (after["vc-node0"]["node_id"], after["vc-node0"]["port"], after["vc-node0"]["gpu_id"]) == \
        (kept0["node_id"], kept0["port"], kept0["gpu_id"])
    assert after["vc-node1"]["node_id"] == "node-2" and after["vc-node1"]["node_ip"] == "10.0.0.2" and after["vc-node1"]["port"]
    assert [p for p in d.progress if p["phase"] == "probing"][0]["total"] == 1
    held = cluster.kv_value(resv(r)["key"], ns(r))
    assert held["nodes"] == {"node-1": {"CPU": 1.0, "GPU": 1.0}, "node-2": {"CPU": 1.0, "GPU": 1.0}}
    record = cluster.kv_value(r["ownership"]["key"], ns(r))
    assert [b["node_id"] for b in record["bundles"]] == ["node-1", "node-2"]  # attach reads the new placement


def test_an_inspect_without_a_move_probes_nothing_and_keeps_the_reservation(cluster: fake_ray.Cluster, requests: Any,
                                                                             drive: Any) -> None:
    r = requests["create_selected"]
    created = drive(r).result
    held = cluster.kv_value(resv(r)["key"], ns(r))
    d = drive(recovery(requests))
    assert d.result["ok"]
    assert [p for p in d.progress if p["phase"] == "probing"][0]["total"] == 0
    assert kept(d.result) == kept(created)
    assert cluster.kv_value(resv(r)["key"], ns(r)) == held


def test_a_bundle_placed_outside_its_reservation_counts_where_it_is(cluster: fake_ray.Cluster, requests: Any,
                                                                    drive: Any) -> None:
    r = requests["create_selected"]
    # Another state's cluster reserved node-1, but Ray placed its group again on node-2 (node-1 had died and
    # come back): its reservation does not name node-2 yet.
    g = fake_ray.Group(cluster, "other-node0", [{"GPU": 2.0}], "PACK", True)
    g.state, g.nodes, g.namespace = "CREATED", {0: "node-2"}, "ns"
    cluster.groups.append(g)
    foreign(cluster, r, "other", {"node-1": {"GPU": 2.0}}, time.time() - 600, groups=["other-node0"])
    d = drive(r)
    assert not d.result["ok"] and d.result["error"]["code"] == "nodes_claimed"
    holders = d.result["error"]["facts"]["holders"]
    assert any(h["node_id"] == "node-2" and h["cluster"] == "ns/other" for h in holders), holders


def test_an_update_while_ray_places_a_group_again_keeps_its_recorded_bundles(cluster: fake_ray.Cluster, requests: Any,
                                                                             drive: Any) -> None:
    created = drive(requests["create_selected"]).result
    g1 = cluster.live("vc-node1")
    assert g1 is not None
    g1.state, g1.nodes = "RESCHEDULING", {}  # its node died; Ray has not placed it yet
    d = drive(recovery(requests))
    assert d.result["ok"], d.result
    assert kept(d.result) == kept(created)  # no port 0, no lost GPU id: the plan's recovery judges the group
    assert [p for p in d.progress if p["phase"] == "probing"][0]["total"] == 0


def test_without_keep_every_bundle_is_probed(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    drive(requests["create_selected"])
    d = drive(recovery(requests, keep=False))
    assert d.result["ok"] and [p for p in d.progress if p["phase"] == "probing"][0]["total"] == 2


def test_an_import_keeps_the_record_s_placement_and_probes_nothing(cluster: fake_ray.Cluster, requests: Any,
                                                                   drive: Any) -> None:
    """Another state imports the cluster while its workers hold every GPU: the import's read (ownership
    without an owner or manifest) and its takeover (claim) take the GPU ids and ports from the record."""
    r = requests["create_selected"]
    created = drive(r).result
    assert created["ok"]
    read = recovery(requests)
    read["ownership"]["owner"], read["ownership"]["manifest"] = "", None
    take = recovery(requests)
    take["ownership"]["owner"], take["ownership"]["claim"] = "new-owner", True
    for request in (read, take):
        d = drive(request)
        assert d.result["ok"], d.result
        assert [p for p in d.progress if p["phase"] == "probing"][0]["total"] == 0
        assert kept(d.result) == kept(created)


def test_an_import_probes_a_group_made_again_under_the_name(cluster: fake_ray.Cluster, requests: Any,
                                                           drive: Any) -> None:
    """Groups removed and made again outside Terraform under the same names, on the same nodes: the record's
    GPU ids and ports are stale, so the import's read probes them."""
    r = requests["create_selected"]
    assert drive(r).result["ok"]
    for n, name in enumerate(("vc-node0", "vc-node1")):
        g = cluster.live(name)
        assert g is not None
        g.id = fake_ray.GroupId(9000 + n)
    read = recovery(requests)
    read["ownership"]["owner"], read["ownership"]["manifest"] = "", None
    d = drive(read)
    assert d.result["ok"], d.result
    assert [p for p in d.progress if p["phase"] == "probing"][0]["total"] == 2
