#!/usr/bin/env python3
"""Benchmark of `tissue sweep` packing (issue 33): many epidermis members on one GPU at once against the
same members one after another, and over MPI ranks (one GPU each).

usage: sweep_packing.py TISSUE WORK_DIR [--members 64] [--steps 20000] [--concurrent 8,16,32,64]
                        [--solo 4] [--mpi RANKS[,RANKS...]] [--mpi-concurrent K[,K...]] [--skip-sequential]

The sweep: scenarios/epidermis.toml, `--steps` steps, 8 TGF-beta values x (members / 8) seeds. First the
members one after another (--concurrent 1, in one process), then packed with each --concurrent K, then, with
--mpi R, `mpirun -np R+1 tissue sweep` (a manager and R workers, one GPU each) for each R listed, with each
K of --mpi-concurrent (default: the best packed one). Aggregate throughput = members x steps / wall time of the whole sweep command (start-up, validation,
output and checkpoints included). Every packed member is compared, file for file and dataset for dataset
(tools/compare_runs.py), with the sequential sweep's, and `--solo` members are also run alone by `tissue run`
and compared. The device memory of the process is sampled with nvidia-smi; per member = (peak - the
sequential run's peak) / (K - 1). Prints a table.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COMPARE = os.path.join(ROOT, "tools", "compare_runs.py")


class MemorySampler:
    """Peak GPU memory used by compute processes [MiB] (nvidia-smi every 0.2 s), over all devices."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-compute-apps=used_memory", "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=5).stdout
                used = sum(int(x) for x in out.split() if x.isdigit())
                self.peak = max(self.peak, used)
            except (OSError, subprocess.SubprocessError):
                pass
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def timed(cmd, env=None):
    t0 = time.perf_counter()
    with MemorySampler() as mem:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-3000:])
        sys.exit(f"{' '.join(cmd)} exited {p.returncode}")
    return wall, mem.peak, p.stdout


def member_wall(out):
    """Mean wall time of the members [s] (sweep.csv), from a member's start to its end."""
    import csv
    with open(os.path.join(out, "sweep.csv")) as fh:
        w = [float(r["wall_seconds"]) for r in csv.DictReader(fh) if r["wall_seconds"]]
    return sum(w) / len(w) if w else float("nan")


def compare(pairs):
    p = subprocess.run([sys.executable, COMPARE, *pairs], capture_output=True, text=True)
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr
    if p.returncode != 0:
        print(p.stdout[:4000])
    return p.returncode == 0, last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tissue")
    ap.add_argument("work")
    ap.add_argument("--members", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--concurrent", default="8,16,32,64")
    ap.add_argument("--solo", type=int, default=4)
    ap.add_argument("--mpi", default="")
    ap.add_argument("--mpi-concurrent", default="")
    ap.add_argument("--skip-sequential", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    tissue = os.path.abspath(a.tissue)
    base = os.path.join(ROOT, "scenarios", "epidermis.toml")
    seeds = a.members // 8
    sweep_file = os.path.join(a.work, "packing.toml")
    with open(sweep_file, "w") as fh:
        fh.write(f'scenario = "{base}"\nsteps = {a.steps}\nreplicates = {seeds}\nmetrics = ["cells", "elements", "layers"]\n'
                 '[grid]\n"gene_network.tgf_beta" = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55]\n')
    total_steps = a.members * a.steps
    rows = []
    seq_dir = os.path.join(a.work, "sequential")
    seq_rate = None
    seq_peak = 0
    if not a.skip_sequential:
        shutil.rmtree(seq_dir, ignore_errors=True)
        wall, seq_peak, _ = timed([tissue, "sweep", sweep_file, "--out", seq_dir, "--concurrent", "1"])
        seq_rate = total_steps / wall
        rows.append(("1 (one after another)", wall, seq_rate, 1.0, "-", seq_peak, "-"))
        print(f"sequential: {wall:.1f} s, {seq_rate:.0f} steps/s", flush=True)
    best = (0.0, None, None)
    for k in [int(x) for x in a.concurrent.split(",") if x]:
        out = os.path.join(a.work, f"packed_{k}")
        shutil.rmtree(out, ignore_errors=True)
        wall, peak, stdout = timed([tissue, "sweep", sweep_file, "--out", out, "--concurrent", str(k)])
        rate = total_steps / wall
        same = "-"
        if seq_rate:
            members = sorted(d for d in os.listdir(seq_dir) if re.fullmatch(r"m\d+", d))
            ok, last = compare([x for m in members for x in (os.path.join(seq_dir, m), os.path.join(out, m))])
            same = last if ok else "DIFFER: " + last
        per_member = (peak - seq_peak) / (k - 1) if seq_peak and k > 1 else float("nan")
        rows.append((str(k), wall, rate, rate / seq_rate if seq_rate else float("nan"), same, peak, f"{per_member:.0f}"))
        print(f"packed {k}: {wall:.1f} s, {rate:.0f} steps/s, member wall {member_wall(out):.2f} s, {same}", flush=True)
        if rate > best[0]:
            best = (rate, k, out)
        if k != best[1]:
            shutil.rmtree(out, ignore_errors=True)  # keep the disk for the best one
    if a.solo and best[2]:
        picks = sorted({round(i * (a.members - 1) / max(1, a.solo - 1)) for i in range(a.solo)})
        pairs = []
        for i in picks:
            m = f"m{i:03d}"
            text = open(os.path.join(best[2], m, "scenario.toml")).read()
            copy = os.path.join(os.path.dirname(base), f".solo_{m}.toml")  # beside the base: same relative paths
            with open(copy, "w") as fh:
                fh.write(text)
            solo = os.path.join(a.work, "solo_" + m)
            shutil.rmtree(solo, ignore_errors=True)
            try:
                subprocess.run([tissue, "run", copy, "--out", solo, "--steps", str(a.steps)], check=True,
                               capture_output=True)
            finally:
                os.remove(copy)
            pairs += [solo, os.path.join(best[2], m)]
        ok, last = compare(pairs)
        print(f"solo tissue run vs packed ({best[1]} at once), members {picks}: {'identical' if ok else 'DIFFER'}: {last}")
    for ranks in [int(x) for x in a.mpi.split(",") if x]:
        for k in [int(x) for x in a.mpi_concurrent.split(",") if x] or [best[1] or 32]:
            out = os.path.join(a.work, f"mpi_{ranks}_{k}")
            shutil.rmtree(out, ignore_errors=True)
            wall, peak, stdout = timed(["mpirun", "-np", str(ranks + 1), "--bind-to", "none", tissue, "sweep",
                                        sweep_file, "--out", out, "--concurrent", str(k)])
            rate = total_steps / wall
            same = "-"
            if best[2]:
                members = sorted(d for d in os.listdir(best[2]) if re.fullmatch(r"m\d+", d))
                ok, last = compare([x for m in members for x in (os.path.join(best[2], m), os.path.join(out, m))])
                same = last if ok else "DIFFER: " + last
            rows.append((f"{ranks} ranks x {k}", wall, rate, rate / best[0] if best[0] else float("nan"), same, peak, "-"))
            print(f"mpi {ranks} ranks x {k}: {wall:.1f} s, member wall {member_wall(out):.2f} s", flush=True)
            print("\n".join(line for line in stdout.splitlines() if "times since the start" in line))
            shutil.rmtree(out, ignore_errors=True)
    print(f"\n{a.members} members x {a.steps} steps of epidermis; ratio: to one after another "
          f"(mpi row: to the best packed)")
    print(f"{'concurrent':>22} {'wall s':>8} {'steps/s':>10} {'ratio':>7} {'peak MiB':>9} {'MiB/member':>10}  identical")
    for r in rows:
        print(f"{r[0]:>22} {r[1]:8.1f} {r[2]:10.0f} {r[3]:7.2f} {r[5]:9d} {r[6]:>10}  {r[4]}")


if __name__ == "__main__":
    main()
