#!/usr/bin/env bash
# The device-machine command for benchmarks/gpu_multiturn.py: install the wheels its python3
# lacks (carried in .whl, see the script's doc), map the folders to the `rewardsmith`
# namespace, and run. Usage on the GPU machine, from the repository root:
#   bash benchmarks/gpu_multiturn.sh OUT_DIR [script arguments...]
set -euo pipefail
out=$1; shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl
mkdir -p /tmp/rs/rewardsmith
for folder in verifiers reward_models graders datasets trainer cli environments; do
  ln -sfn "$PWD/$folder" "/tmp/rs/rewardsmith/$folder"
done
export PYTHONPATH=/tmp/site:/tmp/rs PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
python3 benchmarks/gpu_multiturn.py --out "$out" "$@"
