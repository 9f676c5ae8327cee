import json
import warnings

import pytest
from fakes import FakeRay, node_id, record_doc

from raytf_attach import (
    AttachError,
    ClusterResizedError,
    GroupIdMismatchError,
    GroupMissingError,
    GroupNotReadyError,
    PlacementChangedError,
    RayNotInitializedError,
    RecordInvalidError,
    RecordNotFoundError,
    TerraformOwnedWarning,
    UnsupportedSchemaVersionError,
    attach,
)
from raytf_attach.record import KV_NAMESPACE, record_key


def test_attach_per_node_interface():
    fake = FakeRay(record_doc())
    vc = attach("train", ray_layer=fake)
    assert vc.world_size() == 4 and vc.node_count() == 2
    pgs = vc.get_placement_groups()
    assert [pg.name for pg in pgs] == ["train-node0", "train-node1"]
    assert [pg.bundle_count for pg in pgs] == [2, 2]
    assert vc._bundle_ct_per_node_list == [2, 2]
    assert vc.use_gpus is True and vc.num_gpus_per_node == 2 and vc.max_colocated_worker_groups == 1
    assert (vc.port_range_low, vc.port_range_high) == (1400, 1999)
    # The reference sorts only a unified GPU group.
    assert vc._sorted_bundle_indices is None and vc._get_sorted_bundle_indices() is None
    assert vc._nvlink_domain_per_bundle_index is None
    assert vc._init_placement_groups() == pgs
    pg, idx = vc.placement_for_rank(3)
    assert (pg.name, idx) == ("train-node1", 1)


def test_attach_unified_exposes_topology_order():
    fake = FakeRay(record_doc(unified=True))
    vc = attach("train", ray_layer=fake)
    assert len(vc.get_placement_groups()) == 1
    assert vc._sorted_bundle_indices == [2, 3, 0, 1]
    assert vc._nvlink_domain_per_bundle_index == ("nvlink_domain_rackA",) * 2 + ("nvlink_domain_rackB",) * 2
    assert vc.placement_for_rank(0)[1] == 2


def test_unified_request_on_per_node_cluster_warns():
    vc = attach("train", ray_layer=FakeRay(record_doc()))
    with pytest.warns(RuntimeWarning, match="use_unified_pg"):
        assert len(vc._init_placement_groups(strategy="PACK", use_unified_pg=True)) == 2


def test_shutdown_keeps_groups_and_warns_once():
    fake = FakeRay(record_doc())
    vc = attach("train", ray_layer=fake)
    with pytest.warns(TerraformOwnedWarning, match="terraform destroy"):
        assert vc.shutdown() is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vc.shutdown() is True
    assert all(g.state == "CREATED" for g in fake.groups.values())
    assert len(vc.get_placement_groups()) == 2


def test_ray_not_initialized():
    fake = FakeRay(record_doc())
    fake.initialized = False
    with pytest.raises(RayNotInitializedError, match=r"ray.init\(\)"):
        attach("train", ray_layer=fake)


def test_record_missing_names_key_and_namespace():
    with pytest.raises(RecordNotFoundError, match="vc/terraform-ray/nope.*terraform-provider-ray"):
        attach("nope", ray_layer=FakeRay(record_doc()))
    with pytest.raises(RecordNotFoundError, match="vc/other/train"):
        attach("train", namespace="other", ray_layer=FakeRay(record_doc()))


def test_newer_schema_raises():
    doc = record_doc()
    doc["schema_version"] = 7
    with pytest.raises(UnsupportedSchemaVersionError):
        attach("train", ray_layer=FakeRay(doc))


def test_record_for_another_cluster_under_key():
    fake = FakeRay(record_doc())
    fake.kv[(KV_NAMESPACE, record_key("terraform-ray", "train"))] = json.dumps(record_doc(name="renamed")).encode()
    with pytest.raises(RecordInvalidError, match="describes terraform-ray/renamed"):
        attach("train", ray_layer=fake)


def test_group_removed_outside_terraform():
    fake = FakeRay(record_doc())
    del fake.groups[("terraform-ray", "train-node1")]
    with pytest.raises(GroupMissingError, match="train-node1"):
        attach("train", ray_layer=fake)


def test_group_recreated_outside_terraform():
    fake = FakeRay(record_doc())
    fake.live("train-node0").id = "ff" * 18
    with pytest.raises(GroupIdMismatchError, match="recreated outside Terraform"):
        attach("train", ray_layer=fake)


@pytest.mark.parametrize("state", ["RESCHEDULING", "PENDING"])
def test_group_not_created(state):
    fake = FakeRay(record_doc())
    fake.live("train-node1").state = state
    with pytest.raises(GroupNotReadyError, match=f"train-node1 \\({state}\\)"):
        attach("train", ray_layer=fake)


def test_group_not_ready_in_time():
    fake = FakeRay(record_doc())
    fake.not_ready.add("train-node0")
    with pytest.raises(GroupNotReadyError, match="not ready after 0.5s"):
        attach("train", ray_layer=fake, ready_timeout_s=0.5)


def test_bundle_moved_to_another_node():
    fake = FakeRay(record_doc())
    fake.live("train-node1").bundle_nodes[0] = node_id(5)
    with pytest.raises(PlacementChangedError, match=r"rank 2 \(train-node1\[0\]\)"):
        attach("train", ray_layer=fake)


def test_check_reverifies():
    fake = FakeRay(record_doc())
    vc = attach("train", ray_layer=fake)
    vc.check()
    fake.live("train-node0").state = "RESCHEDULING"
    with pytest.raises(GroupNotReadyError):
        vc.check()


def shrunk(doc):
    """doc after a resize in place to its first node: node 1's group and bundles are gone."""
    doc = json.loads(json.dumps(doc))
    doc["groups"], doc["bundle_ct_per_node_list"] = doc["groups"][:1], [2]
    doc["bundles"] = [b for b in doc["bundles"] if b["placement_group"] == doc["groups"][0]["name"]]
    doc["sorted_bundle_indices"], doc["updated_at"] = [0, 1], "2026-12-02T19:00:00Z"
    return doc


def test_attached_before_a_resize_reports_it():
    fake = FakeRay(record_doc())
    vc = attach("train", ray_layer=fake)
    fake.put_record(shrunk(record_doc()))
    fake.live("train-node1").state = "REMOVED"
    with pytest.raises(ClusterResizedError, match=r"removed \['train-node1'\].*attach again"):
        vc.check()
    with pytest.raises(ClusterResizedError):
        vc.get_master_address_and_port()


def test_attached_after_a_resize_sees_the_new_shape():
    fake = FakeRay(record_doc())
    fake.put_record(shrunk(record_doc()))
    vc = attach("train", ray_layer=fake)
    assert vc.world_size() == 2 and [pg.name for pg in vc.get_placement_groups()] == ["train-node0"]
    vc.check()


def test_all_errors_share_a_base():
    fake = FakeRay(record_doc())
    fake.initialized = False
    with pytest.raises(AttachError):
        attach("train", ray_layer=fake)
    with pytest.raises(ValueError):
        attach("", ray_layer=FakeRay(record_doc()))
