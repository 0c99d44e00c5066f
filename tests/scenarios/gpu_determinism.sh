#!/usr/bin/env bash
# usage: gpu_determinism.sh TISSUE SCENARIO OUT_DIR
# Runs SCENARIO twice on the CUDA backend and requires every output file (except run.json) to be identical
# byte for byte, checkpoints included: no result may depend on GPU scheduling or atomic ordering.
set -u
tissue=$1; scenario=$2; out=$3
here=$(dirname "$0")
rm -rf "$out"
for run in 1 2; do
  if ! "$tissue" run "$scenario" --backend cuda --out "$out/r$run" >/dev/null 2>&1; then
    echo "GPU run $run failed"; exit 1
  fi
done
/usr/bin/python3 "$here/compare_runs.py" "$out/r1" "$out/r2" --same-files
