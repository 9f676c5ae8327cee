"""The one fake ray the driver is tested with (pytest here, and the Go tests
that run the joined driver): the modules and calls driverpy uses, over an
in-memory cluster of nodes, named placement groups and an internal KV.

install(cluster) puts the modules into sys.modules; a Go test runs
`import fake_ray; fake_ray.install_from_env()` before the driver's bootstrap.
"""

from __future__ import annotations

import json
import os
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple


class RayError(Exception):
    pass


class TaskPlacementGroupRemoved(RayError):
    """What ray.get of a group's ready() raises once the group was removed."""


class GroupId:
    def __init__(self, n: int) -> None:
        self.binary = ("pg%04d" % n).encode()

    def hex(self) -> str:
        return self.binary.hex()


class Ref:
    """An object ref: a group's ready() or a task's return value."""

    def __init__(self, group: Optional["Group"] = None, value: Any = None) -> None:
        self.group, self.value = group, value

    def done(self) -> bool:
        return self.group is None or self.group.state in ("CREATED", "REMOVED")


class Group:
    def __init__(self, cluster: "Cluster", name: str, bundles: List[Dict[str, float]], strategy: str, detached: bool) -> None:
        cluster.serial += 1
        self.id = GroupId(cluster.serial)
        self.name, self.bundles, self.strategy, self.detached = name, bundles, strategy, detached
        self.state = "PENDING"
        self.scheduling_state = "QUEUED"
        self.namespace = cluster.namespace
        self.nodes: Dict[int, str] = {}  # bundle index -> node id
        self.label_selector: Any = None  # as created; the fake places by resources alone

    def ready(self) -> Ref:
        return Ref(group=self)


class Cluster:
    """Nodes, groups and KV of a fake cluster. Tests change it directly, or
    through the hooks: on_wait runs on every ray.wait (e.g. to remove a group
    while a create waits for it)."""

    def __init__(self) -> None:
        self.nodes: Dict[str, Dict[str, Any]] = {}  # node id -> ip, resources, labels
        self.groups: List[Group] = []
        self.kv: Dict[Tuple[str, str], bytes] = {}  # (namespace, key) -> value
        self.serial = 0
        self.version = "fake"
        self.init_error: Optional[str] = None
        self.inits: List[Dict[str, Any]] = []
        self.on_wait: Optional[Callable[["Cluster"], None]] = None
        self.context: Dict[str, Any] = {}  # the running task's node and GPU ids
        self.namespace = "terraform-ray"  # ray.init's, given to the groups created after it

    def add_node(self, node_id: str, ip: str, resources: Dict[str, float], labels: Optional[Dict[str, str]] = None) -> None:
        self.nodes[node_id] = {"ip": ip, "resources": dict(resources), "labels": dict(labels or {})}

    # --- placement

    def free(self) -> Dict[str, Dict[str, float]]:
        free = {nid: dict(n["resources"]) for nid, n in self.nodes.items()}
        for g in self.groups:
            if g.state != "CREATED":
                continue
            for i, b in enumerate(g.bundles):
                for k, v in b.items():
                    free[g.nodes[i]][k] = free[g.nodes[i]].get(k, 0.0) - v
        return free

    def schedule(self) -> None:
        """Places every pending group whose bundles fit, each bundle on the
        first node (in id order) with room: enough for the tests' questions."""
        for g in self.groups:
            if g.state != "PENDING":
                continue
            free = self.free()
            placed: Dict[int, str] = {}
            for i, b in enumerate(g.bundles):
                for nid in sorted(free):
                    if all(free[nid].get(k, 0.0) >= v for k, v in b.items()):
                        for k, v in b.items():
                            free[nid][k] -= v
                        placed[i] = nid
                        break
            if len(placed) == len(g.bundles):
                g.state, g.nodes = "CREATED", placed
            else:
                fits = all(any(all(n["resources"].get(k, 0.0) >= v for k, v in b.items()) for n in self.nodes.values())
                           for b in g.bundles)
                g.scheduling_state = "NO_RESOURCES" if fits else "INFEASIBLE"

    def live(self, name: str) -> Optional[Group]:
        for g in self.groups:
            if g.name == name and g.state != "REMOVED":
                return g
        return None

    def remove(self, g: Group) -> None:
        g.state = "REMOVED"
        self.schedule()

    def table(self, g: Group) -> Dict[str, Any]:
        return {"placement_group_id": g.id.hex(), "name": g.name, "state": g.state, "strategy": g.strategy,
                "bundles": {i: dict(b) for i, b in enumerate(g.bundles)},
                "bundles_to_node_id": dict(g.nodes), "stats": {"scheduling_state": g.scheduling_state}}

    # --- internal KV (keys and values as Ray's _internal_kv_* take them)

    def kv_value(self, key: str, namespace: str = "") -> Optional[Dict[str, Any]]:
        raw = self.kv.get((namespace, key))
        return json.loads(raw) if raw is not None else None

    def kv_set(self, key: str, value: Dict[str, Any], namespace: str = "") -> None:
        self.kv[(namespace, key)] = json.dumps(value).encode()


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def modules(cluster: Cluster) -> Dict[str, types.ModuleType]:
    """The fake ray's modules over cluster, by import name."""
    ray = types.ModuleType("ray")
    util = types.ModuleType("ray.util")
    pg_mod = types.ModuleType("ray.util.placement_group")
    strategies = types.ModuleType("ray.util.scheduling_strategies")
    experimental = types.ModuleType("ray.experimental")
    kv = types.ModuleType("ray.experimental.internal_kv")
    exceptions = types.ModuleType("ray.exceptions")
    private = types.ModuleType("ray._private")
    state = types.ModuleType("ray._private.state")

    ray.__version__ = cluster.version
    ray.util, ray.experimental, ray.exceptions, ray._private = util, experimental, exceptions, private
    util.placement_group, util.scheduling_strategies = pg_mod, strategies
    experimental.internal_kv = kv
    private.state = state
    exceptions.RayError = RayError

    def init(namespace: str = "", **kwargs: Any) -> None:
        if cluster.init_error is not None:
            raise ConnectionError(cluster.init_error)
        cluster.inits.append(dict(kwargs, namespace=namespace))
        cluster.namespace = namespace or cluster.namespace

    def nodes() -> List[Dict[str, Any]]:
        return [{"NodeID": nid, "Alive": True, "NodeManagerAddress": n["ip"], "Resources": dict(n["resources"]),
                 "Labels": dict(n["labels"])} for nid, n in sorted(cluster.nodes.items())]

    def wait(refs: List[Ref], num_returns: int = 1, timeout: Optional[float] = None) -> Tuple[List[Ref], List[Ref]]:
        if cluster.on_wait is not None:
            cluster.on_wait(cluster)
        cluster.schedule()
        ready = [r for r in refs if r.done()][:num_returns]
        return ready, [r for r in refs if r not in ready]

    def get(ref: Ref) -> Any:
        if ref.group is not None and ref.group.state == "REMOVED":
            raise TaskPlacementGroupRemoved("placement group %s was removed" % ref.group.name)
        return ref.value

    class RemoteFunction:
        def __init__(self, fn: Callable[..., Any], options: Dict[str, Any]) -> None:
            self.fn, self.opts = fn, options

        def options(self, **options: Any) -> "RemoteFunction":
            return RemoteFunction(self.fn, dict(self.opts, **options))

        def remote(self, *args: Any) -> Ref:
            strategy = self.opts["scheduling_strategy"]
            g, index = strategy.placement_group, strategy.placement_group_bundle_index
            node = g.nodes[index]
            gpus = [index] if self.opts.get("num_gpus") else []
            cluster.context = {"node_id": node, "gpu_ids": gpus}
            try:
                return Ref(value=self.fn(*args))
            finally:
                cluster.context = {}

    def remote(*args: Any, **options: Any) -> Any:
        if args and callable(args[0]):
            return RemoteFunction(args[0], {})
        return lambda fn: RemoteFunction(fn, options)

    class RuntimeContext:
        @staticmethod
        def get_node_id() -> str:
            return str(cluster.context["node_id"])

    ray.init, ray.nodes, ray.wait, ray.get, ray.remote = init, nodes, wait, get, remote
    ray.cancel = lambda ref, force=False: None
    ray.get_gpu_ids = lambda: list(cluster.context.get("gpu_ids", []))
    ray.get_runtime_context = RuntimeContext
    util.get_node_ip_address = lambda: cluster.nodes[cluster.context["node_id"]]["ip"]
    state.available_resources_per_node = cluster.free

    class PlacementGroupSchedulingStrategy:
        def __init__(self, placement_group: Group, placement_group_bundle_index: int = -1) -> None:
            self.placement_group, self.placement_group_bundle_index = placement_group, placement_group_bundle_index

    strategies.PlacementGroupSchedulingStrategy = PlacementGroupSchedulingStrategy

    def placement_group(bundles: List[Dict[str, float]], strategy: str = "PACK", name: str = "", lifetime: Optional[str] = None,
                        **kwargs: Any) -> Group:
        if name and cluster.live(name) is not None:
            raise ValueError("Failed to create placement group '%s' because name already exists." % name)
        g = Group(cluster, name, [dict(b) for b in bundles], strategy, lifetime == "detached")
        g.label_selector = kwargs.get("bundle_label_selector")
        cluster.groups.append(g)
        cluster.schedule()
        return g

    def get_placement_group(name: str) -> Group:
        g = cluster.live(name)
        if g is None:
            raise ValueError("Failed to look up placement group with name: %s" % name)
        return g

    def placement_group_table(g: Optional[Group] = None) -> Dict[str, Any]:
        if g is None:
            return {x.id.hex(): cluster.table(x) for x in cluster.groups}
        return cluster.table(g)

    pg_mod.placement_group, pg_mod.get_placement_group = placement_group, get_placement_group
    pg_mod.placement_group_table, pg_mod.remove_placement_group = placement_group_table, cluster.remove

    def kv_get(key: Any, namespace: Any = None) -> Optional[bytes]:
        return cluster.kv.get((_text(namespace or ""), _text(key)))

    def kv_put(key: Any, value: Any, overwrite: bool = True, namespace: Any = None) -> bool:
        k = (_text(namespace or ""), _text(key))
        existed = k in cluster.kv
        if overwrite or not existed:
            cluster.kv[k] = value.encode() if isinstance(value, str) else value
        return existed

    def kv_del(key: Any, del_by_prefix: bool = False, namespace: Any = None) -> int:
        return 1 if cluster.kv.pop((_text(namespace or ""), _text(key)), None) is not None else 0

    def kv_list(prefix: Any, namespace: Any = None) -> List[bytes]:
        ns = _text(namespace or "")
        return [k.encode() for n, k in sorted(cluster.kv) if n == ns and k.startswith(_text(prefix))]

    kv._internal_kv_get, kv._internal_kv_put, kv._internal_kv_del, kv._internal_kv_list = kv_get, kv_put, kv_del, kv_list
    # The GCS's own table (with each group's namespace), as ray._private.state reads it: serialized
    # PlacementGroupTableData, here JSON that the fake gcs_pb2 decodes.
    core = types.ModuleType("ray.core")
    generated = types.ModuleType("ray.core.generated")
    gcs_pb2 = types.ModuleType("ray.core.generated.gcs_pb2")
    ray.core, core.generated, generated.gcs_pb2 = core, generated, gcs_pb2
    states = ["PENDING", "PREPARED", "CREATED", "REMOVED", "RESCHEDULING"]

    class PlacementGroupTableData:
        class PlacementGroupState:
            @staticmethod
            def Name(n: int) -> str:
                return states[n]

        @staticmethod
        def FromString(raw: bytes) -> Any:
            d = json.loads(raw)
            # node_id.hex() gives the fake's node id back (Ray's are bytes).
            return types.SimpleNamespace(placement_group_id=bytes.fromhex(d["id"]), name=d["name"], ray_namespace=d["namespace"],
                                         state=states.index(d["state"]),
                                         bundles=[types.SimpleNamespace(unit_resources=b, node_id=types.SimpleNamespace(hex=lambda n=n: n))
                                                  for b, n in zip(d["bundles"], d["nodes"])])

    gcs_pb2.PlacementGroupTableData = PlacementGroupTableData

    class Accessor:
        @staticmethod
        def get_placement_group_table() -> List[bytes]:
            return [json.dumps({"id": g.id.hex(), "name": g.name, "namespace": g.namespace, "state": g.state, "bundles": g.bundles,
                                "nodes": [g.nodes.get(i, "") for i in range(len(g.bundles))]}).encode() for g in cluster.groups]

    state.state = types.SimpleNamespace(_connect_and_get_accessor=Accessor)
    return {m.__name__: m for m in (ray, util, pg_mod, strategies, experimental, kv, exceptions, private, state, core, generated,
                                    gcs_pb2)}


def install(cluster: Cluster) -> None:
    sys.modules.update(modules(cluster))


def install_from_env() -> Cluster:
    """For the Go tests: a cluster with no nodes, whose ray.init fails with
    RAYTF_FAKE_RAY_INIT_ERROR when that is set."""
    cluster = Cluster()
    cluster.version = "stub"
    cluster.init_error = os.environ.get("RAYTF_FAKE_RAY_INIT_ERROR")
    install(cluster)
    return cluster
