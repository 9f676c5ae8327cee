#!/usr/bin/env bash
# `make release-check`: validates .goreleaser.yml with `goreleaser check`, then makes a
# snapshot build for the host platform only (dist/, ignored by git), when GoReleaser v2 is
# built and cached (scripts/install-goreleaser.sh builds it once from the Go module proxy:
# about 5 CPU-minutes; .ci/run always does). Without it, scripts/release-archives.sh makes the host's zip and
# SHA256SUMS as GoReleaser names them (bin/release), and .goreleaser.yml goes unchecked.
# The full release (every platform, zips, signed SHA256SUMS) runs with the same file
# from a tag: `goreleaser release --clean` with GPG_FINGERPRINT set (.github/workflows/release.yml).
# The snapshot's version is scripts/version.sh's (RAY_TF_VERSION, read by .goreleaser.yml), as the
# archives' is: the check fails when the binary is named otherwise.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
goreleaser="$("$here/install-goreleaser.sh" --cached)"
if [ -z "$goreleaser" ]; then
  echo ">> GoReleaser is not built: goreleaser check skipped (run scripts/install-goreleaser.sh once, a few minutes); release zip for $(go env GOOS)/$(go env GOARCH) without it" >&2
  out="$(PLATFORMS="$(go env GOOS)_$(go env GOARCH)" "$here/release-archives.sh")"
  echo ">> release check passed without GoReleaser: $(cd "$out" && echo terraform-provider-ray_*)" >&2
  exit 0
fi
echo ">> $("$goreleaser" --version 2>/dev/null | grep -m1 -i '^GitVersion' || echo goreleaser) check" >&2
"$goreleaser" check
version="$("$here/version.sh")"
echo ">> snapshot build of $version for $(go env GOOS)/$(go env GOARCH)" >&2
RAY_TF_VERSION="$version" "$goreleaser" build --single-target --snapshot --clean
ls dist/*/"terraform-provider-ray_v$version" >/dev/null ||
  { echo "!! the snapshot build made no provider binary terraform-provider-ray_v$version in dist/: $(ls dist/*/)" >&2; exit 1; }
echo ">> release check passed: $(ls dist/*/terraform-provider-ray_v*)" >&2
