#!/usr/bin/env bash
# Writes the checkpoint seeds of fuzz_checkpoint into DIR (default tests/fuzz/corpus/checkpoint): a short
# CPU run of three small scenarios (grid, surface and cell models; tests/fuzz/seed_scenarios/) with
# `tissue run --checkpoint-every 10`, each first checkpoint copied (about 13 KB each).
#   tests/fuzz/make_checkpoint_seeds.sh [TISSUE_BINARY] [DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tissue=${1:-$here/../../build/cpu/tools/tissue}
out=${2:-$here/corpus/checkpoint}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
for scenario in "$here"/seed_scenarios/*.toml; do
  name=$(basename "$scenario" .toml)
  OMP_NUM_THREADS=1 "$tissue" run "$scenario" --backend cpu --steps 10 --checkpoint-every 10 \
    --out "$work/$name" > /dev/null 2>&1
  cp "$work/$name/checkpoint_000000010.h5" "$out/$name.h5"
done
ls -l "$out"
