#!/usr/bin/env bash
# usage: interrupt_test.sh TISSUE SCENARIO OUT_DIR BACKEND [MODE]
# A signal during a run: starts a long run, waits until it is stepping, signals it, and checks that the
# run stops gracefully with exit code 128 + the signal, that its run.json says "interrupted" after at least
# one step, that the .pvd series lists only files that exist (the interrupted step's among them), that a
# checkpoint of that step exists and a restart from it runs, and that no temporary file is left behind.
# MODE: term (SIGTERM, default); twice (SIGTERM twice 50 ms apart, as `timeout` and schedulers deliver it to
# the process and then its group: still one graceful stop); hup (SIGHUP, treated like SIGTERM); timeout (the
# run under `timeout -s TERM`, which signals the child and then the process group).
set -u
tissue=$1; scenario=$2; out=$3; backend=$4; mode=${5:-term}
rm -rf "$out"
if [ "$mode" = timeout ]; then
  # the first frame comes within about a second; timeout fires at 4 s, then re-signals the group
  setsid timeout --preserve-status -s TERM 4 "$tissue" run "$scenario" --backend "$backend" --out "$out" \
    --steps 100000000 --every 0 >/dev/null 2>&1 &
else
  "$tissue" run "$scenario" --backend "$backend" --out "$out" --steps 100000000 --every 0 >/dev/null 2>&1 &
fi
pid=$!
for _ in $(seq 200); do  # up to 20 s for the first frame
  [ -e "$out/rd.pvd" ] && break
  sleep 0.1
done
sleep 0.5
expected=143 name=SIGTERM
case "$mode" in
  term) kill -TERM "$pid" ;;
  twice) kill -TERM "$pid"; sleep 0.05; kill -TERM "$pid" ;;
  hup) kill -HUP "$pid"; expected=129 name=SIGHUP ;;
  timeout) ;;  # timeout signals it
esac
wait "$pid"
rc=$?
if [ "$rc" -ne "$expected" ]; then echo "exit code $rc, expected $expected ($mode)"; exit 1; fi
if ls "$out" | grep -q '\.tmp-'; then echo "temporary files left: $(ls "$out" | grep '\.tmp-')"; exit 1; fi
python3 - "$out" "$expected" "$name" <<'PY'
import json, os, re, sys
out = sys.argv[1]
record = json.load(open(os.path.join(out, "run.json")))
problems = []
if record["status"] != "interrupted" or record["exit_code"] != int(sys.argv[2]):
    problems.append(f"status {record['status']!r}, exit_code {record['exit_code']}")
done = record["steps"]["done"]
if not done >= 1:
    problems.append(f"steps done {done}")
if sys.argv[3] not in record.get("message", ""):
    problems.append(f"message {record.get('message')!r}")
files = re.findall(r'file="([^"]+)"', open(os.path.join(out, "rd.pvd")).read())
missing = [f for f in files if not os.path.exists(os.path.join(out, f))]
if missing:
    problems.append(f"the .pvd lists missing files {missing}")
if not any(f"{done:09d}" in f for f in files):
    problems.append(f"no frame of the interrupted step {done} in the .pvd")
if not os.path.exists(os.path.join(out, f"checkpoint_{done:09d}.h5")):
    problems.append(f"no checkpoint of the interrupted step {done}")
elif not record.get("last_checkpoint", "").endswith(f"checkpoint_{done:09d}.h5"):
    problems.append(f"run.json last_checkpoint {record.get('last_checkpoint')!r}")
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"interrupted after step {done}; {len(files)} frames")
open(os.path.join(out, "done"), "w").write(str(done))
PY
[ $? -eq 0 ] || exit 1
done=$(cat "$out/done"); rm -f "$out/done"
if ! "$tissue" run --restart "$out" --backend "$backend" --steps $((done + 5)) >/dev/null 2>&1; then
  echo "restart from the checkpoint of step $done failed"; exit 1
fi
echo "restarted from step $done and ran 5 more steps"
