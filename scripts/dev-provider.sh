#!/usr/bin/env bash
# Builds the provider from this repository into DIR/bin and writes DIR/cli.tfrc, a CLI
# configuration whose dev_overrides point ray-infra/ray of both registries (Terraform's
# and OpenTofu's) at that build; prints the configuration's path. The one copy of this
# step: scripts/docs.sh runs it, and internal/devprovider runs it for internal/acctest's
# second working directories and bench/.
#
#   TF_CLI_CONFIG_FILE="$(scripts/dev-provider.sh DIR)" terraform plan
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1/bin"
dir="$(cd "$1" && pwd)"
(cd "$root" && go build -o "$dir/bin/terraform-provider-ray" .)
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
