#!/usr/bin/env bash
# Starts or stops a local multi-node Ray cluster on loopback with logical GPUs and
# NVLink-domain / topo_rank custom resources, for the acceptance tests and `make demo`.
#
#   scripts/ray-cluster.sh start    # head + the worker nodes of the NODES table marked to boot
#   scripts/ray-cluster.sh stop     # every process of THIS cluster (by pid), extra nodes included
#   scripts/ray-cluster.sh status
#   scripts/ray-cluster.sh restart          # stop, then start
#   scripts/ray-cluster.sh stop-node NAME   # stop one worker node (e.g. rackC-1): its raylet and processes
#   scripts/ray-cluster.sh start-node NAME  # start it (again) with its flags; also the extra node rackB-0
#   scripts/ray-cluster.sh ensure           # start whatever is missing until every boot node is alive
#   scripts/ray-cluster.sh start-auth       # a separate single-node head with token authentication
#   scripts/ray-cluster.sh stop-auth        # stop only that cluster
#   scripts/ray-cluster.sh auth-token       # print its token
#   scripts/ray-cluster.sh node-pids NAME   # the processes stop-node would stop
#   scripts/ray-cluster.sh pids             # the processes stop would stop
#
# Node labels mirror the custom resources, for label-based topology (Ray >= 2.55.1):
#   raytf.io/nvlink-domain=<X>   on nodes with resource nvlink_domain_<X> (e.g. rackA)
#   raytf.io/topo-rank=<N>       on every node, N = its topo_rank resource
# (Ray adds its own ray.io/node-id etc.; keys under ray.io/ are reserved for Ray.)
#
# Nothing here ever runs `ray stop`: that would also end a user's own local Ray
# and any other test cluster on the machine. Processes are found by the node
# addresses, ports and temp dir this script gave them.
#
# Environment (defaults in brackets); change them together to run a second,
# independent cluster beside the default one (`make demo` runs its own this way,
# see scripts/env.sh):
#   RAY_BIN                directory holding `ray` [scripts/install-ray.sh]
#   RAY_TF_IP_BASE         node i listens on 127.0.0.(BASE+i) [10]
#   RAY_TF_GCS_PORT        GCS port of the head [6379]
#   RAY_TF_DASHBOARD_PORT  dashboard port on 127.0.0.1 [8265]
#   RAY_TF_PORT_BASE       node i uses ports BASE+i*STRIDE .. BASE+(i+1)*STRIDE-1 [20000]
#   RAY_TF_PORT_STRIDE     ports per node, at least 200 (workers take all but the first 100) [1000]
#   RAY_TF_TEMP_DIR        the head's --temp-dir, shared by its nodes [/tmp/raytf-<RAY_TF_IP_BASE>]
#   RAY_TF_NODES           names of the nodes `start` boots, e.g. "head rackA-1 rackA-2" [the rows marked yes]
#   RAY_TF_NODE_CPUS       logical CPUs of every node [the NODES table's column]
#   RAY_TF_NODE_TABLE      which NODES table: default (head + five 4-GPU nodes, one extra),
#                          gpu8x8 (head + eight 8-GPU nodes in 4 NVLink domains of 2),
#                          shapes (head + three 12-GPU nodes, each its own NVLink domain),
#                          or gpu2x7 (head + seven 2-GPU nodes) [default]
#   e.g. RAY_TF_IP_BASE=60 RAY_TF_GCS_PORT=6479 RAY_TF_DASHBOARD_PORT=8365 RAY_TF_PORT_BASE=40000
# stop-node kills with SIGTERM (Ray's raylet then leaves the cluster at once); with
# RAY_TF_STOP_SIGNAL=KILL it is killed outright and Ray notices through its health checks.
# The token cluster: RAY_TF_AUTH_DIR (its --temp-dir, default /tmp/raytf-auth),
# RAY_TF_AUTH_TOKEN (default: a random token, kept in $RAY_TF_AUTH_DIR/token),
# GCS 127.0.0.30:6390, dashboard http://127.0.0.1:8266, other ports 30000+.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
RAY_BIN="${RAY_BIN:-$("$here/install-ray.sh")}"
export PATH="$RAY_BIN:$PATH" # job entrypoints run `python` from the same virtualenv
ip_base="${RAY_TF_IP_BASE:-10}"
gcs_port="${RAY_TF_GCS_PORT:-6379}"
dash_port="${RAY_TF_DASHBOARD_PORT:-8265}"
port_base="${RAY_TF_PORT_BASE:-20000}"
port_stride="${RAY_TF_PORT_STRIDE:-1000}"
temp_dir="${RAY_TF_TEMP_DIR:-/tmp/raytf-$ip_base}"
boot_nodes="${RAY_TF_NODES:-}"
dashboard="http://127.0.0.1:$dash_port"

# name        boot cpus gpus resources (JSON)
# Rows with boot=no are extra nodes that only start-node starts (cluster churn tests).
node_table="${RAY_TF_NODE_TABLE:-default}"
case "$node_table" in
  default)
    NODES=(
      "head       yes  4    0    {\"topo_rank\":1}"
      "rackA-1    yes  4    4    {\"nvlink_domain_rackA\":1,\"topo_rank\":3}"
      "rackA-2    yes  4    4    {\"nvlink_domain_rackA\":1,\"topo_rank\":2}"
      "rackB-1    yes  4    4    {\"nvlink_domain_rackB\":1,\"topo_rank\":5}"
      "rackB-2    yes  4    4    {\"nvlink_domain_rackB\":1,\"topo_rank\":4}"
      "rackC-1    yes  4    4    {\"nvlink_domain_rackC\":1,\"topo_rank\":6}"
      "rackB-0    no   4    4    {\"nvlink_domain_rackB\":1,\"topo_rank\":0}"
    )
    ;;
  gpu8x8)
    # 64 logical GPUs for the 64-bundle benchmark rows (BENCH_PART=gpu64): 8 nodes of
    # 8, in 4 NVLink domains of 2 (segment_size = 2). 8 CPUs a node because every
    # bundle, NeMo-RL's and the provider's, holds one CPU beside its GPU; the head
    # holds no GPU and only 2 CPUs (drivers and job supervisors take none).
    NODES=(
      "head       yes  2    0    {\"topo_rank\":1}"
      "rackA-1    yes  8    8    {\"nvlink_domain_rackA\":1,\"topo_rank\":3}"
      "rackA-2    yes  8    8    {\"nvlink_domain_rackA\":1,\"topo_rank\":2}"
      "rackB-1    yes  8    8    {\"nvlink_domain_rackB\":1,\"topo_rank\":5}"
      "rackB-2    yes  8    8    {\"nvlink_domain_rackB\":1,\"topo_rank\":4}"
      "rackC-1    yes  8    8    {\"nvlink_domain_rackC\":1,\"topo_rank\":7}"
      "rackC-2    yes  8    8    {\"nvlink_domain_rackC\":1,\"topo_rank\":6}"
      "rackD-1    yes  8    8    {\"nvlink_domain_rackD\":1,\"topo_rank\":9}"
      "rackD-2    yes  8    8    {\"nvlink_domain_rackD\":1,\"topo_rank\":8}"
    )
    ;;
  shapes)
    # The many-clusters-by-shape benchmark (BENCH_PART=shapes): few nodes, many GPUs.
    # Each node is its own NVLink domain, so node_resource_constraints pin a cluster
    # to one node (as NeMo-RL pins segments): 12 one-bundle clusters fit on one node,
    # or spread over all three. 12 CPUs a node because every bundle holds one; the
    # head holds no GPU (drivers and job supervisors take none).
    NODES=(
      "head       yes  2    0    {\"topo_rank\":1}"
      "rackA-1    yes  12   12   {\"nvlink_domain_rackA\":1,\"topo_rank\":2}"
      "rackB-1    yes  12   12   {\"nvlink_domain_rackB\":1,\"topo_rank\":3}"
      "rackC-1    yes  12   12   {\"nvlink_domain_rackC\":1,\"topo_rank\":4}"
    )
    ;;
  gpu2x7)
    # Part 7's shape of twelve one-GPU clusters that Ray places (issue 53): many
    # small nodes, so that Ray, not a pin, spreads them. 2 CPUs a node (every
    # bundle holds one beside its GPU); the head holds no GPU.
    NODES=(
      "head       yes  2    0    {\"topo_rank\":1}"
      "rackA-1    yes  2    2    {\"nvlink_domain_rackA\":1,\"topo_rank\":3}"
      "rackA-2    yes  2    2    {\"nvlink_domain_rackA\":1,\"topo_rank\":2}"
      "rackB-1    yes  2    2    {\"nvlink_domain_rackB\":1,\"topo_rank\":5}"
      "rackB-2    yes  2    2    {\"nvlink_domain_rackB\":1,\"topo_rank\":4}"
      "rackC-1    yes  2    2    {\"nvlink_domain_rackC\":1,\"topo_rank\":7}"
      "rackC-2    yes  2    2    {\"nvlink_domain_rackC\":1,\"topo_rank\":6}"
      "rackD-1    yes  2    2    {\"nvlink_domain_rackD\":1,\"topo_rank\":8}"
    )
    ;;
  *)
    echo "!! unknown RAY_TF_NODE_TABLE=$node_table (default, gpu8x8, shapes or gpu2x7)" >&2
    exit 2
    ;;
esac

# one loopback address per node (Ray rewrites 127.0.0.1 to the host IP)
node_ip() { echo "127.0.0.$((ip_base + $1))"; }
node_port_base() { echo $((port_base + $1 * port_stride)); }
address="$(node_ip 0):$gcs_port"

boots() { # NAME BOOT-COLUMN: whether `start` starts that node
  if [ -n "$boot_nodes" ]; then [[ " $boot_nodes " == *" $1 "* ]]; else [ "$2" = yes ]; fi
}

boot_count() { # number of nodes `start` starts
  local n=0 name boot rest
  for row in "${NODES[@]}"; do
    read -r name boot rest <<<"$row"
    if boots "$name" "$boot"; then n=$((n + 1)); fi
  done
  echo "$n"
}

common_flags() { # $1: node index; gives every raylet on this host its own ports
  local i=$1 base
  base=$(node_port_base "$1")
  echo --node-ip-address="$(node_ip "$i")" --object-store-memory=100000000 \
    --node-manager-port=$((base + 1)) --object-manager-port=$((base + 2)) \
    --dashboard-agent-grpc-port=$((base + 3)) --dashboard-agent-listen-port=$((base + 4)) \
    --metrics-export-port=$((base + 5)) --runtime-env-agent-port=$((base + 6)) \
    --min-worker-port=$((base + 100)) --max-worker-port=$((base + port_stride - 1))
}

label_domain_key=raytf.io/nvlink-domain
label_rank_key=raytf.io/topo-rank

node_labels() { # resources JSON -> the `ray start --labels` value mirroring them
  local res=$1 labels=""
  [[ $res =~ \"nvlink_domain_([A-Za-z0-9_.-]+)\" ]] && labels="$label_domain_key=${BASH_REMATCH[1]}"
  [[ $res =~ \"topo_rank\":([0-9]+) ]] && labels="${labels:+$labels,}$label_rank_key=${BASH_REMATCH[1]}"
  echo "$labels"
}

main_env() { # the test cluster never gets token authentication from the caller's environment
  unset RAY_AUTH_MODE RAY_AUTH_TOKEN RAY_AUTH_TOKEN_PATH
}

wait_for_nodes() {
  local want=$1 deadline=$((SECONDS + 180)) n=0
  while [ $SECONDS -lt $deadline ]; do
    n=$(curl -fsS "$dashboard/api/v0/nodes?limit=1000&filter_keys=state&filter_predicates=%3D&filter_values=ALIVE" 2>/dev/null |
      python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]["result"]))' 2>/dev/null || echo 0)
    [ "$n" -ge "$want" ] && { echo ">> Ray reports $n alive nodes at $dashboard" >&2; return 0; }
    sleep 2
  done
  echo "!! Ray reports $n of $want nodes alive after 180s" >&2
  return 1
}

ray_start_node() { # index: `ray start` for that node (the head when 0)
  local i=$1 name boot cpus gpus res labels
  read -r name boot cpus gpus res <<<"${NODES[$i]}"
  cpus="${RAY_TF_NODE_CPUS:-$cpus}"
  labels=$(node_labels "$res")
  echo ">> starting Ray node $name at $(node_ip "$i") (CPU=$cpus GPU=$gpus $res, labels $labels)" >&2
  if [ "$i" -eq 0 ]; then
    # Worker nodes take the head's temp dir from the GCS (both Ray 2.55 and 2.60).
    # On a busy machine the dashboard's modules take longer than Ray's 30s to start.
    RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT="${RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT:-180}" \
      ray start --head --port="$gcs_port" --dashboard-host=127.0.0.1 --dashboard-port="$dash_port" \
        --temp-dir="$temp_dir" --ray-client-server-port=$(($(node_port_base 0) + 7)) \
        --num-cpus="$cpus" --num-gpus="$gpus" --resources="$res" --labels="$labels" --disable-usage-stats \
        $(common_flags "$i") >/dev/null
  else
    # One log monitor per machine, as Ray asks: the nodes share the head's logs
    # directory, and each extra monitor re-scans it ten times a second (with
    # six nodes they took half a core of the two, and the demo's as much again).
    ray start --address="$address" --num-cpus="$cpus" --num-gpus="$gpus" --resources="$res" --labels="$labels" \
      --include-log-monitor=false $(common_flags "$i") >/dev/null
  fi
}

start() {
  # `ray start` turns token auth on whenever a token is in the environment;
  # the test cluster runs without it (start-auth is the authenticated one).
  main_env
  if curl -fsS "$dashboard/api/version" >/dev/null 2>&1; then
    echo ">> a Ray dashboard already answers on $dashboard; reusing it" >&2
    wait_for_nodes "$(boot_count)"
    return
  fi
  # On a busy machine `ray start` gives up after its fixed 30s wait for the GCS;
  # what started is stopped and the cluster started once more.
  local attempt
  for attempt in 1 2; do
    start_once && return 0
    echo "!! Ray did not start (attempt $attempt); stopping what started" >&2
    stop_cluster
  done
  return 1
}

start_once() {
  local i=0 name boot rest
  for row in "${NODES[@]}"; do
    read -r name boot rest <<<"$row"
    if boots "$name" "$boot"; then ray_start_node "$i" || return 1; fi
    i=$((i + 1))
  done
  wait_for_nodes "$(boot_count)"
}

# ---- single nodes, restart, ensure -------------------------------------------------

# proc_tree [-s] ARG...: pids of the processes whose argv holds every ARG as a whole
# argument (with -s: whose joined command line contains every ARG), and of all their
# descendants (workers, agents and job drivers are children of their raylet).
proc_tree() {
  python3 - "$@" <<'PY'
import os, sys
args = sys.argv[1:]
substr = bool(args) and args[0] == "-s"
if substr:
    args = args[1:]
me = os.getpid()
procs = {}
for d in os.listdir("/proc"):
    if not d.isdigit() or int(d) == me:
        continue
    try:
        with open("/proc/%s/cmdline" % d, "rb") as f:
            argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        with open("/proc/%s/stat" % d, "rb") as f:
            stat = f.read()
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        continue
    procs[int(d)] = (ppid, argv)
def match(argv):
    if substr:
        line = " ".join(argv)
        return all(a in line for a in args)
    return all(a in argv for a in args)
roots = [p for p, (_, argv) in procs.items() if argv and match(argv)]
children = {}
for p, (pp, _) in procs.items():
    children.setdefault(pp, []).append(p)
seen, todo = set(), list(roots)
while todo:
    p = todo.pop()
    if p in seen or p == me:
        continue
    seen.add(p)
    todo.extend(children.get(p, []))
print(" ".join(str(p) for p in sorted(seen)))
PY
}

# stop_pids SIGNAL PID...: signals the processes, waits up to 15s, then SIGKILLs what is left.
stop_pids() {
  local sig=$1 deadline left p
  shift
  [ $# -gt 0 ] || return 0
  kill -s "$sig" "$@" 2>/dev/null || true
  deadline=$((SECONDS + 15))
  while :; do
    left=""
    for p in "$@"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
    [ -z "$left" ] && return 0
    [ $SECONDS -ge $deadline ] && break
    sleep 0.2
  done
  # shellcheck disable=SC2086
  kill -s KILL $left 2>/dev/null || true
}

node_index() { # NAME -> index in NODES
  local i=0 name rest
  for row in "${NODES[@]}"; do
    read -r name rest <<<"$row"
    [ "$name" = "$1" ] && { echo "$i"; return 0; }
    i=$((i + 1))
  done
  echo "!! unknown node $1 (one of: $(for r in "${NODES[@]}"; do read -r n _ <<<"$r"; printf '%s ' "$n"; done))" >&2
  return 1
}

node_pids() { # index -> pids of that node's raylet, log monitor and their descendants
  local i=$1 ip base
  ip=$(node_ip "$i")
  base=$(node_port_base "$i")
  echo "$(proc_tree "--node_ip_address=$ip" "--node_manager_port=$((base + 1))") $(proc_tree "--node-ip-address=$ip" "--gcs-address=$address")"
}

cluster_pids() { # every process of this cluster, one a line
  local i=0 row
  {
    for row in "${NODES[@]}"; do
      node_pids "$i"
      i=$((i + 1))
    done
    proc_tree "--gcs-address=$address"                                       # autoscaler monitor, dashboard
    proc_tree "--address=$address"                                           # Ray client server
    proc_tree "--gcs_server_port=$gcs_port" "--node-ip-address=$(node_ip 0)" # GCS
    # Leftovers whose raylet is gone (orphaned workers) name the temp dir; the
    # default /tmp/ray may belong to someone else's Ray.
    if [ "$temp_dir" != /tmp/ray ]; then proc_tree -s "$temp_dir/"; fi
  } | tr ' ' '\n' | grep . | sort -un || true
}

# stop_in_order SIGNAL PID...: raylets first and the GCS last, as Ray's own
# shutdown does, so that nothing waits on a dead GCS.
stop_in_order() {
  local sig=$1 p exe raylets="" gcs="" rest=""
  shift
  for p in "$@"; do
    exe=""
    IFS= read -r -d '' exe 2>/dev/null <"/proc/$p/cmdline" || true # argv[0]
    case "$exe" in
      */raylet/raylet) raylets="$raylets $p" ;;
      */gcs/gcs_server) gcs="$gcs $p" ;;
      *) rest="$rest $p" ;;
    esac
  done
  # shellcheck disable=SC2086
  stop_pids "$sig" $raylets
  # shellcheck disable=SC2086
  stop_pids "$sig" $rest
  # shellcheck disable=SC2086
  stop_pids "$sig" $gcs
}

stop_cluster() {
  local pids
  pids=$(cluster_pids)
  # shellcheck disable=SC2086
  stop_in_order TERM $pids
  echo ">> Ray cluster $address stopped ($(echo "$pids" | grep -c . || true) processes)" >&2
}

alive_ips() { # node IPs Ray reports ALIVE, one a line (nothing when the dashboard is down)
  curl -fsS "http://127.0.0.1:$dash_port/api/v0/nodes?limit=1000&filter_keys=state&filter_predicates=%3D&filter_values=ALIVE" 2>/dev/null |
    python3 -c 'import json,sys; [print(n["node_ip"]) for n in json.load(sys.stdin)["data"]["result"]["result"]]' 2>/dev/null || true
}

wait_for_ip() { # IP alive|gone SECONDS
  local ip=$1 want=$2 deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    if alive_ips | grep -qxF "$ip"; then
      [ "$want" = alive ] && return 0
    else
      [ "$want" = gone ] && return 0
    fi
    sleep 0.5
  done
  echo "!! node $ip is not $want after $3s" >&2
  return 1
}

stop_node() {
  local i pids sig="${RAY_TF_STOP_SIGNAL:-TERM}"
  i=$(node_index "$1")
  if [ "$i" -eq 0 ]; then
    echo "!! $1 is the head node; use restart" >&2
    return 2
  fi
  pids=$(node_pids "$i")
  # shellcheck disable=SC2086
  set -- $pids
  if [ $# -eq 0 ]; then
    echo ">> Ray node ${NODES[$i]%% *} has no running processes" >&2
  else
    echo ">> stopping Ray node $(node_ip "$i") ($# processes, SIG$sig)" >&2
    stop_pids "$sig" "$@"
  fi
  wait_for_ip "$(node_ip "$i")" gone 120
  echo ">> Ray no longer reports node $(node_ip "$i") alive" >&2
}

start_node() {
  local i name=$1 raylet
  i=$(node_index "$name")
  if [ "$i" -eq 0 ]; then
    echo "!! $name is the head node; use restart" >&2
    return 2
  fi
  raylet=$(proc_tree "--node_ip_address=$(node_ip "$i")" "--node_manager_port=$(($(node_port_base "$i") + 1))")
  if [ -n "$raylet" ] && alive_ips | grep -qxF "$(node_ip "$i")"; then
    echo ">> Ray node $name is already running" >&2
    return 0
  fi
  [ -n "$raylet" ] && stop_node "$name" # half-dead leftovers
  ray_start_node "$i"
  wait_for_ip "$(node_ip "$i")" alive 120
  echo ">> Ray reports node $name ($(node_ip "$i")) alive" >&2
}

ensure() { # extra (boot=no) nodes are left as they are
  if ! curl -fsS "$dashboard/api/version" >/dev/null 2>&1; then
    stop_cluster
    start
    return
  fi
  local i=0 name boot rest alive
  alive=$(alive_ips)
  for row in "${NODES[@]}"; do
    read -r name boot rest <<<"$row"
    if boots "$name" "$boot" && ! grep -qxF "$(node_ip $i)" <<<"$alive"; then
      if [ $i -eq 0 ]; then
        echo "!! the head node is not alive; restarting the cluster" >&2
        stop_cluster
        start
        return
      fi
      start_node "$name"
    fi
    i=$((i + 1))
  done
  wait_for_nodes "$(boot_count)"
}

# ---- a second, token-authenticated cluster -------------------------------------------

auth_dir="${RAY_TF_AUTH_DIR:-/tmp/raytf-auth}"
auth_ip=127.0.0.30
auth_gcs=6390
auth_dash=8266

auth_nodes() { # alive node count of the token cluster (0 when down or rejected)
  curl -fsS -H "Authorization: Bearer $(cat "$auth_dir/token" 2>/dev/null)" \
    "http://127.0.0.1:$auth_dash/api/v0/nodes?limit=100&filter_keys=state&filter_predicates=%3D&filter_values=ALIVE" 2>/dev/null |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]["result"]))' 2>/dev/null || echo 0
}

start_auth() {
  mkdir -p "$auth_dir"
  chmod 700 "$auth_dir"
  if [ -n "${RAY_TF_AUTH_TOKEN:-}" ]; then
    (umask 077 && printf '%s' "$RAY_TF_AUTH_TOKEN" >"$auth_dir/token")
  elif [ ! -s "$auth_dir/token" ]; then
    (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(32), end="")' >"$auth_dir/token")
  fi
  if curl -fsS "http://127.0.0.1:$auth_dash/api/healthz" >/dev/null 2>&1; then
    if [ "$(auth_nodes)" -ge 1 ]; then
      echo ">> the token-authenticated Ray already answers on 127.0.0.1:$auth_dash" >&2
      return 0
    fi
    echo "!! a Ray dashboard on 127.0.0.1:$auth_dash rejects the token in $auth_dir/token; run $0 stop-auth first" >&2
    return 1
  fi
  local attempt
  for attempt in 1 2; do
    start_auth_once && return 0
    echo "!! the token-authenticated Ray did not start (attempt $attempt)" >&2
    stop_auth
  done
  return 1
}

start_auth_once() {
  echo ">> starting a token-authenticated Ray head (GCS $auth_ip:$auth_gcs, dashboard 127.0.0.1:$auth_dash, temp dir $auth_dir)" >&2
  (
    # The token travels in the environment only (never on a command line), and
    # nothing is written to ~/.ray/auth_token, which would turn on token
    # authentication for every other Ray started on this machine.
    unset RAY_ADDRESS RAY_AUTH_TOKEN_PATH
    RAY_AUTH_MODE=token RAY_AUTH_TOKEN="$(cat "$auth_dir/token")" \
      ray start --head --temp-dir="$auth_dir" --node-ip-address="$auth_ip" --port="$auth_gcs" \
      --dashboard-host=127.0.0.1 --dashboard-port="$auth_dash" --num-cpus=4 --num-gpus=2 \
      --resources='{"topo_rank":1}' --disable-usage-stats --object-store-memory=100000000 \
      --node-manager-port=30001 --object-manager-port=30002 --dashboard-agent-grpc-port=30003 \
      --dashboard-agent-listen-port=30004 --metrics-export-port=30005 --runtime-env-agent-port=30006 \
      --ray-client-server-port=30007 --min-worker-port=30100 --max-worker-port=30999 >/dev/null
  ) || return 1
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -lt $deadline ]; do
    [ "$(auth_nodes)" -ge 1 ] && { echo ">> token-authenticated Ray up at http://127.0.0.1:$auth_dash" >&2; return 0; }
    sleep 1
  done
  echo "!! the token-authenticated Ray did not come up in 120s" >&2
  return 1
}

stop_auth() {
  local all
  # Every process of that cluster names its temp dir or GCS address, and the
  # rest descend from those.
  all=$( (proc_tree -s "$auth_dir/"; proc_tree -s "--temp-dir=$auth_dir"; proc_tree -s "$auth_ip:$auth_gcs") | tr ' ' '\n' | grep . | sort -un || true)
  # shellcheck disable=SC2086
  stop_in_order TERM $all
  echo ">> token-authenticated Ray stopped ($(echo "$all" | grep -c . || true) processes)" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop_cluster ;;
  status) ray status --address="$address" ;;
  restart)
    stop_cluster
    start
    ;;
  stop-node) stop_node "${2:?usage: $0 stop-node NAME}" ;;
  start-node) main_env; start_node "${2:?usage: $0 start-node NAME}" ;;
  ensure) main_env; ensure ;;
  start-auth) start_auth ;;
  stop-auth) stop_auth ;;
  auth-token) cat "$auth_dir/token" ;;
  node-pids) i=$(node_index "${2:?usage: $0 node-pids NAME}") && node_pids "$i" ;;
  pids) cluster_pids ;;
  *) echo "usage: $0 start|stop|status|restart|stop-node NAME|start-node NAME|ensure|start-auth|stop-auth|auth-token|node-pids NAME|pids" >&2; exit 2 ;;
esac
