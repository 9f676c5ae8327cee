#!/usr/bin/env bash
# `make demo`: start the demo's own local Ray, build the provider, apply the quickstart
# with the installed CLI (Terraform, else OpenTofu: scripts/find-cli.sh) and show the
# placement it got.
#   scripts/demo.sh           start (or reuse) the demo cluster and apply
#   scripts/demo.sh destroy   destroy the quickstart (`make demo-destroy`)
#   scripts/demo.sh stop      stop the demo cluster, only its processes (`make demo-stop`)
# The demo cluster (RAY_TF_DEMO_* in scripts/env.sh: 127.0.0.100+, GCS 6500, dashboard
# 8400, ports 55000+) is never the test cluster (127.0.0.10+, 6379, 8265): `make testacc`
# neither uses nor restarts it, and the demo never applies to the test cluster.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
cd "$root"
source "$here/env.sh"
if [ "$RAY_TF_DEMO_IP_BASE" = "${RAY_TF_IP_BASE:-10}" ] || [ "$RAY_TF_DEMO_DASHBOARD_PORT" = "${RAY_TF_DASHBOARD_PORT:-8265}" ] ||
  [ "$RAY_TF_DEMO_GCS_PORT" = "${RAY_TF_GCS_PORT:-6379}" ]; then
  echo "!! the demo cluster (RAY_TF_DEMO_*) would be the test cluster (RAY_TF_*): give it other addresses and ports" >&2
  exit 2
fi
# Everything below talks to the demo cluster only, whatever RAY_ADDRESS said.
export RAY_TF_IP_BASE="$RAY_TF_DEMO_IP_BASE" RAY_TF_GCS_PORT="$RAY_TF_DEMO_GCS_PORT" \
  RAY_TF_DASHBOARD_PORT="$RAY_TF_DEMO_DASHBOARD_PORT" RAY_TF_PORT_BASE="$RAY_TF_DEMO_PORT_BASE" \
  RAY_TF_NODES="$RAY_TF_DEMO_NODES" RAY_ADDRESS="$RAY_TF_DEMO_ADDRESS"
unset RAY_TF_TEMP_DIR
if [ "${1:-}" = "stop" ]; then
  "$here/ray-cluster.sh" stop
  exit 0
fi
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
  echo ">> destroyed; stop the demo's Ray with: make demo-stop"
  exit 0
fi

echo ">> CLI: $("$here/tool-version.sh" cli "$TF_ACC_TERRAFORM_PATH") ($TF_ACC_TERRAFORM_PATH); demo cluster $RAY_ADDRESS" >&2
"$here/ray-cluster.sh" start
echo ">> building the provider" >&2
go build -o "$demo/bin/terraform-provider-ray" .
echo ">> $TF_CLI_NAME apply examples/quickstart (TF_LOG_PROVIDER=INFO shows placement progress)" >&2
tf apply -auto-approve -input=false
echo
tf output -json | python3 "$here/show_placement.py"
echo
echo "Destroy it with: make demo-destroy   (then stop the demo's Ray with: make demo-stop)"
