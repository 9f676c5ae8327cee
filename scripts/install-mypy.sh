#!/usr/bin/env bash
# Installs the pinned mypy into a virtualenv cached outside the repo (like
# scripts/install-ray.sh). Prints the virtualenv's bin directory on stdout; progress on stderr.
# mypy 1.19 is the newest that still checks for Python 3.9 (driver.py runs on the Ray
# cluster's Python, 3.9 and up; mypy 2 checks for 3.10 and up only).
set -euo pipefail
MYPY_VERSION="${MYPY_VERSION:-1.19.1}"
venv="${RAY_TF_CACHE:-$HOME/.cache/terraform-provider-ray}/mypy-$MYPY_VERSION"
if "$venv/bin/mypy" --version 2>/dev/null | grep -q "mypy $MYPY_VERSION "; then
  echo "$venv/bin"
  exit 0
fi
echo ">> installing mypy==$MYPY_VERSION into $venv (one time)" >&2
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mypy==$MYPY_VERSION" >&2
echo "$venv/bin"
