# What one run keeps (Run), the gate a batch closes when stopped, and the
# output lines Go reads (RAYTF_PROGRESS, RAYTF_RESULT).

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Set

from .contract import Contract, DriverError, Json, Spec
from .gcs_direct import GcsDirect


class Run:
    """Everything one driver run keeps: the request's contract and topology
    source, what it created (removed again if it fails), what Go needs to
    explain a failure, and the connections it made."""

    def __init__(self) -> None:
        self.id = ""  # spec.run_id, echoed on every output line
        self.t0 = time.monotonic()
        self.spec: Optional[Spec] = None
        self._contract: Optional[Contract] = None
        self.topo = {"domain_label": "", "rank_label": ""}  # spec.probe.topology
        # Groups created by this run (name -> PlacementGroup), plus names whose
        # placement_group() call was in flight; removed again if the run fails.
        self.created: Dict[str, Any] = {}
        self.inflight: Set[str] = set()
        # Set when a create gives up waiting: the pending group names and the
        # cluster's per-node view, for Go to explain the shortage.
        self.failure: Json = {}
        self.new_record = False  # this run created the record (removed again if it fails)
        self.claim_token = ""  # set once this run reserves; its reservation is released if it fails
        self.reserved: List[str] = []  # KV keys of the reservations this run wrote
        self.lock_key = ""  # the reservation lock, while this run holds it
        self.lock_since = 0.0  # monotonic time this run took the lock
        self.lock_waited = 0.0  # how long it waited for the lock then
        self.alternative = 0  # the 1-based index of the request's alternatives a create took, 0: its first choice
        self.wave: Any = None  # the Wave of a batch's creates this run is one of (wave.py), else None
        self.replaced: Dict[str, Optional[Json]] = {}  # reservation key -> the value this run overwrote
        self.keeping: Optional[threading.Event] = None  # set to stop keep_reservation's renewals
        self.keeping_lock = threading.Lock()
        self.stop_signal: Optional[int] = None
        self.probe_task: Any = None  # the remote version of _probe_in_bundle, made once ray is imported
        self.gcs: Optional[GcsDirect] = None  # the GcsDirect a delete, record or read runs on, when it could connect
        self.gate = Gate()  # shared by the requests of a batch

    @property
    def contract(self) -> Contract:
        """The request's contract constants (set by parse_request)."""
        if self._contract is None:
            raise RuntimeError("the contract is read before the request was parsed")
        return self._contract

    @contract.setter
    def contract(self, c: Contract) -> None:
        self._contract = c


class Gate:
    """Group creation and record writes pass the gate; a stopped batch closes
    it, so its cleanup sees everything the requests still running made."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.closed = False

    def __enter__(self) -> Gate:
        self.lock.acquire()
        if self.closed:
            self.lock.release()
            raise DriverError("internal", "stopped", signal=0)
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def close(self) -> None:
        with self.lock:
            self.closed = True


EMIT_LOCK = threading.Lock()  # a batch's threads print whole lines


def emit(run: Run, tag: str, payload: Json, leading_newline: bool = False) -> None:
    if run.id:
        payload = dict(payload, run_id=run.id)
    line = "%s %s\n" % (tag, json.dumps(payload, sort_keys=True, separators=(",", ":")))
    if leading_newline:
        line = "\n" + line  # never share a line with partial output
    with EMIT_LOCK:
        sys.stdout.write(line)
        sys.stdout.flush()


def progress(run: Run, phase: str, **facts: Any) -> None:
    facts["phase"] = phase
    facts["elapsed"] = round(time.monotonic() - run.t0, 3)
    emit(run, "RAYTF_PROGRESS", facts)
