#!/bin/sh
# `mpirun -np N tissue run` (tools/decomposed_run.hpp) against the run on one rank:
#   TISSUE MPIEXEC SCENARIO WORK PYTHON BACKEND
# The one-rank reference is `tissue run` on the CPU backend (where every kernel sums with one lane, as the
# decomposed run does) and `mpirun -np 1 tissue run` on the CUDA backend (whose undecomposed kernels may
# split a sum over several lanes: the same physics, other rounding; docs/multi_gpu.md).
# SCENARIO is tests/domain/decomposed_epidermis.toml: 200 steps of the epidermis with divisions every 10 steps
# and checkpoints at 100 and 200. Checks that
#  1. the runs on 2 and 4 ranks end in the same state as the one-rank run, to the bit: every dataset of
#     their final checkpoints (tests/domain/compare_checkpoints.py), the cells that divided included;
#  2. each snapshot is one .pvtu naming one .vtu piece per rank, and run.json records the ranks;
#  3. the 2-rank run's checkpoint at step 100 restarts on 4 ranks and on one, and the one-rank run's on 2
#     ranks, each ending in the same state;
#  4. SIGTERM to mpirun stops every rank after the same step, with that step's checkpoint, from which the run
#     goes on to the one-rank run's state;
#  5. with a grid field coupled to the cells (tests/domain/decomposed_epidermis_tgfb.toml: a TGF-beta signal
#     that the cells sample, secrete and take up), the runs on 2, 4 and 6 ranks (2 x 1, 4 x 1, 3 x 2) end in
#     the one-rank run's state to the bit, field included, in the periodic box and (4 ranks) in an open one; each field snapshot is one
#     .pvti naming one .vti piece per rank; the 2-rank checkpoint restarts on 4 ranks;
#  6. bad input is refused once, by rank 0, with exit status 2: more ranks than the box can be split into, a
#     field that excludes the cells' volume (not decomposed yet), an output directory that holds another run,
#     an unknown TISSUE_HALO_TRANSPORT.
set -eu
tissue=$1 mpiexec=$2 scenario=$3 work=$4 python=$5 backend=$6
here=$(cd "$(dirname "$0")" && pwd)
compare="$python $here/compare_checkpoints.py"
mpirun() { "$mpiexec" --oversubscribe -np "$@"; }
rm -rf "$work"
mkdir -p "$work"
cd "$work"
run() { "$@" >log.txt 2>&1 || { cat log.txt; echo "FAILED: $*"; exit 1; }; }

one_rank() {  # the run on one rank: tissue run ARGS...
  if [ "$backend" = cpu ]; then "$tissue" run "$@"; else mpirun 1 "$tissue" run "$@"; fi
}
run one_rank "$scenario" --backend "$backend" --out one
run mpirun 2 "$tissue" run "$scenario" --backend "$backend" --out np2
grep -q "one tissue over 2 ranks (2 x 1): halo rebuilds: sem [1-9][0-9]*, gene_network [1-9][0-9]*" log.txt ||
  { cat log.txt; echo "np2: no halo rebuilds in the summary"; exit 1; }
run mpirun 4 "$tissue" run "$scenario" --backend "$backend" --out np4
$compare checkpoint_000000200.h5 one np2 np4
$compare checkpoint_000000100.h5 one np2 np4
# the tissue divided: more than the 100 cells it started with
"$python" - <<'PY'
import h5py
with h5py.File("one/checkpoint_000000200.h5") as f:
    cells = int(f["tables/cells"].attrs["size"])
assert cells > 100, f"no division in 200 steps: {cells} cells"
print(f"one rank: {cells} cells at step 200")
PY

# the pieces and the record
for n in 2 4; do
  for step in 000000000 000000100 000000200; do
    for kind in cells elements; do
      test -f "np$n/${kind}_$step.pvtu" || { echo "np$n/${kind}_$step.pvtu missing"; exit 1; }
      test "$(grep -c '<Piece Source=' "np$n/${kind}_$step.pvtu")" -eq "$n" ||
        { echo "np$n/${kind}_$step.pvtu does not name $n pieces"; exit 1; }
      r=0
      while [ $r -lt $n ]; do
        test -f "np$n/${kind}_${step}_$r.vtu" || { echo "np$n/${kind}_${step}_$r.vtu missing"; exit 1; }
        r=$((r + 1))
      done
    done
  done
  grep -q '"count": '"$n" "np$n/run.json" || { echo "np$n/run.json does not record $n ranks"; exit 1; }
  grep -q '"status": "completed"' "np$n/run.json" || { echo "np$n/run.json: not completed"; exit 1; }
done

# written by N ranks, restarted on M
run mpirun 4 "$tissue" run --restart np2/checkpoint_000000100.h5 --backend "$backend" --out np2_on_4
run one_rank --restart np2/checkpoint_000000100.h5 --backend "$backend" --out np2_on_1
run mpirun 2 "$tissue" run --restart one/checkpoint_000000100.h5 --backend "$backend" --out one_on_2
$compare checkpoint_000000200.h5 one np2_on_4 np2_on_1 one_on_2

# a signal: mpirun passes SIGTERM to every rank; the ranks agree on the step to stop after, write it and a
# checkpoint; the run restarted from it ends where the one-rank run ends
"$mpiexec" --oversubscribe -np 2 "$tissue" run "$scenario" --backend "$backend" --steps 1000000 --out sig \
  >sig.txt 2>&1 &
pid=$!  # mpirun's own (the shell function would put a subshell between)
trap 'kill -KILL $pid 2>/dev/null' EXIT
i=0
while [ ! -e sig/cells_000000100.pvtu ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid
wait $pid || true
trap - EXIT
grep -q '"status": "interrupted"' sig/run.json || { cat sig.txt; echo "sig/run.json: not interrupted"; exit 1; }
stopped=$("$python" -c 'import json; print(json.load(open("sig/run.json"))["steps"]["done"])')
test -f "sig/checkpoint_$(printf %09d "$stopped").h5" || { echo "no checkpoint at the step stopped after, $stopped"; exit 1; }
end=$((stopped + 20))
run mpirun 2 "$tissue" run --restart sig --steps $end --backend "$backend"
run one_rank "$scenario" --backend "$backend" --steps $end --out sig_one
$compare "checkpoint_$(printf %09d $end).h5" sig_one sig
echo "stopped by SIGTERM after step $stopped, restarted to $end"

# a grid field coupled to the cells, decomposed with them
tgfb=$here/decomposed_epidermis_tgfb.toml
run one_rank "$tgfb" --backend "$backend" --out tgfb_one
run mpirun 2 "$tissue" run "$tgfb" --backend "$backend" --out tgfb_np2
run mpirun 4 "$tissue" run "$tgfb" --backend "$backend" --out tgfb_np4
run mpirun 6 "$tissue" run "$tgfb" --backend "$backend" --out tgfb_np6  # 3 x 2: the frame's corners
grep -q "one tissue over 6 ranks (3 x 2)" log.txt || { cat log.txt; echo "np6: not a 3 x 2 grid"; exit 1; }
run mpirun 4 "$tissue" run --restart tgfb_np2/checkpoint_000000100.h5 --backend "$backend" --out tgfb_np2_on_4
$compare checkpoint_000000200.h5 tgfb_one tgfb_np2 tgfb_np4 tgfb_np6 tgfb_np2_on_4
$compare checkpoint_000000100.h5 tgfb_one tgfb_np2 tgfb_np4
# the same in an open box: zero-flux x and y faces, which the frame leaves to the whole grid's boundary rule
sed 's/^periodic = true$/periodic = false/' "$tgfb" >tgfb_open.toml
run one_rank tgfb_open.toml --backend "$backend" --out tgfb_open_one
run mpirun 4 "$tissue" run tgfb_open.toml --backend "$backend" --out tgfb_open_np4
$compare checkpoint_000000200.h5 tgfb_open_one tgfb_open_np4
for n in 2 4; do
  test "$(grep -c '<Piece Extent=.* Source="tgfb_000000200_' "tgfb_np$n/tgfb_000000200.pvti")" -eq "$n" ||
    { echo "tgfb_np$n/tgfb_000000200.pvti does not name $n pieces"; exit 1; }
  grep -q 'tgfb_000000200.pvti' "tgfb_np$n/tgfb.pvd" ||
    { echo "tgfb_np$n/tgfb.pvd does not name the .pvti"; exit 1; }
done
"$python" - <<'PY'
import h5py
with h5py.File("tgfb_one/checkpoint_000000200.h5") as f:
    u = f["fields/tgfb/tgfb"][()]
    g = f["tables/cells/tgfb"][()]
assert u.min() < 0.199 or u.max() > 0.201, "the field did not change"
assert abs(g).max() > 0, "the cells sampled nothing"
print(f"tgfb: field {u.min():.4f}..{u.max():.4f}, at cells up to {abs(g).max():.4f}")
PY

# bad input: refused by rank 0 alone, exit status 2
refused() {  # EXPECTED_TEXT COMMAND...
  expected=$1
  shift
  if "$@" >out.txt 2>err.txt; then echo "accepted: $*"; exit 1; else status=$?; fi
  test $status -eq 2 || { cat err.txt; echo "exit status $status, not 2: $*"; exit 1; }
  test "$(grep -c '^tissue: error:' err.txt)" -eq 1 || { cat err.txt; echo "not one error line: $*"; exit 1; }
  grep -q "$expected" err.txt || { cat err.txt; echo "no '$expected' in the error: $*"; exit 1; }
}
refused "7 ranks cannot split" mpirun 7 "$tissue" run "$scenario" --backend "$backend" --out np7
test ! -e np7 || { echo "np7 was created for a refused run"; exit 1; }
sed 's/^\[signal.tgfb\]$/[signal.tgfb]\nexclude_cells = true/' "$tgfb" >excluded.toml
refused "exclude_cells" mpirun 2 "$tissue" run excluded.toml --backend "$backend" --out excluded
test ! -e excluded || { echo "excluded was created for a refused run"; exit 1; }
refused "not empty" mpirun 2 "$tissue" run "$scenario" --backend "$backend" --out np2
refused "TISSUE_HALO_TRANSPORT must be unset" env TISSUE_HALO_TRANSPORT=nccl2 "$mpiexec" --oversubscribe -np 2 \
  "$tissue" run "$scenario" --backend "$backend" --out transport
test ! -e transport || { echo "transport was created for a refused run"; exit 1; }
echo "tissue run over ranks ($backend): all checks passed"
