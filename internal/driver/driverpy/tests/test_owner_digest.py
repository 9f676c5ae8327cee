"""Ray keeps only digests of owner tokens: what the driver writes (records,
reservations, tombstones, quotas) holds no token, reports show digests or
their prefixes, and values an older version wrote with the plain token still
count as their owner's and are rewritten with the digest."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import fake_ray
from driverpy.kv import owner_digest, owner_prefix
from test_reservations import ns, resv

TOKEN = "0123456789abcdef0123456789abcdef"
GO_TOKEN = "owner-a"  # the token pytest_requests_test.go builds the requests with


def kv_text(cluster: fake_ray.Cluster) -> str:
    return " ".join(v.decode() for v in cluster.kv.values())


def test_the_digest_is_a_prefixed_sha256_and_prefixes_agree() -> None:
    hexdigest = hashlib.sha256(TOKEN.encode()).hexdigest()
    assert owner_digest(TOKEN) == "sha256:" + hexdigest
    assert owner_digest(owner_digest(TOKEN)) == owner_digest(TOKEN)  # a stored digest reads as itself
    assert owner_digest("") == "" and owner_digest(None) == ""
    assert owner_prefix(TOKEN, 8) == owner_prefix(owner_digest(TOKEN), 8) == hexdigest[:8]


def test_requests_carry_gos_digest(requests: Any) -> None:
    # Go hashes as Python does: the request holds the digest, never the token.
    assert requests["create"]["ownership"]["owner"] == owner_digest(GO_TOKEN)
    assert requests["create"]["ownership"]["manifest"]["owner"] == owner_digest(GO_TOKEN)
    assert GO_TOKEN not in json.dumps(requests)


def test_a_plain_token_is_never_written(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = copy.deepcopy(requests["create_selected"])
    r["ownership"]["owner"] = TOKEN  # as if a token reached the driver
    d = drive(r)
    assert d.result["ok"] and TOKEN not in kv_text(cluster) and TOKEN not in json.dumps(d.result)
    assert cluster.kv_value(r["ownership"]["key"], ns(r))["owner"] == owner_digest(TOKEN)
    assert cluster.kv_value(resv(r)["key"], ns(r))["owner"] == owner_digest(TOKEN)
    gone = copy.deepcopy(requests["delete_selected"])
    gone["ownership"]["owner"] = TOKEN
    assert drive(gone).result["ok"]
    tomb = cluster.kv_value(gone["ownership"]["tombstone_key"], ns(gone))
    assert tomb["deleted_by"] == tomb["record_owner"] == owner_digest(TOKEN)
    assert TOKEN not in kv_text(cluster)


def test_a_plain_token_record_stays_its_owners_and_is_rewritten(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["create"]
    assert drive(r).result["ok"]
    keys = [r["ownership"]["key"], resv(r)["key"]]
    for key in keys:  # as an older version wrote them
        value = cluster.kv_value(key, ns(r))
        value["owner"] = GO_TOKEN
        cluster.kv_set(key, value, ns(r))
    d = drive(requests["inspect"])  # the owner's next apply (an update)
    assert d.result["ok"] and d.result["record"]["owner"] == owner_digest(GO_TOKEN)
    for key in keys:
        assert cluster.kv_value(key, ns(r))["owner"] == owner_digest(GO_TOKEN)
    assert '"%s"' % GO_TOKEN not in kv_text(cluster)


def test_another_states_plain_token_is_reported_as_its_digest(cluster: fake_ray.Cluster, requests: Any, drive: Any) -> None:
    r = requests["inspect"]
    cluster.kv_set(r["ownership"]["key"], {"owner": TOKEN, "created_at": "2026-12-02T18:00:00Z"}, ns(r))
    d = drive(r)
    assert d.result["error"]["code"] == "taken_over" and d.result["error"]["facts"]["other"]["owner"] == owner_digest(TOKEN)
    assert TOKEN not in json.dumps(d.result)
    d = drive(requests["read"])
    assert d.result["record"]["owner"] == owner_digest(TOKEN) and TOKEN not in json.dumps(d.result)
