# ray and the helpers of it the driver calls, bound by import_ray(). A delete,
# record or read that reaches the GCS directly (GcsDirect) never imports ray,
# which saves about a second. One object rather than module globals, so that
# every module sees the binding import_ray makes.

from __future__ import annotations

from typing import Any


class RayApi:
    """ray's module and functions once import_ray() ran; None before."""

    def __init__(self) -> None:
        self.ray: Any = None
        self.internal_kv: Any = None
        self.PlacementGroupSchedulingStrategy: Any = None
        self.get_placement_group: Any = None
        self.placement_group: Any = None
        self.placement_group_table: Any = None
        self.remove_placement_group: Any = None


RAY = RayApi()


def import_ray() -> None:
    import ray
    from ray.experimental import internal_kv
    from ray.util.placement_group import (
        get_placement_group,
        placement_group,
        placement_group_table,
        remove_placement_group,
    )
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    RAY.ray, RAY.internal_kv, RAY.PlacementGroupSchedulingStrategy = ray, internal_kv, PlacementGroupSchedulingStrategy
    RAY.get_placement_group, RAY.placement_group = get_placement_group, placement_group
    RAY.placement_group_table, RAY.remove_placement_group = placement_group_table, remove_placement_group
