"""raytf_attach follows the provider's live-match rule: the vectors are shared
with Go (internal/drift/match_test.go) through testdata/live_match.json."""

import json
from pathlib import Path

import pytest

from raytf_attach.cluster import live_mismatches
from raytf_attach.ray_layer import LiveGroup

VECTORS = json.loads((Path(__file__).parent / "testdata" / "live_match.json").read_text())


def spell(m: tuple) -> str:
    return f"moved:{m[1]}" if m[0] == "moved" else m[0]


@pytest.mark.parametrize("case", VECTORS["groups"], ids=lambda c: c["name"])
def test_live_match_vectors(case):
    rec = case["record"]
    nodes = {int(k): v for k, v in rec["bundle_nodes"].items()}
    # Ray has one live group per name; the vector's group with the recorded id when there is one.
    live = [l for l in case["live"] if l["id"] == rec["id"]] or case["live"]
    found = None
    if live:
        l = live[0]
        found = LiveGroup(handle=None, id=l["id"], name=case["name"], state=l["state"],
                          bundle_count=len(l["bundle_nodes"]),
                          bundle_nodes={int(k): v for k, v in l["bundle_nodes"].items()})
    count = rec["bundle_count"]
    assert [spell(m) for m in live_mismatches(rec["id"], count, nodes, found)] == case["want"]
