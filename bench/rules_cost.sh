#!/usr/bin/env bash
# GPU machine side (run from the repository root with .gpu carried; see gpu_pack.sh): the cost of behaviour
# rules against the same model with hard-coded behaviour. scenarios/epidermis.toml (growth and division in
# C++, modules/lifecycle) and scenarios/epidermis_rules.toml (the same growth and division written as rules,
# modules/rules; the same tissue, bit for bit) run to STEPS steps on the CUDA backend, alternately, REPEATS
# times each; one CSV line per run in $OUT/rules_cost.csv (scenario, repeat, wall seconds, final cells), then
# the medians and the ratio.
#   usage: bench/rules_cost.sh [STEPS] [REPEATS]
set -uo pipefail
steps=${1:-130000} repeats=${2:-3}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
source .gpu/env.sh
csv=$OUT/rules_cost.csv
echo "scenario,repeat,wall_s,cells" > "$csv"
for ((r = 1; r <= repeats; ++r)); do
  for name in epidermis epidermis_rules; do
    dir=/tmp/rules_cost_$name
    rm -rf "$dir"
    .gpu/build/tools/tissue run "scenarios/$name.toml" --backend cuda --steps "$steps" --every 0 --out "$dir" \
      > "$dir.log" 2>&1
    wall=$(grep -oE 'wall time [0-9.]+' "$dir.log" | grep -oE '[0-9.]+$')
    cells=$(grep -oE '^cells [0-9]+' "$dir.log" | grep -oE '[0-9]+')
    echo "$name,$r,$wall,$cells" >> "$csv"
  done
done
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = {n: statistics.median(float(r["wall_s"]) for r in rows if r["scenario"] == n) for n in ("epidermis", "epidermis_rules")}
cells = {r["scenario"]: r["cells"] for r in rows}
print(f"hard-coded (lifecycle): median {med['epidermis']:.2f} s, {cells['epidermis']} cells")
print(f"rules:                  median {med['epidermis_rules']:.2f} s, {cells['epidermis_rules']} cells")
print(f"rules / hard-coded: {med['epidermis_rules'] / med['epidermis']:.3f}")
PY
