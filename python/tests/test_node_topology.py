"""raytf-node-topology on recorded `nvidia-smi -q` outputs (tests/testdata/nvidia-smi), without GPUs or Ray."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

import raytf_attach
from raytf_attach import node_topology as nt
from raytf_attach.record import NVLINK_DOMAIN_PREFIX, TOPO_RANK_KEY

DATA = Path(__file__).parent / "testdata" / "nvidia-smi"
GB200 = str(DATA / "gb200-nvl72.txt")
H100 = str(DATA / "h100-no-fabric.txt")
NO_GPU = str(DATA / "no-gpu.txt")
GB200_DOMAIN = "5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10.32766"
# The provider's rules: a label value (internal/clusterspec labelNamePattern), a rank label's digits.
LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")


def run(capsys, *args, env=None):
    code = nt.main(list(args), env={} if env is None else env)
    out, err = capsys.readouterr()
    return code, out, err


def ray_start_words(out):
    """The printed flags as a shell would pass them to `ray start`."""
    return dict(w.split("=", 1) for w in shlex.split(out))


# ------------------------------------------------------------------ parsing


def test_gb200_fabric_sections_are_read_per_gpu():
    gpus = nt.parse_nvidia_smi(Path(GB200).read_text())
    assert [g.gpu for g in gpus] == ["00000008:01:00.0", "00000009:01:00.0", "00000018:01:00.0", "00000019:01:00.0"]
    assert {(g.state, g.status, g.clique_id, g.cluster_uuid) for g in gpus} == {
        ("Completed", "Success", "32766", "5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10")}
    domain = nt.node_domain(gpus)
    assert domain.name == GB200_DOMAIN and domain.gpus == 4
    assert LABEL_VALUE.match(domain.name)


def test_h100_without_fabric_is_unknown():
    gpus = nt.parse_nvidia_smi(Path(H100).read_text())
    assert len(gpus) == 2 and all(g.has_fabric_section and g.state == "N/A" for g in gpus)
    domain = nt.node_domain(gpus)
    assert domain.name is None and "no NVLink fabric" in domain.reason


def test_no_gpu_output_has_no_gpus():
    assert nt.parse_nvidia_smi(Path(NO_GPU).read_text()) == []
    assert nt.node_domain([]).name is None


def _gpu(bus, body):
    return f"GPU {bus}\n    Product Name                          : NVIDIA GB200\n{body}"


def _fabric(state="Completed", status="Success", clique="7", uuid="5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10"):
    return (f"    Fabric\n        State                             : {state}\n"
            f"        Status                            : {status}\n"
            f"        CliqueId                          : {clique}\n"
            f"        ClusterUUID                       : {uuid}\n"
            "        Health\n            Bandwidth                     : Full\n"
            "    Compute Mode                          : Default\n")


@pytest.mark.parametrize("body, why", [
    ("    Compute Mode                          : Default\n", "Fabric State absent"),
    (_fabric(state="In Progress"), "not complete (State In Progress)"),
    (_fabric(status="Failure"), "registration failed (Status Failure)"),
    (_fabric(uuid="00000000-0000-0000-0000-000000000000"), "no usable ClusterUUID"),
    (_fabric(clique="N/A"), "no usable CliqueId"),
])
def test_a_gpu_without_a_usable_fabric_makes_the_domain_unknown(body, why):
    text = _gpu("00000008:01:00.0", _fabric()) + _gpu("00000009:01:00.0", body)
    domain = nt.node_domain(nt.parse_nvidia_smi(text))
    assert domain.name is None and why in domain.reason and "00000009:01:00.0" in domain.reason


def test_gpus_in_different_domains_make_it_unknown():
    text = _gpu("00000008:01:00.0", _fabric(clique="7")) + _gpu("00000009:01:00.0", _fabric(clique="8"))
    domain = nt.node_domain(nt.parse_nvidia_smi(text))
    assert domain.name is None and "different NVLink domains" in domain.reason


def test_domain_name_is_deterministic_and_normalised():
    upper = _gpu("0:1", _fabric(clique="007", uuid="5F0C2A9E-7D41-4B8E-9A36-1C2E7B9D4F10"))
    assert nt.node_domain(nt.parse_nvidia_smi(upper)).name == "5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10.7"


# ------------------------------------------------------------------ rank


def test_rank_from_flag_then_documented_environment():
    assert nt.resolve_rank("3", {"SLURM_NODEID": "9"}) == nt.Rank(3, "--rank")
    assert nt.resolve_rank(None, {"SLURM_NODEID": "4", "NODE_RANK": "9"}) == nt.Rank(4, "SLURM_NODEID")
    assert nt.resolve_rank(None, {"SLURM_NODEID": "", "NODE_RANK": "5", "GROUP_RANK": "9"}) == nt.Rank(5, "NODE_RANK")
    assert nt.resolve_rank(None, {"GROUP_RANK": "6"}) == nt.Rank(6, "GROUP_RANK")
    assert nt.resolve_rank(None, {"SLURM_PROCID": "7", "RANK": "7"}) == nt.Rank(None, "")


@pytest.mark.parametrize("bad", ["-1", "+3", "3.0", "rackA", " 3", "1" * 19, "٣"])
def test_a_rank_the_provider_would_not_read_is_refused(bad, capsys):
    with pytest.raises(nt.TopologyInputError, match="--rank"):
        nt.resolve_rank(bad, {})
    code, out, err = run(capsys, "--nvidia-smi-file", GB200, env={"NODE_RANK": bad})
    assert code == 2 and out == "" and "NODE_RANK" in err


# ------------------------------------------------------------------ the command


def test_gb200_ray_start_resources(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", GB200, "--rank", "5")
    assert code == 0
    words = ray_start_words(out)
    assert list(words) == ["--resources"]
    assert json.loads(words["--resources"]) == {NVLINK_DOMAIN_PREFIX + GB200_DOMAIN: 1, TOPO_RANK_KEY: 5}
    assert f"NVLink domain {GB200_DOMAIN}" in err and "topo_rank 5 (from --rank)" in err


def test_gb200_ray_start_labels_with_rank_from_slurm(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", GB200, "--source", "labels", env={"SLURM_NODEID": "12"})
    assert code == 0
    assert ray_start_words(out) == {"--labels": f"raytf.io/nvlink-domain={GB200_DOMAIN},raytf.io/topo-rank=12"}
    assert "from SLURM_NODEID" in err


def test_both_sources_and_own_label_keys(capsys):
    code, out, _ = run(capsys, "--nvidia-smi-file", GB200, "--source", "both", "--domain-label", "example.com/nvl",
                       "--rank-label", "example.com/rank", env={"GROUP_RANK": "2"})
    words = ray_start_words(out)
    assert code == 0 and json.loads(words["--resources"])[TOPO_RANK_KEY] == 2
    assert words["--labels"] == f"example.com/nvl={GB200_DOMAIN},example.com/rank=2"


def test_gb200_kuberay_snippet(capsys):
    code, out, _ = run(capsys, "--nvidia-smi-file", GB200, "--format", "kuberay", "--source", "both",
                       env={"NODE_RANK": "1"})
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("# raytf-node-topology: NVLink domain " + GB200_DOMAIN)
    assert lines[1] == "rayStartParams:"
    params = dict(line.strip().split(": ", 1) for line in lines[2:])
    # YAML single-quoted scalars; KubeRay hands the value to a shell, which must yield the JSON.
    resources = params["resources"][1:-1].replace("''", "'")
    assert json.loads(shlex.split(resources)[0]) == {NVLINK_DOMAIN_PREFIX + GB200_DOMAIN: 1, TOPO_RANK_KEY: 1}
    assert params["labels"] == f"'raytf.io/nvlink-domain={GB200_DOMAIN},raytf.io/topo-rank=1'"


def test_gb200_env_lines(capsys):
    code, out, _ = run(capsys, "--nvidia-smi-file", GB200, "--format", "env", "--source", "both", "--rank", "4")
    assert code == 0
    exported = dict(line.split(" ", 1)[1].split("=", 1) for line in out.splitlines())
    assert json.loads(shlex.split(exported["RAY_OVERRIDE_RESOURCES"])[0]) == {
        NVLINK_DOMAIN_PREFIX + GB200_DOMAIN: 1, TOPO_RANK_KEY: 4}
    assert json.loads(shlex.split(exported["RAY_OVERRIDE_LABELS"])[0]) == {
        "raytf.io/nvlink-domain": GB200_DOMAIN, "raytf.io/topo-rank": "4"}


def test_h100_prints_the_rank_only_and_says_the_domain_is_unknown(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", H100, "--rank", "3")
    assert code == 0
    assert json.loads(ray_start_words(out)["--resources"]) == {TOPO_RANK_KEY: 3}
    assert "NVLink domain unknown" in err and "no NVLink fabric" in err
    code, out, err = run(capsys, "--nvidia-smi-file", H100, "--format", "kuberay", "--source", "labels",
                         "--rank", "3")
    assert code == 0 and out.splitlines()[1:] == ["rayStartParams:", "  labels: 'raytf.io/topo-rank=3'"]


def test_require_domain_fails_without_one(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", H100, "--rank", "3", "--require-domain")
    assert code == nt.EXIT_NO_DOMAIN and out == "" and "NVLink domain unknown" in err
    assert run(capsys, "--nvidia-smi-file", GB200, "--require-domain")[0] == 0


def test_no_gpu_node_prints_nothing_to_advertise(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", NO_GPU)
    assert code == 0 and out == "\n"
    assert "NVLink domain unknown: No devices were found" in err and "topo_rank unknown" in err
    code, out, _ = run(capsys, "--nvidia-smi-file", NO_GPU, "--format", "kuberay")
    assert code == 0 and out.splitlines()[1:] == ["rayStartParams: {}"]
    assert run(capsys, "--nvidia-smi-file", NO_GPU, "--require-domain")[0] == nt.EXIT_NO_DOMAIN


def test_rank_zero_as_a_resource_is_flagged(capsys):
    _, _, err = run(capsys, "--nvidia-smi-file", GB200, "--rank", "0")
    assert "topo_rank 0 as a resource" in err and "reads this node's rank as -1" in err
    _, _, err = run(capsys, "--nvidia-smi-file", GB200, "--rank", "0", "--source", "labels")
    assert "topo_rank 0 as a resource" not in err


def test_missing_file_is_a_usage_error(capsys, tmp_path):
    code, out, err = run(capsys, "--nvidia-smi-file", str(tmp_path / "absent.txt"))
    assert code == 2 and out == "" and "cannot read --nvidia-smi-file" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        nt.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"raytf-node-topology {raytf_attach.__version__}"


def test_help_names_the_rank_variables(capsys):
    with pytest.raises(SystemExit):
        nt.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in nt.RANK_ENV:
        assert name in text
    assert "SLURM_PROCID is not read" in text


# ------------------------------------------------------------------ running nvidia-smi


class _Done:
    def __init__(self, returncode, stdout="", stderr=""):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def test_running_nvidia_smi():
    recorded = Path(GB200).read_text()
    calls = []

    def fake(cmd, **kw):
        calls.append(cmd)
        return _Done(0, recorded)

    assert nt.read_nvidia_smi(None, run=fake) == (recorded, "") and calls == [["nvidia-smi", "-q"]]
    no_devices = nt.read_nvidia_smi(None, run=lambda *a, **k: _Done(6, "No devices were found\n"))
    assert no_devices[1] == "No devices were found"
    failed = nt.read_nvidia_smi(None, run=lambda *a, **k: _Done(
        9, "", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"))[1]
    assert failed.startswith("nvidia-smi -q failed (exit 9): NVIDIA-SMI has failed")

    def absent(*a, **k):
        raise FileNotFoundError("nvidia-smi")

    assert "not installed" in nt.read_nvidia_smi(None, run=absent)[1]

    def slow(*a, **k):
        raise subprocess.TimeoutExpired("nvidia-smi", 1)

    assert "did not answer" in nt.read_nvidia_smi(None, run=slow)[1]


def test_console_script_is_declared():
    text = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert 'raytf-node-topology = "raytf_attach.node_topology:cli"' in text
    assert 'raytf-attach = "raytf_attach.run:main"' in text
