"""Make NeMo-RL's own RayVirtualCluster(...) calls attach to the clusters Terraform declared.

    import raytf_attach.nemo_rl
    raytf_attach.nemo_rl.use_declared_clusters(namespace="terraform-ray")
    # from here on, RayVirtualCluster(name="grpo_train_cluster", ...) inside
    # NeMo-RL returns the attached cluster declared as "grpo_train_cluster".

The hook patches __new__ of the class object nemo_rl.distributed.virtual_cluster.RayVirtualCluster
itself. Every `from ... import RayVirtualCluster`, made before or after the hook, names
that same object, so no module needs rebinding and nothing is missed. Subclasses of
RayVirtualCluster are left alone.
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ._attach import attach
from .cluster import DEFAULT_READY_TIMEOUT_S
from .errors import AttachError, RayNotInitializedError, RecordNotFoundError
from .nemo_class import REFERENCE_CLASS, REFERENCE_MODULE, reference_class
from .ports import PORT_RANGES
from .record import DEFAULT_NAMESPACE, KV_NAMESPACE, ClusterRecord, parse_record, record_key

__all__ = [
    "FALLBACKS",
    "ClusterNotDeclaredError",
    "NeMoRLMissingError",
    "ShapeMismatchError",
    "remove_hook",
    "use_declared_clusters",
]

logger = logging.getLogger(__name__)

FALLBACKS = ("error", "create")

# Compared RayVirtualCluster arguments; the record field and the Terraform
# attribute have the same names. Unset port bounds mean the master band.
_COMPARED = (
    "bundle_ct_per_node_list",
    "use_gpus",
    "num_gpus_per_node",
    "max_colocated_worker_groups",
    "segment_size",
    "port_range_low",
    "port_range_high",
)
_PORT_DEFAULTS = {"port_range_low": PORT_RANGES["master"].low, "port_range_high": PORT_RANGES["master"].high}


class ClusterNotDeclaredError(RecordNotFoundError):
    """RayVirtualCluster(name=X) was called under the hook, and no cluster X is declared (and fallback is "error")."""


class NeMoRLMissingError(ImportError):
    """use_declared_clusters() needs NeMo-RL's RayVirtualCluster, and nemo_rl is not importable in this Python."""


class ShapeMismatchError(AttachError):
    """The RayVirtualCluster call asks for another shape than Terraform declared; `differences` lists each one."""

    def __init__(self, message: str, differences: list[tuple[str, Any, Any]]):
        super().__init__(message)
        self.differences = differences  # (attribute, requested by NeMo-RL, declared)


@dataclass
class _Hook:
    reference: type
    namespace: str
    names: dict = field(default_factory=dict)
    fallback: str = "error"
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S
    ray_layer: Any = None
    signature: Optional[inspect.Signature] = None


_lock = threading.Lock()
_hook: Optional[_Hook] = None
_patched: set = set()  # reference classes whose __new__ is the hook's


def use_declared_clusters(
    namespace: str = DEFAULT_NAMESPACE,
    names: Optional[Mapping[str, str]] = None,
    fallback: str = "error",
    *,
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S,
    ray_layer: Any = None,
) -> type:
    """Makes RayVirtualCluster(name=X, ...) return the attached cluster declared as X (or names[X]).

    Before attaching, the call's bundle_ct_per_node_list, use_gpus, num_gpus_per_node,
    max_colocated_worker_groups, segment_size and port range are compared with the
    declaration; any difference raises one ShapeMismatchError listing them all, and
    nothing is attached or created (a field the record does not carry, such as segment_size
    from an older provider, is not compared). A name with no declared cluster raises
    ClusterNotDeclaredError, or with fallback="create" lets NeMo-RL create the cluster
    itself. node_resource_constraints and placement_group_strategy are not compared:
    Terraform chose the nodes (select_nodes, exclude_node_ids) and the strategy.
    Calling it again replaces the settings; remove_hook() ends it. Returns the patched class.
    ray_layer replaces the Ray connection (tests).
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback must be one of {FALLBACKS}, got {fallback!r}")
    if not namespace:
        raise ValueError("namespace must be the Ray namespace of the declared clusters (the provider's `namespace`)")
    reference = reference_class()
    if reference is None:
        raise NeMoRLMissingError(
            f"NeMo-RL is not installed in this Python ({REFERENCE_MODULE}.{REFERENCE_CLASS} is not importable); "
            "run inside NeMo-RL's environment (from a checkout of https://github.com/NVIDIA-NeMo/RL: "
            "`uv run raytf-attach -- ...`), or install NeMo-RL into this Python (`pip install -e <checkout>`)"
        )
    settings = dict(
        namespace=namespace, names=dict(names or {}), fallback=fallback,
        ready_timeout_s=ready_timeout_s, ray_layer=ray_layer,
    )
    global _hook
    with _lock:
        if reference not in _patched:
            original = vars(reference).get("__new__")
            reference.__new__ = staticmethod(_make_new(reference, original))  # type: ignore[method-assign]
            _patched.add(reference)
        _hook = _Hook(reference=reference, signature=inspect.signature(reference.__init__), **settings)
    return reference


def remove_hook() -> None:
    """Restores RayVirtualCluster's own construction.

    The patched __new__ stays on the class and passes every call through: deleting it
    again would leave CPython's slot for __new__ calling object.__new__ with NeMo-RL's
    arguments, which fails.
    """
    global _hook
    with _lock:
        _hook = None


def _make_new(reference: type, original: Any):
    original = original.__func__ if isinstance(original, staticmethod) else None

    def __new__(cls, *args, **kwargs):
        hook = _hook
        if hook is not None and cls is reference and hook.reference is reference:
            attached = _construct(hook, args, kwargs)
            if attached is not None:
                # Python calls __init__ on it next (it is a RayVirtualCluster);
                # the attached class's __init__ keeps it as attached.
                return attached
        if original is not None:
            return original(cls, *args, **kwargs)
        return object.__new__(cls)  # what a class without __new__ gets (its __init__ takes the arguments)

    return __new__


def _construct(hook: _Hook, args: tuple, kwargs: dict) -> Any:
    """The attached cluster for this call, or None to let NeMo-RL create it (fallback="create")."""
    try:
        bound = hook.signature.bind(None, *args, **kwargs)
    except TypeError:
        return None  # NeMo-RL's own __init__ reports the bad call
    bound.apply_defaults()
    requested = dict(list(bound.arguments.items())[1:])
    asked = requested.get("name") or ""
    declared = hook.names.get(asked, asked)
    call = f"RayVirtualCluster(name={asked!r})"

    layer = hook.ray_layer
    if layer is None:
        from .ray_layer import RayLayer

        layer = RayLayer()
    if not layer.is_initialized():
        raise RayNotInitializedError(f"{call}: Ray is not initialized; the hook attaches after ray.init()")
    found = _read_record(layer, hook.namespace, declared, call) if declared else None
    if found is None:
        if hook.fallback == "create":
            logger.info("%s: no cluster declared as %r; NeMo-RL creates it (fallback='create')", call, declared)
            return None
        raise ClusterNotDeclaredError(_not_declared(call, asked, declared, hook.namespace))
    record, recorded = found
    _compare(call, requested, record, recorded)
    if requested.get("node_resource_constraints"):
        logger.info("%s: node_resource_constraints ignored, Terraform chose the nodes of %s/%s",
                    call, record.namespace, record.name)
    return attach(declared, hook.namespace, ready_timeout_s=hook.ready_timeout_s, ray_layer=layer)


def _read_record(layer: Any, namespace: str, name: str, call: str) -> Optional[tuple[ClusterRecord, set]]:
    """The record and the fields it carries (older providers do not record segment_size), or None."""
    raw = layer.kv_get(record_key(namespace, name), KV_NAMESPACE)
    if raw is None:
        return None
    record = parse_record(raw, where=f"{call}: record of {namespace}/{name}")
    return record, set(json.loads(raw))


def _not_declared(call: str, asked: str, declared: str, namespace: str) -> str:
    if not declared:
        return (f"{call}: the call has no name, so no declared cluster can match it; map it with "
                "names={'': '<declared name>'} (--map =<declared name>) or pass fallback='create'")
    mapped = f" (mapped from {asked!r})" if declared != asked else ""
    key = record_key(namespace, declared).decode()
    return (
        f"{call}: no ray_virtual_cluster named {declared!r}{mapped} is declared in Ray namespace {namespace!r} "
        f"(no record {key!r} in Ray KV namespace {KV_NAMESPACE!r}). Declare it with name = \"{declared}\" and run "
        f"`terraform apply`, map the name to a declared cluster (names={{{asked!r}: '<name>'}}, --map {asked}=<name>), "
        "check the namespace (--namespace), or pass fallback='create' (--fallback create) to let NeMo-RL create it"
    )


def _hcl(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_hcl(v) for v in value) + "]"
    return str(value)


def _normalized(attr: str, value: Any) -> Any:
    if attr in _PORT_DEFAULTS and value is None:
        return _PORT_DEFAULTS[attr]
    if attr == "bundle_ct_per_node_list" and value is not None:
        return [int(v) for v in value]
    return value


def _compare(call: str, requested: dict, record: ClusterRecord, recorded: set) -> None:
    differences = []
    for attr in _COMPARED:
        if attr not in requested:
            continue  # not an argument of this NeMo-RL version
        if attr not in recorded:
            logger.info("%s: the record of %s/%s does not carry %s (written by an older provider); not compared",
                        call, record.namespace, record.name, attr)
            continue
        want = _normalized(attr, requested[attr])
        have = _normalized(attr, getattr(record, attr))
        if want != have:
            differences.append((attr, want, have))
    if not differences:
        return
    lines = []
    for attr, want, have in differences:
        fix = f"remove {attr}" if want is None else f"set {attr} = {_hcl(want)}"
        lines.append(f"  - {attr}: NeMo-RL asks for {_hcl(want)}, Terraform declared {_hcl(have)} -> {fix}")
    raise ShapeMismatchError(
        f"{call} does not match the ray_virtual_cluster declared as {record.namespace}/{record.name} "
        f"({len(differences)} difference{'s' if len(differences) > 1 else ''}); change these attributes of the "
        "resource (or NeMo-RL's config) so both agree, then `terraform apply`:\n" + "\n".join(lines)
        + "\nNothing was attached or created.",
        differences,
    )
