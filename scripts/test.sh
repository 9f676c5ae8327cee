#!/usr/bin/env bash
# Unit and acceptance tests against a real local Ray cluster and a real OpenTofu.
# Starts the cluster when none answers and stops it afterwards (only if it started it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
source "$here/env.sh"
started=""
if ! curl -fsS "$RAY_ADDRESS/api/version" >/dev/null 2>&1; then
  "$here/ray-cluster.sh" start
  started=1
fi
cleanup() { [ -n "$started" ] && "$here/ray-cluster.sh" stop; true; }
trap cleanup EXIT
echo ">> go vet" >&2
go vet ./...
echo ">> unit and acceptance tests (TF_ACC=1, OpenTofu at $TF_ACC_TERRAFORM_PATH, Ray at $RAY_ADDRESS)" >&2
TF_ACC=1 go test -v -count=1 -p 1 -timeout 60m "${@:-./...}"
