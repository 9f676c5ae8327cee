"""Stand-in for nemo_rl.distributed.virtual_cluster: same import path and constructor signature.

A call that is not attached really creates placement groups here, so a test
sees in Ray whether the hook intercepted it. `created` lists every instance
whose own __init__ ran.
"""

from __future__ import annotations

from typing import Optional

created: list = []


class RayVirtualCluster:
    def __init__(
        self,
        bundle_ct_per_node_list: list[int],
        use_gpus: bool = True,
        max_colocated_worker_groups: int = 1,
        num_gpus_per_node: int = 8,
        name: str = "",
        placement_group_strategy: str = "SPREAD",
        port_range_low: Optional[int] = None,
        port_range_high: Optional[int] = None,
        segment_size: int | None = None,
        node_resource_constraints: list[dict[str, float]] | None = None,
    ):
        self._bundle_ct_per_node_list = bundle_ct_per_node_list
        self._world_size = sum(bundle_ct_per_node_list)
        self.use_gpus = use_gpus
        self.max_colocated_worker_groups = max_colocated_worker_groups
        self.num_gpus_per_node = num_gpus_per_node
        self.name = name
        self.placement_group_strategy = placement_group_strategy
        self.port_range_low = 1400 if port_range_low is None else port_range_low
        self.port_range_high = 1999 if port_range_high is None else port_range_high
        self.segment_size = segment_size
        self.node_resource_constraints = node_resource_constraints
        self._node_placement_groups = None
        created.append(self)

    def _init_placement_groups(self, strategy: str | None = None, use_unified_pg: bool = False):
        if self._node_placement_groups is None:
            self._node_placement_groups = self._create_placement_groups_internal(
                strategy or self.placement_group_strategy, use_unified_pg)
        return self._node_placement_groups

    def _create_placement_groups_internal(self, strategy: str, use_unified_pg: bool = False):
        import ray
        from ray.util.placement_group import placement_group

        def bundle():
            b = {"CPU": self.max_colocated_worker_groups}
            if self.use_gpus:
                b["GPU"] = 1
            return b

        if use_unified_pg:
            groups = [placement_group([bundle() for _ in range(self._world_size)], strategy=strategy,
                                      name=f"{self.name}-unified")]
        else:
            groups = [placement_group([bundle() for _ in range(n)], strategy="PACK", name=f"{self.name}-node{i}")
                      for i, n in enumerate(self._bundle_ct_per_node_list) if n > 0]
        ray.get([g.ready() for g in groups], timeout=180)
        return groups

    def get_placement_groups(self):
        return self._init_placement_groups()

    def world_size(self) -> int:
        return self._world_size

    def node_count(self) -> int:
        return sum(1 for n in self._bundle_ct_per_node_list if n > 0)

    def shutdown(self) -> bool:
        if self._node_placement_groups:
            from ray.util.placement_group import remove_placement_group

            for g in self._node_placement_groups:
                remove_placement_group(g)
        self._node_placement_groups = None
        return True

    def __del__(self) -> None:
        try:
            self.shutdown()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
