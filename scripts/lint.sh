#!/usr/bin/env bash
# gofmt, go vet, golangci-lint and deadcode (both built once from the Go module proxy into
# the cache; scripts/deadcode.sh says what it checks), and mypy on the driver's modules,
# internal/driver/driverpy (installed once into a cached virtualenv by
# scripts/install-mypy.sh; scripts/mypy.ini). Their pytest suite runs in scripts/test-python.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
GOLANGCI_VERSION="${GOLANGCI_VERSION:-v2.15.0}"
bin="${RAY_TF_CACHE:-$HOME/.cache/terraform-provider-ray}/bin"
if ! "$bin/golangci-lint" version 2>/dev/null | grep -q "${GOLANGCI_VERSION#v}"; then
  echo ">> building golangci-lint $GOLANGCI_VERSION (one time)" >&2
  GOBIN="$bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_VERSION"
fi
unformatted=$(gofmt -l .)
[ -z "$unformatted" ] || { echo "gofmt needed: $unformatted" >&2; exit 1; }
go vet ./...
"$bin/golangci-lint" run ./...
scripts/deadcode.sh
"$(scripts/install-mypy.sh)/mypy" --config-file scripts/mypy.ini
