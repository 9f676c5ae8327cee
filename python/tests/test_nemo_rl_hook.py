"""raytf_attach.nemo_rl and raytf_attach.run against the NeMo-RL stand-in (standin/), without Ray."""

import gc
import json
import sys
import warnings

import pytest
from fakes import FakeRay, record_doc

# Imported before the hook exists, as NeMo-RL's algorithm modules are.
from nemo_rl.algorithms.grpo_clusters import setup_clusters
from nemo_rl.distributed import virtual_cluster as standin
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster

import raytf_attach
from raytf_attach import nemo_class, run
from raytf_attach.nemo_rl import ClusterNotDeclaredError, ShapeMismatchError, remove_hook, use_declared_clusters

CLUSTER = {"num_nodes": 4, "gpus_per_node": 2}
INFERENCE = {"num_nodes": 2, "gpus_per_node": 2}


@pytest.fixture(autouse=True)
def clean():
    standin.created.clear()
    yield
    remove_hook()
    standin.created.clear()


def fake_with(*docs):
    fake = FakeRay()
    for d in docs:
        fake.load(d)
    return fake


def grpo_fake(**train_changes):
    return fake_with(dict(record_doc(name="grpo_train_cluster"), **train_changes),
                     record_doc(name="grpo_inference_cluster"))


def test_algorithm_calls_attach_although_imported_before_the_hook():
    use_declared_clusters(ray_layer=grpo_fake())
    train, inference = setup_clusters(CLUSTER, INFERENCE)
    for vc, name in [(train, "grpo_train_cluster"), (inference, "grpo_inference_cluster")]:
        assert isinstance(vc, RayVirtualCluster) and isinstance(vc, raytf_attach.AttachedVirtualCluster)
        assert vc.name == name and vc.world_size() == 4
        assert [pg.name for pg in vc.get_placement_groups()] == [f"{name}-node0", f"{name}-node1"]
    assert standin.created == []  # NeMo-RL's own __init__ never ran


def test_names_map_to_declared_clusters_and_positional_arguments_bind():
    use_declared_clusters(names={"grpo_policy_cluster": "train"}, ray_layer=fake_with(record_doc()))
    vc = RayVirtualCluster([2, 2], True, 1, 2, "grpo_policy_cluster")
    assert vc.name == "train" and vc.world_size() == 4


def test_unset_port_range_means_the_master_band():
    use_declared_clusters(ray_layer=grpo_fake())
    train, _ = setup_clusters(dict(CLUSTER, master_port_range_low=1400, master_port_range_high=1999), INFERENCE)
    assert (train.port_range_low, train.port_range_high) == (1400, 1999)


def test_every_difference_in_one_error_and_nothing_attached():
    fake = grpo_fake(num_gpus_per_node=4, segment_size=2, port_range_low=3000, port_range_high=4999)
    calls = []
    find = fake.find_group
    fake.find_group = lambda *a: calls.append(a) or find(*a)
    use_declared_clusters(ray_layer=fake)
    with pytest.raises(ShapeMismatchError) as e:
        setup_clusters(dict(CLUSTER, num_nodes=5), INFERENCE)
    msg = str(e.value)
    assert [d[0] for d in e.value.differences] == [
        "bundle_ct_per_node_list", "num_gpus_per_node", "segment_size", "port_range_low", "port_range_high"]
    for line in [
        "bundle_ct_per_node_list: NeMo-RL asks for [2, 2, 2], Terraform declared [2, 2] -> set bundle_ct_per_node_list = [2, 2, 2]",
        "num_gpus_per_node: NeMo-RL asks for 2, Terraform declared 4 -> set num_gpus_per_node = 2",
        "segment_size: NeMo-RL asks for unset, Terraform declared 2 -> remove segment_size",
        "port_range_low: NeMo-RL asks for 1400, Terraform declared 3000 -> set port_range_low = 1400",
        "port_range_high: NeMo-RL asks for 1999, Terraform declared 4999 -> set port_range_high = 1999",
    ]:
        assert line in msg
    assert "terraform-ray/grpo_train_cluster" in msg and "5 differences" in msg
    assert calls == [] and standin.created == []


def test_use_gpus_and_colocation_are_compared():
    use_declared_clusters(ray_layer=fake_with(record_doc()))
    with pytest.raises(ShapeMismatchError, match=r"use_gpus: NeMo-RL asks for false.*\n.*max_colocated_worker_groups"):
        RayVirtualCluster([2, 2], use_gpus=False, max_colocated_worker_groups=2, num_gpus_per_node=2, name="train")


def test_undeclared_name_is_a_clear_error():
    use_declared_clusters(namespace="team-a", ray_layer=fake_with(record_doc(namespace="team-a")))
    with pytest.raises(ClusterNotDeclaredError) as e:
        RayVirtualCluster([2, 2], num_gpus_per_node=2, name="grpo_policy_cluster")
    msg = str(e.value)
    assert "no ray_virtual_cluster named 'grpo_policy_cluster'" in msg and "'team-a'" in msg
    assert "--map grpo_policy_cluster=<name>" in msg and "fallback='create'" in msg
    assert isinstance(e.value, raytf_attach.RecordNotFoundError) and standin.created == []
    with pytest.raises(ClusterNotDeclaredError, match="has no name"):
        RayVirtualCluster([1])


def test_fallback_create_lets_nemo_rl_create():
    use_declared_clusters(fallback="create", ray_layer=fake_with(record_doc()))
    vc = RayVirtualCluster([1, 1], num_gpus_per_node=2, name="scratch")
    assert type(vc) is RayVirtualCluster and standin.created == [vc]
    attached = RayVirtualCluster([2, 2], num_gpus_per_node=2, name="train")
    assert isinstance(attached, raytf_attach.AttachedVirtualCluster) and standin.created == [vc]


def test_remove_and_reinstall():
    use_declared_clusters(ray_layer=fake_with(record_doc()))
    use_declared_clusters(names={"x": "train"}, ray_layer=fake_with(record_doc()))  # replaces the settings
    assert RayVirtualCluster([2, 2], num_gpus_per_node=2, name="x").name == "train"
    remove_hook()
    vc = RayVirtualCluster([2, 2], num_gpus_per_node=2, name="x")
    assert type(vc) is RayVirtualCluster and standin.created == [vc]
    remove_hook()  # idempotent


def test_subclasses_and_bad_calls_are_left_to_nemo_rl():
    class Mine(RayVirtualCluster):
        pass

    use_declared_clusters(ray_layer=fake_with(record_doc()))
    mine = Mine([2, 2], num_gpus_per_node=2, name="train")
    assert type(mine) is Mine and standin.created == [mine]
    with pytest.raises(TypeError):
        RayVirtualCluster(name="train")  # missing bundle_ct_per_node_list: NeMo-RL's own error


def test_ray_not_initialized():
    fake = fake_with(record_doc())
    fake.initialized = False
    use_declared_clusters(ray_layer=fake)
    with pytest.raises(raytf_attach.RayNotInitializedError, match="ray.init"):
        RayVirtualCluster([2, 2], num_gpus_per_node=2, name="train")


def test_bad_settings():
    with pytest.raises(ValueError, match="fallback"):
        use_declared_clusters(fallback="ignore")
    with pytest.raises(ValueError, match="namespace"):
        use_declared_clusters(namespace="")


def test_hook_needs_nemo_rl(monkeypatch):
    monkeypatch.setattr("raytf_attach.nemo_rl.reference_class", lambda: None)
    with pytest.raises(ImportError, match="nemo_rl.distributed.virtual_cluster"):
        use_declared_clusters()


def test_run_without_nemo_rl_exits_with_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr("raytf_attach.nemo_rl.reference_class", lambda: None)
    monkeypatch.setattr(sys, "argv", ["/venv/bin/raytf-attach"])
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit('must not run')\n")
    with pytest.raises(SystemExit) as exit_:
        run.main(["--", str(script)])
    message = str(exit_.value.code)
    assert "\n" not in message and message.startswith("raytf-attach: NeMo-RL is not installed")
    assert "uv run raytf-attach" in message and "pip install" in message


def test_run_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        run.parse_args(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.split()[-1] == raytf_attach.__version__


def test_attach_is_a_ray_virtual_cluster_where_nemo_rl_imports(monkeypatch):
    vc = raytf_attach.attach("train", ray_layer=FakeRay(record_doc()))
    assert isinstance(vc, RayVirtualCluster) and type(vc).__name__ == "AttachedRayVirtualCluster"
    assert type(vc) is nemo_class.attached_class(RayVirtualCluster)  # made once per reference class
    monkeypatch.setattr(nemo_class, "reference_class", lambda: None)
    plain = raytf_attach.attach("train", ray_layer=FakeRay(record_doc()))
    assert type(plain) is raytf_attach.AttachedVirtualCluster and not isinstance(plain, RayVirtualCluster)


def test_reference_code_is_refused_and_gc_keeps_groups():
    vc = raytf_attach.attach("train", ray_layer=FakeRay(record_doc()))
    with pytest.raises(raytf_attach.AttachError, match="_create_placement_groups_internal"):
        vc._create_placement_groups_internal("PACK")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the reference's __del__ would call shutdown(), which warns
        del vc
        gc.collect()


# ---------------------------------------------------------------- the runner


def test_run_parses_options_before_the_separator():
    o = run.parse_args(["--namespace", "n", "--map", "a=b", "--map", "c=d", "--", "s.py", "--namespace", "x", "--"])
    assert (o.namespace, o.names, o.fallback, o.script, o.args) == (
        "n", [("a", "b"), ("c", "d")], "error", "s.py", ["--namespace", "x", "--"])
    o = run.parse_args(["--fallback", "create", "s.py", "-v"])
    assert (o.fallback, o.script, o.args) == ("create", "s.py", ["-v"])
    with pytest.raises(SystemExit):
        run.parse_args(["--map", "nonsense", "--", "s.py"])
    with pytest.raises(SystemExit):
        run.parse_args(["--"])


def test_run_installs_the_hook_then_runs_the_script_as_main(tmp_path, monkeypatch):
    installed = []
    monkeypatch.setattr(run, "use_declared_clusters", lambda **kw: installed.append(kw))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    out = tmp_path / "out.json"
    script = tmp_path / "train.py"
    script.write_text("import json, sys\n"
                      f"json.dump({{'name': __name__, 'argv': sys.argv, 'path0': sys.path[0]}}, open({str(out)!r}, 'w'))\n")
    run.main(["--namespace", "n", "--map", "a=b", "--", str(script), "--lr", "1"])
    assert installed == [{"namespace": "n", "names": {"a": "b"}, "fallback": "error"}]
    assert json.loads(out.read_text()) == {"name": "__main__", "argv": [str(script), "--lr", "1"], "path0": str(tmp_path)}
    with pytest.raises(SystemExit, match="no such script"):
        run.main(["--", str(tmp_path / "absent.py")])


def test_fields_the_record_does_not_carry_are_not_compared():
    # Records of providers that do not write segment_size: only what is recorded is compared.
    use_declared_clusters(ray_layer=grpo_fake())
    train, _ = setup_clusters(CLUSTER, INFERENCE, segment_size=2)
    assert train.world_size() == 4
    fake = grpo_fake(segment_size=None)  # recorded as null: declared unset
    use_declared_clusters(ray_layer=fake)
    with pytest.raises(ShapeMismatchError, match="segment_size: NeMo-RL asks for 2, Terraform declared unset"):
        setup_clusters(CLUSTER, INFERENCE, segment_size=2)
