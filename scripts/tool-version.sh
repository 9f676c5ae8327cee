#!/usr/bin/env bash
# Prints the version of a tool the scripts report, in one place:
#   scripts/tool-version.sh cli /path/to/terraform-or-tofu   # e.g. "Terraform v1.11.4"
#   scripts/tool-version.sh ray /path/to/venv/bin            # e.g. "2.60.0"
set -euo pipefail
case "${1:-}" in
  cli) "$2" version 2>/dev/null | awk '/^(Terraform|OpenTofu) v/ && !n++' ;;
  ray) "$2/ray" --version 2>/dev/null | awk '{print $3}' ;;
  *) echo "usage: $0 cli BINARY | ray BIN_DIR" >&2; exit 2 ;;
esac
