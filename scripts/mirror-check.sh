#!/usr/bin/env bash
# `make mirror-check`: the provider installs the way the README's "Use it in your infra repo"
# says, with no dev_overrides, on Terraform (on PATH) and OpenTofu (scripts/install-tofu.sh;
# MIRROR_CHECK_CLIS="path ..." picks others). In a temp dir: release archives for linux_amd64,
# darwin_arm64, darwin_amd64 and this host (scripts/release-archives.sh), `make install`'s mirror
# (scripts/install-mirror.sh), then per CLI
#
#   1. CLI config with filesystem_mirror + direct { exclude }: `init` of a configuration asking for
#      ray-infra/ray (and once more with the README's registry.terraform.io/ray-infra/ray) at
#      "~> 0.1" for a release, at its exact version for a pre-release (scripts/version.sh: any
#      commit but a vX.Y.Z tag), which "~> 0.1" must not select; .terraform.lock.hcl pins the
#      version with the h1: hash of the archive's contents; `providers` lists the constraint and
#      `version` the provider at that version; `validate` passes (no Ray contacted);
#   2. a lock file holding the zip's zh: hash from SHA256SUMS (what a registry install
#      leaves): `init` verifies the zip against it and keeps it; a wrong zh: fails;
#   3. no CLI config, the mirror in ~/.terraform.d/plugins (HOME is the temp dir): `init` finds it;
#   4. `init -plugin-dir=<mirror>`: same lock entry;
#
# and across CLIs, the README's multi-platform lock: `providers lock -fs-mirror=<mirror>
# -platform=linux_amd64 -platform=darwin_arm64 -platform=darwin_amd64` by one CLI holds the three
# platforms' h1: hashes; `init` and `validate` by the other CLI leave that lock file byte for byte
# as it was (both directions; with one CLI, itself).
#
# Neither CLI (Terraform 1.11, OpenTofu 1.12) writes a zh: hash when it installs or locks from a
# filesystem mirror, packed layout included: it records the h1: hash of each platform's unpacked
# package, and zh: hashes come from a registry's SHA256SUMS, hence check 2.
# No network: direct installation is excluded for the provider, and nothing else is required.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
t0=$SECONDS
version="$("$here/version.sh")"
case "$version" in
  *-*) constraint="$version" ;; # a pre-release: only an exact constraint selects it
  0.0.* | [1-9]*) echo "!! version $version is outside the \"~> 0.1\" this check asks for: update it" >&2; exit 1 ;;
  *) constraint="~> 0.1" ;;
esac
lock_platforms=(linux_amd64 darwin_arm64 darwin_amd64)
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
# h1_of ZIP: the h1: hash as the CLIs compute it (Go's dirhash.Hash1 over the unpacked files).
h1_of() {
  python3 -c 'import base64, hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = sorted(n for n in z.namelist() if not n.endswith("/"))
summary = "".join("%s  %s\n" % (hashlib.sha256(z.read(n)).hexdigest(), n) for n in names)
print("h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode())' "$1"
}
h1="$(h1_of "$archives/$zip")"
declare -A platform_h1
for p in "${lock_platforms[@]}"; do
  z="$archives/terraform-provider-ray_${version}_$p.zip"
  [ -f "$z" ] || fail "no $p archive: $(ls "$archives")"
  platform_h1[$p]="$(h1_of "$z")"
done

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
# config DIR SOURCE [CONSTRAINT]: a configuration that an infra repo would hold.
config() {
  mkdir -p "$1"
  cat >"$1/main.tf" <<TF
terraform {
  required_providers {
    ray = { source = "$2", version = "${3:-$constraint}" }
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
# check_lock DIR WHAT: the lock file pins the version with the h1: hash of the archive's contents.
check_lock() {
  local lock="$1/.terraform.lock.hcl"
  [ -f "$lock" ] || fail "$2: init wrote no .terraform.lock.hcl"
  grep -q "version *= \"$version\"" "$lock" || fail "$2: lock file without version $version: $(cat "$lock")"
  grep -qF "constraints = \"$constraint\"" "$lock" || fail "$2: lock file without the constraint $constraint: $(cat "$lock")"
  grep -qF "\"$h1\"" "$lock" || fail "$2: lock file lacks the archive's hash $h1: $(cat "$lock")"
}
# seeded_lock DIR ADDRESS HASH: the lock file a registry install would leave (zh: only).
seeded_lock() {
  printf 'provider "%s" {\n  version     = "%s"\n  constraints = "%s"\n  hashes      = ["%s"]\n}\n' "$2" "$version" "$constraint" "$3" >"$1/.terraform.lock.hcl"
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
    grep -qF "ray-infra/ray] $constraint" <<<"$out" || fail "$what: providers does not list ray-infra/ray $constraint: $out"
    out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$cli" -chdir="$w" version -no-color 2>&1) || fail "$what: version: $out"
    grep -qF "ray-infra/ray v$version" <<<"$out" || fail "$what: version does not list ray-infra/ray v$version: $out"
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
  if [ "$constraint" != "~> 0.1" ]; then
    n=$((n + 1))
    w="$tmp/w$n"
    config "$w" registry.terraform.io/ray-infra/ray "~> 0.1"
    if out=$(HOME="$tmp/empty-home" "$cli" -chdir="$w" init -input=false -no-color -plugin-dir="$mirror" 2>&1); then
      fail "$name: \"~> 0.1\" selected the pre-release $version"
    fi
    tr -s ' \n' '  ' <<<"$out" | grep -q "no available releases match" || fail "$name: init of \"~> 0.1\" failed otherwise: $out"
    echo ">> $name: \"~> 0.1\" does not select the pre-release $version (README: pin it exactly)" >&2
  fi
done
# The README's lock for Linux CI and macOS laptops, made by one CLI and used by the other.
lock_args=()
for p in "${lock_platforms[@]}"; do lock_args+=("-platform=$p"); done
for locker in "${clis[@]}"; do
  for user in "${clis[@]}"; do
    [ "$locker" != "$user" ] || [ ${#clis[@]} -eq 1 ] || continue
    n=$((n + 1))
    w="$tmp/w$n"
    config "$w" registry.terraform.io/ray-infra/ray
    what="lock by $("$here/tool-version.sh" cli "$locker"), init by $("$here/tool-version.sh" cli "$user")"
    out=$(HOME="$tmp/empty-home" "$locker" -chdir="$w" providers lock -no-color -fs-mirror="$mirror" "${lock_args[@]}" 2>&1) ||
      fail "$what: providers lock: $out"
    for p in "${lock_platforms[@]}"; do
      grep -qF "\"${platform_h1[$p]}\"" "$w/.terraform.lock.hcl" || fail "$what: the lock file lacks $p's ${platform_h1[$p]}: $(cat "$w/.terraform.lock.hcl")"
    done
    cp "$w/.terraform.lock.hcl" "$tmp/lock.before"
    out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$user" -chdir="$w" init -input=false -no-color 2>&1) || fail "$what: init: $out"
    out=$(TF_CLI_CONFIG_FILE="$tmp/mirror.tfrc" "$user" -chdir="$w" validate -no-color 2>&1) || fail "$what: validate: $out"
    cmp -s "$tmp/lock.before" "$w/.terraform.lock.hcl" ||
      fail "$what: init changed the lock file: $(diff "$tmp/lock.before" "$w/.terraform.lock.hcl")"
    echo ">> $what: ${#lock_platforms[@]} platforms' h1: hashes, lock file unchanged by init" >&2
  done
done
echo ">> mirror check passed for ${#clis[@]} CLIs in $((SECONDS - t0))s" >&2
