#!/usr/bin/env bash
# Issue 38's scale run: bench/epidermis_1m.toml (1 M cells, 20 M elements, 2000 steps with growth and
# division, output every 1000 steps, a checkpoint at the end) on one GPU, timed from the command's start
# to its end (start-up, seeding, output and checkpoint included). Prints overall steps/s, the run's own
# wall-time line, the peak device memory (run.json) per element, and the output's size.
#   usage: bench/epidermis_1m.sh [TISSUE] [OUTDIR]
#   GPU machine: source .gpu/env.sh; bench/epidermis_1m.sh .gpu/build/tools/tissue /tmp/epidermis_1m
set -euo pipefail
tissue=${1:-build/cuda/tools/tissue}
out=${2:-/tmp/epidermis_1m}
steps=2000
t0=$(date +%s%N)
"$tissue" run bench/epidermis_1m.toml --backend cuda --out "$out" --overwrite > "$out.log" 2>&1 || {
  tail -20 "$out.log"
  exit 1
}
t1=$(date +%s%N)
grep -E '^cells |^wall time|^layers' "$out.log"
python3 - "$out" "$steps" "$t0" "$t1" <<'PY'
import json, os, sys
out, steps, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
wall = (t1 - t0) / 1e9
record = json.load(open(os.path.join(out, "run.json")))
peak = record["memory"]["device_peak_bytes"]
size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
import re
elements = int(re.findall(r"^cells \d+ \(elements (\d+)\)", open(out + ".log").read(), re.M)[-1])
print(f"overall: {steps} steps in {wall:.1f} s = {steps / wall:.1f} steps/s (start-up, output, checkpoint included)")
print(f"device peak {peak / 2**30:.2f} GiB = {peak / elements:.0f} B per element at the end ({elements} elements); output {size / 2**30:.2f} GiB")
PY
