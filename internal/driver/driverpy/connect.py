# Connecting: straight to the GCS (GcsDirect) when every request allows it
# and that works, else ray.init.

from __future__ import annotations

import os
import time
from typing import List

from .contract import Json, Spec
from .rayapi import RAY, import_ray
from .gcs_direct import GcsDirect
from .runstate import Run


# Actions that need only the internal KV and named placement groups (read: KV only).
DIRECT_ACTIONS = ("delete", "record", "read")


def connect_direct(run: Run, spec: Spec) -> bool:
    """Connects a delete, record or read to the GCS without ray; False (and a
    log line) when that does not work, so the caller uses ray.init."""
    address = os.environ.get("RAY_ADDRESS", "")
    if spec["action"] not in DIRECT_ACTIONS or "://" in address or ":" not in address:
        return False
    try:
        gcs = GcsDirect(address, spec["namespace"], run.contract.state_removed, run.contract.gcs_call_seconds)
        own = spec["own"] or spec["quota"]
        if own:  # the first call doubles as the connection check
            gcs.kv_get(own.get("key") or own["list_reservations"], own["kv_namespace"])
        else:
            gcs.find(spec["groups"][0]["name"])
    except Exception as e:  # noqa: BLE001
        print("direct GCS connection unavailable (%s: %s); using ray.init" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return False
    run.gcs = gcs
    return True


def connect(run: Run, specs: List[Spec], result: Json) -> float:
    """Connects for specs: straight to the GCS when every one of them allows
    it, else through ray.init. Sets the result's Ray version; returns the
    seconds spent importing ray."""
    if all(s["action"] in DIRECT_ACTIONS for s in specs) and connect_direct(run, specs[0]) and run.gcs:
        result["ray_version"] = run.gcs.version
        return 0.0
    t = time.monotonic()
    import_ray()
    imports = time.monotonic() - t
    result["ray_version"] = RAY.ray.__version__
    RAY.ray.init(namespace=specs[0]["namespace"], log_to_driver=False)
    return imports
