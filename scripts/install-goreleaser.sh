#!/usr/bin/env bash
# Builds GoReleaser v2 from the Go module proxy once and caches the binary outside the
# repo (like scripts/install-tofu.sh). Prints the binary's path on stdout; progress on stderr.
# v2.17.0 is the newest v2 release whose go.mod accepts the Go 1.26 toolchain (v2.18 needs 1.27).
# A cold build takes several minutes on 2 cores; later calls return at once.
set -euo pipefail
GORELEASER_VERSION="${GORELEASER_VERSION:-v2.17.0}"
bin_dir="${RAY_TF_CACHE:-$HOME/.cache/terraform-provider-ray}/bin"
bin="$bin_dir/goreleaser-$GORELEASER_VERSION"
if [ "${1:-}" = "--cached" ]; then # print the path only when it is built already
  [ -x "$bin" ] && echo "$bin"
  exit 0
fi
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
mkdir -p "$bin_dir"
echo ">> building GoReleaser $GORELEASER_VERSION from the Go module proxy (one time)" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GOBIN="$work" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
mv "$work/goreleaser" "$bin"
echo ">> GoReleaser ready: $bin" >&2
echo "$bin"
