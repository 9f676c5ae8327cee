#!/usr/bin/env bash
# Builds the provider from this repository into DIR/bin and writes DIR/cli.tfrc, a CLI
# configuration whose dev_overrides point ray-infra/ray of both registries (Terraform's
# and OpenTofu's) at that build; prints the configuration's path. The one copy of this
# step: scripts/docs.sh runs it, and internal/devprovider runs it for internal/acctest's
# second working directories and bench/.
#
#   TF_CLI_CONFIG_FILE="$(scripts/dev-provider.sh DIR)" terraform plan
#
# PKG (default: the provider, ".") builds another main package of the module in its
# place under the same name: the benchmarks' minimal provider (./bench/cmd/minprovider).
set -euo pipefail
[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: $0 DIR [PKG]" >&2; exit 2; }
pkg="${2:-.}"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1/bin"
dir="$(cd "$1" && pwd)"
(cd "$root" && go build -o "$dir/bin/terraform-provider-ray" "$pkg")
cat >"$dir/cli.tfrc" <<RC
provider_installation {
  dev_overrides {
    "registry.opentofu.org/ray-infra/ray" = "$dir/bin"
    "registry.terraform.io/ray-infra/ray" = "$dir/bin"
  }
  direct {}
}
RC
echo "$dir/cli.tfrc"
