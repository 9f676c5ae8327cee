"""Against a live Ray cluster: runs only when RAY_ADDRESS is set (the dashboard URL of the test cluster).

Groups and records are made by declare_cluster.py (plain ray.util, in its own
namespace, as the provider's driver does); this driver attaches from another
namespace. GCS address: RAYTF_ATTACH_GCS_ADDRESS, else 127.0.0.$RAY_TF_IP_BASE (10):$RAY_TF_GCS_PORT (6379).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.environ.get("RAY_ADDRESS"), reason="RAY_ADDRESS not set: no live Ray cluster"),
]

HERE = Path(__file__).resolve().parent
TRAIN_PY = HERE.parents[1] / "examples" / "attach" / "train.py"
PACKAGE_DIR = HERE.parent / "src" / "raytf_attach"
TEST_NAMESPACE = "attach-it"
# Below the kernel's ephemeral range (32768+), where any outgoing connection may hold a port
# (the bind of a "busy" port then failed), and clear of the test nodes' ports (20000-26999),
# the token cluster's (30000+) and the demo's (55000+).
PORT_LOW, PORT_HIGH = 28000, 28500


def gcs_address() -> str:
    # The head of scripts/ray-cluster.sh's cluster, wherever RAY_TF_IP_BASE puts it (CI's side cluster too).
    head = "127.0.0." + os.environ.get("RAY_TF_IP_BASE", "10")
    return os.environ.get("RAYTF_ATTACH_GCS_ADDRESS") or head + ":" + os.environ.get("RAY_TF_GCS_PORT", "6379")


def env_without_http_address() -> dict:
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)  # ray.init refuses the dashboard URL
    return env


def declare(action: str, spec: dict) -> dict:
    out = subprocess.run(
        [sys.executable, str(HERE / "declare_cluster.py"), action, gcs_address(), json.dumps(spec)],
        capture_output=True, text=True, timeout=180, env=env_without_http_address(),
    )
    if out.returncode != 0:
        raise AssertionError(f"declare_cluster {action} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def spec_for(layout: str) -> dict:
    name = f"attach-{layout}-{secrets.token_hex(3)}"
    gpu = {"CPU": 0.01, "GPU": 1}
    spec = {"name": name, "namespace": TEST_NAMESPACE, "port_low": PORT_LOW, "port_high": PORT_HIGH,
            "bundle_ct_per_node_list": [2, 2], "num_gpus_per_node": 4}
    if layout == "unified":
        # Rank order deliberately not the natural one: attach must follow the record.
        spec.update(unified=True, rank_order=[3, 1, 2, 0], groups=[
            {"name": f"{name}-unified", "node_index": -1, "strategy": "PACK", "bundles": [gpu] * 4}])
    elif layout == "cpu":
        spec.update(unified=False, use_gpus=False, bundle_ct_per_node_list=[1], groups=[
            {"name": f"{name}-node0", "node_index": 0, "strategy": "PACK", "bundles": [{"CPU": 0.01}]}])
    else:
        spec.update(unified=False, groups=[
            {"name": f"{name}-node{n}", "node_index": n, "strategy": "PACK", "bundles": [gpu] * 2} for n in range(2)])
    return spec


@pytest.fixture(scope="module")
def ray_driver():
    import ray

    saved = os.environ.pop("RAY_ADDRESS", None)
    # The package travels with this job (py_modules) so tasks can attach; the cluster's Python does not
    # have it. train.py's driver ships nothing, which covers the probe code being sent by value.
    ray.init(address=gcs_address(), namespace=f"attach-driver-{secrets.token_hex(3)}", log_to_driver=False,
             runtime_env={"py_modules": [str(PACKAGE_DIR)]})
    yield ray
    ray.shutdown()
    if saved is not None:
        os.environ["RAY_ADDRESS"] = saved


def declared(layout):
    spec = spec_for(layout)
    try:
        record = declare("create", spec)
        yield spec, record
    finally:
        declare("remove", spec)


@pytest.fixture(scope="module")
def per_node(ray_driver):
    yield from declared("per-node")


@pytest.fixture(scope="module")
def unified(ray_driver):
    yield from declared("unified")


@pytest.fixture
def cpu_cluster(ray_driver):
    yield from declared("cpu")


def start_rank_actors(ray, cluster):
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    @ray.remote
    class Probe:
        def where(self):
            return ray.get_runtime_context().get_node_id(), [int(g) for g in ray.get_gpu_ids()]

    actors = []
    for rank in range(cluster.world_size()):
        pg, idx = cluster.placement_for_rank(rank)
        actors.append(Probe.options(
            num_cpus=0, num_gpus=1 if cluster.use_gpus else 0,
            scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=idx),
        ).remote())
    try:
        return ray.get([a.where.remote() for a in actors], timeout=120)
    finally:
        for a in actors:
            ray.kill(a)


@pytest.mark.parametrize("layout", ["per_node", "unified"])
def test_actors_per_rank_land_on_recorded_bundles(request, layout):
    import raytf_attach

    ray = request.getfixturevalue("ray_driver")
    spec, record = request.getfixturevalue(layout)
    cluster = raytf_attach.attach(spec["name"], namespace=TEST_NAMESPACE)
    assert cluster.world_size() == 4
    assert [pg.id.hex() for pg in cluster.get_placement_groups()] == [g["id"] for g in record["groups"]]
    if layout == "unified":
        assert cluster._sorted_bundle_indices == [3, 1, 2, 0]
        assert cluster.node_count() == 2
    else:
        assert cluster._sorted_bundle_indices is None
        assert [pg.bundle_count for pg in cluster.get_placement_groups()] == [2, 2]

    placed = start_rank_actors(ray, cluster)
    assert [node for node, _ in placed] == [b["node_id"] for b in record["bundles"]]
    assert [gpus for _, gpus in placed] == [[b["gpu_id"]] for b in record["bundles"]]

    assert cluster.get_master_address_and_port() == (record["master_address"], record["master_port"])
    second = cluster.get_master_address_and_port()
    assert second[0] == record["master_address"] and second[1] != record["master_port"]
    assert PORT_LOW <= second[1] < PORT_HIGH


def test_ports_recorded_then_fresh_and_unique(per_node):
    import raytf_attach

    spec, record = per_node
    cluster = raytf_attach.attach(spec["name"], namespace=TEST_NAMESPACE)
    pairs = [(pg_idx, b) for pg_idx, pg in enumerate(cluster.get_placement_groups()) for b in range(pg.bundle_count)]

    # Occupy rank 1's recorded port on this host (all test nodes share it): it must be re-probed.
    busy_port = record["bundles"][1]["port"]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("", busy_port))
        holder.listen(1)
        first = cluster.get_available_addresses_and_ports_batch(pairs)
    assert [a for a, _ in first] == [b["node_ip"] for b in record["bundles"]]
    assert first[1][1] != busy_port and PORT_LOW <= first[1][1] < PORT_HIGH
    others = [i for i in range(len(pairs)) if i != 1]
    assert [first[i][1] for i in others] == [record["bundles"][i]["port"] for i in others]

    again = cluster.get_available_addresses_and_ports_batch(pairs, batch_size=1)
    single = cluster.get_available_address_and_port(1, 0)
    seen = set()
    for addr, port in first + again + [single]:
        assert (addr, port) not in seen
        seen.add((addr, port))


def test_shutdown_leaves_terraform_groups(per_node, ray_driver):
    import raytf_attach

    spec, record = per_node
    cluster = raytf_attach.attach(spec["name"], namespace=TEST_NAMESPACE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cluster.shutdown() is True
    assert any(issubclass(w.category, raytf_attach.TerraformOwnedWarning) for w in caught)
    for pg in cluster.get_placement_groups():
        assert ray_driver.util.placement_group_table(pg)["state"] == "CREATED"
    raytf_attach.attach(spec["name"], namespace=TEST_NAMESPACE)


def test_train_example_prints_recorded_placement(per_node):
    spec, record = per_node
    out = subprocess.run(
        [sys.executable, str(TRAIN_PY), "--address", gcs_address(),
         "--name", spec["name"], "--namespace", TEST_NAMESPACE],
        capture_output=True, text=True, timeout=300, env=env_without_http_address(),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["world_size"] == 4
    assert (result["master_address"], result["master_port"]) == (record["master_address"], record["master_port"])
    assert [r["node_id"] for r in result["ranks"]] == [b["node_id"] for b in record["bundles"]]
    assert [r["gpu_ids"] for r in result["ranks"]] == [[b["gpu_id"]] for b in record["bundles"]]


def test_attach_inside_a_task(per_node, ray_driver):
    spec, record = per_node

    def inside(name, namespace):
        import raytf_attach

        cluster = raytf_attach.attach(name, namespace=namespace)
        return cluster.world_size(), list(cluster.get_master_address_and_port())

    task = ray_driver.remote(inside).options(num_cpus=0)
    size, master = ray_driver.get(task.remote(spec["name"], TEST_NAMESPACE), timeout=180)
    assert size == 4 and master == [record["master_address"], record["master_port"]]


def test_missing_record(ray_driver):
    import raytf_attach

    with pytest.raises(raytf_attach.RecordNotFoundError, match="attach-absent"):
        raytf_attach.attach(f"attach-absent-{secrets.token_hex(3)}", namespace=TEST_NAMESPACE)


def test_group_recreated_or_removed_outside_terraform(cpu_cluster):
    import raytf_attach

    spec, record = cpu_cluster
    raytf_attach.attach(spec["name"], namespace=TEST_NAMESPACE)
    new_id = declare("recreate", spec)["id"]
    assert new_id != record["groups"][0]["id"]
    with pytest.raises(raytf_attach.GroupIdMismatchError, match="recreated outside Terraform"):
        raytf_attach.attach(spec["name"], namespace=TEST_NAMESPACE)
    declare("remove", dict(spec, name=spec["name"] + "-keep-record"))  # removes the group only
    with pytest.raises(raytf_attach.GroupMissingError, match=spec["groups"][0]["name"]):
        raytf_attach.attach(spec["name"], namespace=TEST_NAMESPACE)


def test_public_group_lookup_in_own_namespace(ray_driver):
    # The caller's own namespace goes through the public ray.util.get_placement_group.
    from raytf_attach.ray_layer import RayLayer

    own = ray_driver.get_runtime_context().namespace
    name = f"attach-own-{secrets.token_hex(3)}"
    pg = ray_driver.util.placement_group([{"CPU": 0.01}], name=name)
    try:
        ray_driver.get(pg.ready(), timeout=60)
        found = RayLayer().find_group(name, own)
        assert found is not None and found.id == pg.id.hex() and found.state == "CREATED"
        assert RayLayer().find_group(name + "-absent", own) is None
    finally:
        ray_driver.util.remove_placement_group(pg)


def test_nemo_rl_constructor_attaches_under_the_hook(per_node, ray_driver):
    # The stand-in's RayVirtualCluster (tests/standin) would create groups; under the hook it attaches.
    from nemo_rl.distributed.virtual_cluster import RayVirtualCluster

    from raytf_attach.nemo_rl import ShapeMismatchError, remove_hook, use_declared_clusters

    spec, record = per_node
    use_declared_clusters(namespace=TEST_NAMESPACE, names={"grpo_train_cluster": spec["name"]})
    try:
        shape = dict(bundle_ct_per_node_list=[2, 2], num_gpus_per_node=4, port_range_low=PORT_LOW,
                     port_range_high=PORT_HIGH)
        vc = RayVirtualCluster(name="grpo_train_cluster", **shape)
        assert isinstance(vc, RayVirtualCluster)
        assert [pg.id.hex() for pg in vc.get_placement_groups()] == [g["id"] for g in record["groups"]]
        with pytest.raises(ShapeMismatchError, match="port_range_low"):
            RayVirtualCluster(name="grpo_train_cluster", **dict(shape, port_range_low=None, port_range_high=None))
    finally:
        remove_hook()
