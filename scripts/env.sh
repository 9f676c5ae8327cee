# Sourced by the other scripts: installs (once) and exports the pinned tools.
#   RAY_BIN                the virtualenv bin of Ray [RAY_VERSION of scripts/install-ray.sh, 2.60.0]
#   TF_ACC_TERRAFORM_PATH  the CLI the tests and the demo drive (scripts/find-cli.sh)
#   RAY_ADDRESS            the dashboard of the local test cluster
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export RAY_BIN="${RAY_BIN:-$("$here/install-ray.sh")}"
TF_ACC_TERRAFORM_PATH="$("$here/find-cli.sh")"
export TF_ACC_TERRAFORM_PATH
TF_CLI_NAME="$(basename "$TF_ACC_TERRAFORM_PATH")" # terraform or tofu, for messages
export RAY_ADDRESS="${RAY_ADDRESS:-http://127.0.0.1:${RAY_TF_DASHBOARD_PORT:-8265}}"
# The demo's own Ray (`make demo`, scripts/demo.sh): other loopback addresses and ports
# than the test cluster's, so `make demo` and `make testacc` never share a cluster and
# run in either order. Five nodes: the head and the two complete NVLink segments
# (rackA, rackB) the quickstart asks for.
RAY_TF_DEMO_IP_BASE="${RAY_TF_DEMO_IP_BASE:-100}"
RAY_TF_DEMO_GCS_PORT="${RAY_TF_DEMO_GCS_PORT:-6500}"
RAY_TF_DEMO_DASHBOARD_PORT="${RAY_TF_DEMO_DASHBOARD_PORT:-8400}"
RAY_TF_DEMO_PORT_BASE="${RAY_TF_DEMO_PORT_BASE:-55000}"
RAY_TF_DEMO_NODES="${RAY_TF_DEMO_NODES:-head rackA-1 rackA-2 rackB-1 rackB-2}"
RAY_TF_DEMO_ADDRESS="http://127.0.0.1:$RAY_TF_DEMO_DASHBOARD_PORT"
