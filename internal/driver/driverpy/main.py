# terraform-provider-ray placement-group driver.
#
# Runs as a Ray job: python -c '<bootstrap>' <base85(zlib(json spec))>, the modules
# of this package joined into one script (internal/driver/source.go).
# Creates, inspects or deletes detached, named placement groups (or only
# reads a cluster's record, for the ray_virtual_cluster data source) and reports
# back through its stdout (the job logs):
#   RAYTF_PROGRESS <json>   any number of progress lines
#   RAYTF_RESULT <json>     exactly one final line (exit code 1 when not ok)
# Python 3.9+ standard library plus ray only. Type-checked by mypy for
# Python 3.9 (scripts/mypy.ini, run by make lint); ray's objects are Any.
#
# This module runs a request or a batch, undoes a failed run, and handles
# the stop signals.

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from typing import Any, Callable, List, Tuple, cast

from .contract import BATCH, DriverError, Json, Spec
from .rayapi import RAY
from .runstate import Run, emit, progress
from .shape import load_request, parse_request
from .groups import lookup
from .kv import digest_request, is_ours, kv_del, kv_get
from .reservations import release_run_reservation
from .wave import form_wave
from .actions import ACTION_FUNCS
from .connect import connect


def cleanup(run: Run) -> List[str]:
    """Removes the groups this run created; returns their names."""
    names: List[str] = []
    for name, pg in list(run.created.items()):
        try:
            RAY.remove_placement_group(pg)
            names.append(name)
        except Exception:  # noqa: BLE001
            pass
        run.created.pop(name, None)
    for name in list(run.inflight):  # interrupted inside placement_group()
        try:
            hit = lookup(run, name)
            if hit:
                RAY.remove_placement_group(hit[0])
                names.append(name)
        except Exception:  # noqa: BLE001
            pass
        run.inflight.discard(name)
    return names


def drop_new_record(run: Run) -> None:
    """Removes the record this failed run wrote for a cluster that was not there."""
    own = run.spec["own"] if run.spec else None
    if not own or not run.new_record:
        return
    try:
        if is_ours(own, kv_get(run, own, own["key"])):
            kv_del(run, own, own["key"])
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def ignore_signals() -> None:
    # Cleanup and the final report must not be interrupted half way. Only
    # the main thread may set handlers; a batch's threads leave them be.
    for s in (signal.SIGTERM, signal.SIGINT):
        try:
            signal.signal(s, signal.SIG_IGN)
        except (ValueError, OSError):
            pass


def signal_handler(run: Run) -> Callable[[int, Any], None]:
    def on_signal(signum: int, frame: Any) -> None:
        if run.stop_signal is not None:
            return
        run.stop_signal = signum
        ignore_signals()
        raise KeyboardInterrupt  # Ray converts this cleanly inside ray.get/wait

    return on_signal


def new_result(action: str) -> Json:
    return {"ok": False, "action": action, "error": None, "groups": [], "removed": [], "missing": [],
            "ray_version": ""}


def fail(run: Run, result: Json, e: BaseException) -> None:
    """Reports e in result and undoes what the run made."""
    ignore_signals()
    if run.wave:
        run.wave.done(run)  # first: no sibling waits through the cleanup
    error: Json
    if run.stop_signal is not None:
        error = {"kind": "internal", "code": "stopped", "facts": {"signal": run.stop_signal}}
    elif isinstance(e, DriverError):
        error = {"kind": e.kind, "code": e.code, "facts": e.facts}
    elif isinstance(e, (KeyboardInterrupt, SystemExit)):
        error = {"kind": "internal", "code": "interrupted", "facts": {"type": type(e).__name__}}
    else:
        error = {"kind": "internal", "code": "exception", "facts": {"type": type(e).__name__, "detail": str(e)}}
        traceback.print_exc()
    result["ok"] = False
    result["removed"] = result["removed"] + cleanup(run)
    drop_new_record(run)
    if (run.reserved or run.lock_key) and run.spec and run.spec["own"]:  # a parsed create that reserved
        release_run_reservation(run, run.spec["own"])
    result["groups"] = []
    result["error"] = error
    result.update(run.failure)
    if run.alternative:  # Go explains the failure on the nodes the run took
        result["alternative"] = run.alternative


def install_signal_handlers(run: Run) -> None:
    # ray.init installs its own SIGTERM handler; ours must come after it.
    signal.signal(signal.SIGTERM, signal_handler(run))
    signal.signal(signal.SIGINT, signal_handler(run))


def run_single(run: Run, request: Json, result: Json) -> None:
    run.spec = spec = digest_request(parse_request(run, request))
    result["action"] = spec["action"]
    imports = connect(run, [spec], result)
    install_signal_handlers(run)
    progress(run, "started", action=spec["action"], groups=len(spec["groups"]), imports=round(imports, 3),
             connect="gcs" if run.gcs else "ray.init")
    result.update(ACTION_FUNCS[spec["action"]](run, spec))
    ignore_signals()
    result["ok"] = True


def run_batch(run: Run, request: Json, result: Json) -> None:
    """Runs a batch's requests in threads, each with its own Run and result:
    one failing request fails (and cleans up) alone. A stop undoes every
    request that has not finished."""
    ops: List[Tuple[Run, Json]] = []
    for i, sub in enumerate(request["batch"]):
        op = Run()
        op.id, op.gate = "%s.%d" % (run.id, i), run.gate
        op_result = new_result(sub.get("action", "") if isinstance(sub, dict) else "")
        op_result["run_id"] = op.id
        try:
            op.spec = digest_request(parse_request(op, sub, "batch[%d]." % i))
        except DriverError as e:
            fail(op, op_result, e)
        ops.append((op, op_result))
    result["batch"] = [r for _, r in ops]
    todo = [op for op, _ in ops if op.spec]
    if todo:
        run.contract = todo[0].contract
        connect(run, [op.spec for op in todo if op.spec], result)
    install_signal_handlers(run)
    progress(run, "started", action=BATCH, requests=len(ops), connect="gcs" if run.gcs else "ray.init")
    finished = set(i for i, (op, _) in enumerate(ops) if not op.spec)
    form_wave([op for op, _ in ops])

    def work(i: int, op: Run, op_result: Json) -> None:
        spec = cast(Spec, op.spec)  # threads run only the parsed requests
        op.gcs = run.gcs
        op_result["ray_version"] = result["ray_version"]
        try:
            progress(op, "started", action=spec["action"], groups=len(spec["groups"]))
            op_result.update(ACTION_FUNCS[spec["action"]](op, spec))
            op_result["ok"] = True
        except BaseException as e:  # noqa: BLE001
            fail(op, op_result, e)
        finally:
            if op.wave:
                op.wave.done(op)  # no sibling waits for it any more
        with run.gate.lock:
            kept = not run.gate.closed
            if kept:
                finished.add(i)
        if kept:  # Go hands it to its caller before the batch ends
            progress(op, "result", result=op_result)

    threads = [threading.Thread(target=work, args=(i, op, r), daemon=True)
               for i, (op, r) in enumerate(ops) if op.spec]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)  # short joins, so a stop signal is handled at once
    except BaseException:
        ignore_signals()
        run.gate.close()
        for i, (op, op_result) in enumerate(ops):
            if i not in finished:
                op.stop_signal = run.stop_signal
                fail(op, op_result, KeyboardInterrupt())
        raise
    ignore_signals()
    result["ok"] = True


def main() -> None:
    run = Run()
    result = new_result("")
    try:
        request = load_request(run, sys.argv)
        if request.get("action") == BATCH:
            result["action"] = BATCH
            run_batch(run, request, result)
        else:
            run_single(run, request, result)
    except BaseException as e:  # noqa: BLE001
        fail(run, result, e)
        for op_result in result.get("batch", []):  # e.g. ray.init failed: the batch's error is theirs
            if not op_result["ok"] and op_result["error"] is None:
                op_result["error"] = result["error"]
    emit(run, "RAYTF_RESULT", result, leading_newline=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # The groups are detached and outlive us: skipping ray.shutdown() saves
    # about a second per job (and, when stopped, beats the supervisor's SIGKILL).
    os._exit(0 if result["ok"] else 1)


if __name__ == "__main__":  # the job's python -c; not when tests import this module
    main()
