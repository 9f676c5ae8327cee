#!/usr/bin/env bash
# Installs the attach helper (python/) into a virtualenv layered on a Ray
# virtualenv and runs its pytest suite. Integration tests run when RAY_ADDRESS
# is set (source scripts/env.sh); otherwise only the unit tests run.
# First runs the driver's pytest suite (internal/driver/driverpy/tests), which
# never needs Ray: it runs on a fake ray (fake_ray.py). pytest args go to the attach suite only.
# Usage: scripts/test-python.sh [RAY_BIN_DIR] [pytest args...]
#        scripts/test-python.sh --no-ray [pytest args...]   (unit tests only, no Ray needed)
#   RAY_BIN_DIR defaults to $RAY_BIN, else the pinned Ray from scripts/install-ray.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
cache="${RAY_TF_CACHE:-$HOME/.cache/terraform-provider-ray}"
# A virtualenv cut short while it was being made (two runs at once) has python but no pip.
venv_ok() { "$1/bin/python" -m pip --version >/dev/null 2>&1; }
driver_tests() {
  echo ">> driver tests (fake ray)" >&2
  (cd "$root/internal/driver/driverpy" && "$1/bin/python" -m pytest -p no:cacheprovider -q tests)
}
if [ "${1:-}" = "--no-ray" ]; then
  shift
  venv="${RAYTF_ATTACH_VENV:-$cache/attach-venv-noray}"
  venv_ok "$venv" || { rm -rf "$venv"; python3 -m venv "$venv"; }
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root/python[test]" >&2
  driver_tests "$venv"
  cd "$root/python"
  exec "$venv/bin/python" -m pytest -p no:cacheprovider -m "not integration" "$@"
fi
ray_bin="${RAY_BIN:-}"
if [ $# -gt 0 ] && [ -d "$1" ]; then
  ray_bin="$1"
  shift
fi
[ -n "$ray_bin" ] || ray_bin="$("$here/install-ray.sh")"
ray_py="$ray_bin/python"
version="$("$ray_py" -c 'import ray; print(ray.__version__)')"
venv="${RAYTF_ATTACH_VENV:-$cache/attach-venv-$version}"
venv_ok "$venv" || { rm -rf "$venv"; "$ray_py" -m venv "$venv"; }
# The Ray virtualenv is itself a venv (--system-site-packages would not reach
# it), so expose its packages to ours through a .pth file; Ray stays untouched.
purelib='import sysconfig; print(sysconfig.get_paths()["purelib"])'
"$ray_py" -c "$purelib" >"$("$venv/bin/python" -c "$purelib")/_ray_venv.pth"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root/python[test]" >&2
driver_tests "$venv"
echo ">> raytf-attach tests with Ray $version ($venv)${RAY_ADDRESS:+, live cluster $RAY_ADDRESS}" >&2
cd "$root/python"
exec "$venv/bin/python" -m pytest -p no:cacheprovider -rs "$@"
