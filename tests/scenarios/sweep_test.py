#!/usr/bin/env python3
"""Tests of `tissue sweep` (engine/run/ensemble.hpp, docs/sweeps.md), one mode per CTest test.

usage: sweep_test.py MODE TISSUE WORK_DIR [--backend cpu|cuda]

  grid     a 2 x 2 grid with 2 replicates (sweep/grid.toml), 2 members at once: 8 run directories, 8 rows of
           sweep.csv with the right values and metrics, and every member equal (file for file, dataset for
           dataset) to its scenario run alone by `tissue run`; a second run of the command runs nothing
  resume   SIGTERM then SIGKILL mid-way (sweep/resume.toml), re-run: every member completes exactly once
           (one "completed" line over all invocations) and equals its solo run (an interrupted member
           also holds the snapshot of the step it stopped at, as tissue run does)
  failure  one member blows up numerically (sweep/blow_up.toml): it is marked failed (exit code 3 in
           sweep.csv), the other completes, the sweep exits 1; a re-run skips both
  mpi      mpirun -np 3 (a manager and two workers) gives the same sweep.csv results as one process
  slurm    --slurm writes a job-array script; running its command by hand for each task completes the sweep
"""
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SWEEPS = os.path.join(HERE, "sweep")
COMPARE = os.path.join(HERE, "..", "..", "tools", "compare_runs.py")
PLOT = os.path.join(HERE, "..", "..", "tools", "plot_sweep.py")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def sweep(tissue, sweep_file, out, *extra, backend=None, check=True):
    cmd = [tissue, "sweep", sweep_file, "--out", out, *extra]
    if backend:
        cmd += ["--backend", backend]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def read_csv(out):
    with open(os.path.join(out, "sweep.csv"), newline="") as fh:
        return list(csv.DictReader(fh))


def solo_matches(tissue, out, rows, work, backend, interrupted=False):
    """Runs each member's scenario.toml alone (a copy beside the base scenario, so that relative paths
    resolve as in the sweep) and compares the run directories."""
    pairs = []
    for row in rows:
        member_dir = os.path.join(out, row["directory"])
        with open(os.path.join(member_dir, "scenario.toml")) as fh:
            text = fh.read()
        copy = os.path.join(SWEEPS, f".solo_{os.getpid()}_{row['directory']}.toml")
        with open(copy, "w") as fh:
            fh.write(text)
        # one folder per sweep: CTest runs the modes side by side in the same work directory
        solo = os.path.join(work, os.path.basename(out) + "_solo_" + row["directory"])
        shutil.rmtree(solo, ignore_errors=True)
        cmd = [tissue, "run", copy, "--out", solo]
        # the sweep file's own run overrides (steps, every, checkpoint_every) are flags of tissue run
        cmd += SOLO_FLAGS
        if backend:
            cmd += ["--backend", backend]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
        finally:
            os.remove(copy)
        if p.returncode != 0:
            fail(f"solo run of {row['directory']} exited {p.returncode}: {p.stderr}")
        pairs += [solo, member_dir]
    p = subprocess.run([sys.executable, COMPARE, *(["--interrupted"] if interrupted else []), *pairs],
                       capture_output=True, text=True)
    print(p.stdout)
    if p.returncode != 0:
        fail("members differ from their solo runs")


SOLO_FLAGS = []


def mode_grid(tissue, work, backend):
    out = os.path.join(work, "grid")
    shutil.rmtree(out, ignore_errors=True)
    p = sweep(tissue, os.path.join(SWEEPS, "grid.toml"), out, "--concurrent", "2", backend=backend)
    print(p.stdout)
    rows = read_csv(out)
    if len(rows) != 8:
        fail(f"{len(rows)} rows in sweep.csv, expected 8")
    dirs = sorted(d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    if dirs != [f"m{i:03d}" for i in range(8)]:
        fail(f"member directories {dirs}")
    expected = []
    for tgf in ("0.2", "0.6"):
        for interval in ("80", "120"):
            for seed in ("7", "8"):
                expected.append((tgf, interval, seed))
    got = [(r["gene_network.tgf_beta"], r["lifecycle.growth_interval"], r["simulation.seed"]) for r in rows]
    if got != expected:
        fail(f"parameters {got}, expected {expected}")
    for r in rows:
        if r["status"] != "completed" or r["exit_code"] != "0" or r["steps"] != "300":
            fail(f"row {r}")
        for m in ("cells", "elements", "layers", "adherent_cells"):
            if not re.fullmatch(r"[0-9.e+-]+", r[m]):
                fail(f"metric {m} of {r['directory']}: {r[m]!r}")
        if int(float(r["elements"])) < 16 * 20:
            fail(f"elements {r['elements']} of {r['directory']}: the tissue cannot have shrunk")
    # the members differ (the values reach the runs): elements at step 300 depend on the growth interval
    if len({r["elements"] for r in rows}) < 2:
        fail("every member has the same element count: the varied values did not reach the runs")
    solo_matches(tissue, out, rows, work, backend)
    # the plot of a metric against a parameter (tools/plot_sweep.py, docs/sweeps.md)
    # (where matplotlib is: CI's Debian has it, tools/setup-debian.sh; the GPU image may not)
    if subprocess.run([sys.executable, "-c", "import matplotlib, pandas"], capture_output=True).returncode == 0:
        png = os.path.join(work, f"grid_elements_{os.getpid()}.png")
        q = subprocess.run([sys.executable, PLOT, out, "lifecycle.growth_interval", "elements", png, "--by",
                            "gene_network.tgf_beta"], capture_output=True, text=True)
        if q.returncode != 0 or not os.path.getsize(png) > 1000 or "8 completed members" not in q.stdout:
            fail(f"plot_sweep.py: exit {q.returncode}: {q.stdout} {q.stderr}")
    else:
        print("matplotlib or pandas missing: plot_sweep.py not run")
    again = sweep(tissue, os.path.join(SWEEPS, "grid.toml"), out, backend=backend)
    if "0 to run" not in again.stdout or "completed in" in again.stdout:
        fail("a second run of a completed sweep ran members again:\n" + again.stdout)
    print("ok")


def completed_lines(text):
    return re.findall(r"^(m\d+) completed in", text, re.M)


def wait_for(predicate, timeout, what):
    t0 = time.time()
    while not predicate():
        if time.time() - t0 > timeout:
            fail("timed out waiting for " + what)
        time.sleep(0.05)


def mode_resume(tissue, work, backend):
    # sweep/resume.toml's 2400 steps keep members running long enough to be stopped mid-way on a GPU; the
    # CPU (and its AddressSanitizer build, in CI) takes a third of them, long enough there: the copy beside
    # it (relative paths resolve alike) differs in the step count only
    steps = 2400 if backend == "cuda" else 800
    with open(os.path.join(SWEEPS, "resume.toml")) as fh:
        text = fh.read()
    if "steps = 2400\n" not in text:
        fail("sweep/resume.toml no longer sets steps = 2400")
    sweep_file = os.path.join(SWEEPS, f".resume_{os.getpid()}.toml")
    with open(sweep_file, "w") as fh:
        fh.write(text.replace("steps = 2400\n", f"steps = {steps}\n"))
    try:
        resume_checks(tissue, work, backend, sweep_file, steps)
    finally:
        os.remove(sweep_file)


def resume_checks(tissue, work, backend, sweep_file, steps):
    out = os.path.join(work, "resume")
    shutil.rmtree(out, ignore_errors=True)
    logs = []

    def members_with(status):
        found = set()
        for d in (f"m{i:03d}" for i in range(6)):
            try:
                with open(os.path.join(out, d, "run.json")) as fh:
                    if f'"{status}"' in fh.read(200):
                        found.add(d)
            except OSError:
                pass
        return found

    def completed_set():
        return members_with("completed")

    def completed_count():
        return len(completed_set())

    def running_set():
        return members_with("running")

    def started_set():
        return {d for d in (f"m{i:03d}" for i in range(6)) if os.path.exists(os.path.join(out, d, "run.json"))}

    def start():
        cmd = [tissue, "sweep", sweep_file, "--out", out, "--concurrent", "2"]
        if backend:
            cmd += ["--backend", backend]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    # the members completed before each invocation: an invocation may complete only others (a member
    # that completed is never run again); its log can miss a member that SIGKILL hit between run.json and
    # the log line, so the directories are what counts
    before = [set()]
    # SIGTERM once a member has completed and one started after it runs: running members write a checkpoint
    # and stop. The members are alike and start in pairs, so they end in pairs: a signal sent as soon as the
    # first completed could find the second completed too and the next pair not started (nothing to
    # interrupt: it happened under AddressSanitizer in CI); a member started after the first completion has
    # its whole run ahead of it.
    p = start()
    wait_for(lambda: completed_count() >= 1 or p.poll() is not None, 300, "a first member")
    started_before = started_set()
    wait_for(lambda: bool(running_set() - started_before) or p.poll() is not None, 300, "a later member")
    p.send_signal(signal.SIGTERM)
    so, se = p.communicate()
    logs.append(so)
    if p.returncode != 128 + signal.SIGTERM:
        fail(f"SIGTERM: exit {p.returncode}, expected {128 + signal.SIGTERM}\n{so}\n{se}")
    rows = read_csv(out)
    states = {r["status"] for r in rows}
    if "interrupted" not in states:
        fail(f"no member interrupted by SIGTERM: {states}")
    # SIGKILL mid-way: nothing is written at the end
    before.append(completed_set())
    p = start()
    wait_for(lambda: completed_count() >= len(before[-1]) + 1 or p.poll() is not None, 300, "another member")
    p.kill()
    so, _ = p.communicate()
    logs.append(so)
    # run again until done
    before.append(completed_set())
    p = sweep(tissue, sweep_file, out, backend=backend)
    logs.append(p.stdout)
    rows = read_csv(out)
    if [r["status"] for r in rows] != ["completed"] * 6:
        fail(f"after resuming: {[r['status'] for r in rows]}")
    for i, (log, earlier) in enumerate(zip(logs, before)):
        again = earlier & set(completed_lines(log))
        if again:
            fail(f"invocation {i + 1} ran {sorted(again)} again, completed before it started")
    done = [m for log in logs for m in completed_lines(log)]
    if len(done) != len(set(done)):
        fail(f"members completed {sorted(done)} over the three invocations: each must complete once")
    if "(resumed)" not in "".join(logs):
        fail("no member resumed from a checkpoint")
    SOLO_FLAGS[:] = ["--steps", str(steps), "--checkpoint-every", "200"]
    # an interrupted member also holds the snapshot of the step it stopped at, as tissue run does
    solo_matches(tissue, out, rows, work, backend, interrupted=True)
    print("ok")


def mode_failure(tissue, work, backend):
    out = os.path.join(work, "failure")
    shutil.rmtree(out, ignore_errors=True)
    sweep_file = os.path.join(SWEEPS, "blow_up.toml")
    p = sweep(tissue, sweep_file, out, backend=backend, check=False)
    print(p.stdout, p.stderr)
    if p.returncode != 1:
        fail(f"exit {p.returncode}, expected 1 (a member failed)")
    rows = read_csv(out)
    if [(r["initial.a"], r["status"], r["exit_code"]) for r in rows] != [("1.0", "failed", "3"), ("0.0", "completed", "0")]:
        fail(f"rows {[(r['initial.a'], r['status'], r['exit_code']) for r in rows]}")
    if "NaN or infinite" not in rows[0]["message"]:
        fail(f"message of the failed member: {rows[0]['message']!r}")
    if "m000 failed" not in p.stdout:
        fail("the failure is not reported")
    again = sweep(tissue, sweep_file, out, backend=backend, check=False)
    if "0 to run" not in again.stdout or again.returncode != 0:
        fail(f"a re-run must skip the failed member (exit {again.returncode}):\n{again.stdout}")
    print("ok")


def comparable(rows):
    """sweep.csv rows without what depends on where and when they ran."""
    return sorted(tuple((k, v) for k, v in r.items() if k not in ("wall_seconds",)) for r in rows)


def mode_mpi(tissue, work, backend):
    sweep_file = os.path.join(SWEEPS, "sample.toml")
    single = os.path.join(work, "mpi_single")
    ranks = os.path.join(work, "mpi_ranks")
    for d in (single, ranks):
        shutil.rmtree(d, ignore_errors=True)
    sweep(tissue, sweep_file, single, backend=backend)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
               OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    cmd = ["mpirun", "--oversubscribe", "-np", "3", tissue, "sweep", sweep_file, "--out", ranks]
    if backend:
        cmd += ["--backend", backend]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    print(p.stdout, p.stderr)
    if p.returncode != 0:
        fail(f"mpirun exited {p.returncode}")
    if not re.search(r"over 2 worker ranks", p.stdout):
        fail("the sweep did not run over 2 worker ranks")
    workers = set(re.findall(r"^rank (\d): m\d+ completed", p.stdout, re.M))
    if workers != {"1", "2"}:
        fail(f"members ran on ranks {workers}, expected both workers")
    a, b = read_csv(single), read_csv(ranks)
    if len(a) != 6 or comparable(a) != comparable(b):
        fail(f"sweep.csv differs between one process and three ranks:\n{a}\n{b}")
    print("ok")


def mode_slurm(tissue, work, backend):
    out = os.path.join(work, "slurm")
    shutil.rmtree(out, ignore_errors=True)
    sweep_file = os.path.join(SWEEPS, "grid.toml")
    p = sweep(tissue, sweep_file, out, "--slurm", "--tasks", "3", "--slurm-option", "--time=00:10:00")
    script = open(os.path.join(out, "sweep.slurm")).read()
    for needle in ("#SBATCH --array=0-2", "#SBATCH --gres=gpu:1", "#SBATCH --time=00:10:00",
                   '--task "$SLURM_ARRAY_TASK_ID" --tasks 3'):
        if needle not in script:
            fail(f"{needle!r} not in the script:\n{script}")
    line = [l for l in script.splitlines() if l.startswith("exec ")][0]
    for task in (2, 0, 1):  # the array's tasks, in any order, as Slurm would run them
        env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(task))
        cmd = ["bash", "-c", line[len("exec "):] + (f" --backend {backend}" if backend else "")]
        q = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if q.returncode != 0:
            fail(f"task {task} exited {q.returncode}: {q.stdout} {q.stderr}")
        print(q.stdout)
    rows = read_csv(out)
    if [r["status"] for r in rows] != ["completed"] * 8:
        fail(f"after the three tasks: {[r['status'] for r in rows]}")
    print("ok")


def main():
    mode, tissue, work = sys.argv[1:4]
    backend = sys.argv[sys.argv.index("--backend") + 1] if "--backend" in sys.argv else None
    os.makedirs(work, exist_ok=True)
    {"grid": mode_grid, "resume": mode_resume, "failure": mode_failure, "mpi": mode_mpi,
     "slurm": mode_slurm}[mode](tissue, work, backend)


if __name__ == "__main__":
    main()
