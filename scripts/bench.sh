#!/usr/bin/env bash
# `make bench`: every benchmark of bench/README.md, printed as Markdown and saved to
# bench/out/results.md. Flags are passed to bench/cmd/raybench, e.g.
#
#   scripts/bench.sh                      # everything in bench/README.md
#   scripts/bench.sh -reps 3 -bundles 1,4 # fewer repetitions / sizes
#   BENCH_PART=reference scripts/bench.sh # one part: reference, tofu, trace, refresh, waves, shapes, resize,
#                                         # race, gpu64, topo, topo-ref, topoplan, plan50 or all (default)
#   BENCH_PART=race BENCH_RACE_SECONDS=60 scripts/bench.sh # the race soak, short (smoke check)
#   BENCH_PART=race BENCH_RACE_SECONDS=0 scripts/bench.sh  # the contention rows alone, no soak
#   NEMO_RL_SRC=~/src/RL scripts/bench.sh # also run NeMo-RL's own RayVirtualCluster (reference,
#                                         # trace); skipped with a message when unset
#
# Uses the local Ray at $RAY_ADDRESS; starts the local cluster (scripts/ray-cluster.sh)
# when none answers and stops it afterwards only if it started it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
cd "$root"
source "$here/env.sh"
# The tofu and refresh parts drive OpenTofu (built once when not installed).
tofu="${TOFU:-$(command -v tofu || "$here/install-tofu.sh")}"
out="$root/bench/out"
mkdir -p "$out"
rm -f "$out/topo-ref.md" "$out/topoplan.md" "$out/plan50.md"
part="${BENCH_PART:-all}"

started=""
cleanup() { [ -n "$started" ] && "$here/ray-cluster.sh" stop; true; }
trap cleanup EXIT
offline() { [ "$part" = topo ] || [ "$part" = topo-ref ] || [ "$part" = topoplan ] || [ "$part" = plan50 ] || [ "$part" = waves ] || [ "$part" = shapes ] || [ "$part" = race ] || [ "$part" = gpu64 ]; } # no test cluster needed
if ! offline && ! curl -fsS "$RAY_ADDRESS/api/version" >/dev/null 2>&1; then
  started=1 # set first: a start that fails half-way is cleaned up too
  "$here/ray-cluster.sh" start
fi

echo ">> building bench/cmd/raybench" >&2
go build -o "$out/raybench" ./bench/cmd/raybench

results="$out/results.md"
: >"$results"
if [ "$part" = all ] || [ "$part" = topo ]; then
  # Pure Go, CPU-bound: measured first, before the Ray parts add load (and
  # printed last). -count gives several samples per size (the table shows
  # their median); 500ms per sample keeps the 10,000-node feasibility case at
  # several iterations on 2 cores.
  echo ">> topology benchmarks (go test -bench, -benchtime=${BENCH_TOPO_TIME:-500ms} -count=${BENCH_TOPO_COUNT:-3})" >&2
  go test -run '^$' -bench 'BenchmarkSortBundles|BenchmarkSelectSegmentNodes|BenchmarkCheckPlacement' -benchmem \
    -benchtime="${BENCH_TOPO_TIME:-500ms}" -count="${BENCH_TOPO_COUNT:-3}" ./internal/topology | tee "$out/topology.txt" >&2
fi
status=0
# Pure CPU as well, and no Ray needed: Go vs the Python reference maths, and
# the topology data source at 10,000 nodes and the plans of many clusters (plan50)
# against the stand-in dashboard.
terraform="${TERRAFORM:-/usr/local/bin/terraform}"
[ -x "$terraform" ] || terraform="$tofu"
for p in topo-ref topoplan plan50; do
  if [ "$part" = all ] || [ "$part" = "$p" ]; then
    "$out/raybench" -python "$RAY_BIN/python" -terraform "$terraform" -tofu "$tofu" -out "$out" "$@" "$p" >"$out/$p.md" || status=$?
  fi
done
if ! offline; then
  "$out/raybench" -python "$RAY_BIN/python" -tofu "$tofu" -terraform "$terraform" -address "$RAY_ADDRESS" -out "$out" "$@" "$part" |
    tee -a "$results" || status=$?
fi
# own_cluster_part NAME [raybench flags]: raybench's part NAME against a cluster of its own,
# started from the RAY_TF_* variables the caller exported (in a subshell), beside any
# other, and stopped (by pid) when done. RAY_ADDRESS points at it too, so nothing of the
# part reaches the test cluster.
own_cluster_part() {
  local name=$1
  shift
  export RAY_ADDRESS="http://127.0.0.1:$RAY_TF_DASHBOARD_PORT"
  trap '"$here/ray-cluster.sh" stop' EXIT
  # set -e does not hold here (the caller's subshell runs under `|| status=$?`).
  "$here/ray-cluster.sh" start || return
  "$out/raybench" -python "$RAY_BIN/python" -terraform "$terraform" -address "$RAY_ADDRESS" \
    -gcs "127.0.0.$RAY_TF_IP_BASE:$RAY_TF_GCS_PORT" -out "$out" "$@" "$name" | tee -a "$results"
}
# The parts below each start a cluster of their own, one after another, so they share
# one stretch of ports: 61000-65499, above the kernel's ephemeral range (32768-60999) and
# clear of the test cluster's (20000-26999), the token cluster's (30000-30999) and the
# side clusters other users run beside it (e.g. 11000-17999 at IP base 80; IP bases 80
# and 120, GCS 6480 and 6520, dashboards 8480 and 8520). Parts of more than four nodes
# give each node 500 ports (RAY_TF_PORT_STRIDE) to stay below 65536.
own_ports=61000
# Part 5 needs 50 free CPUs for 50 one-bundle clusters: its own 3-node cluster of 24
# logical CPUs each.
if [ "$part" = all ] || [ "$part" = waves ]; then
  (
    export RAY_TF_IP_BASE=220 RAY_TF_GCS_PORT=6530 RAY_TF_DASHBOARD_PORT=8430 RAY_TF_PORT_BASE=$own_ports \
      RAY_TF_NODES="head rackA-1 rackA-2" RAY_TF_NODE_CPUS=24
    own_cluster_part waves "$@"
  ) || status=$?
fi
# Part 7 (shapes): many clusters by shape against one, on a cluster of each node table the
# shapes name (`raybench shapes-tables`), one after the other: shapes = three 12-GPU nodes,
# each its own NVLink domain, on 127.0.0.160-163, GCS 6560, dashboard 8460; gpu2x7 = seven
# 2-GPU nodes (the shape Ray places itself), on 127.0.0.170-177, GCS 6570, dashboard 8470.
if [ "$part" = all ] || [ "$part" = shapes ]; then
  tables=$("$out/raybench" "$@" shapes-tables) || status=$?
  for table in ${tables:-}; do
    (
      case "$table" in
        shapes) export RAY_TF_IP_BASE=160 RAY_TF_GCS_PORT=6560 RAY_TF_DASHBOARD_PORT=8460 ;;
        gpu2x7) export RAY_TF_IP_BASE=170 RAY_TF_GCS_PORT=6570 RAY_TF_DASHBOARD_PORT=8470 RAY_TF_PORT_STRIDE=500 ;;
        *) echo "!! no cluster for node table $table" >&2; exit 2 ;;
      esac
      export RAY_TF_NODE_TABLE=$table RAY_TF_PORT_BASE=$own_ports
      own_cluster_part shapes -shapes-table "$table" "$@"
    ) || status=$?
  done
fi
# Part 6, the race soak (BENCH_RACE_SECONDS, default 300): 8 states on its own cluster of
# five 4-GPU nodes (the default node table: NVLink domains rackA, rackB, rackC and
# topo_rank), beside the test cluster, the demo's and the waves'.
# Its ports stay out of the kernel's ephemeral range (32768-60999), where a first smoke run
# found the head agent's port already in use and no job could be submitted.
# BENCH_RACE_SECONDS=0 runs the contention rows alone.
if [ "$part" = all ] || [ "$part" = race ]; then
  (
    export RAY_TF_IP_BASE=140 RAY_TF_GCS_PORT=6540 RAY_TF_DASHBOARD_PORT=8440 RAY_TF_PORT_BASE=$own_ports RAY_TF_PORT_STRIDE=500 \
      RAY_TF_TEMP_DIR=/tmp/raytf-bench-race RAY_TF_NODES="head rackA-1 rackA-2 rackB-1 rackB-2 rackC-1"
    own_cluster_part race "$@"
  ) || status=$?
fi
# Part 1d (gpu64): the 64-bundle rows against NeMo-RL ($NEMO_RL_SRC) and the apply against
# its floor, on their own cluster of 64 logical GPUs (the gpu8x8 node table: 8 nodes x 8 GPUs,
# 4 NVLink domains of 2), on its own addresses and nine nodes of 500 ports (61000-65499).
if [ "$part" = all ] || [ "$part" = gpu64 ]; then
  (
    export RAY_TF_NODE_TABLE=gpu8x8 RAY_TF_IP_BASE=130 RAY_TF_GCS_PORT=6679 RAY_TF_DASHBOARD_PORT=8565 \
      RAY_TF_PORT_BASE=$own_ports RAY_TF_PORT_STRIDE=500
    own_cluster_part gpu64 "$@"
  ) || status=$?
fi
if [ "$part" = all ] || [ "$part" = topo ]; then
  {
    echo "## 3. Topology maths (go test -bench ./internal/topology, median of ${BENCH_TOPO_COUNT:-3} runs, ns/node from the benchmarks' own metric)"
    echo
    "$out/raybench" topo <"$out/topology.txt"
  } | tee -a "$results"
fi
for p in topo-ref topoplan plan50; do
  [ -s "$out/$p.md" ] && tee -a "$results" <"$out/$p.md"
done
echo ">> results saved to bench/out/results.md" >&2
exit "$status"
