"""raytf-node-topology: what a GPU node must advertise for the provider to see its NVLink domain and rank.

Run on the node (or on a recorded `nvidia-smi -q` output); it prints the `ray start` flags (or a
KubeRay rayStartParams snippet, or the environment `ray start` reads) that carry the node's NVLink
domain and topological rank the way the provider's ray_cluster_topology data source and
ray_virtual_cluster read them:

- the custom resources nvlink_domain_<domain> = 1 and topo_rank = <rank> (the provider's default), or
- node labels (`--source labels`), read by the provider with topology_labels.

The domain comes from the Fabric section nvidia-smi prints per GPU (multi-node NVLink systems such as
GB200/GB300 NVL72), or from the same information through NVML when pynvml (nvidia-ml-py, the `nvml`
extra) is installed and no file is given: ClusterUUID and CliqueId, once every GPU reports State
Completed, Status Success and a Health Summary that is not Unhealthy. Its name is
"<ClusterUUID, lowercase>.<CliqueId>". A node without that information (no GPUs, GPUs without a
fabric, registration still in progress, an unhealthy fabric) has the provider's unknown domain: the
tool says why on stderr, and whether waiting can change it, and prints the flags without a domain.
Input it cannot read (not `nvidia-smi -q` output, an encoding other than UTF-8/16/32, a missing or
failing nvidia-smi) is one line on stderr and exit 2. A degraded fabric (Health Bandwidth Degraded,
a route unhealthy, Limited Capacity) is advertised with a warning on stderr, or not with
--skip-degraded.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from ._cli import add_version_flag
from ._smi_input import SAVE_AS_UTF8, UnusableInput, decode, first_line, not_query_output
from .record import NVLINK_DOMAIN_PREFIX, NVLINK_DOMAIN_UNKNOWN, TOPO_RANK_KEY

PROG = "raytf-node-topology"

# Label keys the provider's documentation and local test cluster use; any valid key works as long
# as topology_labels names the same ones.
DEFAULT_DOMAIN_LABEL = "raytf.io/nvlink-domain"
DEFAULT_RANK_LABEL = "raytf.io/topo-rank"

# Where the rank comes from when --rank is not given, first set wins: Slurm's index of the node in
# the job (set by srun on every node), then the node rank of torch-style launchers.
RANK_ENV = ("SLURM_NODEID", "NODE_RANK", "GROUP_RANK")

# The provider reads a rank label of 1-18 decimal digits (internal/clusterspec ParseRankLabel).
MAX_RANK_DIGITS = 18

SOURCES = ("resources", "labels", "both")
FORMATS = ("ray-start", "kuberay", "env")

# The environment variables `ray start` merges into its own --resources / --labels (JSON objects,
# taking precedence), read by Ray 2.55.1 and 2.60.0 (ray/_private/resource_and_label_spec.py). They
# are Ray's autoscaler mechanism, not a documented public interface.
RESOURCES_ENV = "RAY_OVERRIDE_RESOURCES"
LABELS_ENV = "RAY_OVERRIDE_LABELS"

EXIT_NO_DOMAIN = 3  # --require-domain and the domain is unknown
EXIT_UNUSABLE_INPUT = 2  # as argparse's usage errors: nothing was printed to advertise

_FABRIC_READY_STATE = "Completed"
_FABRIC_READY_STATUS = "Success"
_GPU_HEADER = re.compile(r"^GPU\s+(\S+)\s*$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# A Ray node label value (and a safe resource-name suffix): the provider's label rule.
_DOMAIN_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_NO_DEVICES = "No devices were found"


class TopologyInputError(Exception):
    """The rank or the nvidia-smi input cannot be used; the message says which and why."""


@dataclass(frozen=True)
class GpuFabric:
    """One GPU's Fabric section of `nvidia-smi -q` (None: the field is absent)."""

    gpu: str  # the bus id of its "GPU <bus id>" header
    has_fabric_section: bool
    state: Optional[str] = None
    status: Optional[str] = None
    clique_id: Optional[str] = None
    cluster_uuid: Optional[str] = None
    health_summary: Optional[str] = None  # Fabric > Health > Summary (older drivers print none)
    health: tuple[tuple[str, str], ...] = ()  # Fabric > Health's other fields (Bandwidth, Route Unhealthy, ...)


@dataclass(frozen=True)
class Unknown:
    """Why the node's domain is unknown, whether waiting can change that, and what to do."""

    why: str
    waiting_helps: bool
    todo: str

    def __str__(self) -> str:
        return f"{self.why}; {'waiting helps' if self.waiting_helps else 'waiting will not help'}: {self.todo}"


@dataclass(frozen=True)
class Domain:
    """The node's NVLink domain: name is None when unknown, and `reason` says why (and what to do)."""

    name: Optional[str]
    reason: str
    gpus: int
    waiting_helps: Optional[bool] = None  # for an unknown domain: can running again later find one?
    notes: tuple[str, ...] = ()  # caveats of a known domain (e.g. a fabric of limited capacity)

    @classmethod
    def unknown(cls, why: Unknown, gpus: int) -> Domain:
        return cls(None, str(why), gpus, waiting_helps=why.waiting_helps)


@dataclass(frozen=True)
class Rank:
    value: Optional[int]
    source: str  # "--rank", an environment variable's name, or "" when unknown


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _field(line: str) -> tuple[str, str]:
    key, _, value = line.partition(":")
    return key.strip(), value.strip()


def _gpu_blocks(lines: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(bus id, the lines under its "GPU <bus id>" header) per GPU, in order."""
    blocks: list[tuple[str, list[str]]] = []
    for line in lines:
        header = _GPU_HEADER.match(line)
        if header:
            blocks.append((header.group(1), []))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def _section(lines: Sequence[str], name: str) -> Optional[list[str]]:
    """The lines indented under the first line that is exactly `name`; None when there is no such line."""
    for i, line in enumerate(lines):
        if line.strip() == name:
            body = []
            for inner in lines[i + 1:]:
                if _indent(inner) <= _indent(line):
                    break
                body.append(inner)
            return body
    return None


def _fields(lines: Sequence[str]) -> dict[str, str]:
    """A section's `key : value` lines at its first indent; a sub-section's (e.g. Health) as "<sub>.<key>"."""
    fields: dict[str, str] = {}
    top = _indent(lines[0]) if lines else 0
    sub: Optional[str] = None
    for line in lines:
        if _indent(line) == top:
            sub = None if ":" in line else line.strip()
        if ":" not in line or (_indent(line) != top and sub is None):
            continue
        key, value = _field(line)
        fields.setdefault(key if _indent(line) == top else f"{sub}.{key}", value)
    return fields


def parse_nvidia_smi(text: str) -> list[GpuFabric]:
    """The Fabric section of each GPU in `nvidia-smi -q` output, in the output's order.

    Read: the Fabric section's own fields (State, Status, CliqueId, ClusterUUID) and its Health
    sub-section's Summary; every other section is skipped.
    """
    lines = [raw.rstrip() for raw in text.splitlines() if raw.strip()]
    gpus = []
    for bus_id, block in _gpu_blocks(lines):
        fabric = _section(block, "Fabric")
        fields = _fields(fabric) if fabric is not None else {}
        gpus.append(GpuFabric(
            gpu=bus_id, has_fabric_section=fabric is not None, state=fields.get("State"),
            status=fields.get("Status"), clique_id=fields.get("CliqueId"), cluster_uuid=fields.get("ClusterUUID"),
            health_summary=fields.get("Health.Summary"),
            health=tuple((k.removeprefix("Health."), v) for k, v in fields.items()
                         if k.startswith("Health.") and k != "Health.Summary"),
        ))
    return gpus


def _not_available(value: Optional[str]) -> bool:
    return value is None or value == "" or value.upper() == "N/A"


_NO_FABRIC_TODO = "a GPU without a multi-node NVLink fabric has no NVLink domain (leave out --require-domain there)"
_FABRIC_SETUP_TODO = "check the NVLink fabric's setup (the fabric manager's logs, the Fabric section of nvidia-smi -q)"
NO_GPUS = Unknown("nvidia-smi found no GPU (No devices were found)", False,
                  "a node without GPUs has no NVLink domain")


def _state_problem(g: GpuFabric) -> Optional[Unknown]:
    """Why GPU g's fabric registration gives no domain (None: State Completed, Status Success)."""
    where = f"GPU {g.gpu}"
    if not g.has_fabric_section or _not_available(g.state):
        return Unknown(f"{where} reports no NVLink fabric (Fabric State {g.state or 'absent'})", False, _NO_FABRIC_TODO)
    if g.state == "Not Supported":
        return Unknown(f"{where} does not support an NVLink fabric (Fabric State Not Supported)", False,
                       _NO_FABRIC_TODO)
    if g.state == "In Progress":
        return Unknown(f"{where}'s fabric registration is not complete (State In Progress)", True,
                       "run again once nvidia-smi -q reports State Completed on every GPU")
    if g.state == "Not Started":
        return Unknown(f"{where}'s fabric registration has not started (State Not Started)", True,
                       "it starts once the NVIDIA fabric manager serves this node; run again when every GPU reports "
                       "State Completed, and if it stays Not Started, check that the fabric manager runs")
    if g.state != _FABRIC_READY_STATE:
        return Unknown(f"{where} reports a fabric State this tool does not know ({g.state})", False,
                       "read the GPU's Fabric section in nvidia-smi -q (known: Completed, In Progress, Not Started, "
                       "Not Supported, N/A)")
    if g.status != _FABRIC_READY_STATUS:
        return Unknown(f"{where}'s fabric registration failed (Status {g.status or 'absent'})", False,
                       _FABRIC_SETUP_TODO + ", fix it, then restart the node's NVIDIA fabric services or reboot it")
    return None


def _health_problem(g: GpuFabric, allow_unhealthy: bool) -> tuple[Optional[Unknown], str]:
    """(why a registered fabric's health withholds the domain, or None; a note to print when it is advertised)."""
    summary = g.health_summary
    if _not_available(summary) or summary in ("Healthy", "Not Supported", "Limited Capacity"):
        return None, ""  # Limited Capacity: degraded, see fabric_degradation
    if allow_unhealthy:
        return None, f"GPU {g.gpu}'s fabric Health Summary is {summary}; advertised anyway (--allow-unhealthy-fabric)"
    return Unknown(f"GPU {g.gpu}'s fabric is registered but its Health Summary is {summary}", False,
                   "repair the fabric (the Health section of nvidia-smi -q says what is wrong), or pass "
                   "--allow-unhealthy-fabric to advertise the domain anyway"), ""


def _domain_name(g: GpuFabric) -> Union[str, Unknown]:
    """GPU g's domain name from a registered fabric's ClusterUUID and CliqueId, or why they are unusable."""
    uuid, clique = g.cluster_uuid or "", g.clique_id or ""
    if not _UUID.match(uuid) or set(uuid.replace("-", "")) == {"0"}:
        return Unknown(f"GPU {g.gpu} has no usable ClusterUUID ({uuid or 'absent'})", False, _FABRIC_SETUP_TODO)
    if not clique.isdigit():
        return Unknown(f"GPU {g.gpu} has no usable CliqueId ({clique or 'absent'})", False, _FABRIC_SETUP_TODO)
    name = f"{uuid.lower()}.{int(clique)}"
    if not _DOMAIN_NAME.match(name):  # cannot happen for a UUID and a decimal clique; kept as the rule's guard
        return Unknown(f"GPU {g.gpu}: domain name {name!r} is not a valid Ray label value", False, _FABRIC_SETUP_TODO)
    return name


def _gpu_domain(g: GpuFabric, allow_unhealthy: bool) -> tuple[Union[str, Unknown], str]:
    """(GPU g's domain name or why it has none, a note to print when it has one)."""
    problem = _state_problem(g)
    if problem is not None:
        return problem, ""
    problem, note = _health_problem(g, allow_unhealthy)
    if problem is not None:
        return problem, ""
    return _domain_name(g), note


def node_domain(gpus: Sequence[GpuFabric], allow_unhealthy: bool = False) -> Domain:
    """The node's domain: known only when every GPU is registered, healthy, in the same NVLink domain."""
    if not gpus:
        return Domain.unknown(NO_GPUS, 0)
    names, notes = set(), []
    for g in gpus:
        name, note = _gpu_domain(g, allow_unhealthy)
        if isinstance(name, Unknown):
            return Domain.unknown(name, len(gpus))
        names.add(name)
        notes += [note] if note else []
    if len(names) > 1:
        return Domain.unknown(Unknown(f"the GPUs report different NVLink domains ({', '.join(sorted(names))})",
                                      False, _FABRIC_SETUP_TODO), len(gpus))
    first = gpus[0]
    return Domain(names.pop(), f"from {len(gpus)} GPUs: ClusterUUID {first.cluster_uuid}, CliqueId {first.clique_id}",
                  len(gpus), notes=tuple(notes))


# The Health fields of a fabric that works at full strength; any other value (e.g. Bandwidth Degraded)
# is a degradation. N/A, Not Supported and fields not listed here are not read.
_HEALTHY_FIELDS = {
    "Bandwidth": "Full",
    "Route Recovery in progress": "False",
    "Route Unhealthy": "False",
    "Access Timeout Recovery": "False",
    "Incorrect Configuration": "None",
}


def fabric_degradation(g: GpuFabric) -> list[str]:
    """GPU g's fabric Health readings that are not healthy, as "<field> <value>" (empty: none).

    A Summary of Unhealthy is not one: it withholds the domain before this (_health_problem).
    """
    bad = [f"{k} {v}" for k, v in g.health
           if k in _HEALTHY_FIELDS and not _not_available(v) and v != "Not Supported" and v != _HEALTHY_FIELDS[k]]
    if g.health_summary == "Limited Capacity":
        bad.append("Summary Limited Capacity")
    return bad


def degraded_decision(domain: Domain, gpus: Sequence[GpuFabric], skip_degraded: bool) -> Domain:
    """The domain to advertise once the fabric's health is read: a degraded fabric still connects its GPUs
    over NVLink, so its domain is advertised with a warning, unless --skip-degraded withholds it."""
    if domain.name is None:
        return domain
    bad = [f"GPU {g.gpu}: {', '.join(d)}" for g in gpus if (d := fabric_degradation(g))]
    if not bad:
        return domain
    what = f"the NVLink fabric is degraded ({'; '.join(bad)})"
    if skip_degraded:
        return Domain.unknown(Unknown(
            f"{what}; --skip-degraded withholds its domain {domain.name}", False,
            "repair the fabric (the Health section of nvidia-smi -q says what is wrong) and run again, or run "
            "without --skip-degraded to advertise the domain anyway"), domain.gpus)
    return replace(domain, notes=domain.notes + (
        f"warning: {what}; advertised NVLink domain {domain.name} anyway, since its GPUs still reach each other "
        "over NVLink, more slowly (clusters the provider places by this domain run with less bandwidth); "
        "pass --skip-degraded to advertise no domain on such a node",))


def parse_rank(text: str, where: str) -> int:
    """A rank as the provider reads a rank label: 1-18 decimal digits."""
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_RANK_DIGITS:
        raise TopologyInputError(
            f"{where} = {text!r} is not a rank: use 1-{MAX_RANK_DIGITS} decimal digits (0, 1, 2, ...)")
    return int(text)


def resolve_rank(flag: Optional[str], env: Mapping[str, str]) -> Rank:
    """--rank, else the first of RANK_ENV that is set and not empty, else unknown."""
    if flag is not None:
        return Rank(parse_rank(flag, "--rank"), "--rank")
    for name in RANK_ENV:
        value = env.get(name, "")
        if value != "":
            return Rank(parse_rank(value, name), name)
    return Rank(None, "")


def _input_name(path: Optional[str]) -> str:
    return "nvidia-smi -q" if path is None else "stdin" if path == "-" else f"--nvidia-smi-file {path}"


def _decoded(data: bytes, path: Optional[str]) -> str:
    try:
        return decode(data)
    except UnusableInput as e:
        advice = "" if path is None else f"; {SAVE_AS_UTF8}"
        raise TopologyInputError(f"{_input_name(path)}: {e}{advice}") from e


def _read_file(path: str) -> str:
    try:
        if path == "-" and sys.stdin is None:  # started with stdin closed (<&-)
            raise OSError(errno.EBADF, "stdin is closed")
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as e:
        raise TopologyInputError(f"cannot read {_input_name(path)}: {e.strerror or e}") from e
    return _decoded(data, path)


def _run_nvidia_smi(run) -> str:
    try:
        done = run(["nvidia-smi", "-q"], capture_output=True, timeout=120, check=False)
    except FileNotFoundError as e:
        raise TopologyInputError("nvidia-smi is not on PATH (no NVIDIA driver on this node?): install the driver, "
                                 "or pass --nvidia-smi-file") from e
    except PermissionError as e:
        raise TopologyInputError(f"cannot run nvidia-smi: {e.strerror} (the nvidia-smi on PATH is not executable: "
                                 "check its mode, or pass --nvidia-smi-file)") from e
    except OSError as e:
        raise TopologyInputError(f"cannot run nvidia-smi: {e.strerror or e}") from e
    except subprocess.TimeoutExpired as e:
        raise TopologyInputError("nvidia-smi -q did not answer within 120 s (a hung driver?)") from e
    text = _decoded((done.stdout or b"") + (done.stderr or b""), None)
    if done.returncode != 0 and _NO_DEVICES not in text:
        raise TopologyInputError(f"nvidia-smi -q failed (exit {done.returncode}): {first_line(text) or 'no output'}")
    return text


def read_nvidia_smi(path: Optional[str], run=subprocess.run) -> str:
    """`nvidia-smi -q` output as text, from path ("-" = stdin) or by running it; TopologyInputError when it cannot."""
    return _read_file(path) if path is not None else _run_nvidia_smi(run)


# What nvidia-smi -q prints for NVML's fabric states and health summaries (nvmlGpuFabricState_t,
# NVML_GPU_FABRIC_HEALTH_SUMMARY_*), so both readers give node_domain the same GpuFabric.
_NVML_FABRIC_STATES = {0: "Not Supported", 1: "Not Started", 2: "In Progress", 3: "Completed"}
_NVML_HEALTH_SUMMARIES = {0: "Not Supported", 1: "Healthy", 2: "Unhealthy", 3: "Limited Capacity"}
_NVML_STATE_COMPLETED = 3
_NVML_TRUE_FALSE = {1: "True", 2: "False"}
_NVML_HEALTH_FIELDS = (  # (field, shift, width, values) of the health mask
    ("Bandwidth", 0, 0x3, {1: "Degraded", 2: "Full"}),
    ("Route Recovery in progress", 2, 0x3, _NVML_TRUE_FALSE),
    ("Route Unhealthy", 4, 0x3, _NVML_TRUE_FALSE),
    ("Access Timeout Recovery", 6, 0x3, _NVML_TRUE_FALSE),
    ("Incorrect Configuration", 8, 0xF, {1: "None"}),
)
_NOT_AVAILABLE = "N/A"


def load_nvml() -> Any:
    """pynvml (the nvidia-ml-py extra), initialised; None when it is not installed or finds no driver."""
    try:
        import pynvml
    except ImportError:
        return None
    # A binding older than the fabric calls, or than the struct with the health summary: read through it,
    # an Unhealthy fabric would pass as healthy, so nvidia-smi -q answers instead.
    if not hasattr(pynvml, "nvmlDeviceGetGpuFabricInfoV") or not hasattr(pynvml, "c_nvmlGpuFabricInfo_v3_t"):
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    return pynvml


def _nvml_error(nvml: Any, e: Any, *names: str) -> bool:
    return getattr(e, "value", None) in {getattr(nvml, n, object()) for n in names}


def _nvml_fabric_info(nvml: Any, handle: Any) -> tuple[Any, bool]:
    """(the GPU's fabric info, whether it carries a health summary); (None, False) for a GPU without one.

    Version 3 of the struct adds the health summary; a driver that predates it refuses it, and is
    asked for version 2, as nvidia-smi of that driver prints no Summary line.
    """
    for struct, has_summary in (("c_nvmlGpuFabricInfo_v3_t", True), ("c_nvmlGpuFabricInfo_v2_t", False)):
        if not hasattr(nvml, struct):
            continue
        info = getattr(nvml, struct)()
        try:
            nvml.nvmlDeviceGetGpuFabricInfoV(handle, ctypes.byref(info))
        except nvml.NVMLError as e:
            if _nvml_error(nvml, e, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH"):
                continue
            if _nvml_error(nvml, e, "NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_FUNCTION_NOT_FOUND"):
                return None, False
            raise
        return info, has_summary
    return None, False


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_gpu_fabric(nvml: Any, handle: Any) -> GpuFabric:
    """One GPU's fabric as parse_nvidia_smi reads it from nvidia-smi -q on the same GPU: N/A for what
    nvidia-smi shows as N/A (no fabric; status, clique and cluster before registration completes)."""
    bus_id = _text(nvml.nvmlDeviceGetPciInfo(handle).busId)
    info, has_summary = _nvml_fabric_info(nvml, handle)
    if info is None:
        return GpuFabric(gpu=bus_id, has_fabric_section=True, state=_NOT_AVAILABLE, status=_NOT_AVAILABLE,
                         clique_id=_NOT_AVAILABLE, cluster_uuid=_NOT_AVAILABLE, health=nvml_health(0, False))
    status = clique = cluster = _NOT_AVAILABLE
    if info.state == _NVML_STATE_COMPLETED:
        status = "Success" if info.status == nvml.NVML_SUCCESS else _text(nvml.nvmlErrorString(info.status))
        clique, cluster = str(info.cliqueId), str(uuid.UUID(bytes=bytes(info.clusterUuid)))
    summary = _NVML_HEALTH_SUMMARIES.get(info.healthSummary) if has_summary else None
    return GpuFabric(gpu=bus_id, has_fabric_section=True, state=_NVML_FABRIC_STATES.get(info.state, str(info.state)),
                     status=status, clique_id=clique, cluster_uuid=cluster, health_summary=summary,
                     health=nvml_health(info.healthMask, has_summary))


def nvml_health(mask: int, has_summary: bool) -> tuple[tuple[str, str], ...]:
    """The Health fields nvidia-smi -q prints, from NVML's fabric health mask (NVML_GPU_FABRIC_HEALTH_MASK_*:
    per field a shift, a width and values; 0: not reported, N/A). Drivers that report the health summary
    also report Incorrect Configuration."""
    fields = _NVML_HEALTH_FIELDS if has_summary else _NVML_HEALTH_FIELDS[:-1]
    out = []
    for field, shift, width, values in fields:
        value = (mask >> shift) & width
        out.append((field, values.get(value, _NOT_AVAILABLE if value == 0 else f"code {value}")))
    return tuple(out)


def read_nvml(nvml: Any) -> Optional[list[GpuFabric]]:
    """Every GPU's fabric through NVML, in NVML's (PCI bus) order, as nvidia-smi lists them; None when
    NVML fails on the way, for nvidia-smi -q to answer instead. Shuts the initialised NVML down."""
    try:
        return [nvml_gpu_fabric(nvml, nvml.nvmlDeviceGetHandleByIndex(i)) for i in range(nvml.nvmlDeviceGetCount())]
    except nvml.NVMLError:
        return None
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass


def read_domain(path: Optional[str], allow_unhealthy: bool = False, run=subprocess.run,
                skip_degraded: bool = False, nvml: Optional[Callable[[], Any]] = None) -> Domain:
    """The node's domain: through NVML when pynvml is installed and no file is given, else from
    `nvidia-smi -q`; TopologyInputError for output that is not `nvidia-smi -q`'s."""
    if path is None:
        lib = (nvml or load_nvml)()
        gpus = read_nvml(lib) if lib is not None else None
        if gpus is not None:
            return degraded_decision(node_domain(gpus, allow_unhealthy), gpus, skip_degraded)
    text = read_nvidia_smi(path, run)
    if _NO_DEVICES in text:
        return Domain.unknown(NO_GPUS, 0)
    gpus = parse_nvidia_smi(text)
    if not gpus:  # never read as "no GPUs": empty, XML, the summary table, a wrong file
        raise TopologyInputError(f"{_input_name(path)}: {not_query_output(text)}")
    return degraded_decision(node_domain(gpus, allow_unhealthy), gpus, skip_degraded)


def advertised(domain: Domain, rank: Rank, source: str, domain_label: str, rank_label: str) -> tuple[dict, dict]:
    """(custom resources, node labels) the node must carry for the chosen source."""
    resources: dict = {}
    labels: dict = {}
    if source in ("resources", "both"):
        if domain.name is not None:
            resources[NVLINK_DOMAIN_PREFIX + domain.name] = 1
        if rank.value is not None:
            resources[TOPO_RANK_KEY] = rank.value
    if source in ("labels", "both"):
        if domain.name is not None:
            labels[domain_label] = domain.name
        if rank.value is not None:
            labels[rank_label] = str(rank.value)
    return resources, labels


def _labels_value(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.items())


def format_ray_start(resources: Mapping, labels: Mapping) -> str:
    """The `ray start` flags, quoted for a shell (paste them, or `eval "ray start ... $(...)"`)."""
    flags = []
    if resources:
        flags.append("--resources=" + shlex.quote(json.dumps(resources)))
    if labels:
        flags.append("--labels=" + shlex.quote(_labels_value(labels)))
    return " ".join(flags)


def format_env(resources: Mapping, labels: Mapping) -> str:
    """`export` lines for a shell that runs `ray start` later (e.g. sourced from a file an init container wrote)."""
    lines = []
    if resources:
        lines.append(f"export {RESOURCES_ENV}=" + shlex.quote(json.dumps(resources)))
    if labels:
        lines.append(f"export {LABELS_ENV}=" + shlex.quote(json.dumps(labels)))
    return "\n".join(lines)


def _yaml_single_quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def format_kuberay(resources: Mapping, labels: Mapping, comment: str) -> str:
    """A rayStartParams snippet for a KubeRay worker group (values are strings, as KubeRay wants).

    KubeRay appends each parameter to the `ray start` command line it runs through a shell, so the
    resources JSON is wrapped in double quotes with escaped inner quotes.
    """
    lines = [f"# {comment}"]
    params = []
    if resources:
        escaped = json.dumps(resources).replace("\\", "\\\\").replace('"', '\\"')
        params.append("  resources: " + _yaml_single_quoted(f'"{escaped}"'))
    if labels:
        params.append("  labels: " + _yaml_single_quoted(_labels_value(labels)))
    lines.append("rayStartParams:" if params else "rayStartParams: {}")
    lines.extend(params)
    return "\n".join(lines)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Print what this GPU node must advertise (ray start flags, or KubeRay rayStartParams) so "
        "that terraform-provider-ray sees its NVLink domain and topological rank. The domain is read from the "
        "Fabric section of `nvidia-smi -q` (ClusterUUID and CliqueId), or the same through NVML when nvidia-ml-py "
        "is installed; without one it is unknown, said on stderr.",
        epilog=f"Rank: --rank, else the first set of {', '.join(RANK_ENV)} (SLURM_NODEID: the node's index in "
        "the Slurm job, set by srun on each node; NODE_RANK / GROUP_RANK: the node rank of torch-style launchers). "
        "SLURM_PROCID is not read: it numbers tasks, not nodes. Exit status: 0, also when the domain is unknown "
        f"(unless --require-domain: then {EXIT_NO_DOMAIN}); {EXIT_UNUSABLE_INPUT} for input that cannot be used "
        "(not the text of `nvidia-smi -q`, an unreadable file, nvidia-smi missing, not executable or failing) "
        "and for a bad rank.",
    )
    parser.add_argument("--nvidia-smi-file", metavar="PATH",
                        help="read a recorded `nvidia-smi -q` output instead of running nvidia-smi (- for stdin)")
    parser.add_argument("--rank", metavar="N", help="the node's topological rank (default: from the environment)")
    parser.add_argument("--format", choices=FORMATS, default="ray-start",
                        help="ray-start: flags for `ray start` (default); kuberay: a rayStartParams YAML snippet; "
                        f"env: `export {RESOURCES_ENV}=... {LABELS_ENV}=...` lines, which `ray start` merges "
                        "into its flags")
    parser.add_argument("--source", choices=SOURCES, default="resources",
                        help="advertise as custom resources (the provider's default, default here too), as node "
                        "labels (for topology_labels; Ray 2.55.1 or later), or both")
    parser.add_argument("--domain-label", default=DEFAULT_DOMAIN_LABEL, metavar="KEY",
                        help=f"label key of the domain with --source labels/both (default {DEFAULT_DOMAIN_LABEL})")
    parser.add_argument("--rank-label", default=DEFAULT_RANK_LABEL, metavar="KEY",
                        help=f"label key of the rank with --source labels/both (default {DEFAULT_RANK_LABEL})")
    parser.add_argument("--require-domain", action="store_true",
                        help=f"exit {EXIT_NO_DOMAIN} instead of 0 when the node's NVLink domain is unknown")
    parser.add_argument("--allow-unhealthy-fabric", action="store_true",
                        help="advertise the domain of a registered fabric whose Health Summary is Unhealthy "
                        "(default: such a node's domain is unknown, as NVLink across it may fail)")
    parser.add_argument("--skip-degraded", action="store_true",
                        help="advertise no domain when a GPU's fabric Health reports a degradation (Bandwidth "
                        "Degraded, Route Unhealthy, Summary Limited Capacity, ...); default: advertise it with a "
                        "warning on stderr")
    add_version_flag(parser)
    return parser.parse_args(list(argv))


def _note(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _report_domain(domain: Domain) -> None:
    if domain.name is None:
        _note(f"NVLink domain {NVLINK_DOMAIN_UNKNOWN}: {domain.reason}; no domain is advertised "
              f"(the provider reads this node's domain as {NVLINK_DOMAIN_UNKNOWN})")
        return
    _note(f"NVLink domain {domain.name} ({domain.reason})")
    for note in domain.notes:
        _note(note)


def _report_rank(rank: Rank, resources: Mapping) -> None:
    if rank.value is None:
        _note(f"topo_rank unknown: no --rank and none of {', '.join(RANK_ENV)} is set; no rank is advertised "
              "(the provider reads -1)")
        return
    _note(f"topo_rank {rank.value} (from {rank.source})")
    if rank.value == 0 and TOPO_RANK_KEY in resources:
        _note("topo_rank 0 as a resource: ray start drops custom resources of amount 0, so the provider reads this "
              "node's rank as -1; number ranks from 1 (e.g. --rank $((SLURM_NODEID + 1))) or use --source labels")


def _formatted(fmt: str, resources: Mapping, labels: Mapping, domain: Domain, rank: Rank) -> str:
    if fmt == "kuberay":
        comment = (f"{PROG}: NVLink domain {domain.name or NVLINK_DOMAIN_UNKNOWN}, topo_rank "
                   f"{'unknown' if rank.value is None else rank.value}")
        return format_kuberay(resources, labels, comment)
    if fmt == "env":
        return format_env(resources, labels)
    return format_ray_start(resources, labels)


def main(argv: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        rank = resolve_rank(opts.rank, os.environ if env is None else env)
        domain = read_domain(opts.nvidia_smi_file, opts.allow_unhealthy_fabric, skip_degraded=opts.skip_degraded)
    except TopologyInputError as e:
        _note(str(e))
        return EXIT_UNUSABLE_INPUT
    _report_domain(domain)
    if domain.name is None and opts.require_domain:
        return EXIT_NO_DOMAIN
    resources, labels = advertised(domain, rank, opts.source, opts.domain_label, opts.rank_label)
    _report_rank(rank, resources)
    print(_formatted(opts.format, resources, labels, domain, rank))
    return 0


def cli() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
