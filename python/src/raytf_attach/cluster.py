"""AttachedVirtualCluster: a RayVirtualCluster-compatible view of a cluster Terraform declared.

attach() (_attach.py) reads the record and builds it.

The object offers the members NeMo-RL's worker groups and generation backends
use on nemo_rl.distributed.virtual_cluster.RayVirtualCluster, with the same
meaning, but it never creates or removes placement groups: the record in
Ray's KV and the live groups it names are the source of truth.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, Optional

from .errors import (
    ClusterResizedError,
    GroupIdMismatchError,
    GroupMissingError,
    GroupNotReadyError,
    PlacementChangedError,
    PortUnavailableError,
    RecordInvalidError,
    TerraformOwnedWarning,
)
from .ray_layer import LiveGroup, PortRequest
from .record import KV_NAMESPACE, STATE_CREATED, BundleRecord, ClusterRecord, parse_record, record_key

logger = logging.getLogger(__name__)

DEFAULT_READY_TIMEOUT_S = 10.0
# A probe's task waits for a worker to start in the bundle (the job's runtime
# env set up on that node first): 60 s was seen to run out on a busy 2-core
# machine.
DEFAULT_PROBE_TIMEOUT_S = 120.0
# Rounds of re-probing when concurrent probes on one node pick the same port.
PORT_ROUNDS = 5


def live_mismatches(
    recorded_id: str, bundle_count: int, bundle_nodes: dict, found: Optional[LiveGroup]
) -> list[tuple]:
    """How a live group differs from its record, the provider's rule
    (internal/drift/match.go MatchRecorded; vectors in
    tests/testdata/live_match.json): ("missing",), ("recreated", live id),
    ("state", state), ("bundle_count", live count), ("moved", bundle, from, to)."""
    if found is None:
        return [("missing",)]
    out: list[tuple] = []
    recreated = bool(recorded_id) and found.id != recorded_id
    if recreated:
        out.append(("recreated", found.id))
    if found.state != STATE_CREATED:
        out.append(("state", found.state))
    if bundle_count > 0 and found.bundle_count != bundle_count:
        out.append(("bundle_count", found.bundle_count))
    if not recreated:
        for i in sorted(found.bundle_nodes):
            was, now = bundle_nodes.get(i), found.bundle_nodes[i]
            if was and now and now != was:
                out.append(("moved", i, was, now))
    return out


def _verify_groups(record: ClusterRecord, layer: Any, ready_timeout_s: float, where: str) -> list[LiveGroup]:
    recorded_nodes: dict = {g.name: {} for g in record.groups}
    rank_of = {}
    for b in record.bundles:
        recorded_nodes[b.placement_group][b.bundle_index] = b.node_id
        rank_of[(b.placement_group, b.bundle_index)] = b.rank
    live: list[LiveGroup] = []
    found_all = []
    for g in record.groups:
        found = layer.find_group(g.name, record.namespace)
        found_all.append((g, found, live_mismatches(g.id, g.bundle_count, recorded_nodes[g.name], found)))
    for g, found, mismatches in found_all:
        for m in mismatches:
            if m[0] == "missing":
                raise GroupMissingError(
                    f"{where}: placement group {g.name!r} (id {g.id}) no longer exists in Ray namespace "
                    f"{record.namespace!r}; it was removed outside Terraform, run `terraform apply` to recreate it"
                )
            if m[0] == "recreated":
                raise GroupIdMismatchError(
                    f"{where}: placement group {g.name!r} has id {m[1]} but Terraform created {g.id}; "
                    "it was recreated outside Terraform, so the recorded placement does not describe it. "
                    "Run `terraform apply` (or remove the foreign group) before attaching"
                )
            if m[0] == "bundle_count":
                raise RecordInvalidError(f"{where}: group {g.name!r} has {m[1]} bundles, the record says {g.bundle_count}")
        live.append(found)
    bad = [f"{g.name} ({m[1]})" for g, _, ms in found_all for m in ms if m[0] == "state"]
    if bad:
        raise GroupNotReadyError(
            f"{where}: placement group(s) not ready: {', '.join(bad)}; RESCHEDULING means Ray is moving "
            "bundles after a node failure, PENDING that resources are not free yet; retry later"
        )
    moved = [
        f"rank {rank_of.get((g.name, m[1]))} ({g.name}[{m[1]}]) {m[2][:12]} -> {m[3][:12]}"
        for g, _, ms in found_all
        for m in ms
        if m[0] == "moved"
    ]
    if moved:
        raise PlacementChangedError(
            f"{where}: Ray moved bundles since Terraform recorded them ({'; '.join(moved)}), so the recorded "
            "rank order, GPU ids and ports are stale; run `terraform apply` to refresh the record"
        )
    ready = layer.wait_ready([g.handle for g in live], ready_timeout_s)
    late = [g.name for g, ok in zip(live, ready) if not ok]
    if late:
        raise GroupNotReadyError(
            f"{where}: placement group(s) {late} not ready after {ready_timeout_s:g}s; "
            "Ray may be rescheduling them after a node failure, retry later"
        )
    return live


class AttachedVirtualCluster:
    """A Terraform-declared virtual cluster with RayVirtualCluster's interface.

    Same meaning as the reference: world_size() is the bundle count,
    node_count() the logical nodes with bundles, get_placement_groups() the
    groups in declaration order, _sorted_bundle_indices the topology order of
    a unified GPU group (None otherwise). Ports differ in one way: a bundle's
    recorded port (and the recorded master port) is handed out first if its
    node still has it free, and every port handed out is unique per node for
    the life of this object.
    """

    def __init__(self, record: ClusterRecord, live: list[LiveGroup], layer: Any, probe_timeout_s: float):
        self.record = record
        self._layer = layer
        self._live = list(live)
        self._probe_timeout_s = probe_timeout_s

        self.name = record.name
        self.namespace = record.namespace
        self.use_gpus = record.use_gpus
        self.num_gpus_per_node = record.num_gpus_per_node
        self.max_colocated_worker_groups = record.max_colocated_worker_groups
        self.placement_group_strategy = record.placement_group_strategy
        self.use_unified_pg = record.use_unified_pg
        self.port_range_low = record.port_range_low
        self.port_range_high = record.port_range_high
        self.segment_size = record.segment_size
        self.node_resource_constraints = (
            [dict(c) for c in record.node_resource_constraints] if record.node_resource_constraints else None
        )

        self._bundle_ct_per_node_list = list(record.bundle_ct_per_node_list)
        self._world_size = sum(self._bundle_ct_per_node_list)
        self._node_placement_groups = [g.handle for g in self._live]
        # The reference computes a topology order only for a unified GPU group.
        topology_ordered = record.use_unified_pg and record.use_gpus and len(self._live) == 1
        if topology_ordered:
            self._sorted_bundle_indices: Optional[list[int]] = list(record.sorted_bundle_indices)
            domains = {b.global_index: b.nvlink_domain for b in record.bundles}
            self._nvlink_domain_per_bundle_index: Optional[tuple[str, ...]] = tuple(
                domains[i] for i in range(len(record.bundles))
            )
        else:
            self._sorted_bundle_indices = None
            self._nvlink_domain_per_bundle_index = None

        self._allocated_master_ports: set[int] = set()
        self._ports_by_ip: dict[str, set[int]] = {}  # every port handed out, per node IP
        self._shutdown_warned = False

    # ------------------------------------------------------------ reference interface

    def get_placement_groups(self) -> list:
        return list(self._node_placement_groups)

    def world_size(self) -> int:
        return self._world_size

    def node_count(self) -> int:
        return sum(1 for count in self._bundle_ct_per_node_list if count > 0)

    def _init_placement_groups(self, strategy: Optional[str] = None, use_unified_pg: bool = False) -> list:
        """Returns the existing groups, as the reference does once they exist.

        The layout is Terraform's; a caller asking for a unified group (cross-node
        model parallelism) on a per-node cluster gets a warning, not new groups.
        """
        if use_unified_pg and not self.use_unified_pg:
            msg = (
                f"cluster {self.namespace}/{self.name} has per-node placement groups, but the caller asked for a "
                "unified group (cross-node model parallelism); set use_unified_pg = true on the ray_virtual_cluster"
            )
            logger.warning(msg)
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
        return self.get_placement_groups()

    def _get_sorted_bundle_indices(self) -> Optional[list[int]]:
        return None if self._sorted_bundle_indices is None else list(self._sorted_bundle_indices)

    def get_master_address_and_port(self) -> tuple[str, int]:
        """Rank 0's address and a port no earlier call on this object returned.

        The first call returns the recorded master port when it is still free.
        """
        master = self.record.bundles[0]
        group = self._group_index(master.placement_group)
        addr, port = self._allocate([(group, master.bundle_index, master.node_ip, self.record.master_port)])[0]
        self._allocated_master_ports.add(port)
        return addr, port

    def get_available_address_and_port(self, pg_idx: int, bundle_idx: int) -> tuple[str, int]:
        """The bundle's node IP and a free port on it (the recorded port first, if still free)."""
        return self.get_available_addresses_and_ports_batch([(pg_idx, bundle_idx)])[0]

    def get_available_addresses_and_ports_batch(
        self, pg_bundle_pairs: list[tuple[int, int]], batch_size: int = 256
    ) -> list[tuple[str, int]]:
        """(address, port) per (pg_idx, bundle_idx) pair, in input order; probes run in parallel."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        targets = []
        for pg_idx, bundle_idx in pg_bundle_pairs:
            group = self._resolve_group(pg_idx)
            rec = self._bundle_record(group, bundle_idx)
            targets.append((group, bundle_idx, rec.node_ip, rec.port))
        return self._allocate(targets, batch_size)

    def shutdown(self) -> bool:
        """Does not remove anything: the groups belong to Terraform (`terraform destroy` removes them).

        Warns once (TerraformOwnedWarning) and returns True, so NeMo-RL code that
        ends with cluster.shutdown() keeps working.
        """
        if not self._shutdown_warned:
            self._shutdown_warned = True
            msg = (
                f"shutdown() on attached cluster {self.namespace}/{self.name} leaves its placement groups in place: "
                "Terraform owns them; run `terraform destroy` to remove them"
            )
            logger.warning(msg)
            warnings.warn(msg, TerraformOwnedWarning, stacklevel=2)
        return True

    # ------------------------------------------------------------ extras

    @property
    def bundles(self) -> tuple[BundleRecord, ...]:
        """Every bundle in rank order, as Terraform recorded it."""
        return self.record.bundles

    def placement_for_rank(self, rank: int) -> tuple[Any, int]:
        """(placement group, bundle index) of the bundle with this rank."""
        if not 0 <= rank < len(self.record.bundles):
            raise IndexError(f"rank {rank} outside 0..{len(self.record.bundles) - 1}")
        b = self.record.bundles[rank]
        return self._live[self._group_index(b.placement_group)].handle, b.bundle_index

    def check(self, ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S) -> None:
        """Re-verifies the live groups (exist, same ids, ready), e.g. before starting new workers.

        Raises ClusterResizedError when Terraform has resized the cluster since this object attached.
        """
        self._check_shape()
        self._live = _verify_groups(self.record, self._layer, ready_timeout_s, self._where())
        self._node_placement_groups = [g.handle for g in self._live]

    def __repr__(self) -> str:
        return (
            f"AttachedVirtualCluster(name={self.name!r}, namespace={self.namespace!r}, "
            f"world_size={self._world_size}, groups={[g.name for g in self._live]})"
        )

    # ------------------------------------------------------------ internals

    def _check_shape(self) -> None:
        """Compares the groups of the record in Ray now with the attached ones (a resize in place
        rewrites the record: groups added or removed, the kept ones with their ids)."""
        raw = self._layer.kv_get(record_key(self.namespace, self.name), KV_NAMESPACE)
        if raw is None:
            return  # _verify_groups reports the groups that are gone
        now = parse_record(raw, where=f"{self._where()}: record")
        was_groups = [(g.name, g.id) for g in self.record.groups]
        now_groups = [(g.name, g.id) for g in now.groups]
        if was_groups == now_groups:
            return
        was, new = [g for g, _ in was_groups], [g for g, _ in now_groups]
        added = [g for g in new if g not in was]
        removed = [g for g in was if g not in new]
        raise ClusterResizedError(
            f"{self._where()}: Terraform resized the cluster since this process attached "
            f"(record updated {now.updated_at or 'since'}): groups added {added or 'none'}, removed {removed or 'none'}; "
            f"it now has {sum(now.bundle_ct_per_node_list)} bundles in {len(new)} groups. Workers on the kept "
            "groups keep running; attach again (raytf_attach.attach) to place new workers on the new shape"
        )

    def _where(self) -> str:
        return f"cluster {self.namespace}/{self.name}"

    def _group_index(self, group_name: str) -> int:
        for i, g in enumerate(self.record.groups):
            if g.name == group_name:
                return i
        raise RecordInvalidError(f"{self._where()}: no group {group_name!r} in the record")

    def _resolve_group(self, pg_idx: int) -> int:
        # Like the reference: with a single (unified) group every pg_idx means it.
        if len(self._live) == 1:
            return 0
        if not 0 <= pg_idx < len(self._live):
            raise ValueError(f"pg_idx {pg_idx} outside 0..{len(self._live) - 1} for {self._where()}")
        return pg_idx

    def _bundle_record(self, group: int, bundle_idx: int) -> BundleRecord:
        g = self.record.groups[group]
        rec = self.record.bundle_at(g.name, bundle_idx)
        if rec is None:
            raise ValueError(
                f"bundle_idx {bundle_idx} outside group {g.name!r} of {g.bundle_count} bundles in {self._where()}"
            )
        return rec

    def _allocate(self, targets: list[tuple[int, int, str, Optional[int]]], batch_size: int = 256) -> list:
        """Finds a port per target (group index, bundle index, recorded IP, preferred port).

        The preferred port is checked on the node first; otherwise, and when
        concurrent probes on one node collide, another port is probed, until
        every result is unique among the ports handed out on its node.
        """
        self._check_shape()  # a port for a worker on a shape Terraform has since changed is of no use
        results: list = [None] * len(targets)
        todo = list(range(len(targets)))
        for round_no in range(PORT_ROUNDS):
            requests = []
            for i in todo:
                group, bundle_idx, ip, preferred = targets[i]
                taken = self._ports_by_ip.get(ip, set())
                candidate = preferred if round_no == 0 and preferred and preferred not in taken else None
                requests.append(PortRequest(
                    handle=self._live[group].handle, bundle_index=bundle_idx, candidate=candidate,
                    low=self.port_range_low, high=self.port_range_high, excluded=tuple(sorted(taken)),
                ))
            try:
                answers = self._layer.probe_ports(requests, self._probe_timeout_s, batch_size)
            except Exception as e:  # a probe task failed inside Ray
                raise PortUnavailableError(f"{self._where()}: port probe failed: {e}") from e
            again = []
            for i, answer in zip(todo, answers):
                group, bundle_idx = targets[i][0], targets[i][1]
                if answer is None:
                    self._raise_probe_timeout(group, bundle_idx)
                ip, port = answer
                if port is None:
                    raise PortUnavailableError(
                        f"{self._where()}: no free port in [{self.port_range_low}, {self.port_range_high}) on "
                        f"{ip} (bundle {bundle_idx} of group {self.record.groups[group].name!r})"
                    )
                taken = self._ports_by_ip.setdefault(ip, set())
                if port in taken:
                    again.append(i)  # another probe in this batch got it first
                    continue
                taken.add(port)
                results[i] = (ip, port)
            todo = again
            if not todo:
                return results
        raise PortUnavailableError(
            f"{self._where()}: could not find unique free ports for {len(todo)} bundle(s) after {PORT_ROUNDS} rounds"
        )

    def _raise_probe_timeout(self, group: int, bundle_idx: int) -> None:
        live = self._layer.refresh(self._live[group].handle)
        name = self.record.groups[group].name
        if live.state != STATE_CREATED:
            raise GroupNotReadyError(
                f"{self._where()}: placement group {name!r} is {live.state}; Ray is moving or releasing its "
                "bundles, retry later"
            )
        raise PortUnavailableError(
            f"{self._where()}: the port probe in bundle {bundle_idx} of group {name!r} did not finish in "
            f"{self._probe_timeout_s:g}s"
        )
