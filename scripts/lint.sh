#!/usr/bin/env bash
# gofmt, go vet, golangci-lint and deadcode (Go tools pinned in tools/golangci-lint/go.mod and
# tools/deadcode/go.mod, built by `go tool` from the Go module proxy and cached by Go; a cold
# build of golangci-lint takes a few minutes; scripts/deadcode.sh says what it checks), and mypy
# on the driver's modules, internal/driver/driverpy (installed once into a cached virtualenv by
# scripts/install-mypy.sh; scripts/mypy.ini). Their pytest suite runs in scripts/test-python.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted=$(gofmt -l .)
[ -z "$unformatted" ] || { echo "gofmt needed: $unformatted" >&2; exit 1; }
go vet ./...
go tool -modfile=tools/golangci-lint/go.mod golangci-lint run ./...
scripts/deadcode.sh
"$(scripts/install-mypy.sh)/mypy" --config-file scripts/mypy.ini
