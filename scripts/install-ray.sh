#!/usr/bin/env bash
# Installs the pinned Ray into a virtualenv cached outside the repo.
# Prints the virtualenv's bin directory on stdout; progress goes to stderr.
set -euo pipefail
RAY_VERSION="${RAY_VERSION:-2.60.0}"
cache="${RAY_TF_CACHE:-$HOME/.cache/terraform-provider-ray}"
venv="$cache/ray-$RAY_VERSION"
if "$venv/bin/ray" --version 2>/dev/null | grep -q "version $RAY_VERSION" && "$venv/bin/python" -c "import ray.dashboard" 2>/dev/null; then
  echo "$venv/bin"
  exit 0
fi
echo ">> installing ray[default]==$RAY_VERSION into $venv (one time, about 1-2 minutes)" >&2
mkdir -p "$cache"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "ray[default]==$RAY_VERSION" >&2
echo "$venv/bin"
