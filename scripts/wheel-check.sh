#!/usr/bin/env bash
# Builds the raytf-attach wheel (pip wheel --no-deps) and installs it offline (--no-index --no-deps)
# into a throwaway virtualenv, as on an air-gapped GPU node (docs/guides/node-topology.md), then runs
# raytf-node-topology from it: --help, and a recorded GB200 output.
# Usage: scripts/wheel-check.sh [PYTHON]   (default python3; CI passes the Ray virtualenv's)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${1:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Build from a copy: an in-tree build leaves build/ and *.egg-info in python/, and a stale build/
# could put removed modules into the wheel.
mkdir "$work/src"
cp -r "$root/python/pyproject.toml" "$root/python/README.md" "$root/python/LICENSE" "$root/python/src" "$work/src/"
"$py" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$work/dist" "$work/src"
# A virtualenv without pip of its own (ensurepip takes half a minute on a busy machine): this pip
# installs into it (--python, pip >= 22.3).
"$py" -m venv --without-pip "$work/venv"
"$py" -m pip --python "$work/venv/bin/python" install --quiet --disable-pip-version-check --no-index --no-deps \
  "$work"/dist/raytf_attach-*.whl
"$work/venv/bin/raytf-node-topology" --help >/dev/null
"$work/venv/bin/raytf-node-topology" --nvidia-smi-file "$root/python/tests/testdata/nvidia-smi/gb200-nvl72.txt" \
  --rank 1 2>/dev/null | grep -q nvlink_domain_
echo ">> $(basename "$work"/dist/raytf_attach-*.whl) installs with --no-index --no-deps; raytf-node-topology runs from it"
