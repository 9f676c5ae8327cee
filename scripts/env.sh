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
