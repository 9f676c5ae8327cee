#!/bin/sh
# Runs train.py on the virtual cluster as a Ray job, from the repository root:
#   RAY_ADDRESS=http://127.0.0.1:8265 examples/attach/submit.sh [name] [namespace]
# The job brings raytf_attach along (py_modules): nothing is installed on the cluster.
set -eu
ray job submit --address "$RAY_ADDRESS" --working-dir examples/attach \
  --runtime-env-json '{"py_modules": ["python/src/raytf_attach"]}' \
  -- python train.py --name "${1:-train}" --namespace "${2:-terraform-ray}"
