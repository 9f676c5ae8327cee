# The ownership record and tombstone in Ray's internal KV, over ray or GcsDirect.

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from typing import List, Optional, cast

from .contract import Json, Spec
from .rayapi import RAY
from .runstate import Run


# Ray keeps only a digest of each owner token (record.OwnerDigest in Go): Go
# sends the digest, and values of older versions that hold the plain token
# are read as their digest, so the token never comes back out.
OWNER_DIGEST_PREFIX = "sha256:"
OWNER_FIELDS = ("owner", "deleted_by", "record_owner")


def owner_digest(owner: object) -> str:
    """The digest of a stored owner: a digest stays itself, a plain token is hashed."""
    s = str(owner or "")
    if not s or s.startswith(OWNER_DIGEST_PREFIX):
        return s
    return OWNER_DIGEST_PREFIX + hashlib.sha256(s.encode("utf-8")).hexdigest()


def owner_prefix(owner: object, length: int) -> str:
    """What a message shows of another owner: the start of its digest's hex."""
    return owner_digest(owner)[len(OWNER_DIGEST_PREFIX):][:length]


def digest_owners(value: Json) -> Json:
    """value with each owner field as its digest (records, reservations,
    tombstones and quotas of older versions hold plain tokens)."""
    for f in OWNER_FIELDS:
        if isinstance(value.get(f), str):
            value[f] = owner_digest(value[f])
    return value


def digest_request(spec: Spec) -> Spec:
    """The request's owners as digests: Go sends digests already; a plain
    token must never be written."""
    for part in (spec.get("own"), spec.get("quota")):
        if part is not None and isinstance(part.get("owner"), str):
            part["owner"] = owner_digest(part["owner"])
    return spec


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def kv_get(run: Run, own: Json, key: str) -> Optional[Json]:
    value = kv_read(run, own, key)
    return digest_owners(value) if value is not None else None


def kv_read(run: Run, own: Json, key: str) -> Optional[Json]:
    """The value as Ray stores it (kv_get: with its owners' digests)."""
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


def rewrite_plain_owner(run: Run, own: Json, key: str) -> None:
    """Rewrites key with the digest when an older version stored this
    owner's plain token there (only its owner writes such a key)."""
    value = kv_read(run, own, key)
    stored = value.get("owner") if value is not None else None
    if isinstance(stored, str) and stored != own["owner"] and owner_digest(stored) == own["owner"] != "":
        kv_put(run, own, key, digest_owners(cast(Json, value)))


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
    # Both owners are digests (digest_request, kv_get).
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
