#!/usr/bin/env bash
# `make release-check`: validates .goreleaser.yml with `goreleaser check`, then makes a
# snapshot build for the host platform only (dist/, ignored by git). GoReleaser v2 is
# built once from the Go module proxy and cached (scripts/install-goreleaser.sh).
# The full release (every platform, zips, signed SHA256SUMS) runs with the same file
# from a tag: `goreleaser release --clean` with GPG_FINGERPRINT set.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
goreleaser="$("$here/install-goreleaser.sh")"
echo ">> $("$goreleaser" --version 2>/dev/null | grep -m1 -i '^GitVersion' || echo goreleaser) check" >&2
"$goreleaser" check
echo ">> snapshot build for $(go env GOOS)/$(go env GOARCH)" >&2
"$goreleaser" build --single-target --snapshot --clean
ls dist/*/terraform-provider-ray_v* >/dev/null || { echo "!! the snapshot build made no provider binary in dist/" >&2; exit 1; }
echo ">> release check passed: $(ls dist/*/terraform-provider-ray_v*)" >&2
