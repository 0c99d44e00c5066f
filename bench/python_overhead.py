#!/usr/bin/env python3
"""What stepping from Python costs over `tissue run`: the same scenario, the same backend, the same output,
timed by the engine's own clock (run.json's wall_seconds: from the first step to the end of the run,
snapshots and checkpoints included), in alternating order, and by the process's wall clock.

usage: python_overhead.py TISSUE_BIN [--scenario scenarios/epidermis.toml] [--backend cuda] [--steps N]
                          [--repeats 3] [--work DIR]

Variants: `tissue run` (the command line), Python `run()` (chunks of the output cadence), Python `run()` with a
callback every 100 steps that reads the cell count and a species column (what a notebook's progress plot
does), and Python `step(1)` in a loop (the worst case: one call per step). Prints medians and the ratio of
each to `tissue run`. Needs the package on PYTHONPATH (build/<preset>/python).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import tissue


def cli(args, out):
    start = time.perf_counter()
    subprocess.run([args.tissue, "run", args.scenario, "--backend", args.backend, "--out", out, "--overwrite"]
                   + (["--steps", str(args.steps)] if args.steps else []), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def python_run(args, out, mode):
    start = time.perf_counter()
    sim = tissue.Simulation(args.scenario, backend=args.backend, out=out, overwrite=True, steps=args.steps or None)
    if mode == "run":
        sim.run()
    elif mode == "callback":
        seen = []
        sim.run(callback=lambda s: seen.append((s.tables["cells"].rows, float(s.tables["cells"]["delta"].mean()))),
                every=100)
    else:
        while sim.steps < sim.end_step:
            sim.step(1)
        sim.close()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tissue")
    parser.add_argument("--scenario", default="scenarios/epidermis.toml")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--steps", type=int, default=0, help="end step (default: the scenario's)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", default="/tmp/python_overhead")
    parser.add_argument("--variants", default="cli,run,callback,step1")
    args = parser.parse_args()
    variants = args.variants.split(",")
    engine = {v: [] for v in variants}
    steps = {}  # steps done -> variants: every variant must have run the same steps
    process = {v: [] for v in variants}
    for r in range(args.repeats):
        for v in (variants if r % 2 == 0 else variants[::-1]):  # alternate the order: drift averages out
            out = os.path.join(args.work, v)
            wall = cli(args, out) if v == "cli" else python_run(args, out, v.replace("step1", "step"))
            record = json.load(open(os.path.join(out, "run.json")))
            assert record["status"] == "completed", record
            steps.setdefault(record["steps"]["done"], []).append(v)
            engine[v].append(record["wall_seconds"])
            process[v].append(wall)
            print(f"repeat {r} {v:9s} loop {record['wall_seconds']:8.2f} s  process {wall:8.2f} s", flush=True)
    assert len(steps) == 1, f"the variants ran different numbers of steps: {steps}"
    base = statistics.median(engine["cli"]) if "cli" in engine else None
    print(f"\n{args.scenario}, {next(iter(steps))} steps, backend {args.backend}, {tissue.version}, "
          f"device: {record['device']}")
    print(f"{'variant':10s} {'loop median [s]':>16s} {'ratio':>7s} {'process median [s]':>19s}")
    for v in variants:
        m = statistics.median(engine[v])
        ratio = f"{m / base:.4f}" if base else "-"
        print(f"{v:10s} {m:16.2f} {ratio:>7s} {statistics.median(process[v]):19.2f}")
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
