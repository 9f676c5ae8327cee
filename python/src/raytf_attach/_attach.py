"""attach(): reads a cluster's record from Ray's KV, checks its live groups
and returns the attached cluster (a RayVirtualCluster subclass where NeMo-RL
is importable). It sits above cluster.py and nemo_class.py: nemo_class
imports cluster, never the reverse, so the package has no import cycle
(tests/test_imports.py).
"""

from __future__ import annotations

from typing import Any

from .cluster import DEFAULT_PROBE_TIMEOUT_S, DEFAULT_READY_TIMEOUT_S, AttachedVirtualCluster, _verify_groups
from .errors import RayNotInitializedError, RecordInvalidError, RecordNotFoundError
from .nemo_class import attached_class
from .record import DEFAULT_NAMESPACE, KV_NAMESPACE, parse_record, record_key


def attach(
    name: str,
    namespace: str = DEFAULT_NAMESPACE,
    *,
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S,
    probe_timeout_s: float = DEFAULT_PROBE_TIMEOUT_S,
    ray_layer: Any = None,
) -> AttachedVirtualCluster:
    """Attaches to the virtual cluster `name` in Ray namespace `namespace`.

    Call it in a Ray driver or task after ray.init(). Raises an AttachError
    subclass when the record is missing or unreadable, when a recorded group
    is gone, was recreated outside Terraform, or is not ready within
    ready_timeout_s. ray_layer replaces the Ray connection (tests).
    """
    if not name:
        raise ValueError("attach: name must be a non-empty cluster name")
    if ray_layer is None:
        from .ray_layer import RayLayer

        ray_layer = RayLayer()
    if not ray_layer.is_initialized():
        raise RayNotInitializedError(
            f"attach({name!r}): Ray is not initialized in this process; call ray.init() first "
            "(inside a Ray job or task it already is)"
        )
    key = record_key(namespace, name)
    where = f"cluster {namespace}/{name}"
    raw = ray_layer.kv_get(key, KV_NAMESPACE)
    if raw is None:
        raise RecordNotFoundError(
            f"{where}: no record under key {key.decode()!r} in Ray KV namespace {KV_NAMESPACE!r}; "
            "apply the ray_virtual_cluster first, or check the name and namespace "
            "(the resource's `name` and `namespace` attributes)"
        )
    record = parse_record(raw, where=f"{where}: record")
    if (record.name, record.namespace) != (name, namespace):
        raise RecordInvalidError(
            f"{where}: record describes {record.namespace}/{record.name}, not the cluster under its key"
        )
    live = _verify_groups(record, ray_layer, ready_timeout_s, where)
    return attached_class()(record, live, ray_layer, probe_timeout_s)
