#!/usr/bin/env bash
# Builds OpenTofu from the Go module proxy once and caches the binary outside the repo.
# Prints the binary's path on stdout; progress goes to stderr.
set -euo pipefail
TOFU_VERSION="${TOFU_VERSION:-1.12.6}"
cache="${RAY_TF_CACHE:-$HOME/.cache/terraform-provider-ray}"
bin="$cache/tofu-$TOFU_VERSION/tofu"
if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
echo ">> building OpenTofu v$TOFU_VERSION from the Go module proxy (one time, about 4-8 minutes)" >&2
dir=$(GOFLAGS=-mod=mod go mod download -json "github.com/opentofu/opentofu@v$TOFU_VERSION" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
mkdir -p "$(dirname "$bin")"
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin.tmp" ./cmd/tofu)
mv "$bin.tmp" "$bin"
echo ">> OpenTofu ready: $bin" >&2
echo "$bin"
