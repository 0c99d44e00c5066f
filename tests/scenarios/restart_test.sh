#!/usr/bin/env bash
# usage: restart_test.sh TISSUE SCENARIO OUT_DIR BACKEND N
# Bit-exact restart: a run of 2N steps, and a run of N steps continued with `tissue run --restart` to 2N,
# must leave the same output (every file of the straight run, the .pvd series and the final checkpoint
# included) on the same backend. Output every N steps; the restarted run.json must name its checkpoint.
set -u
tissue=$1; scenario=$2; out=$3; backend=$4; n=$5
here=$(dirname "$0")
rm -rf "$out"
run() { "$tissue" "$@" >"$out.log" 2>&1 || { echo "failed: tissue $*"; cat "$out.log"; exit 1; }; }
mkdir -p "$(dirname "$out")"
run run "$scenario" --backend "$backend" --out "$out/straight" --steps $((2 * n)) --every "$n"
run run "$scenario" --backend "$backend" --out "$out/restarted" --steps "$n" --every "$n"
run run --restart "$out/restarted" --backend "$backend" --steps $((2 * n)) --every "$n"
grep -q "restarting at step $n " "$out.log" || { echo "no 'restarting at step $n' line"; cat "$out.log"; exit 1; }
/usr/bin/python3 - "$out/restarted/run.json" "$n" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
ok = r["status"] == "completed" and r["steps"]["start"] == n and r["steps"]["done"] == 2 * n and \
     r.get("restarted_from", "").endswith(f"checkpoint_{n:09d}.h5")
print("run.json of the restart:", "ok" if ok else r)
sys.exit(0 if ok else 1)
PY
/usr/bin/python3 "$here/compare_runs.py" "$out/straight" "$out/restarted"
