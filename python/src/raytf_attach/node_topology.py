"""raytf-node-topology: what a GPU node must advertise for the provider to see its NVLink domain and rank.

Run on the node (or on a recorded `nvidia-smi -q` output); it prints the `ray start` flags (or a
KubeRay rayStartParams snippet, or the environment `ray start` reads) that carry the node's NVLink domain and topological rank the way the
provider's ray_cluster_topology data source and ray_virtual_cluster read them:

- the custom resources nvlink_domain_<domain> = 1 and topo_rank = <rank> (the provider's default), or
- node labels (`--source labels`), read by the provider with topology_labels.

The domain comes from the Fabric section nvidia-smi prints per GPU (multi-node NVLink systems such as
GB200/GB300 NVL72): ClusterUUID and CliqueId, once every GPU reports State Completed and Status
Success. Its name is "<ClusterUUID, lowercase>.<CliqueId>". A node without that information (no
GPUs, GPUs without a fabric, registration still in progress) has the provider's unknown domain: the
tool says why on stderr and prints the flags without a domain.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from ._cli import add_version_flag
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


@dataclass(frozen=True)
class Domain:
    """The node's NVLink domain: name is None when unknown, and `reason` says why."""

    name: Optional[str]
    reason: str
    gpus: int


@dataclass(frozen=True)
class Rank:
    value: Optional[int]
    source: str  # "--rank", an environment variable's name, or "" when unknown


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _field(line: str) -> tuple[str, str]:
    key, _, value = line.partition(":")
    return key.strip(), value.strip()


def parse_nvidia_smi(text: str) -> list[GpuFabric]:
    """The Fabric section of each GPU in `nvidia-smi -q` output, in the output's order.

    Only the Fabric section's own fields are read (State, Status, CliqueId, ClusterUUID); its
    sub-sections (Health) and every other section are skipped.
    """
    gpus: list[GpuFabric] = []
    current: Optional[str] = None
    fields: dict[str, str] = {}
    fabric_indent: Optional[int] = None  # set while inside the current GPU's Fabric section
    child_indent: Optional[int] = None
    seen_fabric = False

    def close() -> None:
        if current is not None:
            gpus.append(GpuFabric(
                gpu=current, has_fabric_section=seen_fabric, state=fields.get("State"),
                status=fields.get("Status"), clique_id=fields.get("CliqueId"),
                cluster_uuid=fields.get("ClusterUUID"),
            ))

    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        header = _GPU_HEADER.match(line)
        if header:
            close()
            current, fields, fabric_indent, child_indent, seen_fabric = header.group(1), {}, None, None, False
            continue
        if current is None:
            continue
        indent = _indent(line)
        if fabric_indent is not None:
            if indent <= fabric_indent:
                fabric_indent = None  # the section ended; this line is read below
            else:
                if child_indent is None:
                    child_indent = indent
                if indent == child_indent and ":" in line:
                    key, value = _field(line)
                    fields.setdefault(key, value)
                continue
        if line.strip() == "Fabric" and not seen_fabric:
            fabric_indent, child_indent, seen_fabric = indent, None, True
    close()
    return gpus


def _not_available(value: Optional[str]) -> bool:
    return value is None or value == "" or value.upper() == "N/A"


def _gpu_domain(g: GpuFabric) -> tuple[Optional[str], str]:
    """(domain name, "") for a GPU whose fabric registration succeeded, else (None, why not)."""
    if not g.has_fabric_section or _not_available(g.state):
        return None, f"GPU {g.gpu} reports no NVLink fabric (Fabric State {g.state or 'absent'})"
    if g.state != _FABRIC_READY_STATE:
        return None, (f"GPU {g.gpu}'s fabric registration is not complete (State {g.state}); "
                      "run again once nvidia-smi reports State Completed")
    if g.status != _FABRIC_READY_STATUS:
        return None, f"GPU {g.gpu}'s fabric registration failed (Status {g.status or 'absent'})"
    uuid, clique = g.cluster_uuid or "", g.clique_id or ""
    if not _UUID.match(uuid) or set(uuid.replace("-", "")) == {"0"}:
        return None, f"GPU {g.gpu} has no usable ClusterUUID ({uuid or 'absent'})"
    if not clique.isdigit():
        return None, f"GPU {g.gpu} has no usable CliqueId ({clique or 'absent'})"
    name = f"{uuid.lower()}.{int(clique)}"
    if not _DOMAIN_NAME.match(name):  # cannot happen for a UUID and a decimal clique; kept as the rule's guard
        return None, f"GPU {g.gpu}: domain name {name!r} is not a valid Ray label value"
    return name, ""


def node_domain(gpus: Sequence[GpuFabric]) -> Domain:
    """The node's domain: known only when every GPU is registered in the same NVLink domain."""
    if not gpus:
        return Domain(None, "no GPUs found", 0)
    names = set()
    for g in gpus:
        name, why = _gpu_domain(g)
        if name is None:
            return Domain(None, why, len(gpus))
        names.add(name)
    if len(names) > 1:
        return Domain(None, f"the GPUs report different NVLink domains ({', '.join(sorted(names))})", len(gpus))
    first = gpus[0]
    return Domain(names.pop(), f"from {len(gpus)} GPUs: ClusterUUID {first.cluster_uuid}, CliqueId {first.clique_id}",
                  len(gpus))


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


def read_nvidia_smi(path: Optional[str], run=subprocess.run) -> tuple[str, str]:
    """(`nvidia-smi -q` output, "" or why no GPU was read): from path ("-" = stdin), else by running it."""
    if path is not None:
        try:
            text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
        except OSError as e:
            raise TopologyInputError(f"cannot read --nvidia-smi-file {path}: {e.strerror or e}") from e
        return text, _NO_DEVICES if _NO_DEVICES in text else ""
    try:
        done = run(["nvidia-smi", "-q"], capture_output=True, text=True, timeout=120, check=False)
    except FileNotFoundError:
        return "", "nvidia-smi is not installed (no NVIDIA driver on this node)"
    except subprocess.TimeoutExpired:
        return "", "nvidia-smi -q did not answer within 120 s"
    text = (done.stdout or "") + (done.stderr or "")
    if _NO_DEVICES in text:
        return text, _NO_DEVICES
    if done.returncode != 0:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "no output")
        return text, f"nvidia-smi -q failed (exit {done.returncode}): {first}"
    return text, ""


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
        "Fabric section of `nvidia-smi -q` (ClusterUUID and CliqueId); without one it is unknown, said on stderr.",
        epilog=f"Rank: --rank, else the first set of {', '.join(RANK_ENV)} (SLURM_NODEID: the node's index in "
        "the Slurm job, set by srun on each node; NODE_RANK / GROUP_RANK: the node rank of torch-style launchers). "
        "SLURM_PROCID is not read: it numbers tasks, not nodes. Exit status: 0, also when the domain is unknown "
        f"(unless --require-domain: then {EXIT_NO_DOMAIN}); 2 for unusable input.",
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
    add_version_flag(parser)
    return parser.parse_args(list(argv))


def _note(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        rank = resolve_rank(opts.rank, os.environ if env is None else env)
        text, no_gpu = read_nvidia_smi(opts.nvidia_smi_file)
    except TopologyInputError as e:
        _note(str(e))
        return 2
    domain = Domain(None, no_gpu, 0) if no_gpu else node_domain(parse_nvidia_smi(text))
    if domain.name is None:
        _note(f"NVLink domain {NVLINK_DOMAIN_UNKNOWN}: {domain.reason}; no domain is advertised "
              f"(the provider reads this node's domain as {NVLINK_DOMAIN_UNKNOWN})")
        if opts.require_domain:
            return EXIT_NO_DOMAIN
    else:
        _note(f"NVLink domain {domain.name} ({domain.reason})")
    if rank.value is None:
        _note(f"topo_rank unknown: no --rank and none of {', '.join(RANK_ENV)} is set; no rank is advertised "
              "(the provider reads -1)")
    else:
        _note(f"topo_rank {rank.value} (from {rank.source})")
    resources, labels = advertised(domain, rank, opts.source, opts.domain_label, opts.rank_label)
    if rank.value == 0 and TOPO_RANK_KEY in resources:
        _note("topo_rank 0 as a resource: ray start drops custom resources of amount 0, so the provider reads this "
              "node's rank as -1; number ranks from 1 (e.g. --rank $((SLURM_NODEID + 1))) or use --source labels")
    if opts.format == "kuberay":
        comment = (f"{PROG}: NVLink domain {domain.name or NVLINK_DOMAIN_UNKNOWN}, topo_rank "
                   f"{'unknown' if rank.value is None else rank.value}")
        print(format_kuberay(resources, labels, comment))
    elif opts.format == "env":
        print(format_env(resources, labels))
    else:
        print(format_ray_start(resources, labels))
    return 0


def cli() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
