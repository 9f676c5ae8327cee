# The GCS without ray: the few calls a delete, record or read needs, over
# gRPC with the stubs Ray ships (no `import ray`, no ray.init).

from __future__ import annotations

import os
import sys
from typing import Any, List, Optional, Tuple, cast

from .contract import DriverError, Json


GENERATED = "_raytf_ray_generated"  # Ray's generated gRPC modules, loaded without ray/__init__
STATUS_OK, STATUS_NOT_FOUND = 0, 17  # ray::StatusCode


class GcsDirect:
    """The few GCS calls a delete or record needs, over gRPC with the stubs Ray ships,
    without importing ray (about a second) or ray.init (registering a
    driver). Used only when its first call works; otherwise the driver
    falls back to ray.init (e.g. an authentication it cannot present)."""

    def __init__(self, address: str, namespace: str, state_removed: str, call_seconds: float) -> None:
        import importlib
        import importlib.util
        import types

        root = cast(Any, importlib.util.find_spec("ray")).submodule_search_locations[0]
        if GENERATED not in sys.modules:
            pkg = types.ModuleType(GENERATED)
            pkg.__path__ = [os.path.join(root, "core", "generated")]
            sys.modules[GENERATED] = pkg
        import grpc

        stubs = importlib.import_module(GENERATED + ".gcs_service_pb2_grpc")
        self.pb = importlib.import_module(GENERATED + ".gcs_service_pb2")
        self.states = importlib.import_module(GENERATED + ".gcs_pb2").PlacementGroupTableData.PlacementGroupState
        channel = grpc.insecure_channel(address)
        self.kv = stubs.InternalKVGcsServiceStub(channel)
        self.pg = stubs.PlacementGroupInfoGcsServiceStub(channel)
        self.namespace = namespace
        self.state_removed = state_removed
        self.call_seconds = call_seconds
        self.metadata = auth_metadata()
        self.version = installed_ray_version()

    def call(self, method: Any, request: Any) -> Any:
        reply = method(request, timeout=self.call_seconds, metadata=self.metadata)
        if reply.status.code not in (STATUS_OK, STATUS_NOT_FOUND):
            raise DriverError("internal", "gcs_status", status=reply.status.code, detail=reply.status.message)
        return reply

    def kv_get(self, key: str, ns: str) -> Optional[bytes]:
        reply = self.call(self.kv.InternalKVGet, self.pb.InternalKVGetRequest(key=key.encode(), namespace=ns.encode()))
        return reply.value if reply.status.code == STATUS_OK else None

    def kv_put(self, key: str, value: str, ns: str) -> None:
        self.call(self.kv.InternalKVPut, self.pb.InternalKVPutRequest(
            key=key.encode(), value=value.encode(), overwrite=True, namespace=ns.encode()))

    def kv_del(self, key: str, ns: str) -> None:
        self.call(self.kv.InternalKVDel, self.pb.InternalKVDelRequest(key=key.encode(), namespace=ns.encode()))

    def kv_keys(self, prefix: str, ns: str) -> List[bytes]:
        reply = self.call(self.kv.InternalKVKeys, self.pb.InternalKVKeysRequest(prefix=prefix.encode(), namespace=ns.encode()))
        return list(reply.results)

    def find(self, name: str) -> Optional[bytes]:
        reply = self.call(self.pg.GetNamedPlacementGroup, self.pb.GetNamedPlacementGroupRequest(
            name=name, ray_namespace=self.namespace))
        if not reply.HasField("placement_group_table_data"):
            return None
        data = reply.placement_group_table_data
        if not data.placement_group_id or self.states.Name(data.state) == self.state_removed:
            return None
        return data.placement_group_id

    def all_groups(self) -> List[Json]:
        """Every group of the GCS's table, with its namespace (quotas.group_of)."""
        reply = self.call(self.pg.GetAllPlacementGroup, self.pb.GetAllPlacementGroupRequest())
        return [group_of(d, self.states.Name(d.state)) for d in reply.placement_group_table_data]

    def remove(self, pg_id: bytes) -> None:
        self.call(self.pg.RemovePlacementGroup, self.pb.RemovePlacementGroupRequest(placement_group_id=pg_id))

    def removed(self, pg_id: bytes) -> bool:
        reply = self.call(self.pg.GetPlacementGroup, self.pb.GetPlacementGroupRequest(placement_group_id=pg_id))
        return (not reply.HasField("placement_group_table_data")
                or self.states.Name(reply.placement_group_table_data.state) == self.state_removed)


def group_of(data: Any, state_name: str) -> Json:
    """One group of the GCS's table (PlacementGroupTableData) with its namespace,
    which placement_group_table() leaves out, and each bundle's node ("" while
    unplaced)."""
    return {"id": data.placement_group_id.hex(), "name": data.name, "namespace": data.ray_namespace, "state": state_name,
            "bundles": [dict(b.unit_resources) for b in data.bundles], "nodes": [b.node_id.hex() for b in data.bundles]}


def auth_metadata() -> Tuple[Tuple[str, str], ...]:
    """The token Ray's token authentication expects, from where ray would read it."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return ()
    token = os.environ.get("RAY_AUTH_TOKEN", "").strip()
    if not token:
        path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
        with open(path) as f:
            token = f.read().strip()
    if not token:
        raise ValueError("token authentication without a token")
    return (("authorization", "Bearer " + token),)


def installed_ray_version() -> str:
    """Ray's version from its package metadata, without importing ray; "" when
    ray is importable but not installed as a distribution (e.g. on PYTHONPATH)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ray")
    except PackageNotFoundError:
        return ""
