"""NeMo-RL's default port bands, half-open [low, high), as the provider's port_ranges() returns them.

The table follows nemo_rl/distributed/virtual_cluster.py at NEMO_RL_COMMIT. The
provider keeps the same table in Go (internal/topology); both are tested
against tests/testdata/port_ranges.json.
"""

from __future__ import annotations

from typing import NamedTuple

from .reference import NEMO_RL_COMMIT

__all__ = ["NEMO_RL_COMMIT", "PORT_RANGES", "VLLM_PORTS_PER_ENGINE", "PortRange", "port_ranges", "vllm_engine_port_range"]


class PortRange(NamedTuple):
    """One band: ports low <= p < high; within names the band it is carved out of ("" for none)."""

    low: int
    high: int
    within: str = ""

    def __contains__(self, port: object) -> bool:  # type: ignore[override]
        return isinstance(port, int) and self.low <= port < self.high


# In port order. The Dynamo bands lie inside "generation" and the SGLang bands
# inside "vllm": the reference runs one generation backend at a time.
PORT_RANGES: dict[str, PortRange] = {
    "dynamo_control": PortRange(1313, 1400),
    "master": PortRange(1400, 1999),
    "generation": PortRange(3000, 4999),
    "dynamo_http": PortRange(3000, 4000, "generation"),
    "dynamo_system": PortRange(4000, 4100, "generation"),
    "gym": PortRange(5000, 5999),
    "generation_router": PortRange(6000, 6099),
    "vllm": PortRange(7000, 9000),
    "sglang_router": PortRange(8600, 8799, "vllm"),
    "sglang_prometheus": PortRange(8800, 8999, "vllm"),
}
VLLM_PORTS_PER_ENGINE = 100


def port_ranges() -> dict[str, PortRange]:
    """A copy of PORT_RANGES (the provider function provider::ray::port_ranges())."""
    return dict(PORT_RANGES)


def vllm_engine_port_range(engine_index: int) -> PortRange:
    """vLLM engine i's rendezvous block [7000 + i*100, 7000 + (i+1)*100)."""
    if engine_index < 0:
        raise ValueError(f"engine_index must be >= 0, got {engine_index}")
    low = PORT_RANGES["vllm"].low + engine_index * VLLM_PORTS_PER_ENGINE
    return PortRange(low, low + VLLM_PORTS_PER_ENGINE, "vllm")
