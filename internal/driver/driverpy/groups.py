# Named placement groups through ray: look up, compare with the wanted
# shape, create, remove and wait for the removal.

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Protocol, Tuple, cast

from .contract import DriverError, GroupSpec, Json, Resources
from .rayapi import RAY
from .runstate import Run


def norm_bundle(b: Dict[str, Any]) -> Resources:
    # Ray drops zero-valued resources; compare and report without them.
    return {str(k): float(v) for k, v in b.items() if float(v) > 0}


def same_amount(run: Run, a: float, b: float) -> bool:
    # drift.SameAmount: less than one of Ray's amount units apart.
    unit = run.contract.amount_unit
    return abs(a / unit - b / unit) < 1 - 1e-6


def same_bundle(run: Run, a: Resources, b: Resources) -> bool:
    # drift.SameResources: an amount below one unit is absent for Ray.
    keys = set(a) | set(b)
    return all(same_amount(run, a.get(k, 0.0), b.get(k, 0.0)) for k in keys)


def table_bundles(table: Json) -> List[Resources]:
    bundles = table.get("bundles") or {}
    return [norm_bundle(bundles[k]) for k in sorted(bundles, key=int)]


def lookup(run: Run, name: str) -> Optional[Tuple[Any, Json]]:
    """Returns (PlacementGroup, table) for a live named group, else None."""
    try:
        pg = RAY.get_placement_group(name)
    except ValueError:
        return None
    table = RAY.placement_group_table(pg)
    if not table or table.get("state") == run.contract.state_removed:
        return None
    return pg, table


def is_detached(pg: Any) -> Optional[bool]:
    # Best effort: read the raw GCS record (private API); None if unknown.
    try:
        from ray.core.generated import gcs_pb2

        accessor = RAY.ray._private.state.state._connect_and_get_accessor()
        raw = accessor.get_placement_group_info(pg.id)
        if raw is None:
            return None
        return bool(gcs_pb2.PlacementGroupTableData.FromString(raw).is_detached)
    except Exception:  # noqa: BLE001
        return None


def diff_group(run: Run, want: GroupSpec, table: Json, pg: Any) -> List[Json]:
    """How a live group differs from the wanted one, as facts (Go words
    them: contract.GroupDifference)."""
    diffs: List[Json] = []
    if table.get("strategy") != want["strategy"]:
        diffs.append({"field": "strategy", "have": table.get("strategy"), "want": want["strategy"]})
    have = table_bundles(table)
    wanted = [norm_bundle(b) for b in cast(List[Resources], want["bundles"])]  # a create's groups have bundles
    if len(have) != len(wanted):
        diffs.append({"field": "bundle_count", "have": len(have), "want": len(wanted)})
    else:
        for i, (h, w) in enumerate(zip(have, wanted)):
            if not same_bundle(run, h, w):
                diffs.append({"field": "bundle", "index": i, "have_resources": h, "want_resources": w})
    if is_detached(pg) is False:
        diffs.append({"field": "lifetime"})
    return diffs


def create_group(run: Run, g: GroupSpec) -> Any:
    """Creates one detached group of the spec and remembers it for cleanup."""
    name = g["name"]
    # Optional arguments only when set, so Ray versions without them still work.
    kwargs: Json = {"bundle_label_selector": g["selector"]} if g["selector"] else {}
    if g["topology_strategy"]:
        # Ray takes the node-level strategy inside topology_strategy, never both.
        kwargs["topology_strategy"] = g["topology_strategy"]
    else:
        kwargs["strategy"] = g["strategy"]
    try:
        with run.gate:
            run.inflight.add(name)
            pg = RAY.placement_group(bundles=g["bundles"], name=name, lifetime="detached", **kwargs)
    except Exception as e:  # noqa: BLE001
        run.inflight.discard(name)
        if "already exists" in str(e):
            raise DriverError("conflict", "created_concurrently", group=name)
        raise
    run.created[name] = pg
    run.inflight.discard(name)
    return pg


class Groups(Protocol):
    """What a delete or read needs of named groups: RayGroups, or GcsDirect
    without ray."""

    def find(self, name: str) -> Any: ...

    def remove(self, pg: Any) -> None: ...

    def removed(self, pg: Any) -> bool: ...


class RayGroups:
    """Named groups through ray.util (after ray.init)."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def find(self, name: str) -> Any:
        hit = lookup(self.run, name)
        return hit[0] if hit else None

    @staticmethod
    def remove(pg: Any) -> None:
        RAY.remove_placement_group(pg)

    def removed(self, pg: Any) -> bool:
        removed = self.run.contract.state_removed
        return (RAY.placement_group_table(pg) or {}).get("state", removed) == removed


def wait_removed(groups: Groups, name: str, handle: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not groups.removed(handle):
        if time.monotonic() > deadline:
            raise DriverError("timeout", "not_removed", group=name, seconds=seconds)
        time.sleep(0.05)
