#!/usr/bin/env python3
"""A full disk at every kind of write (issue "Hostile input and faults", item 1).

usage: full_disk_test.py TISSUE SMALL_DISK_SHIM SCENARIO WORK_DIR

A reference run traces every write into its output directory through the small_disk.c shim (LD_PRELOAD; no
root, no tmpfs). From the trace, disk capacities are chosen so that the first write that does not fit is
the first write of each file the run writes (run.json at the start and at the end, every snapshot .vti and
.png, the .pvd index, the ParaView state view.pvsm, each checkpoint .h5 and .xdmf) and a write in the middle of each checkpoint, plus
capacities spread evenly over the run; two more cases limit the file size with RLIMIT_FSIZE (SIGXFSZ
ignored: write fails with EFBIG). Each run must:

- exit with 1, not crash (HDF5 used to die in its exit handler: SIGSEGV, exit 139);
- print exactly one error line ("tissue: error: cannot write FILE (CALL): REASON"; progress lines aside);
- leave no temporary file;
- leave run.json "failed", exit code 1, with that message (only a run.json that could not be written at all,
  the first, may be missing);
- leave every checkpoint it completed intact: the newest restarts in the directory and ends with the bytes
  of the reference run's last checkpoint, an older one restarts elsewhere.
"""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys

STEPS, EVERY = 200, 50
FLAGS = ["--backend", "cpu", "--steps", str(STEPS), "--every", str(EVERY), "--checkpoint-every", str(EVERY)]
PROGRESS = re.compile(r"^step \d+/\d+ ")
ERROR = re.compile(r"^tissue: error: (cannot write (checkpoint )?(\S+) \((\w+)\): (No space left on device|File too large))$")


def run(tissue, args, env=None, preexec=None):
    return subprocess.run([tissue, *args], env=env, preexec_fn=preexec, capture_output=True, text=True,
                          timeout=120)


def category(path):
    name = re.sub(r"\.tmp-\d+$", "", os.path.basename(path))
    for pattern, kind in ((r"^run\.json$", "run.json"), (r"^checkpoint_\d+\.h5$", "checkpoint"),
                          (r"^checkpoint_\d+\.xdmf$", "xdmf"), (r"\.vti$", "vti"), (r"\.png$", "png"),
                          (r"\.pvd$", "pvd"), (r"^view\.pvsm$", "pvsm")):
        if re.search(pattern, name):
            return kind, name
    return None, name


def choose_capacities(trace):
    """(capacity, what) pairs: each makes one chosen write the first that does not fit."""
    writes = []
    for line in open(trace):
        usage, growth, path = line.rstrip("\n").split(" ", 2)
        writes.append((int(usage), int(growth), path))
    peak = 0  # the most the disk held so far, during a write
    firsts, mids, seen = [], [], set()
    by_file = {}
    for i, (usage, growth, path) in enumerate(writes):
        kind, name = category(path)
        low, high = max(peak, usage), usage + growth
        if kind and high - low >= 16:  # a capacity in [low, high) fails this write first
            if name not in seen:
                firsts.append(((low + high) // 2, f"first write of {name}"))
            by_file.setdefault(name, []).append(((low + high) // 2, f"write {len(by_file.get(name, [])) + 1} of {name}"))
        seen.add(name)
        peak = max(peak, high)
    for name, cases in by_file.items():
        if name.endswith(".h5") and len(cases) > 2:
            mids.append(cases[len(cases) // 2])
    even = [(peak * k // 8, f"capacity {k}/8 of the peak") for k in range(1, 8)]
    return firsts + mids + even, peak


def check_case(tissue, scenario, work, reference, label, env=None, preexec=None):
    out = os.path.join(work, "case")
    shutil.rmtree(out, ignore_errors=True)
    if env is not None:
        env = dict(env, TISSUE_SMALL_DISK_DIR=out)
    r = run(tissue, ["run", scenario, *FLAGS, "--out", out], env=env, preexec=preexec)
    problems = []
    lines = [l for l in r.stderr.splitlines() if not PROGRESS.match(l)]
    if r.returncode != 1:
        problems.append(f"exit code {r.returncode}, expected 1")
    if len(lines) != 1 or not ERROR.match(lines[0]):
        problems.append(f"stderr is not one error line: {lines!r}")
        return problems, None
    message, failed_file = ERROR.match(lines[0]).group(1), ERROR.match(lines[0]).group(3)
    names = os.listdir(out) if os.path.isdir(out) else []
    if any(".tmp-" in n for n in names):
        problems.append(f"temporaries left: {[n for n in names if '.tmp-' in n]}")
    if "run.json" in names:
        record = json.load(open(os.path.join(out, "run.json")))
        if (record["status"], record["exit_code"], record.get("message")) != ("failed", 1, message):
            problems.append(f"run.json: {record['status']}, {record['exit_code']}, {record.get('message')!r}")
    elif not failed_file.endswith("run.json"):
        problems.append("no run.json")
    checkpoints = sorted(n for n in names if re.fullmatch(r"checkpoint_\d+\.h5", n))
    for older in checkpoints[:-1]:  # restarts elsewhere: loads, checks the checksums, runs a step
        step = int(older[11:20])
        other = os.path.join(work, "older")
        shutil.rmtree(other, ignore_errors=True)
        r2 = run(tissue, ["run", "--restart", os.path.join(out, older), "--backend", "cpu", "--steps",
                          str(step + 1), "--out", other])
        if r2.returncode != 0:
            problems.append(f"restart from {older} failed: {r2.stderr.strip()}")
    last = f"checkpoint_{STEPS:09d}.h5"
    if checkpoints and checkpoints[-1] != last:  # the newest continues in place to the reference's last one
        r3 = run(tissue, ["run", "--restart", out, "--backend", "cpu", "--steps", str(STEPS), "--every", str(EVERY)])
        if r3.returncode != 0:
            problems.append(f"restart from {checkpoints[-1]} failed: {r3.stderr.strip()}")
        elif open(os.path.join(out, last), "rb").read() != open(os.path.join(reference, last), "rb").read():
            problems.append(f"restart from {checkpoints[-1]}: {last} differs from the reference run's")
    elif checkpoints and open(os.path.join(out, last), "rb").read() != open(os.path.join(reference, last), "rb").read():
        problems.append(f"{last} differs from the reference run's")
    return problems, category(failed_file)[0]


def main():
    tissue, shim, scenario, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    work = os.path.realpath(work)
    reference, trace = os.path.join(work, "reference"), os.path.join(work, "trace")
    env = dict(os.environ, LD_PRELOAD=shim, TISSUE_SMALL_DISK_DIR=reference, TISSUE_SMALL_DISK_TRACE=trace,
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    r = run(tissue, ["run", scenario, *FLAGS, "--out", reference], env=env)
    if r.returncode != 0:
        sys.exit(f"reference run failed: {r.stderr}")
    capacities, peak = choose_capacities(trace)
    del env["TISSUE_SMALL_DISK_TRACE"]
    failed, kinds = 0, set()

    def report(label, problems, kind):
        nonlocal failed
        kinds.add(kind)
        if problems:
            failed += 1
            print(f"FAIL {label}: {'; '.join(problems)}")
        else:
            print(f"ok   {label}: failed in {kind}")

    for capacity, what in capacities:
        env["TISSUE_SMALL_DISK_BYTES"] = str(capacity)
        problems, kind = check_case(tissue, scenario, work, reference, what, env=env)
        report(f"{capacity} bytes ({what})", problems, kind)
    for limit in (20000, 34000):  # the first .vti (33 kB), the first checkpoint (35 kB)

        def limit_file_size(limit=limit):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # stays ignored across exec: write gets EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        problems, kind = check_case(tissue, scenario, work, reference, None, preexec=limit_file_size)
        report(f"RLIMIT_FSIZE {limit}", problems, kind)
    missing = {"run.json", "checkpoint", "xdmf", "vti", "png", "pvd"} - kinds
    if missing:
        failed += 1
        print(f"FAIL: no case failed a write of {sorted(missing)}")
    print(f"{len(capacities) + 2} cases (peak use {peak} bytes), {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
