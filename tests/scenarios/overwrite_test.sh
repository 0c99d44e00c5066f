#!/usr/bin/env bash
# --overwrite replaces the previous run, and restart continues only the directory's own run (issue "Hostile
# input and faults", item 4). Table-driven:
#  1. for pairs of (previous run, new run) over several models, a failed run and an interrupted one: after
#     `--overwrite` the directory holds exactly the files of the new run as a fresh directory would (same
#     names, same bytes, run.json aside), plus the user's own files, which stay; `--restart DIR` then
#     continues the new scenario;
#  2. directories tissue did not create (a user file, a subdirectory, a .pvd without run.json, a run.json
#     that is not a run record) are refused with --overwrite: exit 2, one line, nothing changed;
#  3. a checkpoint whose scenario hash differs from its directory's run.json is refused on restart (from the
#     directory, from the file, and with --out elsewhere): exit 2, one line naming both hashes, nothing changed.
#   usage: overwrite_test.sh TISSUE SCENARIO_DIR WORK_DIR
set -u
tissue=$1 scenarios=$2 work=$3
expect=$(dirname "$0")/expect_failure.sh
rm -rf "$work" && mkdir -p "$work"
failed=0 tried=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
quiet() { "$tissue" "$@" >"$work/log" 2>&1; }
listing() { (cd "$1" && find . -printf '%p %s %T@\n' | sort); }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# 1. (previous run; new run): each a scenario and its flags
grid="$scenarios/grid_short.toml" graph="$scenarios/graph_short.toml" epidermis="$scenarios/epidermis_short.toml"
pairs=(
  "$grid --steps 400 --checkpoint-every 100;$grid --steps 100 --every 50"
  "$grid --steps 400 --checkpoint-every 100;$graph"
  "$graph;$grid --steps 200"
  "$epidermis --steps 300 --every 100;$grid --steps 100"
  "$scenarios/blow_up.toml;$grid --steps 100"
  "interrupted;$graph"
)
for pair in "${pairs[@]}"; do
  tried=$((tried + 1))
  previous=${pair%%;*} new=${pair#*;}
  dir="$work/overwritten" fresh="$work/fresh"
  rm -rf "$dir" "$fresh"
  if [ "$previous" = interrupted ]; then  # a run stopped by SIGTERM, with its checkpoint
    "$tissue" run $grid --backend cpu --out "$dir" --steps 100000000 --every 0 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 200); do [ -e "$dir/rd.pvd" ] && break; sleep 0.1; done
    sleep 0.3; kill -TERM $pid; wait $pid
  else
    quiet run $previous --backend cpu --out "$dir"  # blow_up.toml fails on purpose (exit 3)
  fi
  [ -e "$dir/run.json" ] || { fail "$previous: no run.json"; continue; }
  echo notes >"$dir/notes.txt"
  mkdir -p "$dir/analysis" && echo x >"$dir/analysis/plot.py"
  quiet run $new --backend cpu --out "$dir" --overwrite || { fail "--overwrite after $previous: $(cat "$work/log")"; continue; }
  quiet run $new --backend cpu --out "$fresh" || { fail "$new: $(cat "$work/log")"; continue; }
  got=$(cd "$dir" && ls -A | grep -Ev '^(notes.txt|analysis|\.tissue\.lock)$')
  want=$(cd "$fresh" && ls -A | grep -Ev '^\.tissue\.lock$')
  if [ "$got" != "$want" ]; then
    fail "after $previous, --overwrite with $new left: $(comm -23 <(echo "$got") <(echo "$want") | tr '\n' ' ')missing: $(comm -13 <(echo "$got") <(echo "$want") | tr '\n' ' ')"
    continue
  fi
  for f in $want; do
    [ "$f" = run.json ] || cmp -s "$dir/$f" "$fresh/$f" || fail "after $previous: $f differs from a fresh run's"
  done
  [ -e "$dir/notes.txt" ] && [ -e "$dir/analysis/plot.py" ] || fail "after $previous: --overwrite removed the user's files"
  # restart continues the new scenario (the one run.json names), never the previous one
  scenario=$(echo $new | cut -d' ' -f1)
  done_steps=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['steps']['done'])" "$dir/run.json")
  if quiet run --restart "$dir" --backend cpu --steps $((done_steps + 2)); then
    restarted=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['scenario']['sha256'])" "$dir/run.json")
    [ "$restarted" = "$(sha "$scenario")" ] || fail "after $previous: the restart continued another scenario ($restarted)"
  else
    fail "after $previous: restart of the new run failed: $(cat "$work/log")"
  fi
done

# 2. directories tissue did not create: --overwrite refuses them and changes nothing
setups=(
  "echo data > \$d/data.csv"
  "mkdir \$d/sub"
  "echo '<VTKFile/>' > \$d/rd.pvd"
  "echo '{\"status\": \"done\"}' > \$d/run.json"
  "echo 'not json' > \$d/run.json"
)
for setup in "${setups[@]}"; do
  tried=$((tried + 1))
  d="$work/foreign"
  rm -rf "$d" && mkdir -p "$d" && eval "$setup"
  before=$(listing "$d")
  out=$("$expect" 2 "^tissue: error: --out .*foreign: (not empty and holds no run.json|.*run.json: not a run record)" \
    "$tissue" run "$grid" --backend cpu --out "$d" --overwrite) || fail "$setup: $out"
  [ "$(listing "$d")" = "$before" ] || fail "$setup: the refused run changed the directory"
done
tried=$((tried + 1))  # a directory holding only a lock file (a run killed before its run.json) is empty
d="$work/lock_only"
rm -rf "$d" && mkdir -p "$d" && echo "pid 999999999 on host elsewhere" >"$d/.tissue.lock"
quiet run "$grid" --backend cpu --steps 10 --out "$d" || fail "a directory with only a lock file: $(cat "$work/log")"

# 3. a checkpoint of another scenario than the directory's run.json
tried=$((tried + 1))
d="$work/mixed" other="$work/other"
rm -rf "$d" "$other"
quiet run "$grid" --backend cpu --out "$d" --steps 200 --checkpoint-every 100
quiet run "$epidermis" --backend cpu --out "$other" --steps 500 --every 500
cp "$other/checkpoint_000000500.h5" "$d/"
before=$(listing "$d")
hashes="SHA-256 [0-9a-f]{64}, but .*run.json records the scenario with SHA-256 [0-9a-f]{64}"
for args in "--restart $d" "--restart $d/checkpoint_000000500.h5" "--restart $d/checkpoint_000000500.h5 --out $work/elsewhere"; do
  tried=$((tried + 1))
  out=$("$expect" 2 "^tissue: error: checkpoint .*checkpoint_000000500.h5 holds a run of the scenario with $hashes" \
    "$tissue" run $args --backend cpu --steps 600) || fail "run $args: $out"
done
[ "$(listing "$d")" = "$before" ] || fail "a refused restart changed $d"
[ -e "$work/elsewhere" ] && fail "a refused restart created $work/elsewhere"
quiet run --restart "$d/checkpoint_000000200.h5" --backend cpu --steps 210 || fail "the directory's own checkpoint: $(cat "$work/log")"

echo "$tried cases, $failed failed"
[ "$failed" -eq 0 ]
