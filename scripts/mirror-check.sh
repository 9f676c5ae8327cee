#!/usr/bin/env bash
# `make mirror-check`: the provider installs the way the README's "Use it in your infra repo"
# says, with no dev_overrides, on Terraform (on PATH) and OpenTofu (scripts/install-tofu.sh;
# MIRROR_CHECK_CLIS="path ..." picks others). In a temp dir: release archives for this host
# (scripts/release-archives.sh), `make install`'s mirror (scripts/install-mirror.sh), then per CLI
#
#   1. CLI config with filesystem_mirror + direct { exclude }: `init` of a configuration asking for
#      ray-infra/ray "~> 0.1" (and once more with the examples' registry.terraform.io/ray-infra/ray);
#      .terraform.lock.hcl pins the version (scripts/version.sh) with the h1: hash of the
#      archive's contents; `providers` lists "~> 0.1" and `version` the provider at that
#      version; `validate` passes (no Ray contacted);
#   2. a lock file holding the zip's zh: hash from SHA256SUMS (what a registry install or a
#      committed lock has): `init` verifies the zip against it and keeps it; a wrong zh: fails;
#   3. no CLI config, the mirror in ~/.terraform.d/plugins (HOME is the temp dir): `init` finds it;
#   4. `init -plugin-dir=<mirror>`: same lock entry.
#
# Neither CLI (Terraform 1.11, OpenTofu 1.12) writes a zh: hash itself when it installs from a
# filesystem mirror, packed layout included: it records the h1: hash of what it unpacked (this
# platform only), and zh: hashes come from a registry's SHA256SUMS, hence check 2.
# No network: direct installation is excluded for the provider, and nothing else is required.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
t0=$SECONDS
version="$("$here/version.sh")"
case "$version" in 0.0.* | [1-9]*) echo "!! CHANGELOG version $version is outside the \"~> 0.1\" this check asks for: update it" >&2; exit 1 ;; esac
if [ -n "${MIRROR_CHECK_CLIS:-}" ]; then
  read -r -a clis <<<"$MIRROR_CHECK_CLIS"
else
  clis=()
  if tf="$(command -v terraform)"; then clis+=("$tf"); else echo ">> no terraform on PATH: OpenTofu only" >&2; fi
  clis+=("$("$here/install-tofu.sh")")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "!! $*" >&2; exit 1; }
archives="$tmp/archives" mirror="$tmp/mirror"
out=$("$here/release-archives.sh" "$archives" 2>&1) || fail "release archives: $out"
out=$(MIRROR_DIR="$mirror" "$here/install-mirror.sh" "$archives" 2>&1) || fail "install-mirror: $out"
out=$(HOME="$tmp/home" "$here/install-mirror.sh" "$archives" 2>&1) || fail "install-mirror (default MIRROR_DIR): $out"
zip="terraform-provider-ray_${version}_$(go env GOOS)_$(go env GOARCH).zip"
zh="zh:$(awk -v z="$zip" '$2 == z { print $1 }' "$archives/terraform-provider-ray_${version}_SHA256SUMS")"
[ "$zh" != "zh:" ] || { echo "!! $zip is not in the SHA256SUMS" >&2; exit 1; }
# h1: as the CLIs compute it (Go's dirhash.Hash1 over the unpacked files).
h1="$(python3 -c 'import base64, hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = sorted(n for n in z.namelist() if not n.endswith("/"))
summary = "".join("%s  %s\n" % (hashlib.sha256(z.read(n)).hexdigest(), n) for n in names)
print("h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode())' "$archives/$zip")"

cat >"$tmp/mirror.tfrc" <<RC
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["registry.terraform.io/ray-infra/ray", "registry.opentofu.org/ray-infra/ray"]
  }
  direct {
    exclude = ["registry.terraform.io/ray-infra/ray", "registry.opentofu.org/ray-infra/ray"]
  }
}
RC
# config DIR SOURCE: a configuration that an infra repo would hold.
config() {
  mkdir -p "$1"
  cat >"$1/main.tf" <<TF
terraform {
  required_providers {
    ray = { source = "$2", version = "~> 0.1" }
  }
}
provider "ray" {}
resource "ray_virtual_cluster" "check" {
  name                    = "mirror-check"
  bundle_ct_per_node_list = [1, 1]
  num_gpus_per_node       = 1
}
output "master_range" {
  value = provider::ray::port_ranges().master
}
TF
}
# Clean CLI environment: nothing from the caller's CLI configuration, cache or data dir.
unset TF_CLI_CONFIG_FILE TOFU_CLI_CONFIG_FILE TF_PLUGIN_CACHE_DIR TF_DATA_DIR TF_CLI_ARGS TF_CLI_ARGS_init
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 XDG_CONFIG_HOME="$tmp/xdg-config" XDG_DATA_HOME="$tmp/xdg-data"
# check_lock DIR WHAT: the lock file pins 0.1.x with the h1: hash of the archive's contents.
check_lock() {
  local lock="$1/.terraform.lock.hcl"
  [ -f "$lock" ] || fail "$2: init wrote no .terraform.lock.hcl"
  grep -q "version *= \"$version\"" "$lock" || fail "$2: lock file without version $version: $(cat "$lock")"
  grep -q '"~> 0.1"' "$lock" || fail "$2: lock file without the constraint ~> 0.1: $(cat "$lock")"
  grep -qF "\"$h1\"" "$lock" || fail "$2: lock file lacks the archive's hash $h1: $(cat "$lock")"
}
# seeded_lock DIR ADDRESS HASH: the lock file a registry install would leave (zh: only).
seeded_lock() {
  printf 'provider "%s" {\n  version     = "%s"\n  constraints = "~> 0.1"\n  hashes      = ["%s"]\n}\n' "$2" "$version" "$3" >"$1/.terraform.lock.hcl"
}
n=0
for cli in "${clis[@]}"; do
  name="$("$here/tool-version.sh" cli "$cli")"
  for source in ray-infra/ray registry.terraform.io/ray-infra/ray; do
    n=$((n + 1))
    w="$tmp/w$n"
    config "$w" "$source"
    what="$name, $source, filesystem_mirror"
    out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$cli" -chdir="$w" init -input=false -no-color 2>&1) || fail "$what: init: $out"
    check_lock "$w" "$what"
    out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$cli" -chdir="$w" providers -no-color 2>&1) || fail "$what: providers: $out"
    grep -q 'ray-infra/ray\] ~> 0\.1' <<<"$out" || fail "$what: providers does not list ray-infra/ray ~> 0.1: $out"
    out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$cli" -chdir="$w" version -no-color 2>&1) || fail "$what: version: $out"
    grep -q "provider .*ray-infra/ray v$version" <<<"$out" || fail "$what: version does not list ray-infra/ray v$version: $out"
    out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$cli" -chdir="$w" validate -no-color 2>&1) || fail "$what: validate: $out"
    echo ">> $what: init, lock ($h1), providers, version, validate ok" >&2
    # The address this CLI gives ray-infra/ray: registry.terraform.io or registry.opentofu.org.
    [ "$source" != ray-infra/ray ] || address="$(sed -nE 's/^provider "([^"]+)".*/\1/p' "$w/.terraform.lock.hcl")"
  done
  n=$((n + 1))
  w="$tmp/w$n"
  config "$w" "$address"
  seeded_lock "$w" "$address" "$zh"
  what="$name, lock file with the zip's $zh"
  out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$cli" -chdir="$w" init -input=false -no-color 2>&1) || fail "$what: init: $out"
  check_lock "$w" "$what"
  grep -qF "\"$zh\"" "$w/.terraform.lock.hcl" || fail "$what: init dropped the zh: hash: $(cat "$w/.terraform.lock.hcl")"
  rm -rf "$w/.terraform"
  seeded_lock "$w" "$address" "zh:$(printf '0%.0s' {1..64})"
  if out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$cli" -chdir="$w" init -input=false -no-color 2>&1); then
    fail "$name: init accepted the archive against a lock file with another zh: hash"
  fi
  tr -s ' \n' '  ' <<<"$out" | grep -q "doesn't match any of the checksums" || fail "$name: init with a wrong zh: failed otherwise: $out"
  echo ">> $what: verified and kept; a wrong zh: is refused" >&2
  n=$((n + 1))
  w="$tmp/w$n"
  config "$w" ray-infra/ray
  what="$name, ~/.terraform.d/plugins without CLI config"
  out=$(HOME="$tmp/home" "$cli" -chdir="$w" init -input=false -no-color 2>&1) || fail "$what: init: $out"
  check_lock "$w" "$what"
  n=$((n + 1))
  w="$tmp/w$n"
  config "$w" ray-infra/ray
  what="$name, init -plugin-dir"
  out=$(HOME="$tmp/empty-home" "$cli" -chdir="$w" init -input=false -no-color -plugin-dir="$mirror" 2>&1) || fail "$what: init: $out"
  check_lock "$w" "$what"
  echo ">> $name: ~/.terraform.d/plugins and -plugin-dir ok" >&2
done
echo ">> mirror check passed for ${#clis[@]} CLIs in $((SECONDS - t0))s" >&2
