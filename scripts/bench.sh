#!/usr/bin/env bash
# `make bench`: every benchmark of bench/README.md, printed as Markdown and saved to
# bench/out/results.md. Flags are passed to bench/cmd/raybench, e.g.
#
#   scripts/bench.sh                    # topology maths, apply, tofu, refresh/plan (about 7-8 minutes)
#   scripts/bench.sh -reps 3 -sizes 1,4 # fewer repetitions / sizes
#   BENCH_PART=apply scripts/bench.sh   # one part: topo, apply, tofu, refresh or all (default)
#
# Uses the local Ray at $RAY_ADDRESS; starts the local cluster (scripts/ray-cluster.sh)
# when none answers and stops it afterwards only if it started it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
cd "$root"
source "$here/env.sh"
out="$root/bench/out"
mkdir -p "$out"
part="${BENCH_PART:-all}"

started=""
cleanup() { [ -n "$started" ] && "$here/ray-cluster.sh" stop; true; }
trap cleanup EXIT
if [ "$part" != topo ] && ! curl -fsS "$RAY_ADDRESS/api/version" >/dev/null 2>&1; then
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
if [ "$part" != topo ]; then
  # The CLI part is measured and labelled with OpenTofu, as in bench/README.md.
  tofu_bin="$(command -v tofu || "$here/install-tofu.sh")"
  "$out/raybench" -python "$RAY_BIN/python" -tofu "$tofu_bin" -address "$RAY_ADDRESS" -out "$out" "$@" "$part" |
    tee -a "$results" || status=$?
fi
if [ "$part" = all ] || [ "$part" = topo ]; then
  {
    echo "## 3. Topology maths (go test -bench ./internal/topology, median of ${BENCH_TOPO_COUNT:-3} runs, ns/node from the benchmarks' own metric)"
    echo
    "$out/raybench" topo <"$out/topology.txt"
  } | tee -a "$results"
fi
echo ">> results saved to bench/out/results.md" >&2
exit "$status"
