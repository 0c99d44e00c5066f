#!/usr/bin/env bash
# usage: thread_determinism.sh TISSUE SCENARIO OUT_DIR
# Runs SCENARIO on the CPU backend with 1 and with 2 OpenMP threads and requires every output file
# (except run.json, which records the device and times) to be identical byte for byte, checkpoints included
# (compare_runs.py).
set -u
tissue=$1; scenario=$2; out=$3
here=$(dirname "$0")
rm -rf "$out"
for threads in 1 2; do
  if ! OMP_NUM_THREADS=$threads "$tissue" run "$scenario" --backend cpu --out "$out/t$threads" >/dev/null 2>&1; then
    echo "the run with $threads thread(s) failed"; exit 1
  fi
done
/usr/bin/python3 "$here/compare_runs.py" "$out/t1" "$out/t2" --same-files
