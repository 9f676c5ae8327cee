#!/usr/bin/env bash
# Builds release archives the way .goreleaser.yml does, without GoReleaser (so `make install`
# and `make mirror-check` need only Go), into OUT (default bin/release):
#
#   terraform-provider-ray_<version>_<os>_<arch>.zip   the binary terraform-provider-ray_v<version>
#                                                      (+ LICENSE, README.md, CHANGELOG.md)
#   terraform-provider-ray_<version>_manifest.json     terraform-registry-manifest.json
#   terraform-provider-ray_<version>_SHA256SUMS        sha256 of the zips and the manifest
#
# Platforms: linux_amd64, darwin_arm64 and darwin_amd64 (Linux CI and both kinds of Mac, the
# platforms of the README's `providers lock` command) plus this host's, cross-compiled with
# CGO off; PLATFORMS="linux_amd64 ..." picks others. Version: scripts/version.sh (a release for a
# vX.Y.Z tag, else X.Y.Z-dev.<UTC commit time>+<sha>). Not signed (the release workflow signs with its GPG key).
#
# Reproducible: a zip's bytes depend on the commit alone, not on the machine, the checkout or the
# caller's Go settings, so a lock file's h1:/zh: hashes hold for every teammate's `make install`
# (scripts/reproducible-check.sh checks it):
#   - built from HEAD's tree (git archive), not the working tree: uncommitted changes and
#     untracked files are not in it (a warning says so);
#   - the Go of go.mod's `go` line (GOTOOLCHAIN; the release workflow's setup-go uses it too),
#     GOFLAGS and GOWORK neutralised, GOAMD64/GOARM/GO386/GOARM64 at Go's defaults, CGO off,
#     -trimpath -buildvcs=false, -ldflags "-s -w -X main.version=<version>";
#   - the zip by internal/releasezip: sorted entries, modes 0755/0644, every time the commit's.
# `make install` and scripts/mirror-check.sh use these archives. Prints OUT.
set -euo pipefail
export LC_ALL=C
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
out="${1:-$root/bin/release}"
version="$("$here/version.sh")"
name=terraform-provider-ray
host="$(go env GOOS)_$(go env GOARCH)"
platforms="${PLATFORMS:-linux_amd64 darwin_arm64 darwin_amd64}"
[ -n "${PLATFORMS:-}" ] || [[ " $platforms " == *" $host "* ]] || platforms="$platforms $host"
commit="$(git rev-parse HEAD)"
stamp="$(git log -1 --format=%ct "$commit")"
gover="$(git show "$commit:go.mod" | sed -nE 's/^go ([0-9.]+)$/\1/p')"
[ -n "$gover" ] || { echo "!! go.mod at $commit has no go line" >&2; exit 1; }
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
  echo ">> warning: the working tree has uncommitted changes; the archives hold HEAD ($commit) without them" >&2
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out/${name}_"*
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git archive --format=tar "$commit" | tar -xf - -C "$work/src"
# Non-empty values: an empty variable would let `go env -w` settings through.
export GOTOOLCHAIN="go$gover" GOFLAGS=-mod=readonly GOWORK=off CGO_ENABLED=0 \
  GOAMD64=v1 GOARM=6 GO386=sse2 GOARM64=v8.0
cd "$work/src"
go build -o "$work/releasezip" ./internal/releasezip
for p in $platforms; do
  os="${p%_*}" arch="${p#*_}"
  bin="${name}_v$version"
  [ "$os" != windows ] || bin="$bin.exe"
  mkdir -p "$work/$p"
  GOOS="$os" GOARCH="$arch" go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$version" -o "$work/$p/$bin" .
  cp LICENSE README.md CHANGELOG.md "$work/$p/"
  "$work/releasezip" -o "$out/${name}_${version}_${p}.zip" -mtime "$stamp" -C "$work/$p" "$bin" LICENSE README.md CHANGELOG.md
done
cp terraform-registry-manifest.json "$out/${name}_${version}_manifest.json"
(cd "$out" && sha256sum "${name}_${version}"_*.zip "${name}_${version}_manifest.json" >"${name}_${version}_SHA256SUMS")
echo ">> release archives $version for $platforms in $out (unsigned)" >&2
echo "$out"
