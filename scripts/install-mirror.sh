#!/usr/bin/env bash
# `make install`: puts the provider into a filesystem mirror that Terraform and OpenTofu both
# read, in the packed layout (the release zips themselves, as a registry serves them):
#
#   MIRROR_DIR/registry.terraform.io/ray-infra/ray/terraform-provider-ray_<version>_<os>_<arch>.zip
#   MIRROR_DIR/registry.opentofu.org/ray-infra/ray/terraform-provider-ray_<version>_<os>_<arch>.zip
#
# `init` from it records the h1: hash of the package it unpacked for this platform only (no
# zh:, on either CLI); `terraform providers lock -fs-mirror=MIRROR_DIR -platform=...` records
# every platform's h1: from the zips here, hence zips for linux_amd64, darwin_arm64 and
# darwin_amd64 besides this host's (README "Use it in your infra repo").
#
# Both hosts, so the README's registry.terraform.io/ray-infra/ray works on either CLI and so
# does the short `ray-infra/ray` (Terraform reads it as registry.terraform.io/..., OpenTofu as
# registry.opentofu.org/...). MIRROR_DIR defaults to ~/.terraform.d/plugins, a mirror both CLIs
# search without any CLI configuration. The archives come from ARCHIVE_DIR (e.g. downloaded
# release assets, checked against their SHA256SUMS), else scripts/release-archives.sh builds them
# from HEAD (the version is scripts/version.sh's: a vX.Y.Z tag's release, else a pre-release
# X.Y.Z-dev.<UTC commit time>+<sha>, which only an exact version constraint selects).
#
#   scripts/install-mirror.sh [ARCHIVE_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mirror="${MIRROR_DIR:-$HOME/.terraform.d/plugins}"
if [ $# -ge 1 ]; then
  archives="$(cd "$1" && pwd)"
else
  archives="$("$here/release-archives.sh")"
fi
shopt -s nullglob
zips=("$archives"/terraform-provider-ray_*_*_*.zip)
sums=("$archives"/terraform-provider-ray_*_SHA256SUMS)
[ ${#zips[@]} -gt 0 ] || { echo "!! no terraform-provider-ray_<version>_<os>_<arch>.zip in $archives" >&2; exit 1; }
[ ${#sums[@]} -gt 0 ] || { echo "!! no terraform-provider-ray_<version>_SHA256SUMS in $archives" >&2; exit 1; }
for z in "${zips[@]}"; do
  grep -q "  $(basename "$z")\$" "${sums[@]}" || { echo "!! $z is not listed in ${sums[*]}" >&2; exit 1; }
done
(cd "$archives" && cat "${sums[@]}" | sha256sum --check --ignore-missing --quiet) ||
  { echo "!! an archive in $archives does not match its SHA256SUMS" >&2; exit 1; }
for host in registry.terraform.io registry.opentofu.org; do
  dir="$mirror/$host/ray-infra/ray"
  mkdir -p "$dir"
  for z in "${zips[@]}"; do
    cp "$z" "$dir/"
    echo ">> installed $dir/$(basename "$z")" >&2
  done
done
version="$(basename "${zips[0]}")"
version="${version#terraform-provider-ray_}"
version="${version%_*_*.zip}"
case "$version" in
  *-*) echo ">> $version is a pre-release, which no \"~>\" constraint selects: pin it, version = \"$version\" (for a release, make install on its vX.Y.Z tag)" >&2 ;;
  *) echo ">> $version installed: version = \"~> ${version%.*}\" selects it" >&2 ;;
esac
