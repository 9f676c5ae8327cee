# A wave: the creates one batch carries reserve what they all ask in one
# hold of the lock, each checked against every other reservation and the
# wave's members before it (as one request, in the batch's order: a member
# that does not fit fails as it would alone, naming the holders, siblings
# included). The clusters Ray places then settle where Ray put them in one
# more hold. Members meet at each step (Meeting) and go on as their hold
# ends: none waits for a sibling's pending reservation, nor for a sibling
# that waits for another state's, and no hold waits for Ray.

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

from .contract import DriverError, Json, Spec
from .rayapi import RAY
from .reservations import Seen, drop_lock, place_locked, reservation, reserve_locked, take_lock, wait_placed
from .runstate import Gate, Run

Served = Dict[int, Optional[BaseException]]  # member -> its error (None: done)
Member = Tuple[int, Run, Spec, Any]  # index, run, request, what its step needs


class Meeting:
    """Members (by index) meet, each with a payload. Once every member
    still expected has arrived, or bound seconds after the first arrived,
    the thread that sees it serves every member arrived in one hold
    (one_hold with step), and each gets its outcome as the hold ends. A
    member step left waiting meets again for a later hold; one that fails
    or finishes leaves, so nobody waits for it."""

    def __init__(self, members: List[int], step: Callable[[Member, Seen], bool], bound: float) -> None:
        self.cond = threading.Condition()
        self.expected = set(members)
        self.arrived: Dict[int, Member] = {}
        self.outcomes: Dict[int, Any] = {}  # None: served, False: waits, else its error
        self.step, self.bound = step, bound
        self.serving = False
        self.first = 0.0

    def leave(self, i: int) -> None:
        with self.cond:
            self.expected.discard(i)
            self.cond.notify_all()

    def meet(self, i: int, payload: Member, gate: Gate) -> bool:
        """True once member i was served, False when it waits; raises its error."""
        with self.cond:
            if not self.arrived:
                self.first = time.monotonic()
            self.arrived[i] = payload
            self.cond.notify_all()
            while i not in self.outcomes:
                if gate.closed:  # stopped: the batch undoes every member
                    raise DriverError("internal", "stopped", signal=0)
                if not self.serving and self.arrived and (
                        self.expected <= set(self.arrived) or time.monotonic() - self.first >= self.bound):
                    self.serve_round()
                    continue
                self.cond.wait(0.1)
            out = self.outcomes.pop(i)
        if isinstance(out, BaseException):
            raise out
        return out is None

    def serve_round(self) -> None:
        """Serves the members arrived, the condition released meanwhile."""
        batch = sorted(self.arrived.items())
        self.arrived.clear()
        self.serving = True
        self.cond.release()
        out: Served = {}
        try:
            try:
                one_hold([m for _, m in batch], self.step, out)
            except BaseException as e:  # noqa: BLE001
                out = {j: e for j, _ in batch}
        finally:
            self.cond.acquire()
            self.serving = False
        self.expected -= set(out)
        for j, _ in batch:
            self.outcomes[j] = out.get(j, False)
        self.cond.notify_all()


def owned(spec: Spec) -> Tuple[Json, Json]:
    """A member's reservation and ownership (form_wave admits only creates with both)."""
    return cast(Json, reservation(spec)), cast(Json, spec["own"])


class Wave:
    """The creates of one batch that reserve (ops, in the batch's order)."""

    def __init__(self, ops: List[Run]) -> None:
        self.index = {id(op): i for i, op in enumerate(ops)}
        resvs = [cast(Json, reservation(cast(Spec, op.spec))) for op in ops]
        siblings = {str(r["cluster"]) for r in resvs}
        bound = float(ops[0].contract.gather_seconds)
        # The nodes each member chose: a member's alternative never takes a sibling's.
        asks = [set(r["nodes"] or {}) for r in resvs]
        self.reserving = Meeting(list(range(len(ops))), lambda m, seen: reserve_locked(
            m[1], m[2], *owned(m[2]), m[3], seen, siblings, set().union(*(a for j, a in enumerate(asks) if j != m[0]))), bound)
        self.placing = Meeting([i for i, r in enumerate(resvs) if r["nodes"] is None],
                               lambda m, seen: place_locked(m[1], m[2], m[3][0], m[3][1], seen), bound)
        # Who makes its groups first: clusters pinned to their nodes (0), then those Ray places inside
        # their chosen nodes' domains (1), then those Ray places anywhere (2). A member's groups are
        # noted once made; its event is set once it ended.
        self.tier = [tier(cast(Spec, op.spec)) for op in ops]
        self.groups: List[List[Any]] = [[] for _ in ops]
        self.ended = [threading.Event() for _ in ops]

    def reserve(self, run: Run, spec: Spec) -> None:
        """Meets the others for a hold: each reserves in turn on what the
        hold read and what the members before it wrote, and goes on as the
        hold ends. One that must wait for another state's reservation meets
        again retry_seconds later (no lock held) until its wait ends."""
        i = self.index[id(run)]
        deadline = time.time() + min(float(spec["timeout"]), float(run.contract.pending_wait_seconds))
        while not self.reserving.meet(i, (i, run, spec, time.time() > deadline), run.gate):
            time.sleep(run.contract.retry_seconds)

    def wait_for_pinned(self, run: Run, spec: Spec) -> None:
        """A cluster whose nodes Ray picks makes its groups once the wave's
        clusters of an earlier tier have theirs placed (Ray would otherwise
        be free to put it on what they reserved), at most pending_wait_seconds:
        placed, not ready (a worker started in each), so that a member Ray
        places holds its placing reservation no longer than it must."""
        mine = self.tier[self.index[id(run)]]
        deadline = time.time() + min(float(spec["timeout"]), float(run.contract.pending_wait_seconds))
        for t, ended, groups in zip(self.tier, self.ended, self.groups):
            k = 0  # groups[:k] are placed: each asked about until it is, once
            while t < mine and not ended.wait(0.1) and time.time() < deadline and not 0 < k == len(groups):
                while k < len(groups) and RAY.placement_group_table(groups[k]).get("state") == run.contract.state_created:
                    k += 1
                if run.gate.closed:
                    raise DriverError("internal", "stopped", signal=0)

    def place(self, run: Run, spec: Spec, groups: List[Any]) -> None:
        """Once the member's groups exist: place_reserved for a wave, which
        waits for Ray alone and settles with the others in one hold."""
        resv, own = owned(spec)
        i = self.index[id(run)]
        self.groups[i].extend(groups)
        if resv["nodes"] is None:
            self.placing.meet(i, (i, run, spec, (groups, wait_placed(run, resv, own, groups))), run.gate)

    def done(self, run: Run) -> None:
        """The member's create ended: nobody waits for it any more."""
        i = self.index[id(run)]
        self.reserving.leave(i)
        self.placing.leave(i)
        self.ended[i].set()


def tier(spec: Spec) -> int:
    """Wave.tier of a member."""
    resv, own = owned(spec)
    if resv["nodes"] is None:
        return 2
    return 1 if (own.get("manifest") or {}).get("pinning") == "domain" else 0


def one_hold(todo: List[Member], step: Callable[[Member, Seen], bool], out: Served) -> List[int]:
    """One hold of the lock (the first member's run holds it) for todo, one
    read of what it holds: step(member) in turn, each member's error its
    own. Returns the members step left waiting (False), which get no outcome."""
    lead, spec = todo[0][1], todo[0][2]
    resv, own = owned(spec)
    try:
        take_lock(lead, own, resv, min([float(lead.contract.lock_wait_seconds)] + [float(m[2]["timeout"]) for m in todo]))
    except DriverError:  # busy: each fails as it would alone
        for m in todo:
            out[m[0]] = DriverError("conflict", "nodes_claimed", cluster=cast(Json, reservation(m[2]))["cluster"], holders=[], claimed=[])
        return []
    waiting: List[int] = []
    try:
        seen = Seen(lead, own, resv["prefix"])
        for m in todo:
            try:
                if not step(m, seen):
                    waiting.append(m[0])
            except Exception as e:  # noqa: BLE001
                out[m[0]] = e
    except Exception as e:  # noqa: BLE001
        waiting = []
        for m in todo:
            out.setdefault(m[0], e)
    finally:
        drop_lock(lead, own, len(todo))
    for m in todo:
        if m[0] not in waiting:
            out.setdefault(m[0], None)
    return waiting


def form_wave(ops: List[Run]) -> None:
    """Sets the wave of a batch's creates that reserve, when two or more
    share one lock (one provider's)."""
    members = [op for op in ops if op.spec and op.spec["action"] == "create" and op.spec["own"] and reservation(op.spec)]
    locks = {(owned(m.spec)[1]["kv_namespace"], owned(m.spec)[0]["lock_key"]) for m in members if m.spec}
    if len(members) > 1 and len(locks) == 1:
        wave = Wave(members)
        for op in members:
            op.wave = wave
