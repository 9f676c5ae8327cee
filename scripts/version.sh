#!/usr/bin/env bash
# Prints the provider's version: the newest `## X.Y.Z` heading of CHANGELOG.md, the one
# place it is written. `make install`, the release archives and scripts/mirror-check.sh read
# it here; a release tag must be v<this> (.github/workflows/release.yml checks it).
set -euo pipefail
cd "$(dirname "$0")/.."
v="$(sed -nE 's/^## ([0-9]+\.[0-9]+\.[0-9]+)( .*)?$/\1/p' CHANGELOG.md | head -1)"
[ -n "$v" ] || { echo "!! CHANGELOG.md has no '## X.Y.Z' heading" >&2; exit 1; }
echo "$v"
