#!/usr/bin/python3
"""Plots a metric of a sweep against a varied parameter, from the sweep's sweep.csv (tissue sweep,
docs/sweeps.md).

usage: plot_sweep.py SWEEP_DIR_OR_CSV PARAMETER METRIC OUT.png [--by COLUMN] [--title TEXT]

Completed members only. Members with the same value of PARAMETER (replicates over seeds) are drawn as
their mean with an error bar of one standard deviation (none for a single member), and each member as a
faint dot; with --by, one line per value of that column (another varied key). Needs pandas and
matplotlib (Debian: python3-pandas python3-matplotlib).
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep")
    ap.add_argument("parameter")
    ap.add_argument("metric")
    ap.add_argument("out")
    ap.add_argument("--by")
    ap.add_argument("--title")
    a = ap.parse_args(argv)
    path = os.path.join(a.sweep, "sweep.csv") if os.path.isdir(a.sweep) else a.sweep
    runs = pd.read_csv(path)
    for column in filter(None, (a.parameter, a.metric, a.by)):
        if column not in runs.columns:
            sys.exit(f"{path}: no column {column!r} (columns: {', '.join(runs.columns)})")
    done = runs[runs.status == "completed"]
    if done.empty:
        sys.exit(f"{path}: no completed member")
    fig, ax = plt.subplots(figsize=(6, 4))
    groups = done.groupby(a.by) if a.by else [(None, done)]
    for key, part in groups:
        stats = part.groupby(a.parameter)[a.metric].agg(["mean", "std", "count"]).sort_index()
        label = f"{a.by} = {key}" if a.by else f"mean of {int(stats['count'].max())} member(s)"
        ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0.0), marker="o", capsize=3,
                    label=label)
        ax.scatter(part[a.parameter], part[a.metric], s=8, alpha=0.35, color="grey")
    ax.set_xlabel(a.parameter)
    ax.set_ylabel(a.metric)
    ax.set_title(a.title or f"{a.metric} against {a.parameter} ({len(done)} of {len(runs)} members)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"{a.out}: {a.metric} against {a.parameter}, {len(done)} completed members")


if __name__ == "__main__":
    main(sys.argv[1:])
