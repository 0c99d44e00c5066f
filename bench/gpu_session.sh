#!/usr/bin/env bash
# GPU machine side of a session (run from the repository root with .gpu carried; see gpu_pack.sh):
# the whole test suite (both backends), the SEM benchmark, and the seed's full epidermis run, with a
# short table at the end. Details go to $OUT.
#   usage: bench/gpu_session.sh [all|tests|bench|bench_rd|bench_surface|bench_patches|epidermis]...
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
repo=$PWD
parts=${*:-all}
src=$(cat .gpu/source_dir)
# CTest files and test binaries refer to the source tree by its path on the build machine
if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$repo" "$src"; fi
source .gpu/env.sh
export PYTHONPATH="$repo/.gpu/py${PYTHONPATH:+:$PYTHONPATH}"
# Debian's /usr/bin/python3 is not there; the image's python3 has numpy
grep -rl --include=CTestTestfile.cmake /usr/bin/python3 .gpu/build | xargs -r sed -i 's#/usr/bin/python3#python3#g'
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
cd .gpu/build
summary=()
want() { [[ " $parts " == *" all "* || " $parts " == *" $1 "* ]]; }

if want tests; then
  start=$SECONDS
  # 8 tests at a time with 2 OpenMP threads each: all 16 cores, no oversubscription (OpenMP's spinning
  # threads made CPU-backend tests 500x slower with the default of 16 threads per test)
  OMP_NUM_THREADS=2 ctest --output-on-failure -j8 > "$OUT/ctest.log" 2>&1
  rc=$?
  summary+=("tests: rc=$rc, $(grep -E 'tests passed' "$OUT/ctest.log"), $((SECONDS - start)) s")
  grep -E "^\s*[0-9]+ - |tests passed" "$OUT/ctest.log" | tail -15
fi
if want bench; then
  ./bench/bench_sem --backend cuda --elements 100000 1000000 --steps 200 2>&1 | tee "$OUT/bench_sem.txt"
  summary+=("bench_sem: $(grep -E '^ +[0-9]' "$OUT/bench_sem.txt" | awk '{printf "%s el: %s el-steps/s %s ms/step; ", $1, $3, $4}')")
fi
if want bench_rd; then
  ./bench/bench_grid_rd --backend cuda --sweep 2>&1 | tee "$OUT/bench_grid_rd.txt"
  summary+=("bench_grid_rd: $(grep -E '^(2D|3D)' "$OUT/bench_grid_rd.txt" | awk -F'  +' '{printf "%s: %s; ", $1, $NF}')")
fi
if want bench_surface; then
  ./bench/bench_surface_rd --backend cuda 2>&1 | tee "$OUT/bench_surface_rd.txt"
  summary+=("bench_surface_rd: $(grep -E '(fused|stencil|patches x[0-9]) +float' "$OUT/bench_surface_rd.txt" | awk '{printf "%s %s: %s G v-st/s %s; ", $1, $2, $(NF-2), $NF}')")
fi
if want bench_patches; then  # launch shapes of the surface patches path
  ./bench/bench_surface_rd --backend cuda --patch-sweep 2>&1 | tee "$OUT/bench_surface_patches.txt"
fi
if want epidermis; then
  rm -rf /tmp/epidermis
  /usr/bin/time -f "%e s wall" ./tools/tissue run "$src/scenarios/epidermis.toml" --backend cuda --every 10000 \
    --out /tmp/epidermis > "$OUT/epidermis.log" 2>&1
  rc=$?
  cp /tmp/epidermis/cells_000130000.vtu "$OUT/" 2>/dev/null
  python3 "$src/tools/epidermis_timeline.py" /tmp/epidermis > "$OUT/epidermis_timeline.txt" 2>&1
  cat "$OUT/epidermis_timeline.txt"
  tail -6 "$OUT/epidermis.log"
  summary+=("epidermis: rc=$rc; $(grep -E '^cells|^layers|wall' "$OUT/epidermis.log" | tr '\n' ' ')")
fi
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
