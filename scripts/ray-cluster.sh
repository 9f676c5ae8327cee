#!/usr/bin/env bash
# Starts or stops a local multi-node Ray cluster on loopback with logical GPUs and
# NVLink-domain / topo_rank custom resources, for the acceptance tests and `make demo`.
#
#   scripts/ray-cluster.sh start    # head + worker nodes from the NODES table below
#   scripts/ray-cluster.sh stop
#   scripts/ray-cluster.sh status
#
# Environment: RAY_BIN (directory holding `ray`, default: scripts/install-ray.sh),
# RAY_TF_GCS_PORT (6379), RAY_TF_DASHBOARD_PORT (8265).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
RAY_BIN="${RAY_BIN:-$("$here/install-ray.sh")}"
export PATH="$RAY_BIN:$PATH" # job entrypoints run `python` from the same virtualenv
gcs_port="${RAY_TF_GCS_PORT:-6379}"
dash_port="${RAY_TF_DASHBOARD_PORT:-8265}"
address="127.0.0.10:$gcs_port"

# name        cpus gpus resources (JSON)
NODES=(
  "head       4    0    {\"topo_rank\":1}"
  "rackA-1    4    4    {\"nvlink_domain_rackA\":1,\"topo_rank\":3}"
  "rackA-2    4    4    {\"nvlink_domain_rackA\":1,\"topo_rank\":2}"
  "rackB-1    4    4    {\"nvlink_domain_rackB\":1,\"topo_rank\":5}"
  "rackB-2    4    4    {\"nvlink_domain_rackB\":1,\"topo_rank\":4}"
  "rackC-1    4    4    {\"nvlink_domain_rackC\":1,\"topo_rank\":6}"
)

node_ip() { echo "127.0.0.$((10 + $1))"; } # one loopback address per node (Ray rewrites 127.0.0.1 to the host IP)

common_flags() { # $1: node index; gives every raylet on this host its own ports
  local i=$1 base=$((20000 + $1 * 1000))
  echo --node-ip-address="$(node_ip $i)" --object-store-memory=100000000 \
    --node-manager-port=$((base + 1)) --object-manager-port=$((base + 2)) \
    --dashboard-agent-grpc-port=$((base + 3)) --dashboard-agent-listen-port=$((base + 4)) \
    --metrics-export-port=$((base + 5)) --runtime-env-agent-port=$((base + 6)) \
    --min-worker-port=$((base + 100)) --max-worker-port=$((base + 999))
}

wait_for_nodes() {
  local want=$1 deadline=$((SECONDS + 180)) n=0
  while [ $SECONDS -lt $deadline ]; do
    n=$(curl -fsS "http://127.0.0.1:$dash_port/api/v0/nodes?limit=1000&filter_keys=state&filter_predicates=%3D&filter_values=ALIVE" 2>/dev/null |
      python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]["result"]))' 2>/dev/null || echo 0)
    [ "$n" -ge "$want" ] && { echo ">> Ray reports $n alive nodes at http://127.0.0.1:$dash_port" >&2; return 0; }
    sleep 2
  done
  echo "!! Ray reports $n of $want nodes alive after 180s" >&2
  return 1
}

start() {
  if curl -fsS "http://127.0.0.1:$dash_port/api/version" >/dev/null 2>&1; then
    echo ">> a Ray dashboard already answers on 127.0.0.1:$dash_port; reusing it" >&2
    wait_for_nodes "${#NODES[@]}"
    return
  fi
  local i=0 name cpus gpus res
  for row in "${NODES[@]}"; do
    read -r name cpus gpus res <<<"$row"
    echo ">> starting Ray node $name (CPU=$cpus GPU=$gpus $res)" >&2
    if [ $i -eq 0 ]; then
      ray start --head --port="$gcs_port" --dashboard-host=127.0.0.1 --dashboard-port="$dash_port" \
        --num-cpus="$cpus" --num-gpus="$gpus" --resources="$res" --disable-usage-stats \
        $(common_flags $i) >/dev/null
    else
      ray start --address="$address" --num-cpus="$cpus" --num-gpus="$gpus" --resources="$res" \
        $(common_flags $i) >/dev/null
    fi
    i=$((i + 1))
  done
  wait_for_nodes "${#NODES[@]}"
}

case "${1:-}" in
  start) start ;;
  stop) ray stop --force >/dev/null 2>&1 || true; echo ">> Ray stopped" >&2 ;;
  status) ray status --address="$address" ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
