"""A fake pynvml (nvidia-ml-py) serving the GPUs of the recorded nvidia-smi -q outputs: the calls
raytf-node-topology makes, with NVML's own values (states, return codes, struct versions)."""

from __future__ import annotations

import ctypes
import uuid
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Optional

NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_UNKNOWN = 999
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25
NVML_ERROR_INSUFFICIENT_RESOURCES = 23
NOT_SUPPORTED, NOT_STARTED, IN_PROGRESS, COMPLETED = 0, 1, 2, 3  # nvmlGpuFabricState_t
HEALTHY, UNHEALTHY, LIMITED_CAPACITY = 1, 2, 3  # NVML_GPU_FABRIC_HEALTH_SUMMARY_*


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value


_V2_FIELDS = [("version", ctypes.c_uint), ("clusterUuid", ctypes.c_uint8 * 16), ("status", ctypes.c_uint),
              ("cliqueId", ctypes.c_uint32), ("state", ctypes.c_uint), ("healthMask", ctypes.c_uint32)]


class c_nvmlGpuFabricInfo_v2_t(ctypes.Structure):  # noqa: N801 (pynvml's name)
    _fields_ = _V2_FIELDS

    def __init__(self) -> None:
        super().__init__(version=0x02000024)


class c_nvmlGpuFabricInfo_v3_t(ctypes.Structure):  # noqa: N801
    _fields_ = _V2_FIELDS + [("healthSummary", ctypes.c_uint8)]

    def __init__(self) -> None:
        super().__init__(version=0x3000028)


@dataclass
class Gpu:
    bus_id: str
    state: int = COMPLETED
    status: int = NVML_SUCCESS
    clique: int = 0
    cluster: str = "00000000-0000-0000-0000-000000000000"
    summary: Optional[int] = None  # None: the driver predates the health summary (struct v2 only)
    no_fabric: bool = False  # nvmlDeviceGetGpuFabricInfoV answers NOT_SUPPORTED
    health: int = 0  # NVML_GPU_FABRIC_HEALTH_MASK_*: 0 reports nothing (N/A)


class FakeNvml:
    """The module: NVMLError, the structs, constants, and the calls on the GPUs given."""

    NVMLError = NVMLError
    c_nvmlGpuFabricInfo_v2_t = c_nvmlGpuFabricInfo_v2_t
    c_nvmlGpuFabricInfo_v3_t = c_nvmlGpuFabricInfo_v3_t
    NVML_SUCCESS = NVML_SUCCESS
    NVML_ERROR_NOT_SUPPORTED = NVML_ERROR_NOT_SUPPORTED
    NVML_ERROR_FUNCTION_NOT_FOUND = NVML_ERROR_FUNCTION_NOT_FOUND
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = NVML_ERROR_ARGUMENT_VERSION_MISMATCH

    def __init__(self, gpus: list[Gpu], fail_on: str = "") -> None:
        self.gpus = gpus
        self.fail_on = fail_on  # a call that raises NVMLError(UNKNOWN)
        self.calls: list[str] = []

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name == self.fail_on:
            raise NVMLError(NVML_ERROR_UNKNOWN)

    def nvmlInit(self) -> None:  # noqa: N802
        self._call("nvmlInit")

    def nvmlShutdown(self) -> None:  # noqa: N802
        self._call("nvmlShutdown")

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        self._call("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> Gpu:  # noqa: N802
        self._call("nvmlDeviceGetHandleByIndex")
        return self.gpus[i]

    def nvmlDeviceGetPciInfo(self, gpu: Gpu) -> SimpleNamespace:  # noqa: N802
        self._call("nvmlDeviceGetPciInfo")
        return SimpleNamespace(busId=gpu.bus_id.encode())

    def nvmlErrorString(self, code: int) -> bytes:  # noqa: N802
        return {NVML_ERROR_INSUFFICIENT_RESOURCES: b"Insufficient Resources"}.get(code, b"Unknown Error")

    def nvmlDeviceGetGpuFabricInfoV(self, gpu: Gpu, ref) -> int:  # noqa: N802
        self._call("nvmlDeviceGetGpuFabricInfoV")
        info = ref._obj
        if gpu.no_fabric:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        if isinstance(info, c_nvmlGpuFabricInfo_v3_t) and gpu.summary is None:
            raise NVMLError(NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
        info.state, info.healthMask = gpu.state, gpu.health
        if gpu.state == COMPLETED:  # before that, NVML leaves these zero
            info.status, info.cliqueId = gpu.status, gpu.clique
            info.clusterUuid = (ctypes.c_uint8 * 16)(*uuid.UUID(gpu.cluster).bytes)
        if isinstance(info, c_nvmlGpuFabricInfo_v3_t):
            info.healthSummary = gpu.summary
        return NVML_SUCCESS


GB200_BUSES = ["00000008:01:00.0", "00000009:01:00.0", "00000018:01:00.0", "00000019:01:00.0"]
H100_BUSES = ["00000000:18:00.0", "00000000:2A:00.0"]
GB200_CLUSTER, GB200_CLIQUE = "5f0c2a9e-7d41-4b8e-9a36-1c2e7b9d4f10", 32766


# Health masks as nvidia-smi -q prints them: every field healthy (Bandwidth Full, the three flags False,
# Incorrect Configuration None), Route Unhealthy True, Bandwidth Degraded.
HEALTHY_MASK = 2 | 2 << 2 | 2 << 4 | 2 << 6 | 1 << 8
ROUTE_UNHEALTHY_MASK = 2 | 2 << 2 | 1 << 4 | 2 << 6 | 1 << 8
DEGRADED_MASK = 1 | 2 << 2 | 2 << 4 | 2 << 6 | 1 << 8


def gb200(**kw) -> list[Gpu]:
    kw.setdefault("health", HEALTHY_MASK)
    return [Gpu(b, clique=GB200_CLIQUE, cluster=GB200_CLUSTER, **kw) for b in GB200_BUSES]


# The GPUs of each recorded output (testdata/nvidia-smi), as NVML reports them.
FIXTURES = {
    "gb200-nvl72.txt": lambda: gb200(),
    "gb200-unhealthy.txt": lambda: [Gpu(b, clique=GB200_CLIQUE, cluster=GB200_CLUSTER,
                                        summary=UNHEALTHY if b == "00000018:01:00.0" else HEALTHY,
                                        health=ROUTE_UNHEALTHY_MASK if b == "00000018:01:00.0" else HEALTHY_MASK)
                                    for b in GB200_BUSES],
    "gb200-degraded.txt": lambda: [Gpu(b, clique=GB200_CLIQUE, cluster=GB200_CLUSTER,
                                       health=DEGRADED_MASK if b == "00000018:01:00.0" else HEALTHY_MASK)
                                   for b in GB200_BUSES],
    "gb200-in-progress.txt": lambda: gb200(state=IN_PROGRESS),
    "h100-fabric-not-supported.txt": lambda: [Gpu(b, state=NOT_SUPPORTED) for b in H100_BUSES],
    "h100-no-fabric.txt": lambda: [Gpu(b, no_fabric=True) for b in H100_BUSES],
    "no-gpu.txt": lambda: [],
}
