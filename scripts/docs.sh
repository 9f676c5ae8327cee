#!/usr/bin/env bash
# Regenerates docs/ with terraform-plugin-docs from the provider's real schema,
# read through the installed CLI (scripts/find-cli.sh; tfplugindocs would otherwise
# download Terraform).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
cd "$root"
cli="$("$here/find-cli.sh")"
# The list resources (terraform query) are in `providers schema -json` only from Terraform 1.14
# on: an older CLI or OpenTofu would leave docs/list-resources/ out. The schema is then read with
# Terraform 1.15.9 from shared/tools (beside the repository, as on CI), or RAY_TF_DOCS_CLI.
schema_cli="${RAY_TF_DOCS_CLI:-$cli}"
if ! "$here/tool-version.sh" cli "$schema_cli" | grep -Eq '^Terraform v(1\.(1[4-9]|[2-9][0-9])|[2-9])'; then
  installer="$root/../shared/tools/install-terraform.sh"
  [ -x "$installer" ] || { echo "!! docs/ needs Terraform >= 1.14 for the list resources' schema ($schema_cli is" \
    "$("$here/tool-version.sh" cli "$schema_cli")): set RAY_TF_DOCS_CLI, or provide $installer" >&2; exit 2; }
  schema_cli="$("$installer")"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TF_CLI_CONFIG_FILE="$("$here/dev-provider.sh" "$work")"
export TF_CLI_CONFIG_FILE
mkdir -p "$work/cfg"
cat >"$work/cfg/main.tf" <<'TF'
terraform {
  required_providers {
    ray = { source = "registry.terraform.io/ray-infra/ray" }
  }
}
TF
"$schema_cli" -chdir="$work/cfg" providers schema -json >"$work/schema.json" 2>"$work/err" ||
  { cat "$work/err" >&2; exit 1; }
"$cli" fmt -recursive examples/ >/dev/null
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); s[\"provider_schemas\"]={\"ray\": v for v in s[\"provider_schemas\"].values()}; json.dump(s, open(sys.argv[1], \"w\"))" "$work/schema.json"
go tool -modfile=tools/go.mod tfplugindocs generate --provider-name ray --providers-schema "$work/schema.json" \
  --rendered-provider-name Ray >/dev/null
echo ">> docs/ regenerated" >&2
