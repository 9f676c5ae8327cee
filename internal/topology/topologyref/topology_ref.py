# Reference topology maths: plain-Python versions of the
# virtual-cluster helpers, written from the rules the reference API documents
# (/work/shared/reference/virtual_cluster_api.md), run on the inputs Go writes
# (internal/topology/topologyref) so that both languages work on identical data.
#
#   python topology_ref.py <inputs.json> <min seconds per function>
#
# prints one JSON line: for each function the median wall and process-CPU
# seconds per call, the number of calls, and its output so Go can check both
# sides computed the same thing.
import json
import statistics
import sys
import time

NVLINK_DOMAIN_UNKNOWN = "unknown"
TOPO_RANK_UNKNOWN = -1
DOMAIN_CONSTRAINT_AMOUNT = 0.001


class ResourceInsufficientError(Exception):
    pass


def _domains_in_topological_order(topology):
    """Known-domain nodes bucketed by domain, each bucket by topo_rank, the
    buckets by their lowest topo_rank."""
    buckets = {}
    for node_id, (domain, rank) in topology.items():
        if domain == NVLINK_DOMAIN_UNKNOWN:
            continue
        buckets.setdefault(domain, []).append((rank, node_id))
    for members in buckets.values():
        members.sort(key=lambda m: m[0])
    return sorted(buckets.values(), key=lambda members: members[0][0])


def select_segment_nodes(topology, segment_size, num_nodes):
    """Whole segments of segment_size nodes, greedily from each NVLink domain
    in topological order, until num_nodes are selected."""
    if num_nodes % segment_size != 0:
        raise ValueError("num_nodes (%d) must be divisible by segment_size (%d)" % (num_nodes, segment_size))
    needed = num_nodes // segment_size
    selected = []
    for members in _domains_in_topological_order(topology):
        if needed == 0:
            break
        take = min(len(members) // segment_size, needed)
        selected.extend(node_id for _, node_id in members[: take * segment_size])
        needed -= take
    if needed:
        raise ResourceInsufficientError("cannot form %d complete segments of %d nodes" % (
            num_nodes // segment_size, segment_size))
    chosen = set(selected)
    remaining = [node_id for node_id in topology if node_id not in chosen]
    return selected, remaining


def prepare_segment_selection(topology, segment_size, num_nodes, role="training"):
    """prepare_segment_topology's selection: one domain-pinning constraint
    per selected node, and the progress line (built, not printed)."""
    if not any(domain != NVLINK_DOMAIN_UNKNOWN for domain, _ in topology.values()):
        return None, list(topology), "segment_size=%d is set but no NVLink domain info found, " \
            "falling back to unordered allocation" % segment_size
    selected, remaining = select_segment_nodes(topology, segment_size, num_nodes)
    constraints = [{topology[node_id][0]: DOMAIN_CONSTRAINT_AMOUNT} for node_id in selected]
    domains = len({topology[node_id][0] for node_id in selected})
    message = "Topology-aware allocation: %d %s nodes in %d NVLink domains (segment_size=%d)" % (
        num_nodes, role, domains, segment_size)
    return constraints, remaining, message


def sort_bundle_indices_by_topology(bundle_data, segment_size=None, gpus_per_node=None):
    """bundle_data[i] = (gpu_id, nvlink_domain, topo_rank, node_id)."""
    if segment_size is not None and gpus_per_node is None:
        raise ValueError("gpus_per_node is required when segment_size is set")
    indices = list(range(len(bundle_data)))
    has_topology = any(d != NVLINK_DOMAIN_UNKNOWN or r != TOPO_RANK_UNKNOWN for _, d, r, _ in bundle_data)
    if not has_topology:
        return sorted(indices, key=lambda i: (bundle_data[i][3], bundle_data[i][0]))
    if segment_size is not None:
        by_domain = {}
        for i in indices:
            by_domain.setdefault(bundle_data[i][1], []).append(i)
        kept = []
        for members in by_domain.values():
            nodes = {bundle_data[i][3] for i in members}
            usable_nodes = len(nodes) // segment_size * segment_size
            members.sort(key=lambda i: (bundle_data[i][2], bundle_data[i][0]))
            kept.extend(members[: usable_nodes * gpus_per_node])
        indices = kept
    domain_min = {}
    for i in indices:
        _, domain, rank, _ = bundle_data[i]
        if domain not in domain_min or rank < domain_min[domain]:
            domain_min[domain] = rank
    return sorted(indices, key=lambda i: (domain_min[bundle_data[i][1]], bundle_data[i][2], bundle_data[i][0]))


def check_feasibility(groups, nodes):
    """A simple static check: per-resource totals, every bundle fits some
    node, then a greedy first-fit placement that honours the strategies.
    groups: [{"name", "strategy", "bundles": [{resource: amount}]}];
    nodes: [{"id", "available": {resource: amount}}]. Returns error strings."""
    errors = []
    free = [dict(n["available"]) for n in nodes]
    requested, available = {}, {}
    for g in groups:
        for b in g["bundles"]:
            for k, v in b.items():
                requested[k] = requested.get(k, 0.0) + v
    for f in free:
        for k, v in f.items():
            available[k] = available.get(k, 0.0) + v
    for k, v in requested.items():
        if v > available.get(k, 0.0) + 1e-9:
            errors.append("not enough %s: requested %g, %g available" % (k, v, available.get(k, 0.0)))
    if errors:
        return errors
    # Nodes holding each resource, to look only where a bundle can land.
    holders = {}
    for ni, f in enumerate(free):
        for k, v in f.items():
            if v > 0:
                holders.setdefault(k, []).append(ni)

    def candidates(bundle):
        rarest = min(bundle, key=lambda k: len(holders.get(k, ())))
        return holders.get(rarest, ())

    def fits(bundle, ni):
        f = free[ni]
        return all(f.get(k, 0.0) + 1e-9 >= v for k, v in bundle.items())

    def take(bundle, ni):
        f = free[ni]
        for k, v in bundle.items():
            f[k] -= v

    for g in groups:
        strategy = g["strategy"]
        if strategy == "STRICT_PACK":
            total = {}
            for b in g["bundles"]:
                for k, v in b.items():
                    total[k] = total.get(k, 0.0) + v
            ni = next((ni for ni in candidates(total) if fits(total, ni)), None)
            if ni is None:
                errors.append("group %r: no node holds all its bundles" % g["name"])
            else:
                take(total, ni)
            continue
        used = set()
        last = None
        for bi, b in enumerate(g["bundles"]):
            order = candidates(b)
            if strategy == "PACK" and last is not None and fits(b, last):
                ni = last
            else:
                ni = next((ni for ni in order if (strategy != "STRICT_SPREAD" or ni not in used) and fits(b, ni)), None)
            if ni is None:
                errors.append("bundle %d of group %r fits no node" % (bi, g["name"]))
                break
            take(b, ni)
            used.add(ni)
            last = ni
    return errors


def timed(fn, min_seconds):
    """Median wall and process-CPU seconds per call, the call count, the
    last output."""
    walls, cpus = [], []
    out = None
    deadline = time.perf_counter() + min_seconds
    while len(walls) < 3 or time.perf_counter() < deadline:
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        if len(walls) >= 1000:
            break
    return {"s": statistics.median(walls), "cpu": statistics.median(cpus), "calls": len(walls)}, out


def main():
    with open(sys.argv[1]) as f:
        inputs = json.load(f)
    min_seconds = float(sys.argv[2])
    topology = {n["id"]: (n["domain"], n["rank"]) for n in inputs["topology"]}
    bundles = [(b["gpu"], b["domain"], b["rank"], b["node"]) for b in inputs["bundles"]]
    seg, num, gpus = inputs["segment_size"], inputs["num_nodes"], inputs["gpus_per_node"]
    result = {}

    t, (selected, remaining) = timed(lambda: select_segment_nodes(topology, seg, num), min_seconds)
    result["select"] = dict(t, selected=selected, remaining=remaining)
    t, (constraints, remaining, message) = timed(lambda: prepare_segment_selection(topology, seg, num), min_seconds)
    result["prepare"] = dict(t, constraints=constraints, remaining=len(remaining), message=message)
    t, order = timed(lambda: sort_bundle_indices_by_topology(bundles, seg, gpus), min_seconds)
    result["sort"] = dict(t, order=order)
    t, errors = timed(lambda: check_feasibility(inputs["groups"], inputs["nodes"]), min_seconds)
    result["feasibility"] = dict(t, errors=errors)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
