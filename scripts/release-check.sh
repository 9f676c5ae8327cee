#!/usr/bin/env bash
# `make release-check`: validates .goreleaser.yml with `goreleaser check`, then makes a
# snapshot build for the host platform only (dist/, ignored by git). GoReleaser v2 is pinned in
# tools/goreleaser/go.mod and run by `go tool`, which builds it from the Go module proxy the first
# time (about 5 CPU-minutes) and keeps it in Go's build cache; .ci/run builds it beforehand in
# the background.
# The full release (every platform, zips, signed SHA256SUMS) runs with the same file
# from a tag: `goreleaser release --clean` with GPG_FINGERPRINT set (.github/workflows/release.yml).
# The snapshot's version is scripts/version.sh's (RAY_TF_VERSION, read by .goreleaser.yml), as the
# archives' is: the check fails when the binary is named otherwise.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
goreleaser() { go tool -modfile=tools/goreleaser/go.mod goreleaser "$@"; }
echo ">> goreleaser $(go list -modfile=tools/goreleaser/go.mod -m -f '{{.Version}}' github.com/goreleaser/goreleaser/v2) check" \
  "(built first if Go's cache has no build of it)" >&2
goreleaser check
version="$("$here/version.sh")"
echo ">> snapshot build of $version for $(go env GOOS)/$(go env GOARCH)" >&2
RAY_TF_VERSION="$version" goreleaser build --single-target --snapshot --clean
ls dist/*/"terraform-provider-ray_v$version" >/dev/null ||
  { echo "!! the snapshot build made no provider binary terraform-provider-ray_v$version in dist/: $(ls dist/*/)" >&2; exit 1; }
echo ">> release check passed: $(ls dist/*/terraform-provider-ray_v*)" >&2
