#!/usr/bin/env bash
# Every directory under examples/ holding .tf files must pass `validate` (after
# `init -backend=false` when it needs other providers) with the provider built from this
# tree (dev_overrides), on the installed CLI
# (scripts/find-cli.sh; TF_ACC_TERRAFORM_PATH picks another). The docs' snippet
# directories (examples/resources/*, data-sources/*, functions/*, provider) are fragments
# without a terraform block: their copy gets the provider's required_providers.
# An example that needs another registry provider cannot be initialised offline; it is
# reported as not validated (and fails with RAY_TF_VALIDATE_STRICT=1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
cli="$("$here/find-cli.sh")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/bin/terraform-provider-ray" .
cat >"$work/clirc" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/ray-infra/ray"  = "$work/bin"
    "registry.opentofu.org/ray-infra/ray"  = "$work/bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/clirc" TF_IN_AUTOMATION=1
failed=() unvalidated=() n=0
while IFS= read -r dir; do
  n=$((n + 1))
  w="$work/cfg/$dir"
  mkdir -p "$w"
  cp "$dir"/*.tf "$w/"
  if ! grep -q required_providers "$w"/*.tf; then
    cat >"$w/zz_validate_providers.tf" <<'TF'
terraform {
  required_providers {
    ray = { source = "registry.terraform.io/ray-infra/ray" }
  }
}
TF
  fi
  # With dev_overrides the CLI needs no init for the Ray provider (and init would ask the
  # registry about it); only an example with other providers is initialised.
  if grep -hE '^\s*source\s*=' "$w"/*.tf | grep -qv 'ray-infra/ray' &&
    ! out=$("$cli" -chdir="$w" init -backend=false -input=false -no-color 2>&1); then
    if grep -qiE 'could not (connect|resolve)|no such host|Failed to query available provider packages' <<<"$out"; then
      echo ">> $dir: not validated: another provider cannot be installed offline" >&2
      unvalidated+=("$dir")
      continue
    fi
    echo "!! $dir: init failed:" >&2
    echo "$out" >&2
    failed+=("$dir")
    continue
  fi
  if out=$("$cli" -chdir="$w" validate -no-color 2>&1); then
    echo ">> $dir: valid" >&2
  else
    echo "!! $dir: $out" >&2
    failed+=("$dir")
  fi
done < <(find examples -name '*.tf' -not -path '*/.terraform/*' -printf '%h\n' | sort -u)
echo ">> $n example directories: $((n - ${#failed[@]} - ${#unvalidated[@]})) valid, ${#failed[@]} invalid, ${#unvalidated[@]} not validated (offline)${unvalidated[*]:+: ${unvalidated[*]}}" >&2
[ ${#failed[@]} -eq 0 ] || exit 1
[ ${#unvalidated[@]} -eq 0 ] || [ "${RAY_TF_VALIDATE_STRICT:-0}" = 0 ] || exit 1
