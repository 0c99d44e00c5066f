#!/usr/bin/env bash
# GPU machine side (run from the repository root with .gpu carried; see gpu_pack.sh): a scenario run to its
# end for each seed FIRST..LAST, PARALLEL runs at a time, on the CUDA backend; one CSV line per seed in
# $OUT/seeds_<scenario>.csv: seed, final cells, final elements, layers line, wall seconds.
#   usage: bench/epidermis_seeds.sh SCENARIO FIRST LAST [PARALLEL]
set -uo pipefail
scenario=$1 first=$2 last=$3 parallel=${4:-1}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
source .gpu/env.sh
name=$(basename "$scenario" .toml)
csv=$OUT/seeds_$name.csv
[ -f "$csv" ] || echo "seed,cells,elements,wall_s,layers" > "$csv"
one() {
  local seed=$1 dir=/tmp/seeds_${name}_$1
  sed "s/^seed = .*/seed = $seed/" "$scenario" > "/tmp/${name}_$seed.toml"
  rm -rf "$dir"
  local start=$SECONDS
  .gpu/build/tools/tissue run "/tmp/${name}_$seed.toml" --backend cuda --every 0 --out "$dir" > "$dir.log" 2>&1
  local wall=$((SECONDS - start))
  local cells elements layers
  cells=$(grep -oE '^cells [0-9]+' "$dir.log" | grep -oE '[0-9]+')
  elements=$(grep -oE 'elements [0-9]+' "$dir.log" | head -1 | grep -oE '[0-9]+')
  layers=$(grep -oE 'per layer from the bottom: [0-9 ]+' "$dir.log" | sed 's/.*bottom: //')
  echo "$seed,$cells,$elements,$wall,$layers" >> "$csv"
}
seed=$first
while [ "$seed" -le "$last" ]; do
  for ((k = 0; k < parallel && seed <= last; ++k, ++seed)); do one "$seed" & done
  wait
done
cat "$csv"
