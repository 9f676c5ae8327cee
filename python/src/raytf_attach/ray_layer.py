"""Every call this package makes into Ray, behind one small class.

AttachedVirtualCluster talks only to a layer object with these methods, so
unit tests substitute a fake and need no Ray. Ray is imported lazily.
Public Ray APIs are used where they exist; the two private ones (the
internal KV read and the group lookup in another namespace) are marked and
tested on every supported Ray version (tests/test_ray_layer.py).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from . import _probe


@dataclass
class LiveGroup:
    """What Ray says about a placement group right now."""

    handle: Any  # ray.util.placement_group.PlacementGroup
    id: str  # hex
    name: str
    state: str  # PENDING, PREPARED, CREATED, RESCHEDULING, REMOVED
    bundle_count: int
    bundle_nodes: dict = field(default_factory=dict)  # bundle index -> node id hex


@dataclass
class PortRequest:
    """Check candidate (or find another port) inside one bundle."""

    handle: Any
    bundle_index: int
    candidate: Optional[int]
    low: int
    high: int
    excluded: tuple = ()


class RayLayer:
    """The real layer: the current process's Ray connection."""

    def __init__(self):
        import ray

        self._ray = ray
        self._probe_task = None

    def is_initialized(self) -> bool:
        return self._ray.is_initialized()

    def kv_get(self, key: bytes, namespace: str) -> Optional[bytes]:
        # Private, no public equivalent: Ray offers no public API to read its internal KV.
        from ray.experimental import internal_kv

        return internal_kv._internal_kv_get(key, namespace=namespace)

    def find_group(self, name: str, namespace: str) -> Optional[LiveGroup]:
        if self._ray.get_runtime_context().namespace == namespace:
            # The public lookup searches the caller's own namespace only.
            try:
                handle = self._ray.util.get_placement_group(name)
            except ValueError:  # no group of that name
                return None
        else:
            handle = self._group_in_namespace(name, namespace)
            if handle is None:
                return None
        live = self.refresh(handle)
        return None if live.state == "REMOVED" else live

    def _group_in_namespace(self, name: str, namespace: str) -> Any:
        # Private, no public equivalent: ray.util.get_placement_group searches only the caller's namespace.
        from ray.util.placement_group import PlacementGroup

        info = self._ray._private.state.state.get_placement_group_by_name(name, namespace)
        if info is None:
            return None
        return PlacementGroup(self._ray.PlacementGroupID(bytes.fromhex(info["placement_group_id"])))

    def refresh(self, handle: Any) -> LiveGroup:
        table = self._ray.util.placement_group_table(handle) or {}
        nodes = {int(k): v for k, v in (table.get("bundles_to_node_id") or {}).items()}
        return LiveGroup(
            handle=handle,
            id=str(table.get("placement_group_id", handle.id.hex())).lower(),
            name=table.get("name", ""),
            state=table.get("state", "REMOVED"),
            bundle_count=len(table.get("bundles") or {}),
            bundle_nodes=nodes,
        )

    def wait_ready(self, handles: list, timeout_s: float) -> list[bool]:
        refs = [h.ready() for h in handles]
        ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
        done = set(ready)
        return [r in done for r in refs]

    def probe_ports(self, requests: list[PortRequest], timeout_s: float, batch_size: int) -> list[Optional[tuple]]:
        """Runs one probe task per request; None for a probe that did not finish in time."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        task = self._task()
        refs = [
            task.options(
                num_cpus=0,  # bundles may be fully used by workers already
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=r.handle, placement_group_bundle_index=r.bundle_index
                ),
            ).remote(r.candidate, r.low, r.high, list(r.excluded))
            for r in requests
        ]
        position = {ref: i for i, ref in enumerate(refs)}
        out: list[Optional[tuple]] = [None] * len(refs)
        pending = list(refs)
        deadline = time.monotonic() + timeout_s
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                for ref in pending:
                    try:
                        self._ray.cancel(ref, force=True)
                    except Exception:  # noqa: BLE001 - best effort; the caller reports the timeout
                        pass
                break
            # Fetch at most batch_size results at once to bound object-store use.
            ready, pending = self._ray.wait(pending, num_returns=min(batch_size, len(pending)), timeout=left)
            for ref, value in zip(ready, self._ray.get(ready)):
                out[position[ref]] = tuple(value)
        return out

    def _task(self):
        if self._probe_task is None:
            # Ship the probe module by value: workers need not have this package.
            self._ray.cloudpickle.register_pickle_by_value(sys.modules[_probe.__name__])
            self._probe_task = self._ray.remote(max_retries=0)(_probe.check_or_find_port)
        return self._probe_task
