#!/usr/bin/env bash
# GPU machine side of a before/after comparison (run from the repository root, carrying .gpu; see
# gpu_pack.sh): the tree's CUDA build in .gpu/build against an earlier tree's in .gpu/base (its tools/tissue
# and bench/ executables, its shared libraries in .gpu/base/lib and its scenarios/epidermis.toml), run
# alternately on the same GPU so that clocks and thermals affect both alike.
#   usage: bench/gpu_compare.sh [epidermis] [sem] [grid_rd] [surface_rd] [conformal] [hashes]...
# epidermis: scenarios/epidermis.toml, 130000 steps, twice each (old, new, old, new); wall times and whether the
#            final cells/elements snapshots and cells.pvd are byte-identical (the old tree reads its own
#            scenario file, .gpu/base/scenarios/epidermis.toml).
# sem, grid_rd, surface_rd, conformal: the benchmark executables, old then new then old then new.
# hashes: tools/scenario_hashes.py --backend cuda against tests/regression/scenario_hashes_cuda_h200.txt.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
repo=$PWD
src=$(cat .gpu/source_dir)
if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$repo" "$src"; fi
source .gpu/env.sh
export PYTHONPATH="$repo/.gpu/py${PYTHONPATH:+:$PYTHONPATH}"
new=$repo/.gpu/build
old=$repo/.gpu/base
parts=${*:-epidermis sem grid_rd surface_rd conformal hashes}
want() { [[ " $parts " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
summary=()

if want epidermis; then
  for round in 1 2; do
    for which in old new; do
      dir=/tmp/epi_${which}_$round
      rm -rf "$dir"
      if [ $which = old ]; then bin=$old/tools/tissue scenario=$old/scenarios/epidermis.toml libs=$old/lib
      else bin=$new/tools/tissue scenario=$repo/scenarios/epidermis.toml libs=$new; fi
      LD_LIBRARY_PATH="$libs:$LD_LIBRARY_PATH" /usr/bin/time -f "%e" -o "$OUT/epi_${which}_$round.time" \
        "$bin" run "$scenario" --backend cuda \
        --every 0 --out "$dir" > "$OUT/epi_${which}_$round.log" 2>&1
      summary+=("epidermis $which #$round: $(cat "$OUT/epi_${which}_$round.time") s wall, rc=$?")
    done
  done
  for f in cells_000130000.vtu elements_000130000.vtu cells.pvd elements.pvd; do
    cmp -s /tmp/epi_old_1/$f /tmp/epi_new_1/$f && s=identical || s=DIFFERENT
    cmp -s /tmp/epi_new_1/$f /tmp/epi_new_2/$f && r=identical || r=DIFFERENT
    summary+=("  $f: old vs new $s; new run 1 vs 2 $r")
  done
  grep -E '^cells|^layers' "$OUT/epi_new_1.log" | sed 's/^/  new: /'
  grep -E '^cells|^layers' "$OUT/epi_old_1.log" | sed 's/^/  old: /'
fi
bench() {  # name, arguments...
  local name=$1
  shift
  for round in 1 2; do
    for which in old new; do
      local dir=$old libs=$old/lib
      [ $which = new ] && dir=$new libs=$new
      echo "== $name $which #$round" >> "$OUT/bench_$name.txt"
      LD_LIBRARY_PATH="$libs:$LD_LIBRARY_PATH" OMP_NUM_THREADS=16 timeout 300 "$dir/bench/$name" "$@" \
        >> "$OUT/bench_$name.txt" 2>&1
    done
  done
}
if want sem; then
  bench bench_sem --backend cuda --elements 100000 1000000 --steps 200
  summary+=("bench_sem (ms/step): $(awk '/^==/{tag=$3"#"$4} /^ +[0-9]/{printf "%s %s el %s; ", tag, $1, $4}' "$OUT/bench_bench_sem.txt")")
fi
if want grid_rd; then
  bench bench_grid_rd --backend cuda
  summary+=("bench_grid_rd: see bench_bench_grid_rd.txt")
fi
if want surface_rd; then
  bench bench_surface_rd --backend cuda --bunny "$repo/scenarios/meshes/stanford-bunny.obj"
  summary+=("bench_surface_rd: see bench_bench_surface_rd.txt")
fi
if want conformal; then
  bench bench_conformal_willmore --backend cuda --repeats 3 --solver cg --mesh "$repo/scenarios/meshes/spot.obj"
  summary+=("bench_conformal_willmore: see bench_bench_conformal_willmore.txt")
fi
if want hashes; then
  python3 "$repo/tools/scenario_hashes.py" "$new/tools/tissue" --backend cuda \
    --compare "$repo/tests/regression/scenario_hashes_cuda_h200.txt" --work /tmp/hashes_cuda \
    --out "$OUT/scenario_hashes_cuda.txt" \
    > "$OUT/hashes_cuda.txt" 2>&1
  summary+=("cuda scenario hashes: $(tail -1 "$OUT/hashes_cuda.txt")")
  grep DIFF "$OUT/hashes_cuda.txt" | head -20
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
