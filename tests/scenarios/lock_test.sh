#!/usr/bin/env bash
# One run per output directory (issue "Hostile input and faults", item 5). While a run writes into a
# directory, every way of starting a second run into it (a new run, with --overwrite, a restart from the
# directory, a restart from one of its checkpoints) is refused with exit 2 and one line naming the owner's pid
# and host, and the first run goes on undisturbed (it stops gracefully on SIGTERM, its run.json
# "interrupted"). The lock dies with its owner: after a graceful stop, a SIGKILL, or with a lock file of a
# process that never ran here, the next run proceeds. Two runs started at the same moment into one new
# directory: exactly one runs, the other is refused naming it.
#   usage: lock_test.sh TISSUE SCENARIO WORK_DIR
set -u
tissue=$1 scenario=$2 work=$3
expect=$(dirname "$0")/expect_failure.sh
rm -rf "$work" && mkdir -p "$work"
failed=0 tried=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
host=$(hostname)
start() {  # DIR: a short run that leaves checkpoint_000000020.h5, continued by a long one in the background
  local dir=$1
  "$tissue" run "$scenario" --backend cpu --out "$dir" --steps 20 >/dev/null 2>&1
  "$tissue" run --restart "$dir" --backend cpu --steps 100000000 --every 0 --checkpoint-every 0 >/dev/null 2>&1 &
  pid=$!  # once its run.json says "running", it holds the lock
  for _ in $(seq 200); do grep -q '"status": "running"' "$dir/run.json" && break; sleep 0.1; done
}
status() { /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['status'], r['steps']['done'])" "$1/run.json"; }

d="$work/busy"
start "$d"
checkpoint=checkpoint_000000020.h5
owner="another tissue run is writing into this directory \\(pid $pid on host $host, .*\\.tissue\\.lock\\)"
for args in "$scenario --out $d" "$scenario --out $d --overwrite" "--restart $d" "--restart $d/$checkpoint" \
            "--restart $d/$checkpoint --out $d"; do
  tried=$((tried + 1))
  out=$("$expect" 2 "^tissue: error: .*busy: $owner" "$tissue" run $args --backend cpu --steps 300) ||
    fail "run $args: $out"
done
read -r st _ < <(status "$d")
[ "$st" = running ] || fail "the first run's run.json says $st while it runs"
kill -0 $pid 2>/dev/null || fail "the first run died"
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 143 ] || fail "the first run exited $rc on SIGTERM, expected 143"
read -r st done_steps < <(status "$d")
[ "$st" = interrupted ] || fail "the first run's run.json says $st after SIGTERM"
grep -q "^pid $pid on host $host$" "$d/.tissue.lock" || fail "lock file: $(cat "$d/.tissue.lock")"

tried=$((tried + 1))  # its lock file stays, naming a process that ended: no obstacle
"$tissue" run --restart "$d" --backend cpu --steps $((done_steps + 5)) >/dev/null 2>&1 ||
  fail "restart after the owner ended was refused"

tried=$((tried + 1))  # SIGKILL: nothing released the lock but the kernel
d2="$work/killed"
start "$d2"
kill -KILL $pid; wait $pid 2>/dev/null
"$tissue" run "$scenario" --backend cpu --steps 10 --out "$d2" --overwrite >/dev/null 2>&1 ||
  fail "a run after the owner was killed (SIGKILL) was refused"

tried=$((tried + 1))  # a lock file that names a process of another host or time, and no holder
d3="$work/stale"
mkdir -p "$d3" && echo "pid 1 on host far-away" >"$d3/.tissue.lock"
"$tissue" run "$scenario" --backend cpu --steps 10 --out "$d3" >/dev/null 2>&1 || fail "a stale lock file blocked a run"

for attempt in 1 2 3; do  # a race: two runs into one new directory at once
  tried=$((tried + 1))
  d4="$work/race_$attempt"
  "$tissue" run "$scenario" --backend cpu --out "$d4" --steps 100000000 --every 0 --overwrite >/dev/null 2>"$d4.a" &
  a=$!
  "$tissue" run "$scenario" --backend cpu --out "$d4" --steps 100000000 --every 0 --overwrite >/dev/null 2>"$d4.b" &
  b=$!
  sleep 3
  alive=0 loser=
  for p in $a $b; do kill -0 $p 2>/dev/null && alive=$((alive + 1)); done
  kill -TERM $a $b 2>/dev/null
  wait $a; rca=$?
  wait $b; rcb=$?
  if [ $alive -ne 1 ]; then fail "race $attempt: $alive runs went on (exit codes $rca, $rcb)"; continue; fi
  [ $rca -eq 2 ] && loser=a winner=$b
  [ $rcb -eq 2 ] && loser=b winner=$a
  if [ -z "$loser" ]; then fail "race $attempt: exit codes $rca, $rcb"; continue; fi
  grep -Eq "^tissue: error: .*race_$attempt: another tissue run is writing into this directory \(pid $winner on host $host" \
    "$d4.$loser" || fail "race $attempt: $(cat "$d4.$loser")"
done

echo "$tried cases, $failed failed"
[ "$failed" -eq 0 ]
