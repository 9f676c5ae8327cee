#!/usr/bin/env bash
# `make demo`: start a local Ray, build the provider, apply the quickstart with the
# installed CLI (Terraform, else OpenTofu: scripts/find-cli.sh) and show the placement
# it got. `scripts/demo.sh destroy` tears it down.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
cd "$root"
source "$here/env.sh"
demo="$root/.demo"
mkdir -p "$demo/bin" "$demo/quickstart"
cat >"$demo/clirc" <<RC
provider_installation {
  dev_overrides {
    "registry.opentofu.org/ray-infra/ray"   = "$demo/bin"
    "registry.terraform.io/ray-infra/ray"   = "$demo/bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$demo/clirc"
cp examples/quickstart/*.tf "$demo/quickstart/"
tf() { "$TF_ACC_TERRAFORM_PATH" -chdir="$demo/quickstart" "$@"; }

if [ "${1:-}" = "destroy" ]; then
  tf destroy -auto-approve
  echo ">> destroyed; stop the local Ray with: make ray-stop"
  exit 0
fi

echo ">> CLI: $("$TF_ACC_TERRAFORM_PATH" version | sed -n 1p) ($TF_ACC_TERRAFORM_PATH)" >&2
"$here/ray-cluster.sh" start
echo ">> building the provider" >&2
go build -o "$demo/bin/terraform-provider-ray" .
echo ">> $TF_CLI_NAME apply examples/quickstart (TF_LOG_PROVIDER=INFO shows placement progress)" >&2
tf apply -auto-approve -input=false
echo
tf output -json | python3 "$here/show_placement.py"
echo
echo "Destroy it with: make demo-destroy   (then stop Ray with: make ray-stop)"
