#!/usr/bin/env python3
"""Histogram of the final cell counts of one scenario run over many seeds (bench/epidermis_seeds.sh writes
the CSV: seed, cells, elements, layers), with the deterministic model's count as a reference line.

usage: plot_epidermis_seeds.py SEEDS_CSV OUT_PNG [--reference N] [--label TEXT] [--compare CSV --compare-label TEXT]
"""
import argparse
import csv
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("csv")
parser.add_argument("png")
parser.add_argument("--reference", type=int, default=400, help="the deterministic model's final count")
parser.add_argument("--label", default="cycle_cv = 0.2", help="what the runs of SEEDS_CSV are")
parser.add_argument("--compare", help="a second CSV of the same kind, drawn beside the first")
parser.add_argument("--compare-label", default="", help="what the runs of --compare are")
args = parser.parse_args()


def read_cells(path):
    with open(path) as f:
        return [int(row["cells"]) for row in csv.DictReader(f)]


cells = read_cells(args.csv)
other = read_cells(args.compare) if args.compare else []
mean, sd = statistics.mean(cells), statistics.stdev(cells)
lo, hi = min(cells + other + [args.reference]), max(cells + other + [args.reference])
bins = range(lo - 1, hi + 4, 3)
fig, ax = plt.subplots(figsize=(6, 3.5))
if other:
    ax.hist(other, bins=bins, color="#bbbbbb", edgecolor="white",
            label=f"{args.compare_label}, {len(other)} seeds (mean {statistics.mean(other):.1f}, "
            f"sd {statistics.stdev(other):.1f})")
ax.hist(cells, bins=bins, color="#3b7dd8", edgecolor="white",
        label=f"{args.label}, {len(cells)} seeds (mean {mean:.1f}, sd {sd:.1f})")
ax.axvline(args.reference, color="black", linestyle="--", label=f"deterministic (seed's) model: {args.reference}")
ax.set_xlabel("cells at t = 1300 (130 000 steps)")
ax.set_ylabel("runs")
ax.legend(loc="upper left", fontsize=8)
fig.tight_layout()
fig.savefig(args.png, dpi=120)
print(f"{len(cells)} runs: cells {min(cells)}..{max(cells)}, mean {mean:.2f}, sd {sd:.2f}")
