"""The members NeMo-RL's worker groups and generation/policy code read from a RayVirtualCluster
(nemo_rl/distributed/worker_groups.py, models/policy/lm_policy.py, models/generation/*), exercised the
way those callers use them."""

import pytest
from fakes import FakeRay, record_doc

from raytf_attach import attach

METHODS = [
    "get_placement_groups", "world_size", "node_count", "get_master_address_and_port",
    "get_available_address_and_port", "get_available_addresses_and_ports_batch",
    "_init_placement_groups", "_get_sorted_bundle_indices", "shutdown",
]
ATTRIBUTES = [
    "use_gpus", "num_gpus_per_node", "max_colocated_worker_groups", "_bundle_ct_per_node_list",
    "_sorted_bundle_indices", "_nvlink_domain_per_bundle_index", "_node_placement_groups", "_world_size",
    "name", "placement_group_strategy", "port_range_low", "port_range_high", "segment_size",
    "node_resource_constraints", "_allocated_master_ports",
]


@pytest.mark.parametrize("unified", [False, True])
def test_members_exist(unified):
    vc = attach("train", ray_layer=FakeRay(record_doc(unified=unified)))
    for m in METHODS:
        assert callable(getattr(vc, m)), m
    for a in ATTRIBUTES:
        getattr(vc, a)


def test_default_worker_layout_one_worker_per_bundle():
    # Worker groups without explicit bundle indices: every bundle of every group, group by group.
    vc = attach("train", ray_layer=FakeRay(record_doc()))
    master = vc.get_master_address_and_port()
    pairs = [(i, b) for i, pg in enumerate(vc.get_placement_groups()) for b in range(pg.bundle_count)]
    assert len(pairs) == vc.world_size()
    addresses = vc.get_available_addresses_and_ports_batch(pairs)
    assert [a for a, _ in addresses] == [b.node_ip for b in vc.bundles]
    assert master not in addresses
    gpus_per_worker = 1 / vc.max_colocated_worker_groups if vc.use_gpus else 0
    assert gpus_per_worker == 1


def test_tied_groups_from_sorted_indices_on_unified_cluster():
    # Policies on a unified group tie rank i to bundle _sorted_bundle_indices[i], num_gpus_per_node per node.
    vc = attach("train", ray_layer=FakeRay(record_doc(unified=True)))
    assert vc._init_placement_groups(strategy="PACK", use_unified_pg=True) == vc.get_placement_groups()
    tied = [(i // vc.num_gpus_per_node, [b]) for i, b in enumerate(vc._sorted_bundle_indices)]
    assert tied == [(0, [2]), (0, [3]), (1, [0]), (1, [1])]
    # Rank order of the record is the same order.
    assert [b.bundle_index for b in vc.bundles] == [b for _, [b] in tied]
    pairs = [(node, b) for node, bundles in tied for b in bundles]
    out = vc.get_available_addresses_and_ports_batch(pairs)
    assert [a for a, _ in out] == ["127.0.0.12", "127.0.0.12", "127.0.0.11", "127.0.0.11"]
