#!/usr/bin/env bash
# `make testacc`: unit and acceptance tests (TF_ACC=1) against a real local Ray and a
# real CLI. One run is one cell of the CI matrix (.ci/run), chosen by environment:
#
#   RAY_VERSION   Ray of the local cluster [2.60.0] (scripts/install-ray.sh)
#   RAY_TF_CLI    terraform | tofu | a path [scripts/find-cli.sh: terraform, else tofu]
#   RAY_TF_SUITE  full     every test, unit and acceptance [default]
#                 cli      the tests that exercise the CLI itself: provider functions, identity, import, some examples
#                 compat   the tests that depend on the Ray version (the Ray version cell)
#                 gates    the tests of features behind a Ray version gate (the cell inside the gates)
#                 side     the slow, self-contained full-suite tests .ci/run runs beside the full cell
#                          (the full cell then sets RAY_TF_SKIP_SIDE=1 to leave them out)
#                 query    list resources (terraform query, a quota's use), identity and the import example: the
#                          Terraform >= 1.14 cell, ~2 min (its list tests skip on older CLIs and
#                          OpenTofu; the other import tests run in the full cell)
#
#   RAY_VERSION=2.55.1 RAY_TF_SUITE=compat scripts/test.sh
#   RAY_VERSION=2.57.1 RAY_TF_SUITE=gates scripts/test.sh    # inside the feature gates
#   RAY_TF_CLI=tofu RAY_TF_SUITE=cli scripts/test.sh
#   RAY_TF_CLI="$(../shared/tools/install-terraform.sh)" RAY_TF_SUITE=query scripts/test.sh
#   scripts/test.sh -run TestAccVirtualCluster_segments ./internal/resources   # args go to go test
#
# Uses the Ray answering at RAY_ADDRESS when its version is RAY_VERSION; starts the local
# cluster (scripts/ray-cluster.sh) when none answers and stops it afterwards, and only then.
# Refuses the demo's own cluster (make demo, RAY_TF_DEMO_* in scripts/env.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
# RAY_BIN, when set, must hold RAY_VERSION (the tests drive Ray with its Python too).
if [ -n "${RAY_BIN:-}" ]; then
  bin_version="$("$here/tool-version.sh" ray "$RAY_BIN" || true)"
  if [ -z "${RAY_VERSION:-}" ]; then
    RAY_VERSION="$bin_version"
  elif [ "$bin_version" != "$RAY_VERSION" ]; then
    RAY_BIN=""
  fi
fi
export RAY_VERSION="${RAY_VERSION:-2.60.0}"
suite="${RAY_TF_SUITE:-full}"

case "${RAY_TF_CLI:-}" in
  "") ;;
  terraform) TF_ACC_TERRAFORM_PATH="$(command -v terraform)" || { echo "!! RAY_TF_CLI=terraform but no terraform on PATH" >&2; exit 2; } ;;
  tofu) TF_ACC_TERRAFORM_PATH="$(command -v tofu || "$here/install-tofu.sh")" ;;
  *) TF_ACC_TERRAFORM_PATH="$RAY_TF_CLI" ;;
esac
[ -n "${TF_ACC_TERRAFORM_PATH:-}" ] && export TF_ACC_TERRAFORM_PATH
[ -n "${RAY_BIN:-}" ] || RAY_BIN="$("$here/install-ray.sh")"
export RAY_BIN
source "$here/env.sh"
# Never the demo's cluster (make demo): the reliability tests restart the cluster they
# test on, and the demo's groups hold most of its GPUs.
if [ "${RAY_TF_IP_BASE:-10}" = "$RAY_TF_DEMO_IP_BASE" ] || [[ "${RAY_ADDRESS%/}" == *:"$RAY_TF_DEMO_DASHBOARD_PORT" ]]; then
  echo "!! $RAY_ADDRESS (ip base ${RAY_TF_IP_BASE:-10}) is the demo's cluster (make demo, RAY_TF_DEMO_* in scripts/env.sh);" \
    "the tests use their own: unset RAY_ADDRESS" \
    "(or point RAY_TF_IP_BASE, RAY_TF_GCS_PORT, RAY_TF_DASHBOARD_PORT, RAY_TF_PORT_BASE at another cluster)" >&2
  exit 2
fi

# The suites, by test name (-run); `full` runs everything.
compat_tests=(
  TestAccExample_quickstart TestAccExample_attach
  TestAccVirtualCluster_perNodeGroups TestAccVirtualCluster_topologyOrder
  TestAccVirtualCluster_driftAndImport TestAccVirtualCluster_applyTimeInfeasible TestAccVirtualCluster_capacityCheckTotal
  TestAccVirtualCluster_labelsPlaceAndReport TestAccVirtualCluster_nodeLabelSelectors
  TestAccVirtualCluster_topologyStrategy TestAccVirtualCluster_topologyStrategyNeedsNewerRay
  TestAccVirtualCluster_gpuDomainSelectorOnSomeBundles
  TestAccVirtualClusterDataSource_secondState
  TestAccClusterTopology_labelsSelectLikeResources TestAccClusterTopology_segmentSelection
  TestAccDriverReservations TestAccDriverDirectGCS
  TestAccNamespaceQuota_capsTheNamespace TestAccNamespaceQuota_nodeLabelLimits
  TestAccVirtualCluster_resizeKeepsWorkers TestAccReservations_oneWave
)
# gates: the tests of features behind a Ray version gate (clusterspec.Gates), for the
# cell on a Ray just inside the gates (.ci/run's ray_mid); about 2 minutes.
gates_tests=(
  TestAccExample_quickstart TestAccVirtualCluster_topologyStrategy TestAccVirtualCluster_topologyStrategyNeedsNewerRay
  TestAccVirtualCluster_gpuDomainSelectorOnSomeBundles TestAccVirtualCluster_labelsPlaceAndReport
)
# side: full-suite tests that .ci/run moves off the full cell into the side chain (the
# side cluster, beside it, on the newest Ray), which has time to spare; with
# RAY_TF_SKIP_SIDE=1 the full suite leaves them out. Slow, self-contained tests.
side_tests=(
  TestAccLifecycle_importBusyCluster TestAccLifecycle_interruptedApplyLeftover
  TestAccReservations_siblingsWithoutExcludeChain TestAccReservations_statesShareNodesByGPU
  TestAccOwnerSecret_notReadableFromRay TestAccOwnerSecret_plainTokenRecordStillOwned
  TestAccReservations_sameNameRace TestAccReservations_staleWhateverOtherNamespacesHold
  TestAccReservations_rayPlacedKeepsOffExclusiveNodes TestAccRecovery_domainPinnedClusterStaysInItsDomain
  TestAccReservations_oneWave TestAccLifecycle_forcedReplacement TestAccConcurrent_destroyWhileApply
  TestAccVirtualCluster_resizeKeepsWorkers TestAccVirtualCluster_resizeSelectedNodes TestAccExample_inferenceFleet
  TestAccReservations_alternativeInTheSameJob TestAccRecovery_unpinnedClusterKeepsItsWorkers TestAccNamespaceQuota_nodeLabelLimits
)
side_pattern="^($(IFS='|'; echo "${side_tests[*]}"))\$"
case "$suite" in
  full) run=() timeout=60m
    if [ "${RAY_TF_SKIP_SIDE:-}" = 1 ]; then run=(-skip "$side_pattern"); fi ;;
  side) run=(-run "$side_pattern") timeout=20m ;;
  # cli: the CLI's own side on OpenTofu (functions, identity, import, for_each, an example
  # of each shape); every example runs on Terraform in the full cell.
  cli) run=(-run 'TestFunction|TestAccIdentity|TestAccExample_(quickstart|nvlinkSegments|import|nemoRLOPDTeachers)$|TestAccVirtualCluster_resizeKeepsWorkers$') timeout=20m ;;
  # compat: what depends on the Ray version (the driver's Ray calls, the state API's
  # shapes, node labels and topology_strategy gates, KV claims, the GCS table quotas read), not the Go logic the
  # full cell already covers; about 7 minutes instead of 18.
  compat) run=(-run "^($(IFS='|'; echo "${compat_tests[*]}"))\$") timeout=20m ;;
  gates) run=(-run "^($(IFS='|'; echo "${gates_tests[*]}"))\$") timeout=10m ;;
  query) run=(-run 'TestAccList|TestAccIdentity|TestAccExample_import$|TestAccNamespaceQuota_queryListsUsage') timeout=10m ;;
  *) echo "!! RAY_TF_SUITE=$suite: one of full, cli, compat, gates, query, side" >&2; exit 2 ;;
esac

cli_version="$("$here/tool-version.sh" cli "$TF_ACC_TERRAFORM_PATH")"
echo "=== cell: suite=$suite cli=\"$cli_version\" ray=$RAY_VERSION at $RAY_ADDRESS" >&2

ray_version() { curl -fsS "$RAY_ADDRESS/api/version" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["ray_version"])' 2>/dev/null; }
started=""
cleanup() { [ -n "$started" ] && "$here/ray-cluster.sh" stop; true; }
trap cleanup EXIT
running="$(ray_version || true)"
if [ -z "$running" ]; then
  started=1 # set first: a start that fails half-way is cleaned up too
  "$here/ray-cluster.sh" start
elif [ "$running" != "$RAY_VERSION" ]; then
  echo "!! the Ray at $RAY_ADDRESS is $running, this cell wants $RAY_VERSION: stop it (scripts/ray-cluster.sh stop)" \
    "or point RAY_ADDRESS / RAY_TF_IP_BASE, RAY_TF_GCS_PORT, RAY_TF_DASHBOARD_PORT, RAY_TF_PORT_BASE at another cluster" >&2
  exit 2
fi

pkgs=(./...) # unless the arguments name packages
for a in "$@"; do case "$a" in ./* | ../* | github.com/*) pkgs=() ;; esac; done
start=$SECONDS
status=0
TF_ACC=1 go test -v -count=1 -p 1 -timeout "$timeout" ${run[@]+"${run[@]}"} "$@" ${pkgs[@]+"${pkgs[@]}"} || status=$?
# The attach helper's pytest, its live tests included, on this cell's Ray (so on both Ray versions).
if { [ "$suite" = full ] || [ "$suite" = compat ]; } && [ $# -eq 0 ]; then
  "$here/test-python.sh" "$RAY_BIN" || status=$?
fi
echo "=== cell done: suite=$suite cli=\"$cli_version\" ray=$RAY_VERSION: $([ $status -eq 0 ] && echo PASS || echo FAIL) in $((SECONDS - start))s" >&2
exit $status
