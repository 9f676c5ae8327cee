# Sourced by the other scripts: installs (once) and exports the pinned tools.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export RAY_BIN="${RAY_BIN:-$("$here/install-ray.sh")}"
export TF_ACC_TERRAFORM_PATH="${TF_ACC_TERRAFORM_PATH:-$("$here/install-tofu.sh")}"
export TOFU="$TF_ACC_TERRAFORM_PATH"
export RAY_ADDRESS="${RAY_ADDRESS:-http://127.0.0.1:${RAY_TF_DASHBOARD_PORT:-8265}}"
