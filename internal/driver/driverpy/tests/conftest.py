"""Fixtures of the driver's tests: the fake ray (fake_ray.py), the requests Go
builds (testdata/requests.json, TestPytestRequestsCurrent) and drive(), which
runs the driver's main() as the job does and returns what Go would read."""

from __future__ import annotations

import base64
import copy
import json
import os
import signal
import sys
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))  # internal/driver: the driverpy package

import fake_ray  # noqa: E402
from driverpy import main as driver_main  # noqa: E402

TESTDATA = os.path.join(os.path.dirname(__file__), "testdata")


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[fake_ray.Cluster]:
    """Two GPU nodes on two IPs, no groups, an empty KV; ray.init goes to it."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # no direct GCS: always the fake ray
    c = fake_ray.Cluster()
    c.add_node("node-1", "10.0.0.1", {"CPU": 8.0, "GPU": 2.0, "nvlink_domain_a": 1.0, "topo_rank": 1.0})
    c.add_node("node-2", "10.0.0.2", {"CPU": 8.0, "GPU": 2.0, "nvlink_domain_b": 1.0, "topo_rank": 0.0})
    saved = {k: v for k, v in sys.modules.items() if k == "ray" or k.startswith("ray.")}
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    fake_ray.install(c)
    yield c
    for s, h in handlers.items():  # the driver ignores signals once it reports
        signal.signal(s, h)
    for k in [k for k in sys.modules if k == "ray" or k.startswith("ray.")]:
        del sys.modules[k]
    sys.modules.update(saved)


@pytest.fixture
def requests() -> Dict[str, Any]:
    """name -> a request as Go builds it (a fresh copy each test may change)."""
    with open(os.path.join(TESTDATA, "requests.json")) as f:
        return copy.deepcopy(json.load(f))


@dataclass
class Driven:
    """What Go reads of one driver run: its result, progress lines and exit code."""

    result: Dict[str, Any]
    progress: List[Dict[str, Any]] = field(default_factory=list)
    code: int = 0
    output: str = ""

    def phases(self) -> List[str]:
        return [p["phase"] for p in self.progress]


class Exited(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def encode(request: Any) -> str:
    return base64.b85encode(zlib.compress(json.dumps(request).encode())).decode()


@pytest.fixture
def drive(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """drive(request) runs main() on the request (or on a raw argument, given a str)."""

    def run(request: Any) -> Driven:
        arg = request if isinstance(request, str) else encode(request)
        monkeypatch.setattr(sys, "argv", ["-c", arg])

        def exit_(code: int) -> None:
            raise Exited(code)

        monkeypatch.setattr(os, "_exit", exit_)
        capsys.readouterr()
        with pytest.raises(Exited) as exited:
            driver_main.main()
        out = capsys.readouterr().out
        driven = Driven(result={}, code=exited.value.code, output=out)
        for line in out.splitlines():
            tag, _, payload = line.partition(" ")
            if tag == "RAYTF_PROGRESS":
                driven.progress.append(json.loads(payload))
            elif tag == "RAYTF_RESULT":
                driven.result = json.loads(payload)
        assert driven.result, "no RAYTF_RESULT line:\n" + out
        return driven

    return run
