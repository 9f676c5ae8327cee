# terraform-provider-ray placement-group driver.
#
# Runs as a Ray job: python -c '<bootstrap>' <base64(json spec)>.
# Creates, inspects or deletes detached, named placement groups (or only
# reads a cluster's record, for the ray_virtual_cluster data source) and reports
# back through its stdout (the job logs):
#   RAYTF_PROGRESS <json>   any number of progress lines
#   RAYTF_RESULT <json>     exactly one final line (exit code 1 when not ok)
# Python 3.9+ standard library plus ray only.

import base64
import json
import math
import os
import random
import signal
import socket
import sys
import time
import traceback
import zlib

# ray and its helpers: bound by import_ray(). A delete or record that reaches
# the GCS directly (GcsDirect) never imports ray, which saves about a second.
ray = internal_kv = PlacementGroupSchedulingStrategy = None
get_placement_group = placement_group = placement_group_table = remove_placement_group = None


def import_ray():
    global ray, internal_kv, PlacementGroupSchedulingStrategy
    global get_placement_group, placement_group, placement_group_table, remove_placement_group
    import ray
    from ray.experimental import internal_kv
    from ray.util.placement_group import (
        get_placement_group,
        placement_group,
        placement_group_table,
        remove_placement_group,
    )
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

ACTIONS = ("create", "delete", "inspect", "record", "read")
# Contract constants, filled from spec["contract"]; the driver has none of its own.
CONTRACT_STR = ("domain_prefix", "domain_unknown", "topo_rank_key", "state_created", "state_removed",
                "state_missing", "group_resource_marker")
CONTRACT_INT = ("topo_rank_unknown", "port_tries", "port_rounds", "probe_batch", "min_probe_seconds",
                "remove_wait_seconds", "rank_label_digits")
C = {}
# Where node topology comes from (spec.probe.topology): a label key per field,
# or "" for the contract's resources.
TOPO = {"domain_label": "", "rank_label": ""}


class DriverError(Exception):
    def __init__(self, kind, message):
        Exception.__init__(self, message)
        self.kind = kind
        self.message = message


# Groups created by this run (name -> PlacementGroup), plus names whose
# placement_group() call was in flight; removed again if the run fails.
CREATED = {}
INFLIGHT = set()
# Set when a create gives up waiting: the pending group names and the
# cluster's per-node view, for Go to explain the shortage.
FAILURE_VIEW = {}
# The record key this run created (removed again if the run fails).
NEW_RECORD = []
STOP_SIGNAL = []
RUN = {"id": ""}  # spec.run_id, echoed on every output line
T0 = time.monotonic()


def emit(tag, payload, leading_newline=False):
    if RUN["id"]:
        payload = dict(payload, run_id=RUN["id"])
    line = "%s %s\n" % (tag, json.dumps(payload, sort_keys=True, separators=(",", ":")))
    if leading_newline:
        line = "\n" + line  # never share a line with partial output
    sys.stdout.write(line)
    sys.stdout.flush()


def progress(phase, **fields):
    fields["phase"] = phase
    fields["elapsed"] = round(time.monotonic() - T0, 3)
    emit("RAYTF_PROGRESS", fields)


# ---------------------------------------------------------------- spec


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def load_spec(argv):
    if len(argv) < 2:
        raise DriverError("invalid", "missing spec argument")
    try:
        spec = json.loads(zlib.decompress(base64.b64decode(argv[1], validate=True)).decode("utf-8"))
    except Exception as e:  # noqa: BLE001
        raise DriverError("invalid", "spec is not base64-encoded zlib-compressed JSON: %s" % e)
    if not isinstance(spec, dict):
        raise DriverError("invalid", "spec must be a JSON object")
    run_id = spec.get("run_id")
    if isinstance(run_id, str) and len(run_id) <= 128:
        RUN["id"] = run_id
    return normalize_spec(spec)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def load_contract(raw):
    if not isinstance(raw, dict):
        raise DriverError("invalid", "contract must be an object")
    for k in CONTRACT_STR:
        if not isinstance(raw.get(k), str) or not raw[k]:
            raise DriverError("invalid", "contract.%s must be a non-empty string" % k)
    for k in CONTRACT_INT:
        if not _is_int(raw.get(k)):
            raise DriverError("invalid", "contract.%s must be an integer" % k)
    C.clear()
    C.update({k: raw[k] for k in CONTRACT_STR + CONTRACT_INT})


def load_topology(raw):
    raw = raw or {}
    if not isinstance(raw, dict):
        raise DriverError("invalid", "probe.topology must be an object")
    for k in TOPO:
        v = raw.get(k, "")
        if not isinstance(v, str):
            raise DriverError("invalid", "probe.topology.%s must be a string" % k)
        TOPO[k] = v


def normalize_spec(spec):
    """Checks the request's types; Go has filled and validated every value."""
    action = spec.get("action")
    if action not in ACTIONS:
        raise DriverError("invalid", "unknown action %r (want one of %s)" % (action, ", ".join(ACTIONS)))
    load_contract(spec.get("contract"))
    ns = spec.get("namespace")
    if not isinstance(ns, str) or not ns:
        raise DriverError("invalid", "namespace must be a non-empty string")
    timeout = spec.get("ready_timeout_seconds")
    if not _is_number(timeout) or timeout <= 0:
        raise DriverError("invalid", "ready_timeout_seconds must be a positive number")
    probe = spec.get("probe")
    if not isinstance(probe, dict) or not isinstance(probe.get("use_gpus"), bool):
        raise DriverError("invalid", "probe must be an object with a boolean use_gpus")
    load_topology(probe.get("topology"))
    low, high = probe.get("port_range_low"), probe.get("port_range_high")
    if not (_is_int(low) and _is_int(high) and 0 < low < high <= 65536):
        raise DriverError("invalid", "port range [%r, %r) is invalid" % (low, high))
    groups = spec.get("groups")
    # read looks up the record by its key alone; every other action names groups.
    if not isinstance(groups, list) or (not groups and action != "read"):
        raise DriverError("invalid", "groups must be a non-empty list")
    seen = set()
    out_groups = []
    for i, g in enumerate(groups):
        if not isinstance(g, dict):
            raise DriverError("invalid", "groups[%d] must be an object" % i)
        name = g.get("name")
        if not isinstance(name, str) or not name.strip():
            raise DriverError("invalid", "groups[%d] has an empty name" % i)
        if name in seen:
            raise DriverError("invalid", "group name %s is listed twice" % json.dumps(name))
        seen.add(name)
        strategy, bundles = g.get("strategy"), g.get("bundles")
        if action == "create":
            if not isinstance(strategy, str) or not strategy:
                raise DriverError("invalid", "group %s: strategy must be a non-empty string" % json.dumps(name))
            if not isinstance(bundles, list) or not bundles:
                raise DriverError("invalid", "group %s: bundles must be a non-empty list" % json.dumps(name))
            for j, b in enumerate(bundles):
                if not isinstance(b, dict) or not all(
                    isinstance(k, str) and k and _is_number(v) and v >= 0 for k, v in b.items()
                ):
                    raise DriverError(
                        "invalid",
                        "group %s bundle %d must map resource names to non-negative numbers" % (json.dumps(name), j),
                    )
                if not any(v > 0 for v in b.values()):
                    raise DriverError("invalid", "group %s bundle %d requests no resources" % (json.dumps(name), j))
        selector = g.get("bundle_label_selector")
        if selector is not None and not (
            isinstance(selector, list) and len(selector) == len(bundles or [])
            and all(isinstance(m, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in m.items())
                    for m in selector)):
            raise DriverError("invalid", "group %s: bundle_label_selector must be one string map per bundle" % json.dumps(name))
        topo = g.get("topology_strategy")
        if topo is not None and not (
            isinstance(topo, dict) and topo and all(isinstance(k, str) and isinstance(v, str) for k, v in topo.items())):
            raise DriverError("invalid", "group %s: topology_strategy must be a non-empty string map" % json.dumps(name))
        out_groups.append({"name": name, "strategy": strategy, "bundles": bundles, "selector": selector, "topology_strategy": topo})
    return {
        "action": action,
        "namespace": ns,
        "timeout": float(timeout),
        "groups": out_groups,
        "use_gpus": probe["use_gpus"],
        "port_low": low,
        "port_high": high,
        "own": load_ownership(spec.get("ownership"), action),
        "rank_order": load_rank_order(spec.get("rank_order")),
    }


def load_rank_order(raw):
    if raw is None:
        return None
    seg = raw.get("segment_size") if isinstance(raw, dict) else None
    if not (isinstance(raw, dict) and _is_int(raw.get("gpus_per_node")) and raw["gpus_per_node"] >= 1
            and (seg is None or (_is_int(seg) and seg >= 1))):
        raise DriverError("invalid", "rank_order must have gpus_per_node >= 1 and segment_size null or >= 1")
    return {"segment_size": seg, "gpus_per_node": raw["gpus_per_node"]}


def load_ownership(own, action):
    if own is None:
        if action in ("record", "read"):
            raise DriverError("invalid", "%s needs ownership" % action)
        return None
    if not isinstance(own, dict):
        raise DriverError("invalid", "ownership must be an object")
    for k in ("kv_namespace", "key", "tombstone_key"):
        if not isinstance(own.get(k), str) or not own[k]:
            raise DriverError("invalid", "ownership.%s must be a non-empty string" % k)
    if not isinstance(own.get("owner"), str) or not isinstance(own.get("claim"), bool):
        raise DriverError("invalid", "ownership.owner must be a string and ownership.claim a boolean")
    manifest = own.get("manifest")
    if manifest is not None and not (isinstance(manifest, dict) and isinstance(manifest.get("groups"), list)):
        raise DriverError("invalid", "ownership.manifest must be a record object")
    if action == "record" and manifest is None:
        raise DriverError("invalid", "record needs ownership.manifest")
    return own


# ---------------------------------------------------------------- helpers


def norm_bundle(b):
    # Ray drops zero-valued resources; compare and report without them.
    return {str(k): float(v) for k, v in b.items() if float(v) > 0}


def same_amount(a, b):
    # Ray stores resource quantities in 1e-4 fixed point.
    return abs(a - b) <= 1e-4 + 1e-9 * max(abs(a), abs(b))


def same_bundle(a, b):
    return set(a) == set(b) and all(same_amount(a[k], b[k]) for k in a)


def fmt_amount(v):
    return str(int(v)) if float(v).is_integer() else ("%.4f" % v).rstrip("0")


def fmt_resources(res):
    return "{%s}" % ", ".join("%s: %s" % (json.dumps(k), fmt_amount(res[k])) for k in sorted(res))


def table_bundles(table):
    bundles = table.get("bundles") or {}
    return [norm_bundle(bundles[k]) for k in sorted(bundles, key=int)]


def lookup(name):
    """Returns (PlacementGroup, table) for a live named group, else None."""
    try:
        pg = get_placement_group(name)
    except ValueError:
        return None
    table = placement_group_table(pg)
    if not table or table.get("state") == C["state_removed"]:
        return None
    return pg, table


def is_detached(pg):
    # Best effort: read the raw GCS record (private API); None if unknown.
    try:
        from ray.core.generated import gcs_pb2

        accessor = ray._private.state.state._connect_and_get_accessor()
        raw = accessor.get_placement_group_info(pg.id)
        if raw is None:
            return None
        return bool(gcs_pb2.PlacementGroupTableData.FromString(raw).is_detached)
    except Exception:  # noqa: BLE001
        return None


def is_resource_key(k):
    # Skip the per-placement-group bookkeeping resources (not node capacity).
    return C["group_resource_marker"] not in k


def cluster_view():
    """Returns {node_id: {"ip", "total", "free", "resources"}} for live nodes."""
    nodes = {}
    for n in ray.nodes():
        if not n.get("Alive"):
            continue
        res = n.get("Resources") or {}
        nodes[n["NodeID"]] = {
            "ip": n.get("NodeManagerAddress", ""),
            "resources": res,
            "labels": n.get("Labels") or {},
            "total": {k: float(v) for k, v in res.items() if is_resource_key(k)},
            "free": None,
        }
    try:
        free = ray._private.state.available_resources_per_node()
    except Exception:  # noqa: BLE001
        free = {}
    for nid, info in nodes.items():
        info["free"] = {k: float(v) for k, v in (free.get(nid) or {}).items() if is_resource_key(k)}
    return nodes


def node_view(nodes):
    """The per-node free/total view Go explains a shortage from."""
    return [{"node_id": nid, "node_ip": info["ip"], "total": info["total"], "free": info["free"]}
            for nid, info in sorted(nodes.items())]


def rank_from_label(v):
    # Same rule as Go's vcluster.ParseRankLabel: only ASCII digits, else unknown.
    if isinstance(v, str) and 0 < len(v) <= C["rank_label_digits"] and all("0" <= c <= "9" for c in v):
        return int(v)
    return C["topo_rank_unknown"]


def node_topology(node):
    """(domain, rank) of a cluster_view entry, from labels or resources as the request says."""
    resources, labels = node.get("resources") or {}, node.get("labels") or {}
    domains = sorted(k for k in resources if k.startswith(C["domain_prefix"]))
    domain = domains[0] if domains else C["domain_unknown"]
    if TOPO["domain_label"]:
        domain = labels.get(TOPO["domain_label"]) or C["domain_unknown"]
    key = C["topo_rank_key"]
    if TOPO["rank_label"]:
        rank = rank_from_label(labels.get(TOPO["rank_label"]))
    else:
        try:
            rank = int(resources[key]) if key in resources else C["topo_rank_unknown"]
        except (TypeError, ValueError):
            rank = C["topo_rank_unknown"]
    return domain, rank


# ---------------------------------------------------------------- ownership record


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def kv_get(own, key):
    if GCS:
        raw = GCS[0].kv_get(key, own["kv_namespace"])
    else:
        raw = internal_kv._internal_kv_get(key, namespace=own["kv_namespace"])
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return {"owner": "", "created_at": "", "unreadable": True}
    return value if isinstance(value, dict) else None


def kv_put(own, key, value):
    raw = json.dumps(value, sort_keys=True)
    if GCS:
        GCS[0].kv_put(key, raw, own["kv_namespace"])
    else:
        internal_kv._internal_kv_put(key, raw, overwrite=True, namespace=own["kv_namespace"])


def kv_del(own, key):
    if GCS:
        GCS[0].kv_del(key, own["kv_namespace"])
    else:
        internal_kv._internal_kv_del(key, namespace=own["kv_namespace"])


def is_ours(own, record):
    # A state from before owners existed (owner "") may act on unrecorded groups only.
    if record is None:
        return own["owner"] == ""
    return own["owner"] != "" and record.get("owner") == own["owner"]


def other_owner(record):
    record = record or {}
    return {"owner": str(record.get("owner") or ""), "created_at": str(record.get("created_at") or "")}


def describe_owner(record):
    if record is None:
        return "created outside this provider, no ownership record"
    return "created %s" % (record.get("created_at") or "at an unknown time")


def topology_order(bundles, rank_order):
    """Rank order of a unified GPU cluster's bundles, sorted as Go's
    topology.SortBundleIndicesByTopology sorts them (a parity test runs both),
    so the record needs no second job. None when incomplete segments would
    drop bundles: Go reports that as an error. Go checks the record's order
    against its own and rewrites a record that differs."""
    keys = [(-1 if b["gpu_id"] is None else b["gpu_id"], b["nvlink_domain"], b["topo_rank"], b["node_id"] or "")
            for b in bundles]
    indices = list(range(len(keys)))
    if all(d == C["domain_unknown"] and r == C["topo_rank_unknown"] for _, d, r, _ in keys):
        return sorted(indices, key=lambda i: (keys[i][3], keys[i][0]))
    seg, gpus = rank_order["segment_size"], rank_order["gpus_per_node"]
    if seg is not None:
        by_domain = {}
        for i in indices:
            by_domain.setdefault(keys[i][1], []).append(i)
        kept = []
        for members in by_domain.values():
            usable = len({keys[i][3] for i in members}) // seg * seg
            members.sort(key=lambda i: (keys[i][2], keys[i][0]))
            kept.extend(members[:usable * gpus])
        if len(kept) != len(indices):
            return None
        indices = kept
    lowest = {}
    for _, d, r, _ in keys:
        lowest[d] = min(r, lowest.get(d, r))
    return sorted(indices, key=lambda i: (lowest[keys[i][1]], keys[i][2], keys[i][0]))


def natural_manifest(own, groups_out, record, rank_order=None):
    """The record of the probed groups: in rank order when rank_order asks
    for the topology sort and it keeps every bundle, else in natural order
    (Go rewrites it when its order differs)."""
    m = dict(own["manifest"])
    m["owner"] = own["owner"]
    stamp = now()
    m["created_at"] = (record or {}).get("created_at") or stamp
    m["updated_at"] = stamp
    by_name = {g["name"]: g for g in groups_out}
    groups, bundles = [], []
    for tg in m["groups"]:
        g = by_name.get(tg["name"]) or {}
        groups.append(dict(tg, id=g.get("id", "")))
        for b in g.get("bundles", []):
            bundles.append({
                "rank": len(bundles), "placement_group": tg["name"], "bundle_index": b["index"],
                "global_index": len(bundles), "node_id": b["node_id"], "node_ip": b["node_ip"],
                "gpu_id": b["gpu_id"], "nvlink_domain": b["nvlink_domain"], "topo_rank": b["topo_rank"],
                "port": b["port"],
            })
    order = topology_order(bundles, rank_order) if rank_order and bundles else None
    if order is not None:
        bundles = [dict(bundles[gi], rank=rank) for rank, gi in enumerate(order)]
    m["groups"], m["bundles"] = groups, bundles
    m["sorted_bundle_indices"] = order if order is not None else list(range(len(bundles)))
    m["master_address"] = bundles[0]["node_ip"] if bundles else ""
    m["master_port"] = bundles[0]["port"] if bundles else 0
    return m


# ---------------------------------------------------------------- probing


def _bind_free_ports(low, high, excluded, tries, count):
    # count distinct ports in [low, high) that could be bound just now, none excluded.
    taken = set(excluded)
    ports = []
    for _ in range(count):
        for _ in range(tries):
            port = random.randrange(low, high)
            if port in taken:
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("", port))
                s.listen(1)
                break
            except OSError:
                continue
            finally:
                s.close()
        else:
            raise RuntimeError("no free port in [%d, %d) after %d attempts" % (low, high, tries))
        taken.add(port)
        ports.append(port)
    return ports


def _probe_in_bundle(low, high, excluded, tries, count):
    """Runs in one bundle: its GPU id (if it holds one), node and count free ports."""
    ids = ray.get_gpu_ids()
    gpu = None
    if ids:
        try:
            gpu = int(ids[0])
        except (TypeError, ValueError):
            gpu = None
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),
        "gpu_id": gpu,
        "ports": _bind_free_ports(low, high, excluded, tries, count),
    }


PROBE_TASK = []  # the remote version of _probe_in_bundle, made once ray is imported


def _fire(t, ports, spec, excluded):
    if not PROBE_TASK:
        PROBE_TASK.append(ray.remote(max_retries=0)(_probe_in_bundle))
    wants_gpu = spec["use_gpus"] and t["resources"].get("GPU", 0.0) > 0
    return PROBE_TASK[0].options(
        num_cpus=0,
        num_gpus=0.01 if wants_gpu else 0,
        scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=t["pg"], placement_group_bundle_index=t["index"]),
    ).remote(spec["port_low"], spec["port_high"], sorted(excluded), C["port_tries"], ports)


class NodeProbes:
    """The probe tasks of one node, run one at a time so that the node starts
    one worker and the later tasks reuse it (a worker start costs about a
    second, a task on a warm worker milliseconds). The first task also
    returns free ports for all the node's bundles; the others are needed only
    for GPU ids, or to replace a port that collided on a shared IP."""

    def __init__(self, bundles, spec):
        self.queue = []  # (target, ports wanted)
        needs_gpu = [t for t in bundles if spec["use_gpus"] and t["resources"].get("GPU", 0.0) > 0]
        first = needs_gpu[0] if needs_gpu else bundles[0]
        self.queue.append((first, list(bundles)))
        self.queue.extend((t, []) for t in needs_gpu if t is not first)

    def next(self):
        return self.queue.pop(0) if self.queue else None


def _wait_one(inflight, deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        for r in inflight:
            try:
                ray.cancel(r, force=True)
            except Exception:  # noqa: BLE001
                pass
        raise DriverError("timeout", "%d probe task(s) did not finish in time" % len(inflight))
    ready, _ = ray.wait(list(inflight), num_returns=1, timeout=min(1.0, left))
    out = []
    for r in ready:
        try:
            out.append((r, ray.get(r)))
        except ray.exceptions.RayError as e:
            lines = [l for l in str(e).splitlines() if l.strip()]
            raise DriverError("internal", "probe task failed: %s" % (lines[-1].strip() if lines else type(e).__name__))
    return out


def probe(targets, spec, nodes):
    """Fills node/gpu/port/topology into each target bundle; ports unique per IP.

    Nodes are probed in parallel (at most probe_batch at once), each node's
    tasks in sequence (NodeProbes)."""
    if not targets:
        return
    deadline = time.monotonic() + max(C["min_probe_seconds"], spec["timeout"])
    by_node = {}
    for t in targets:
        t["node_ip"] = nodes.get(t.get("node_id"), {}).get("ip")
        t["port"], t["tries"] = 0, 0
        by_node.setdefault(t.get("node_id") or id(t), []).append(t)
    waiting = [NodeProbes(b, spec) for b in by_node.values()]
    taken = {}  # node ip -> ports assigned so far
    inflight = {}  # ref -> (NodeProbes, target, targets whose ports it returns)
    reported = time.monotonic()

    def fire(node):
        item = node.next()
        if item is None:
            return
        t, port_for = item
        inflight[_fire(t, len(port_for), spec, taken.get(t.get("node_ip"), ()))] = (node, t, port_for)

    while waiting or inflight:
        while waiting and len(inflight) < C["probe_batch"]:
            fire(waiting.pop(0))
        for ref, r in _wait_one(inflight, deadline):
            node, t, port_for = inflight.pop(ref)
            t.update(node_id=r["node_id"], node_ip=r["node_ip"], gpu_id=r["gpu_id"])
            ports = taken.setdefault(r["node_ip"], set())
            for pt, port in zip(port_for, r["ports"]):
                pt["node_ip"] = r["node_ip"]
                if port in ports:  # another node on this IP took it meanwhile
                    pt["tries"] += 1
                    if pt["tries"] >= C["port_rounds"]:
                        raise DriverError("internal", "could not find a unique free port in [%d, %d) after %d rounds" % (
                            spec["port_low"], spec["port_high"], C["port_rounds"]))
                    node.queue.append((pt, [pt]))
                    continue
                ports.add(port)
                pt["port"] = port
            fire(node)
        if time.monotonic() - reported >= 0.5 or not (waiting or inflight):
            reported = time.monotonic()
            progress("probing", ready=sum(1 for x in targets if x["port"]), total=len(targets))
    for t in targets:
        t.pop("tries", None)
        domain, rank = node_topology(nodes.get(t["node_id"], {}))
        t["nvlink_domain"], t["topo_rank"] = domain, rank


def group_result(name, pg, table, created, nodes):
    bundles = []
    to_node = table.get("bundles_to_node_id") or {}
    for i, res in enumerate(table_bundles(table)):
        nid = to_node.get(i) or to_node.get(str(i)) or ""
        domain, rank = node_topology(nodes.get(nid, {}))
        bundles.append({
            "index": i, "resources": res, "node_id": nid,
            "node_ip": nodes.get(nid, {}).get("ip", ""), "gpu_id": None,
            "nvlink_domain": domain if nid else C["domain_unknown"],
            "topo_rank": rank if nid else C["topo_rank_unknown"],
            "port": 0, "pg": pg,
        })
    return {
        "name": name, "id": table.get("placement_group_id", pg.id.hex()),
        "state": table.get("state", ""), "strategy": table.get("strategy", ""),
        "created": created, "missing": False, "bundles": bundles,
    }


def probe_groups(entries, spec):
    nodes = cluster_view()
    targets = []
    out = []
    for name, pg, created in entries:
        g = group_result(name, pg, placement_group_table(pg), created, nodes)
        out.append(g)
        if g["state"] == C["state_created"]:
            targets.extend(g["bundles"])
    progress("probing", ready=0, total=len(targets))
    probe(targets, spec, nodes)
    for g in out:
        for b in g["bundles"]:
            b.pop("pg", None)
    return out


# ---------------------------------------------------------------- actions


def diff_group(want, table, pg):
    diffs = []
    if table.get("strategy") != want["strategy"]:
        diffs.append("strategy %s (want %s)" % (table.get("strategy"), want["strategy"]))
    have = table_bundles(table)
    wanted = [norm_bundle(b) for b in want["bundles"]]
    if len(have) != len(wanted):
        diffs.append("%d bundles (want %d)" % (len(have), len(wanted)))
    else:
        for i, (h, w) in enumerate(zip(have, wanted)):
            if not same_bundle(h, w):
                diffs.append("bundle %d %s (want %s)" % (i, fmt_resources(h), fmt_resources(w)))
    if is_detached(pg) is False:
        diffs.append("lifetime (existing group is not detached and dies with its creator)")
    return diffs


# A group removed while this run waits for it is created again at most this
# often; after that the removal is reported instead of fought.
MAX_RECREATES = 3


def wait_ready(entries, spec):
    """Waits for every group; returns the entries, with any group that was
    removed meanwhile (e.g. by the cleanup of a killed earlier run whose group
    this run adopted) replaced by a new one."""
    deadline = time.monotonic() + spec["timeout"]
    wanted = {g["name"]: g for g in spec["groups"]}
    entries = list(entries)
    refs = {pg.ready(): i for i, (_, pg, _) in enumerate(entries)}  # ready ref -> index in entries
    recreated = {}
    pending = list(refs)
    total, last = len(refs), -1
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, pending = ray.wait(pending, num_returns=len(pending), timeout=min(1.0, left))
        for ref in ready:
            try:
                ray.get(ref)
            except Exception as e:  # noqa: BLE001
                i = refs[ref]
                name = entries[i][0]
                if type(e).__name__ != "TaskPlacementGroupRemoved" or recreated.get(name, 0) >= MAX_RECREATES:
                    raise
                recreated[name] = recreated.get(name, 0) + 1
                pg, created = replace_removed(wanted[name])
                entries[i] = (name, pg, created)
                new_ref = pg.ready()
                refs[new_ref] = i
                pending.append(new_ref)
        if total - len(pending) != last:
            last = total - len(pending)
            progress("waiting", ready=last, total=total)
    if not pending:
        return entries
    late = [entries[refs[r]][:2] for r in pending]
    infeasible = False
    for _, pg in late:
        try:
            stats = placement_group_table(pg).get("stats") or {}
            infeasible = infeasible or stats.get("scheduling_state") == "INFEASIBLE"
        except Exception:  # noqa: BLE001
            pass
    FAILURE_VIEW["pending"] = [name for name, _ in late]
    try:
        FAILURE_VIEW["nodes"] = node_view(cluster_view())
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        FAILURE_VIEW["nodes"] = []
        print("could not read the cluster's resources: %s" % e)
    raise DriverError(
        "infeasible" if infeasible else "timeout",
        "%d of %d placement group(s) not ready after %gs (%s)" % (
            len(late), total, spec["timeout"],
            "Ray marked them infeasible" if infeasible else "still pending"),
    )


def replace_removed(g):
    """Returns (group, created by this run) for a group removed during the
    wait: the same-shaped group someone made meanwhile, else a new one."""
    name = g["name"]
    hit = lookup(name)
    if hit:
        diffs = diff_group(g, hit[1], hit[0])
        if diffs:
            raise DriverError("conflict", "group %s was replaced during the wait by one with different %s" % (
                json.dumps(name), ", ".join(diffs)))
        CREATED.pop(name, None)  # someone else's: never this run's to clean up
    pg = hit[0] if hit else create_group(g)
    progress("recreated", name=name, adopted=bool(hit))
    return pg, not hit


def claim_for_create(spec, found):
    """Checks that existing groups are this state's and records the owner
    before any group is created; returns the record found."""
    own = spec["own"]
    record = kv_get(own, own["key"])
    if any(found.values()) and not is_ours(own, record) and not own["claim"]:
        raise DriverError("conflict", "placement groups of %s already exist in namespace %s (%s); import it or choose another name" % (
            json.dumps(own["manifest"]["name"]), spec["namespace"], describe_owner(record)))
    if not is_ours(own, record):
        NEW_RECORD.append(own["key"])
    prelim = natural_manifest(own, [], record if is_ours(own, record) else None)
    kv_put(own, own["key"], prelim)
    kv_del(own, own["tombstone_key"])
    return record if is_ours(own, record) else None


def create_group(g):
    """Creates one detached group of the spec and remembers it for cleanup."""
    name = g["name"]
    INFLIGHT.add(name)
    try:
        # Optional arguments only when set, so Ray versions without them still work.
        kwargs = {"bundle_label_selector": g["selector"]} if g["selector"] else {}
        if g["topology_strategy"]:
            # Ray takes the node-level strategy inside topology_strategy, never both.
            kwargs["topology_strategy"] = g["topology_strategy"]
        else:
            kwargs["strategy"] = g["strategy"]
        pg = placement_group(bundles=g["bundles"], name=name, lifetime="detached", **kwargs)
    except Exception as e:  # noqa: BLE001
        INFLIGHT.discard(name)
        if "already exists" in str(e):
            raise DriverError("conflict", "group %s was created concurrently by someone else" % json.dumps(name))
        raise
    CREATED[name] = pg
    INFLIGHT.discard(name)
    return pg


def do_create(spec):
    groups = spec["groups"]
    progress("lookup", total=len(groups))
    found = {g["name"]: lookup(g["name"]) for g in groups}
    record = claim_for_create(spec, found) if spec["own"] else None
    conflicts = []
    for g in groups:
        hit = found[g["name"]]
        if hit:
            d = diff_group(g, hit[1], hit[0])
            if d:
                conflicts.append("group %s exists with different %s" % (json.dumps(g["name"]), ", ".join(d)))
    if conflicts:
        raise DriverError("conflict", "; ".join(conflicts))
    entries = []
    for g in groups:
        name = g["name"]
        if found[name]:
            entries.append((name, found[name][0], False))
            continue
        entries.append((name, create_group(g), True))
    progress("created", created=len(CREATED), adopted=len(entries) - len(CREATED), total=len(entries))
    entries = wait_ready(entries, spec)
    out = {"groups": probe_groups(entries, spec)}
    if spec["own"]:
        out["record"] = natural_manifest(spec["own"], out["groups"], record, spec["rank_order"])
        kv_put(spec["own"], spec["own"]["key"], out["record"])
    return out


def do_inspect(spec):
    own = spec["own"]
    record = kv_get(own, own["key"]) if own else None
    writes = own is not None and own.get("manifest") is not None
    previous = None
    if writes and not is_ours(own, record):
        if not own["claim"]:
            raise DriverError("conflict", "the placement groups of %s in namespace %s now belong to %s; this state leaves them alone" % (
                json.dumps(own["manifest"]["name"]), spec["namespace"], describe_other(record)))
        previous = other_owner(record)
    entries, missing = [], []
    for g in spec["groups"]:
        hit = lookup(g["name"])
        if hit:
            entries.append((g["name"], hit[0], False))
        else:
            missing.append(g["name"])
    probed = {g["name"]: g for g in probe_groups(entries, spec)} if entries else {}
    out = []
    for g in spec["groups"]:
        if g["name"] in probed:
            out.append(probed[g["name"]])
        else:
            out.append({"name": g["name"], "id": "", "state": C["state_missing"], "strategy": "",
                        "created": False, "missing": True, "bundles": []})
    result = {"groups": out, "missing": missing}
    if own:
        result["tombstone"] = kv_get(own, own["tombstone_key"])
        if writes and not missing:
            record = natural_manifest(own, out, record if previous is None else None, spec["rank_order"])
            if previous is not None:
                record["created_at"] = previous["created_at"] or record["created_at"]
                result["previous_owner"] = previous
            kv_put(own, own["key"], record)
        result["record"] = record
    return result


def describe_other(record):
    if record is None:
        return "groups without an ownership record"
    return "another Terraform state (owner %s..., created %s)" % (
        str(record.get("owner") or "")[:8], record.get("created_at") or "at an unknown time")


def do_record(spec):
    own = spec["own"]
    record = kv_get(own, own["key"])
    if not is_ours(own, record):
        raise DriverError("conflict", "the record %s now belongs to %s; not rewritten" % (own["key"], describe_other(record)))
    m = dict(own["manifest"])
    m["owner"] = own["owner"]
    m["created_at"] = (record or {}).get("created_at") or now()
    m["updated_at"] = now()
    kv_put(own, own["key"], m)
    return {"record": m}


def do_read(spec):
    """Returns the record and tombstone as they are, and which of the named
    groups do not live in this namespace; writes nothing."""
    own = spec["own"]
    groups = GCS[0] if GCS else RayGroups
    return {"record": kv_get(own, own["key"]), "tombstone": kv_get(own, own["tombstone_key"]),
            "missing": [g["name"] for g in spec["groups"] if groups.find(g["name"]) is None]}


class RayGroups:
    """Named groups through ray.util (after ray.init)."""

    @staticmethod
    def find(name):
        hit = lookup(name)
        return hit[0] if hit else None

    @staticmethod
    def remove(pg):
        remove_placement_group(pg)

    @staticmethod
    def removed(pg):
        return (placement_group_table(pg) or {}).get("state", C["state_removed"]) == C["state_removed"]


def wait_removed(groups, name, handle, seconds):
    deadline = time.monotonic() + seconds
    while not groups.removed(handle):
        if time.monotonic() > deadline:
            raise DriverError("timeout", "placement group %s not %s after %gs" % (json.dumps(name), C["state_removed"], seconds))
        time.sleep(0.05)


def do_delete(spec):
    own = spec["own"]
    groups = GCS[0] if GCS else RayGroups
    record = kv_get(own, own["key"]) if own else None
    if own and not is_ours(own, record):
        # Not this state's cluster: touch nothing.
        return {"other_owner": other_owner(record),
                "missing": [g["name"] for g in spec["groups"] if groups.find(g["name"]) is None]}
    removed, missing = [], []
    for g in spec["groups"]:
        name = g["name"]
        gone = 0
        hit = groups.find(name)
        while hit is not None and gone < 16:  # a name resolves to one live group at a time
            groups.remove(hit)
            gone += 1
            wait_removed(groups, name, hit, min(C["remove_wait_seconds"], max(10.0, spec["timeout"])))
            hit = groups.find(name)
        (removed if gone else missing).append(name)
        progress("removing", removed=len(removed), missing=len(missing), total=len(spec["groups"]))
    if own:
        kv_del(own, own["key"])
        kv_put(own, own["tombstone_key"], {"deleted_by": own["owner"], "deleted_at": now(),
                                            "record_owner": other_owner(record)["owner"],
                                            "record_created_at": other_owner(record)["created_at"]})
    return {"removed": removed, "missing": missing}


# ---------------------------------------------------------------- GCS without ray (delete, record)

GCS = []  # the GcsDirect a delete runs on, when it could connect
GENERATED = "_raytf_ray_generated"  # Ray's generated gRPC modules, loaded without ray/__init__
STATUS_OK, STATUS_NOT_FOUND = 0, 17  # ray::StatusCode


class GcsDirect:
    """The few GCS calls a delete or record needs, over gRPC with the stubs Ray ships,
    without importing ray (about a second) or ray.init (registering a
    driver). Used only when its first call works; otherwise the driver
    falls back to ray.init (e.g. an authentication it cannot present)."""

    def __init__(self, address, namespace):
        import importlib
        import importlib.util
        import types

        root = importlib.util.find_spec("ray").submodule_search_locations[0]
        if GENERATED not in sys.modules:
            pkg = types.ModuleType(GENERATED)
            pkg.__path__ = [os.path.join(root, "core", "generated")]
            sys.modules[GENERATED] = pkg
        import grpc

        stubs = importlib.import_module(GENERATED + ".gcs_service_pb2_grpc")
        self.pb = importlib.import_module(GENERATED + ".gcs_service_pb2")
        self.states = importlib.import_module(GENERATED + ".gcs_pb2").PlacementGroupTableData.PlacementGroupState
        channel = grpc.insecure_channel(address)
        self.kv = stubs.InternalKVGcsServiceStub(channel)
        self.pg = stubs.PlacementGroupInfoGcsServiceStub(channel)
        self.namespace = namespace
        self.metadata = auth_metadata()
        self.version = ray_version_of(root)

    def call(self, method, request):
        reply = method(request, timeout=30, metadata=self.metadata)
        if reply.status.code not in (STATUS_OK, STATUS_NOT_FOUND):
            raise DriverError("internal", "GCS answered %d: %s" % (reply.status.code, reply.status.message))
        return reply

    def kv_get(self, key, ns):
        reply = self.call(self.kv.InternalKVGet, self.pb.InternalKVGetRequest(key=key.encode(), namespace=ns.encode()))
        return reply.value if reply.status.code == STATUS_OK else None

    def kv_put(self, key, value, ns):
        self.call(self.kv.InternalKVPut, self.pb.InternalKVPutRequest(
            key=key.encode(), value=value.encode(), overwrite=True, namespace=ns.encode()))

    def kv_del(self, key, ns):
        self.call(self.kv.InternalKVDel, self.pb.InternalKVDelRequest(key=key.encode(), namespace=ns.encode()))

    def find(self, name):
        reply = self.call(self.pg.GetNamedPlacementGroup, self.pb.GetNamedPlacementGroupRequest(
            name=name, ray_namespace=self.namespace))
        if not reply.HasField("placement_group_table_data"):
            return None
        data = reply.placement_group_table_data
        if not data.placement_group_id or self.states.Name(data.state) == C["state_removed"]:
            return None
        return data.placement_group_id

    def remove(self, pg_id):
        self.call(self.pg.RemovePlacementGroup, self.pb.RemovePlacementGroupRequest(placement_group_id=pg_id))

    def removed(self, pg_id):
        reply = self.call(self.pg.GetPlacementGroup, self.pb.GetPlacementGroupRequest(placement_group_id=pg_id))
        return (not reply.HasField("placement_group_table_data")
                or self.states.Name(reply.placement_group_table_data.state) == C["state_removed"])


def auth_metadata():
    """The token Ray's token authentication expects, from where ray would read it."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return ()
    token = os.environ.get("RAY_AUTH_TOKEN", "").strip()
    if not token:
        path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
        with open(path) as f:
            token = f.read().strip()
    if not token:
        raise ValueError("token authentication without a token")
    return (("authorization", "Bearer " + token),)


def ray_version_of(root):
    try:
        with open(os.path.join(root, "_version.py")) as f:
            for line in f:
                if line.startswith("version"):
                    return line.split("=", 1)[1].strip().strip("\"'")
    except OSError:
        pass
    return ""


# Actions that need only the internal KV and named placement groups (read: KV only).
DIRECT_ACTIONS = ("delete", "record", "read")


def connect_direct(spec):
    """Connects a delete, record or read to the GCS without ray; False (and a note
    in the log) when that does not work, so the caller uses ray.init."""
    address = os.environ.get("RAY_ADDRESS", "")
    if spec["action"] not in DIRECT_ACTIONS or "://" in address or ":" not in address:
        return False
    try:
        gcs = GcsDirect(address, spec["namespace"])
        own = spec["own"]
        if own:  # the first call doubles as the connection check
            gcs.kv_get(own["key"], own["kv_namespace"])
        else:
            gcs.find(spec["groups"][0]["name"])
    except Exception as e:  # noqa: BLE001
        print("direct GCS connection unavailable (%s: %s); using ray.init" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return False
    GCS.append(gcs)
    return True


# ---------------------------------------------------------------- main


def cleanup():
    """Removes the groups this run created; returns their names."""
    names = []
    for name, pg in list(CREATED.items()):
        try:
            remove_placement_group(pg)
            names.append(name)
        except Exception:  # noqa: BLE001
            pass
        CREATED.pop(name, None)
    for name in list(INFLIGHT):  # interrupted inside placement_group()
        try:
            hit = lookup(name)
            if hit:
                remove_placement_group(hit[0])
                names.append(name)
        except Exception:  # noqa: BLE001
            pass
        INFLIGHT.discard(name)
    return names


def drop_new_record(spec):
    """Removes the record this failed run wrote for a cluster that was not there."""
    own = (spec or {}).get("own")
    if not own or not NEW_RECORD:
        return
    try:
        if is_ours(own, kv_get(own, own["key"])):
            kv_del(own, own["key"])
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def ignore_signals():
    # Cleanup and the final report must not be interrupted half way.
    for s in (signal.SIGTERM, signal.SIGINT):
        try:
            signal.signal(s, signal.SIG_IGN)
        except (ValueError, OSError):
            pass


def on_signal(signum, frame):
    if STOP_SIGNAL:
        return
    STOP_SIGNAL.append(signum)
    ignore_signals()
    raise KeyboardInterrupt  # Ray converts this cleanly inside ray.get/wait


def main():
    result = {"ok": False, "action": "", "error": None, "groups": [], "removed": [], "missing": [],
              "ray_version": ""}
    code = 1
    spec = None
    try:
        spec = load_spec(sys.argv)
        result["action"] = spec["action"]
        imports = 0.0
        if connect_direct(spec):
            result["ray_version"] = GCS[0].version
        else:
            t = time.monotonic()
            import_ray()
            imports = time.monotonic() - t
            result["ray_version"] = ray.__version__
            ray.init(namespace=spec["namespace"], log_to_driver=False)
        # ray.init installs its own SIGTERM handler; ours must come after it.
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        progress("started", action=spec["action"], groups=len(spec["groups"]), imports=round(imports, 3),
                 connect="gcs" if GCS else "ray.init")
        action = {"create": do_create, "delete": do_delete, "inspect": do_inspect, "record": do_record,
                  "read": do_read}[spec["action"]]
        result.update(action(spec))
        ignore_signals()
        result["ok"] = True
        code = 0
    except BaseException as e:  # noqa: BLE001
        ignore_signals()
        if STOP_SIGNAL:
            kind, msg = "internal", "driver stopped by signal %d" % STOP_SIGNAL[0]
        elif isinstance(e, DriverError):
            kind, msg = e.kind, e.message
        elif isinstance(e, (KeyboardInterrupt, SystemExit)):
            kind, msg = "internal", "driver interrupted (%s)" % type(e).__name__
        else:
            kind, msg = "internal", "%s: %s" % (type(e).__name__, e)
            traceback.print_exc()
        removed = cleanup()
        drop_new_record(spec)
        if removed:
            msg += "; removed group(s) created by this run: %s" % ", ".join(json.dumps(n) for n in removed)
        result["removed"] = result["removed"] + removed
        result["groups"] = []
        result["error"] = {"kind": kind, "message": msg}
        result.update(FAILURE_VIEW)
    emit("RAYTF_RESULT", result, leading_newline=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # The groups are detached and outlive us: skipping ray.shutdown() saves
    # about a second per job (and, when stopped, beats the supervisor's SIGKILL).
    os._exit(code)


main()
