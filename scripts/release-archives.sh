#!/usr/bin/env bash
# Builds release archives the way .goreleaser.yml does, without GoReleaser (so `make install`
# and `make mirror-check` need only Go): for the host platform (or PLATFORMS="linux_amd64 darwin_arm64"),
# into OUT (default bin/release):
#
#   terraform-provider-ray_<version>_<os>_<arch>.zip   the binary terraform-provider-ray_v<version>
#                                                      (+ LICENSE, README.md, CHANGELOG.md)
#   terraform-provider-ray_<version>_manifest.json     terraform-registry-manifest.json
#   terraform-provider-ray_<version>_SHA256SUMS        sha256 of the zips and the manifest
#
# Same names, build flags (CGO_ENABLED=0, -trimpath, -s -w -X main.version) and checksum file
# as a GoReleaser release; not signed (the release workflow signs with its GPG key). Version:
# scripts/version.sh. `make install` and scripts/mirror-check.sh use these archives. Prints OUT.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
out="${1:-$root/bin/release}"
version="$("$here/version.sh")"
name=terraform-provider-ray
platforms="${PLATFORMS:-$(go env GOOS)_$(go env GOARCH)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out/${name}_"*
stamp="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in $platforms; do
  os="${p%_*}" arch="${p#*_}"
  bin="${name}_v$version"
  [ "$os" != windows ] || bin="$bin.exe"
  mkdir -p "$work/$p"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$work/$p/$bin" .
  cp LICENSE README.md CHANGELOG.md "$work/$p/"
  # Each entry keeps its file mode (the CLIs unpack an executable binary) and gets the commit's
  # time, as GoReleaser's mod_timestamp: the same tree gives the same zip, so the zh: hash a
  # lock file recorded stays valid when `make install` runs again.
  (cd "$work/$p" && python3 -c 'import os, sys, time, zipfile
stamp = time.gmtime(max(int(sys.argv[1]), 315532800))[:6]
with zipfile.ZipFile(sys.argv[2], "w") as z:
    for f in sys.argv[3:]:
        info = zipfile.ZipInfo(f, stamp)
        info.external_attr = (os.stat(f).st_mode & 0xFFFF) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(f, "rb") as src:
            z.writestr(info, src.read())' "$stamp" "$out/${name}_${version}_${p}.zip" "$bin" LICENSE README.md CHANGELOG.md)
done
cp terraform-registry-manifest.json "$out/${name}_${version}_manifest.json"
(cd "$out" && sha256sum "${name}_${version}"_*.zip "${name}_${version}_manifest.json" >"${name}_${version}_SHA256SUMS")
echo ">> release archives $version for $platforms in $out (unsigned)" >&2
echo "$out"
