#!/usr/bin/env bash
# Prints the Terraform CLI to drive: $TF_ACC_TERRAFORM_PATH when set, else HashiCorp
# Terraform on PATH, else OpenTofu on PATH, else OpenTofu built once from source
# (scripts/install-tofu.sh, about 4 minutes the first time).
set -euo pipefail
if [ -n "${TF_ACC_TERRAFORM_PATH:-}" ]; then
  echo "$TF_ACC_TERRAFORM_PATH"
elif command -v terraform 2>/dev/null; then
  :
elif command -v tofu 2>/dev/null; then
  :
else
  "$(dirname "$0")/install-tofu.sh"
fi
