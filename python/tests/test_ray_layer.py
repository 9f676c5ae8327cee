"""The Ray calls behind ray_layer.RayLayer exist with the signatures it uses, on the installed Ray.

Runs without a cluster (`-m "not integration"`), so every supported Ray version
(2.55.1, 2.60.0) checks them; test_integration.py exercises them live.
"""

import inspect

import pytest

ray = pytest.importorskip("ray")


def params(fn):
    return list(inspect.signature(fn).parameters)


def test_private_kv_read():
    from ray.experimental import internal_kv

    sig = inspect.signature(internal_kv._internal_kv_get)
    assert list(sig.parameters)[0] == "key" and "namespace" in sig.parameters


def test_private_group_lookup_by_namespace():
    from ray.util.placement_group import PlacementGroup

    assert params(ray._private.state.GlobalState.get_placement_group_by_name)[1:] == [
        "placement_group_name", "ray_namespace"]
    assert hasattr(ray._private.state, "state")
    assert PlacementGroup(ray.PlacementGroupID.from_random()).id is not None


def test_public_calls():
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    assert params(ray.util.get_placement_group) == ["placement_group_name"]
    assert "placement_group" in params(ray.util.placement_group_table)
    assert {"placement_group", "placement_group_bundle_index"} <= set(params(PlacementGroupSchedulingStrategy))
    assert callable(ray.get_runtime_context) and callable(ray.util.get_node_ip_address)
    assert callable(ray.cloudpickle.register_pickle_by_value)
