#!/usr/bin/env bash
# `tissue render` refuses what it cannot render with one line and the documented exit code, ParaView
# installed or not: a missing run directory, one without view.pvsm, an image that is not .png or whose
# directory does not exist, a bad --size (exit 2); no ParaView on PATH, TISSUE_PVBATCH naming no program
# (exit 1). And every run directory holds its view.pvsm.
#   usage: render_bad_input.sh TISSUE GRID_SCENARIO WORK_DIR
set -u
tissue=$1 scenario=$2 work=$3
expect=$(dirname "$0")/expect_failure.sh
rm -rf "$work" && mkdir -p "$work/not_a_run"
failed=0
check() { "$expect" "$@" || failed=$((failed + 1)); }
"$tissue" run "$scenario" --backend cpu --steps 20 --every 10 --out "$work/run" >/dev/null 2>&1 ||
  { echo "the run failed"; exit 1; }
[ -s "$work/run/view.pvsm" ] || { echo "the run wrote no view.pvsm"; failed=$((failed + 1)); }

check 2 "^tissue: error: .*/missing: no such run directory$" "$tissue" render "$work/missing" "$work/a.png"
check 2 "^tissue: error: .*/not_a_run: holds no view.pvsm" "$tissue" render "$work/not_a_run" "$work/a.png"
check 2 "^tissue: error: .*/a.jpg: the image must be a .png file$" "$tissue" render "$work/run" "$work/a.jpg"
check 2 "^tissue: error: .*/nowhere/a.png: the directory .* does not exist$" \
  "$tissue" render "$work/run" "$work/nowhere/a.png"
for size in 0x10 10x 640 x480 64000x10 -5x10 1e3x10; do
  check 2 "^tissue: error: --size: expected WIDTHxHEIGHT in pixels" "$tissue" render "$work/run" "$work/a.png" \
    --size "$size"
done
check 1 "^tissue: error: ParaView is not installed: neither pvbatch nor pvpython is on PATH" \
  env PATH=/nonexistent "$tissue" render "$work/run" "$work/a.png"
check 1 "^tissue: error: TISSUE_PVBATCH=/nonexistent/pvbatch: not an executable" \
  env TISSUE_PVBATCH=/nonexistent/pvbatch "$tissue" render "$work/run" "$work/a.png"
[ -e "$work/a.png" ] && { echo "a refused render wrote an image"; failed=$((failed + 1)); }
echo "$failed failed"
[ "$failed" -eq 0 ]
