#!/usr/bin/env bash
# usage: thread_determinism.sh TISSUE SCENARIO OUT_DIR
# Runs SCENARIO on the CPU backend with 1 and with 2 OpenMP threads and requires every output file
# (except run.json, which records the device and times) to be identical byte for byte.
set -u
tissue=$1; scenario=$2; out=$3
rm -rf "$out"
for threads in 1 2; do
  if ! OMP_NUM_THREADS=$threads "$tissue" run "$scenario" --backend cpu --out "$out/t$threads" >/dev/null 2>&1; then
    echo "the run with $threads thread(s) failed"; exit 1
  fi
done
count=0
for f in "$out"/t1/*; do
  name=$(basename "$f")
  [ "$name" = run.json ] && continue
  if ! cmp -s "$f" "$out/t2/$name"; then echo "$name differs between 1 and 2 threads"; exit 1; fi
  count=$((count + 1))
done
[ "$(ls "$out/t1" | wc -l)" -eq "$(ls "$out/t2" | wc -l)" ] || { echo "different file sets"; exit 1; }
echo "$count files identical with 1 and 2 threads"
