#!/usr/bin/env bash
# Builds deadcode (golang.org/x/tools/cmd/deadcode) from the Go module proxy once and caches
# the binary outside the repo (like scripts/install-goreleaser.sh). Prints its path on stdout;
# progress on stderr. The version is the x/tools the provider's go.mod already requires, so a
# cold build mostly reuses the module cache (about 20 s on 2 cores); later calls return at once.
set -euo pipefail
DEADCODE_VERSION="${DEADCODE_VERSION:-v0.43.0}"
bin_dir="${RAY_TF_CACHE:-$HOME/.cache/terraform-provider-ray}/bin"
bin="$bin_dir/deadcode-$DEADCODE_VERSION"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$bin_dir"
echo ">> building deadcode $DEADCODE_VERSION from the Go module proxy (one time)" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GOBIN="$work" CGO_ENABLED=0 go install -trimpath "golang.org/x/tools/cmd/deadcode@$DEADCODE_VERSION"
mv "$work/deadcode" "$bin"
echo ">> deadcode ready: $bin" >&2
echo "$bin"
