"""raytf-node-topology on recorded `nvidia-smi -q` outputs (tests/testdata/nvidia-smi), without GPUs or Ray."""

from __future__ import annotations

import io
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fake_nvml
import raytf_attach
from raytf_attach import node_topology as nt
from raytf_attach.record import NVLINK_DOMAIN_PREFIX, TOPO_RANK_KEY

DATA = Path(__file__).parent / "testdata" / "nvidia-smi"
GB200 = str(DATA / "gb200-nvl72.txt")
H100 = str(DATA / "h100-no-fabric.txt")
NO_GPU = str(DATA / "no-gpu.txt")
UNHEALTHY = str(DATA / "gb200-unhealthy.txt")  # registered (Completed, Success), GPU 00000018:01:00.0 Unhealthy
IN_PROGRESS = str(DATA / "gb200-in-progress.txt")
DEGRADED = str(DATA / "gb200-degraded.txt")  # gb200-nvl72.txt with GPU 00000018:01:00.0's Bandwidth Degraded
NOT_SUPPORTED = str(DATA / "h100-fabric-not-supported.txt")
ELF = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00"  # a binary's first bytes
GB200_DOMAIN = "5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10.32766"
# The provider's rules: a label value (internal/clusterspec labelNamePattern), a rank label's digits.
LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")


LOAD_NVML = nt.load_nvml  # the real one, which no_nvml replaces in every test


@pytest.fixture(autouse=True)
def no_nvml(monkeypatch):
    """Every test reads nvidia-smi unless it serves a fake NVML itself, also where pynvml is installed."""
    monkeypatch.setattr(nt, "load_nvml", lambda: None)


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


def test_unhealthy_fixture_is_registered_but_unhealthy():
    gpus = nt.parse_nvidia_smi(Path(UNHEALTHY).read_text())
    assert {(g.state, g.status, g.clique_id) for g in gpus} == {("Completed", "Success", "32766")}
    assert [g.health_summary for g in gpus] == ["Healthy", "Healthy", "Unhealthy", "Healthy"]
    domain = nt.node_domain(gpus)
    assert domain.name is None and domain.waiting_helps is False and "00000018:01:00.0" in domain.reason
    allowed = nt.node_domain(gpus, allow_unhealthy=True)
    assert allowed.name == GB200_DOMAIN and "--allow-unhealthy-fabric" in allowed.notes[0]


def _gpu(bus, body):
    return f"GPU {bus}\n    Product Name                          : NVIDIA GB200\n{body}"


def _fabric(state="Completed", status="Success", clique="7", uuid="5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10",
            summary=None, bandwidth="Full", route_unhealthy=None):
    health = "" if summary is None else f"            Summary                       : {summary}\n"
    if route_unhealthy is not None:
        health = f"            Route Unhealthy               : {route_unhealthy}\n" + health
    return (f"    Fabric\n        State                             : {state}\n"
            f"        Status                            : {status}\n"
            f"        CliqueId                          : {clique}\n"
            f"        ClusterUUID                       : {uuid}\n"
            f"        Health\n            Bandwidth                     : {bandwidth}\n{health}"
            "    Compute Mode                          : Default\n")


@pytest.mark.parametrize("body, why, waiting_helps", [
    ("    Compute Mode                          : Default\n", "Fabric State absent", False),
    (_fabric(state="N/A"), "no NVLink fabric (Fabric State N/A)", False),
    (_fabric(state="Not Supported"), "does not support an NVLink fabric (Fabric State Not Supported)", False),
    (_fabric(state="In Progress"), "not complete (State In Progress)", True),
    (_fabric(state="Not Started"), "has not started (State Not Started)", True),
    (_fabric(state="Rebuilding"), "a fabric State this tool does not know (Rebuilding)", False),
    (_fabric(status="Failure"), "registration failed (Status Failure)", False),
    (_fabric(summary="Unhealthy"), "registered but its Health Summary is Unhealthy", False),
    (_fabric(uuid="00000000-0000-0000-0000-000000000000"), "no usable ClusterUUID", False),
    (_fabric(clique="N/A"), "no usable CliqueId", False),
])
def test_a_gpu_without_a_usable_fabric_makes_the_domain_unknown(body, why, waiting_helps):
    text = _gpu("00000008:01:00.0", _fabric()) + _gpu("00000009:01:00.0", body)
    domain = nt.node_domain(nt.parse_nvidia_smi(text))
    assert domain.name is None and why in domain.reason and "00000009:01:00.0" in domain.reason
    assert domain.waiting_helps is waiting_helps
    assert ("; waiting helps: " if waiting_helps else "; waiting will not help: ") in domain.reason


@pytest.mark.parametrize("summary", [None, "N/A", "Healthy", "Not Supported"])
def test_a_healthy_or_silent_health_summary_keeps_the_domain(summary):
    text = _gpu("0:1", _fabric(summary=summary)) + _gpu("0:2", _fabric(summary=summary))
    domain = nt.node_domain(nt.parse_nvidia_smi(text))
    assert domain.name == "5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10.7" and domain.notes == ()


def test_limited_capacity_keeps_the_domain_with_a_warning():
    text = _gpu("0:1", _fabric(summary="Healthy")) + _gpu("0:2", _fabric(summary="Limited Capacity"))
    gpus = nt.parse_nvidia_smi(text)
    domain = nt.degraded_decision(nt.node_domain(gpus), gpus, skip_degraded=False)
    assert domain.name is not None and len(domain.notes) == 1
    assert "GPU 0:2: Summary Limited Capacity" in domain.notes[0] and "0:1" not in domain.notes[0]


@pytest.mark.parametrize("body, says", [
    (_fabric(bandwidth="Degraded"), "GPU 0:2: Bandwidth Degraded"),
    (_fabric(bandwidth="Degraded", summary="Limited Capacity"),
     "GPU 0:2: Bandwidth Degraded, Summary Limited Capacity"),
    (_fabric(route_unhealthy="True", summary="Healthy"), "GPU 0:2: Route Unhealthy True"),
])
def test_a_degraded_fabric_is_advertised_with_a_warning_or_withheld(body, says):
    gpus = nt.parse_nvidia_smi(_gpu("0:1", _fabric()) + _gpu("0:2", body))
    domain = nt.node_domain(gpus)
    kept = nt.degraded_decision(domain, gpus, skip_degraded=False)
    assert kept.name == domain.name and len(kept.notes) == 1
    assert says in kept.notes[0] and f"advertised NVLink domain {domain.name} anyway" in kept.notes[0]
    withheld = nt.degraded_decision(domain, gpus, skip_degraded=True)
    assert withheld.name is None and says in withheld.reason and "--skip-degraded withholds" in withheld.reason


@pytest.mark.parametrize("value", ["Full", "N/A", "Not Supported"])
def test_a_full_or_silent_bandwidth_is_no_degradation(value):
    gpus = nt.parse_nvidia_smi(_gpu("0:1", _fabric(bandwidth=value, route_unhealthy="False")))
    assert nt.fabric_degradation(gpus[0]) == []
    assert nt.degraded_decision(nt.node_domain(gpus), gpus, skip_degraded=True).notes == ()


def test_fixtures_read_their_degradations():
    for path in (GB200, H100):
        assert all(nt.fabric_degradation(g) == [] for g in nt.parse_nvidia_smi(Path(path).read_text()))
    read = {g.gpu: nt.fabric_degradation(g) for g in nt.parse_nvidia_smi(Path(UNHEALTHY).read_text())}
    assert read["00000018:01:00.0"] == ["Route Unhealthy True"] and read["00000008:01:00.0"] == []


def test_only_the_fabric_health_summary_is_read():
    """A Summary line elsewhere (another section's sub-section) is not the fabric's health."""
    other = "    Clocks Event Reasons\n        Summary                           : Unhealthy\n"
    gpus = nt.parse_nvidia_smi(_gpu("0:1", other + _fabric(summary="Healthy")))
    assert gpus[0].health_summary == "Healthy" and gpus[0].state == "Completed"


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
    assert "NVLink domain unknown: nvidia-smi found no GPU (No devices were found); waiting will not help" in err
    assert "topo_rank unknown" in err
    code, out, _ = run(capsys, "--nvidia-smi-file", NO_GPU, "--format", "kuberay")
    assert code == 0 and out.splitlines()[1:] == ["rayStartParams: {}"]
    assert run(capsys, "--nvidia-smi-file", NO_GPU, "--require-domain")[0] == nt.EXIT_NO_DOMAIN


def test_rank_zero_as_a_resource_is_flagged(capsys):
    _, _, err = run(capsys, "--nvidia-smi-file", GB200, "--rank", "0")
    assert "topo_rank 0 as a resource" in err and "reads this node's rank as -1" in err
    _, _, err = run(capsys, "--nvidia-smi-file", GB200, "--rank", "0", "--source", "labels")
    assert "topo_rank 0 as a resource" not in err


@pytest.mark.parametrize("path, waiting_helps, says", [
    (IN_PROGRESS, True, "not complete (State In Progress); waiting helps: run again once"),
    (NOT_SUPPORTED, False, "(Fabric State Not Supported); waiting will not help: a GPU without a multi-node NVLink"),
    (H100, False, "(Fabric State N/A); waiting will not help"),
    (UNHEALTHY, False, "Health Summary is Unhealthy; waiting will not help: repair the fabric"),
])
def test_each_unknown_domain_says_whether_waiting_helps(capsys, path, waiting_helps, says):
    code, out, err = run(capsys, "--nvidia-smi-file", path, "--rank", "2")
    assert code == 0 and json.loads(ray_start_words(out)["--resources"]) == {TOPO_RANK_KEY: 2}
    assert says in err and "NVLink domain unknown" in err
    assert ("run again" in err) is waiting_helps


def test_allow_unhealthy_fabric_advertises_and_says_so(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", UNHEALTHY, "--rank", "2", "--allow-unhealthy-fabric")
    assert code == 0
    assert json.loads(ray_start_words(out)["--resources"]) == {NVLINK_DOMAIN_PREFIX + GB200_DOMAIN: 1, TOPO_RANK_KEY: 2}
    assert f"NVLink domain {GB200_DOMAIN}" in err
    assert ("GPU 00000018:01:00.0's fabric Health Summary is Unhealthy; advertised anyway (--allow-unhealthy-fabric)"
            in err)


def test_degraded_fixture_advertises_its_domain_and_warns(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", DEGRADED, "--rank", "2")
    assert code == 0
    assert json.loads(ray_start_words(out)["--resources"]) == {NVLINK_DOMAIN_PREFIX + GB200_DOMAIN: 1, TOPO_RANK_KEY: 2}
    assert "warning: the NVLink fabric is degraded (GPU 00000018:01:00.0: Bandwidth Degraded)" in err
    assert f"advertised NVLink domain {GB200_DOMAIN} anyway" in err and "--skip-degraded" in err
    assert run(capsys, "--nvidia-smi-file", GB200, "--rank", "2")[2].count("warning") == 0


def test_skip_degraded_withholds_the_domain(capsys):
    code, out, err = run(capsys, "--nvidia-smi-file", DEGRADED, "--rank", "2", "--skip-degraded")
    assert code == 0 and json.loads(ray_start_words(out)["--resources"]) == {TOPO_RANK_KEY: 2}
    assert "NVLink domain unknown" in err and "Bandwidth Degraded" in err and "--skip-degraded withholds" in err
    assert run(capsys, "--nvidia-smi-file", DEGRADED, "--skip-degraded", "--require-domain")[0] == nt.EXIT_NO_DOMAIN
    code, out, _ = run(capsys, "--nvidia-smi-file", GB200, "--rank", "2", "--skip-degraded")
    assert NVLINK_DOMAIN_PREFIX + GB200_DOMAIN in json.loads(ray_start_words(out)["--resources"])


# ------------------------------------------------------------------ input that cannot be used: exit 2, one line


def _refused(capsys, *args):
    code, out, err = run(capsys, *args)
    assert code == nt.EXIT_UNUSABLE_INPUT == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("raytf-node-topology: ") and "Traceback" not in err
    return err


@pytest.mark.parametrize("name, says", [
    ("empty.txt", "it is empty"),
    ("gb200-nvl72.xml", "it is XML (`nvidia-smi -q -x`)"),
    ("gb200-table.txt", "it is the summary table of `nvidia-smi` without -q"),
])
def test_output_that_is_not_nvidia_smi_q_is_refused(capsys, name, says):
    err = _refused(capsys, "--nvidia-smi-file", str(DATA / name))
    assert f"--nvidia-smi-file {DATA / name}: {says}" in err and "give " in err


def test_other_text_is_refused_naming_its_first_line(capsys, tmp_path):
    wrong = tmp_path / "topo.txt"
    wrong.write_text("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-71\n")  # `nvidia-smi topo -m`
    assert "no `GPU <bus id>` section" in _refused(capsys, "--nvidia-smi-file", str(wrong))


@pytest.mark.parametrize("data, says", [
    (ELF, "NUL bytes but is not UTF-16"),
    ("GPU 0:1\n    Product Name : NVIDIA GB200 \xe9\n".encode("latin-1"), "not UTF-8 text (undecodable byte at offset"),
    (b"\xff\xfe" + "GPU 0:1\n".encode("utf-16-le") + b"\x00", "not UTF-16 text"),
])
def test_bytes_that_are_not_text_are_refused(capsys, tmp_path, data, says):
    path = tmp_path / "odd.txt"
    path.write_bytes(data)
    err = _refused(capsys, "--nvidia-smi-file", str(path))
    assert says in err and "Out-File -Encoding utf8" in err


def test_unreadable_paths_are_refused(capsys, tmp_path):
    assert "cannot read --nvidia-smi-file" in _refused(capsys, "--nvidia-smi-file", str(tmp_path / "absent.txt"))
    assert "Is a directory" in _refused(capsys, "--nvidia-smi-file", str(tmp_path))


# ------------------------------------------------------------------ encodings (PowerShell's `>` writes UTF-16)


ENCODINGS = {
    "utf-8 with BOM": lambda text: "\ufeff".encode("utf-8") + text.encode("utf-8"),
    "utf-16 LE with BOM (Windows PowerShell >)": lambda text: text.replace("\n", "\r\n").encode("utf-16"),
    "utf-16 BE with BOM": lambda text: "\ufeff".encode("utf-16-be") + text.encode("utf-16-be"),
    "utf-16 LE without BOM": lambda text: text.encode("utf-16-le"),
    "utf-16 BE without BOM": lambda text: text.encode("utf-16-be"),
    "utf-32 with BOM": lambda text: text.encode("utf-32"),
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_recorded_output_in_any_unicode_encoding_reads_as_utf8(capsys, tmp_path, monkeypatch, encoding):
    expected = run(capsys, "--nvidia-smi-file", GB200, "--rank", "1")
    data = ENCODINGS[encoding](Path(GB200).read_text())
    path = tmp_path / "recorded.txt"
    path.write_bytes(data)
    assert run(capsys, "--nvidia-smi-file", str(path), "--rank", "1") == expected
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert run(capsys, "--nvidia-smi-file", "-", "--rank", "1") == expected


def test_stdin_that_is_not_nvidia_smi_q_is_refused(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert "stdin: it is empty" in _refused(capsys, "--nvidia-smi-file", "-")
    monkeypatch.setattr(sys, "stdin", None)
    assert "cannot read stdin: stdin is closed" in _refused(capsys, "--nvidia-smi-file", "-")


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
    def __init__(self, returncode, stdout=b"", stderr=b""):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def test_running_nvidia_smi():
    recorded = Path(GB200).read_bytes()
    calls = []

    def fake(cmd, **kw):
        calls.append(cmd)
        return _Done(0, recorded)

    assert nt.read_nvidia_smi(None, run=fake) == recorded.decode() and calls == [["nvidia-smi", "-q"]]
    assert nt.read_domain(None, run=lambda *a, **k: _Done(6, b"No devices were found\n")).reason.startswith(
        "nvidia-smi found no GPU")


def _raises(exc):
    def run(*a, **k):
        raise exc
    return run


@pytest.mark.parametrize("run, says", [
    (lambda *a, **k: _Done(9, b"", b"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"),
     "nvidia-smi -q failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate"),
    (lambda *a, **k: _Done(0, b""), "nvidia-smi -q: it is empty"),
    (lambda *a, **k: _Done(0, ELF), "nvidia-smi -q: it holds NUL bytes"),
    (_raises(FileNotFoundError("nvidia-smi")), "nvidia-smi is not on PATH"),
    (_raises(PermissionError(13, "Permission denied")), "cannot run nvidia-smi: Permission denied"),
    (_raises(subprocess.TimeoutExpired("nvidia-smi", 1)), "did not answer within 120 s"),
])
def test_nvidia_smi_that_gives_nothing_usable_is_an_input_error(run, says):
    with pytest.raises(nt.TopologyInputError, match=re.escape(says)):
        nt.read_domain(None, run=run)


def _nvidia_smi_on_path(monkeypatch, tmp_path, script, mode=0o755):
    (tmp_path / "nvidia-smi").write_text(script)
    (tmp_path / "nvidia-smi").chmod(mode)
    monkeypatch.setenv("PATH", str(tmp_path))


def test_a_real_nvidia_smi_process(capsys, monkeypatch, tmp_path):
    """Through subprocess, as on a node: an nvidia-smi that prints a fixture, one not executable, none at all."""
    cat = shutil.which("cat")  # found before PATH holds nothing but tmp_path
    _nvidia_smi_on_path(monkeypatch, tmp_path, f"#!/bin/sh\nexec {cat} {shlex.quote(GB200)}\n")
    code, out, _ = run(capsys, "--rank", "1")
    assert code == 0 and NVLINK_DOMAIN_PREFIX + GB200_DOMAIN in out
    _nvidia_smi_on_path(monkeypatch, tmp_path, "#!/bin/sh\necho hi\n", mode=0o644)
    assert "the nvidia-smi on PATH is not executable" in _refused(capsys)
    (tmp_path / "nvidia-smi").unlink()
    assert "nvidia-smi is not on PATH" in _refused(capsys)


@pytest.mark.parametrize("stdin, says", [
    ("gb200-nvl72.txt", None),
    ("empty.txt", "stdin: it is empty"),
    ("gb200-nvl72.xml", "stdin: it is XML"),
])
def test_the_console_script_never_shows_a_traceback(stdin, says):
    """The module as its own process, fed UTF-16 on stdin (a PowerShell redirect) or odd input."""
    data = (DATA / stdin).read_text().encode("utf-16")
    done = subprocess.run([sys.executable, "-m", "raytf_attach.node_topology", "--nvidia-smi-file", "-"],
                          input=data, capture_output=True, cwd=Path(nt.__file__).parents[1], check=False)
    err = done.stderr.decode()
    assert "Traceback" not in err
    if says is None:
        assert done.returncode == 0 and GB200_DOMAIN in done.stdout.decode()
    else:
        assert done.returncode == 2 and done.stdout == b"" and says in err and len(err.splitlines()) == 1


def test_console_script_is_declared():
    text = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert 'raytf-node-topology = "raytf_attach.node_topology:cli"' in text
    assert 'raytf-attach = "raytf_attach.run:main"' in text


# ------------------------------------------------------------------ NVML


@pytest.mark.parametrize("fixture", sorted(fake_nvml.FIXTURES))
def test_nvml_reads_what_nvidia_smi_prints(fixture):
    nvml = fake_nvml.FakeNvml(fake_nvml.FIXTURES[fixture]())
    assert nt.read_nvml(nvml) == nt.parse_nvidia_smi((DATA / fixture).read_text())
    assert nvml.calls[-1] == "nvmlShutdown"


@pytest.mark.parametrize("fixture", sorted(fake_nvml.FIXTURES))
@pytest.mark.parametrize("args", [(), ("--rank", "2", "--format", "kuberay", "--source", "both"),
                                  ("--require-domain",), ("--allow-unhealthy-fabric",)])
def test_nvml_and_nvidia_smi_give_the_same_output(capsys, monkeypatch, fixture, args):
    from_text = run(capsys, "--nvidia-smi-file", str(DATA / fixture), *args)
    monkeypatch.setattr(nt, "load_nvml", lambda: fake_nvml.FakeNvml(fake_nvml.FIXTURES[fixture]()))
    assert run(capsys, *args) == from_text


def test_nvml_limited_capacity_and_failed_registration():
    gpus = nt.read_nvml(fake_nvml.FakeNvml(fake_nvml.gb200(summary=fake_nvml.LIMITED_CAPACITY)))
    domain = nt.degraded_decision(nt.node_domain(gpus), gpus, False)
    assert domain.name == GB200_DOMAIN and "Limited Capacity" in domain.notes[-1]
    failed = fake_nvml.gb200(status=fake_nvml.NVML_ERROR_INSUFFICIENT_RESOURCES)
    domain = nt.node_domain(nt.read_nvml(fake_nvml.FakeNvml(failed)))
    assert domain.name is None and "registration failed (Status Insufficient Resources)" in domain.reason


@pytest.mark.parametrize("call", ["nvmlDeviceGetCount", "nvmlDeviceGetPciInfo", "nvmlDeviceGetGpuFabricInfoV"])
def test_nvml_failing_on_the_way_falls_back_to_nvidia_smi(call):
    nvml = fake_nvml.FakeNvml(fake_nvml.gb200(state=fake_nvml.IN_PROGRESS), fail_on=call)
    recorded = Path(GB200).read_bytes()
    domain = nt.read_domain(None, run=lambda *a, **k: _Done(0, recorded), nvml=lambda: nvml)
    assert domain.name == GB200_DOMAIN and nvml.calls[-1] == "nvmlShutdown"


def test_a_file_is_read_even_with_nvml(capsys, monkeypatch):
    monkeypatch.setattr(nt, "load_nvml", lambda: pytest.fail("NVML asked for with --nvidia-smi-file"))
    code, out, _ = run(capsys, "--nvidia-smi-file", H100, "--rank", "1")
    assert code == 0 and NVLINK_DOMAIN_PREFIX not in out


def test_load_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed
    assert LOAD_NVML() is None
    nvml = fake_nvml.FakeNvml([])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert LOAD_NVML() is nvml and nvml.calls == ["nvmlInit"]
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml.FakeNvml([], fail_on="nvmlInit"))  # no driver
    assert LOAD_NVML() is None
    monkeypatch.setitem(sys.modules, "pynvml", object())  # a binding without the fabric calls
    assert LOAD_NVML() is None


def test_the_nvml_extra_is_declared():
    assert 'nvml = ["nvidia-ml-py"]' in (Path(__file__).parents[1] / "pyproject.toml").read_text()


def test_nvml_reads_a_degraded_fabric_as_nvidia_smi_does():
    gpus = nt.read_nvml(fake_nvml.FakeNvml(fake_nvml.FIXTURES["gb200-degraded.txt"]()))
    assert nt.fabric_degradation(gpus[2]) == ["Bandwidth Degraded"]
    assert nt.degraded_decision(nt.node_domain(gpus), gpus, True).name is None
