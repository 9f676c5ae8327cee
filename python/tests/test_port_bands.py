"""The port bands equal the provider's (shared vectors in testdata/port_ranges.json)."""

import json
from pathlib import Path

import pytest

from raytf_attach import ports

VECTORS = json.loads((Path(__file__).parent / "testdata" / "port_ranges.json").read_text())


def test_same_table_as_the_provider():
    assert VECTORS["nemo_rl_commit"] == ports.NEMO_RL_COMMIT
    assert VECTORS["vllm_ports_per_engine"] == ports.VLLM_PORTS_PER_ENGINE
    want = [(r["name"], r["low"], r["high"], r["within"]) for r in VECTORS["ranges"]]
    assert [(name, *band) for name, band in ports.port_ranges().items()] == want


def test_top_level_bands_disjoint_and_nested_bands_inside_parent():
    table = ports.port_ranges()
    top = [b for b in table.values() if not b.within]
    for i, a in enumerate(top):
        for b in top[i + 1:]:
            assert max(a.low, b.low) >= min(a.high, b.high), (a, b)
    for name, band in table.items():
        if band.within:
            parent = table[band.within]
            assert parent.low <= band.low < band.high <= parent.high, name


def test_contains_is_half_open():
    master = ports.PORT_RANGES["master"]
    assert 1400 in master and 1998 in master and 1999 not in master and 1399 not in master


def test_vllm_engine_blocks():
    assert ports.vllm_engine_port_range(0)[:2] == (7000, 7100)
    assert ports.vllm_engine_port_range(19).high == ports.PORT_RANGES["vllm"].high
    with pytest.raises(ValueError):
        ports.vllm_engine_port_range(-1)


def test_copy_is_independent():
    ports.port_ranges().clear()
    assert ports.PORT_RANGES["gym"] == (5000, 5999, "")
