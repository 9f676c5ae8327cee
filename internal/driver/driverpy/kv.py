# The ownership record and tombstone in Ray's internal KV, over ray or GcsDirect.

from __future__ import annotations

import contextlib
import json
import time
from typing import List, Optional

from .contract import Json
from .rayapi import RAY
from .runstate import Run


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def kv_get(run: Run, own: Json, key: str) -> Optional[Json]:
    if run.gcs:
        raw = run.gcs.kv_get(key, own["kv_namespace"])
    else:
        raw = RAY.internal_kv._internal_kv_get(key, namespace=own["kv_namespace"])
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return {"owner": "", "created_at": "", "unreadable": True}
    return value if isinstance(value, dict) else None


def kv_put(run: Run, own: Json, key: str, value: Json, gated: bool = True) -> None:
    """gated=False: a renewal must not wait behind a hanging group call."""
    raw = json.dumps(value, sort_keys=True)
    with run.gate if gated else contextlib.nullcontext():
        if run.gcs:
            run.gcs.kv_put(key, raw, own["kv_namespace"])
        else:
            RAY.internal_kv._internal_kv_put(key, raw, overwrite=True, namespace=own["kv_namespace"])


def kv_del(run: Run, own: Json, key: str) -> None:
    if run.gcs:
        run.gcs.kv_del(key, own["kv_namespace"])
    else:
        RAY.internal_kv._internal_kv_del(key, namespace=own["kv_namespace"])


def kv_keys(run: Run, own: Json, prefix: str) -> List[str]:
    if run.gcs:
        raw = run.gcs.kv_keys(prefix, own["kv_namespace"])
    else:
        raw = RAY.internal_kv._internal_kv_list(prefix, namespace=own["kv_namespace"]) or []
    return [k.decode() if isinstance(k, bytes) else str(k) for k in raw]


def is_ours(own: Json, record: Optional[Json]) -> bool:
    # A state from before owners existed (owner "") may act on unrecorded groups only.
    if record is None:
        return own["owner"] == ""
    return own["owner"] != "" and record.get("owner") == own["owner"]


def other_owner(record: Optional[Json]) -> Json:
    """The facts Go describes another owner from (record.OtherOwner)."""
    record = record or {}
    return {"owner": str(record.get("owner") or ""), "created_at": str(record.get("created_at") or ""),
            "has_record": bool(record)}


def kv_put_new(run: Run, own: Json, key: str, value: Json) -> bool:
    """Writes key only when it is absent; True when this call wrote it."""
    raw = json.dumps(value, sort_keys=True)
    with run.gate:
        return not RAY.internal_kv._internal_kv_put(key, raw, overwrite=False, namespace=own["kv_namespace"])
