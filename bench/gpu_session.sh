#!/usr/bin/env bash
# GPU machine side of a session (run from the repository root with .gpu carried; see gpu_pack.sh):
# the whole test suite (both backends), the SEM benchmark, and the seed's full epidermis run, with a
# short table at the end. Details go to $OUT.
#   usage: bench/gpu_session.sh [all|tests|conformal|bench|bench_rd|bench_surface|bench_patches|eoc|graph_scenarios|epidermis|tgfb|user_network|membrane|sweep]...
# sweep: bench/sweep_packing.py, 64 epidermis members of SWEEP_STEPS (default 20000) steps one after another
# and packed SWEEP_CONCURRENT (default 8,16,32,64) at once; with SWEEP_MPI=R also over R worker ranks (the
# .gpu pack needs OpenMPI: bench/gpu_pack_mpi.sh). sweep.csv of the best packed run in $OUT.
# membrane: scenarios/placodes.toml and scenarios/epidermis_spot.toml to 130000 steps (final snapshots in
# membrane_runs.tar.gz).
# user_network: the full epidermis with the built-in network and with the same network written in the
# scenario (NVRTC), wall times and final tissues side by side.
# tgfb: scenarios/epidermis_tgfb.toml to 130000 steps for each TGF-beta supply in TGFB_SUPPLY (default
# "0 0.75 1.5 2.25 3"), then the 1.5 run with the gene network and the field every 10 steps (multi-rate).
# eoc: the curvature-flow EOC tables (seed 004, Tables 2-4) with wall times; WILLMORE_TO (default 256) is the
# finest Willmore mesh, WILLMORE_PROBE_T (unset) times 256^2 Willmore to that end time only.
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
# The Python extension built here is for Debian's Python 3.11; the image's python3 is 3.12: build the
# extension (one translation unit) for it against the packed engine libraries, beside the 3.11 one.
build_python() {
  local ext pybind
  ext=.gpu/build/python/tissue/_tissue$(python3-config --extension-suffix)
  pybind=$(python3 -c "import pybind11; print(pybind11.get_include())")
  g++ -O2 -std=c++17 -shared -fPIC -fvisibility=hidden -fopenmp -DTISSUE_BACKEND_CUDA -I"$repo" \
    -I.gpu/build/generated -isystem .gpu/include -isystem "$pybind" $(python3-config --includes) \
    python/src/tissue_python.cpp -o "$ext" -L.gpu/build/modules -L.gpu/build/engine -ltissue_modules \
    -ltissue_engine -Wl,-rpath,'$ORIGIN/../../engine:$ORIGIN/../../modules:$ORIGIN/../../cuda' \
    > "$OUT/build_python.log" 2>&1 && echo "python extension: $ext" || { echo "python extension: build failed"; tail -20 "$OUT/build_python.log"; }
}
if [ -d .gpu/build/python/tissue ]; then build_python; fi
cd .gpu/build
summary=()
want() { [[ " $parts " == *" all "* || " $parts " == *" $1 "* ]]; }

if want tests; then
  start=$SECONDS
  # 8 tests at a time with 2 OpenMP threads each: all 16 cores, no oversubscription (OpenMP's spinning
  # threads made CPU-backend tests 500x slower with the default of 16 threads per test)
  # the notebooks (notebook.*) need a Jupyter kernel, the view.pvsm and .pvtu tests ParaView and an X server,
  # the SBML tests (cpu.sbml.*, CPU backend) Debian's libSBML Python bindings for Python 3.11: the image has
  # none of them; CI runs them
  # the MPI tests (ctest -L mpi) run the mpiexec the build machine found, /usr/bin/mpiexec: here the packed
  # OpenMPI's (bench/gpu_pack_mpi.sh), where there is one
  if [ ! -e /usr/bin/mpiexec ] && command -v mpirun >/dev/null; then ln -s "$(command -v mpirun)" /usr/bin/mpiexec; fi
  OMP_NUM_THREADS=2 ctest --output-on-failure -j8 -E '^notebook[.]|^cli[.]paraview_state[.]|^cpu[.]domain_mpi[.]paraview_pieces$|^cpu[.]tissue_run_ranks[.]paraview_grid_pieces$|^cpu[.]sbml[.]' \
    > "$OUT/ctest.log" 2>&1
  rc=$?
  summary+=("tests: rc=$rc, $(grep -E 'tests passed' "$OUT/ctest.log"), $((SECONDS - start)) s")
  grep -E "^\s*[0-9]+ - |tests passed" "$OUT/ctest.log" | tail -15
fi
if want conformal; then
  start=$SECONDS
  b=bench/bench_conformal_willmore
  meshes=$repo/scenarios/meshes
  # the bunny (open, noisy) diverges at tau = 0.5 whatever the solver (W grows 10x per step), so its rows
  # take tau = 0.05; cuSOLVER's csrlsvchol refactorizes in every solve (minutes on the bunny): spot only
  { OMP_NUM_THREADS=16 timeout 200 $b --backend cuda --repeats 3 --solver cg --mesh "$meshes/spot.obj"
    OMP_NUM_THREADS=16 timeout 200 $b --backend cuda --repeats 3 --solver cg --tau 0.05 --mesh "$meshes/stanford-bunny.obj"
    # further along the flow, where the inverse iteration starts from transforms extrapolated in time
    OMP_NUM_THREADS=16 timeout 200 $b --backend cuda --repeats 5 --warmup 12 --solver cg --tau 0.05 --mesh "$meshes/stanford-bunny.obj"
  } > "$OUT/bench_conformal.txt" 2>&1
  rc=$?
  { OMP_NUM_THREADS=16 timeout 150 $b --backend cuda --solver cg --trace-steps 20 --tau 0.05 --mesh "$meshes/stanford-bunny.obj"
    OMP_NUM_THREADS=16 timeout 150 $b --backend cuda --solver cg --trace-steps 6 --mesh "$meshes/spot.obj"
    OMP_NUM_THREADS=16 timeout 150 $b --backend cuda --solver cg --preconditioner jacobi --trace-steps 6 --tau 0.05 --mesh "$meshes/stanford-bunny.obj"
  } > "$OUT/bench_conformal_trace.txt" 2>&1
  OMP_NUM_THREADS=16 timeout 120 $b --backend cuda --repeats 2 --solver direct --mesh "$meshes/spot.obj" \
    > "$OUT/bench_conformal_direct.txt" 2>&1
  { OMP_NUM_THREADS=16 timeout 120 $b --backend cpu --repeats 2 --solver direct --mesh "$meshes/spot.obj"
    OMP_NUM_THREADS=16 timeout 200 $b --backend cpu --repeats 1 --solver direct --tau 0.05 --mesh "$meshes/stanford-bunny.obj"
  } > "$OUT/bench_conformal_cpu.txt" 2>&1
  summary+=("conformal bench: rc=$rc, $((SECONDS - start)) s")
  cat "$OUT/bench_conformal.txt" "$OUT/bench_conformal_trace.txt" "$OUT/bench_conformal_direct.txt" \
    "$OUT/bench_conformal_cpu.txt"
fi
if want sweep; then
  start=$SECONDS
  python3 "$repo/bench/sweep_packing.py" ./tools/tissue /tmp/sweep_packing --steps "${SWEEP_STEPS:-20000}" \
    --concurrent "${SWEEP_CONCURRENT:-8,16,32,64}" ${SWEEP_MPI:+--mpi $SWEEP_MPI} ${SWEEP_SKIP_SEQUENTIAL:+--skip-sequential} \
    2>&1 | tee "$OUT/sweep_packing.txt"
  for d in /tmp/sweep_packing/packed_* /tmp/sweep_packing/mpi_*; do
    [ -f "$d/sweep.csv" ] && cp "$d/sweep.csv" "$OUT/$(basename "$d")_sweep.csv"
  done
  summary+=("sweep packing: $((SECONDS - start)) s")
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
if want eoc; then
  eoc=./tools/graph_flow_eoc
  if [ -z "${SKIP_MCF:-}" ]; then
    $eoc --backend cuda --flow mcf --precision double --from 16 --to 1024 --tolerance 1e-8 2>&1 | tee "$OUT/eoc_mcf_double.txt"
    # float cannot hold a 1e-8 tolerance at 1024^2 (the step collapses and rounding accumulates)
    $eoc --backend cuda --flow mcf --precision float --from 16 --to 1024 --tolerance 1e-6 2>&1 | tee "$OUT/eoc_mcf_float.txt"
  fi
  if [ -n "${WILLMORE_PROBE_T:-}" ]; then
    $eoc --backend cuda --flow willmore --from 256 --to 256 --end-time "$WILLMORE_PROBE_T" --samples 1 2>&1 |
      tee "$OUT/willmore_probe.txt"
  fi
  $eoc --backend cuda --flow willmore --precision double --from 16 --to "${WILLMORE_TO:-256}" 2>&1 |
    tee "$OUT/eoc_willmore_double.txt"
  summary+=("eoc: MCF double $(grep -sE '^\| 1024' "$OUT/eoc_mcf_double.txt"); Willmore $(grep -E '^\| [0-9]+\^2' "$OUT/eoc_willmore_double.txt" | tail -1)")
fi
if want graph_scenarios; then  # the seed's Figs. 1 and 2, with wall times; snapshots at the figures' times
  for stem in mcf_graph willmore_graph; do
    rm -rf "/tmp/$stem"
    /usr/bin/time -f "%e s wall" ./tools/tissue run "$src/scenarios/$stem.toml" --backend cuda --out "/tmp/$stem" \
      > "$OUT/$stem.log" 2>&1
    echo "$stem rc=$?"; tail -5 "$OUT/$stem.log"
    mkdir -p "$OUT/$stem"
    for step in 0 1 2 4 5 20; do cp "/tmp/$stem/surface_$(printf %09d $step).vts" "$OUT/$stem/" 2>/dev/null; done
    summary+=("$stem: $(grep -E 'wall' "$OUT/$stem.log" | tail -1)")
  done
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
if want tgfb; then
  tgfb_run() {  # name, scenario file
    rm -rf "/tmp/$1"
    /usr/bin/time -f "%e s wall" ./tools/tissue run "$2" --backend cuda --every 10000 --out "/tmp/$1" \
      > "$OUT/$1.log" 2>&1
    local rc=$?
    mkdir -p "$OUT/tgfb_runs/$1"
    cp /tmp/$1/cells_000130000.vtu /tmp/$1/tgfb_000130000.vti "$OUT/tgfb_runs/$1/" 2>/dev/null
    summary+=("$1: rc=$rc; $(grep -E '^cells|^layers|^signal|wall' "$OUT/$1.log" | tr '\n' ' ')")
  }
  for supply in ${TGFB_SUPPLY:-0 0.75 1.5 2.25 3}; do
    sed "s/value = 1.5 }/value = $supply }/" "$src/scenarios/epidermis_tgfb.toml" > "/tmp/tgfb_$supply.toml"
    tgfb_run "tgfb_$supply" "/tmp/tgfb_$supply.toml"
  done
  sed 's/^tgfb = { every = 1, substeps = 1 }.*/tgfb = { every = 10, substeps = 2 }\ngene_network = { every = 10 }/' \
    "$src/scenarios/epidermis_tgfb.toml" > /tmp/tgfb_multirate.toml
  grep -A2 '^\[schedule\]' /tmp/tgfb_multirate.toml
  [ -n "${TGFB_SKIP_MULTIRATE:-}" ] || tgfb_run tgfb_multirate /tmp/tgfb_multirate.toml
  tar -C "$OUT" -czf "$OUT/tgfb_runs.tar.gz" tgfb_runs && rm -rf "$OUT/tgfb_runs"  # few files travel back
fi
if want user_network; then
  for stem in epidermis epidermis_user_network; do
    rm -rf "/tmp/un_$stem"
    /usr/bin/time -f "%e s wall" ./tools/tissue run "$src/scenarios/$stem.toml" --backend cuda --every 0 \
      --out "/tmp/un_$stem" > "$OUT/un_$stem.log" 2>&1
    rc=$?
    tail -5 "$OUT/un_$stem.log"
    summary+=("$stem: rc=$rc; $(grep -E '^cells|^layers|wall' "$OUT/un_$stem.log" | tr '\n' ' ')")
  done
fi
if want membrane; then
  # tissues on membrane meshes: placodes (a membrane field gating proliferation) and the epidermis on spot
  mkdir -p "$OUT/membrane_runs"
  for stem in placodes epidermis_spot; do
    rm -rf "/tmp/mb_$stem"
    /usr/bin/time -f "%e s wall" ./tools/tissue run "$src/scenarios/$stem.toml" --backend cuda --every 0 \
      --out "/tmp/mb_$stem" > "$OUT/mb_$stem.log" 2>&1
    rc=$?
    tail -6 "$OUT/mb_$stem.log"
    mkdir -p "$OUT/membrane_runs/$stem"
    cp /tmp/mb_$stem/*_000130000.vtu "$OUT/membrane_runs/$stem/" 2>/dev/null
    summary+=("$stem: rc=$rc; $(grep -E '^cells|^layers|^membrane|wall' "$OUT/mb_$stem.log" | tr '\n' ' ')")
  done
  tar -C "$OUT" -czf "$OUT/membrane_runs.tar.gz" membrane_runs && rm -rf "$OUT/membrane_runs"
fi
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
