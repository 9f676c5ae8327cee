#!/usr/bin/env bash
# `make install`: puts the provider into a filesystem mirror that Terraform and OpenTofu both
# read, in the packed layout (the zip itself, so `init` records its zh: hash in
# .terraform.lock.hcl):
#
#   MIRROR_DIR/registry.terraform.io/ray-infra/ray/terraform-provider-ray_<version>_<os>_<arch>.zip
#   MIRROR_DIR/registry.opentofu.org/ray-infra/ray/terraform-provider-ray_<version>_<os>_<arch>.zip
#
# Both hosts, so `source = "ray-infra/ray"` works on either CLI (Terraform reads it as
# registry.terraform.io/..., OpenTofu as registry.opentofu.org/...) and so does the examples'
# full address. MIRROR_DIR defaults to ~/.terraform.d/plugins, a mirror both CLIs search
# without any CLI configuration. The archives come from ARCHIVE_DIR (e.g. downloaded release
# assets, checked against their SHA256SUMS), else scripts/release-archives.sh builds the
# host's from this tree.
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
