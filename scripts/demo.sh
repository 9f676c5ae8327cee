#!/usr/bin/env bash
# `make demo`: start a local Ray, build the provider, apply the quickstart with
# OpenTofu and show the placement it got. `scripts/demo.sh destroy` tears it down.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
cd "$root"
source "$here/env.sh"
demo="$root/.demo"
mkdir -p "$demo/bin" "$demo/quickstart"
cat >"$demo/tofurc" <<RC
provider_installation {
  dev_overrides {
    "registry.opentofu.org/ray-infra/ray"   = "$demo/bin"
    "registry.terraform.io/ray-infra/ray"   = "$demo/bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$demo/tofurc"
cp examples/quickstart/*.tf "$demo/quickstart/"
tofu() { "$TOFU" -chdir="$demo/quickstart" "$@"; }

if [ "${1:-}" = "destroy" ]; then
  tofu destroy -auto-approve
  echo ">> destroyed; stop the local Ray with: make ray-stop"
  exit 0
fi

"$here/ray-cluster.sh" start
echo ">> building the provider" >&2
go build -o "$demo/bin/terraform-provider-ray" .
echo ">> tofu apply examples/quickstart (TF_LOG_PROVIDER=INFO shows placement progress)" >&2
tofu apply -auto-approve -input=false
echo
tofu output -json | python3 "$here/show_placement.py"
echo
echo "Destroy it with: make demo-destroy   (then stop Ray with: make ray-stop)"
