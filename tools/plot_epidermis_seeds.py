#!/usr/bin/env python3
"""Histogram of the final cell counts of one scenario run over many seeds (bench/epidermis_seeds.sh writes
the CSV: seed, cells, elements, layers), with the deterministic model's count as a reference line.

usage: plot_epidermis_seeds.py SEEDS_CSV OUT_PNG [--reference N]
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
args = parser.parse_args()
with open(args.csv) as f:
    cells = [int(row["cells"]) for row in csv.DictReader(f)]
mean, sd = statistics.mean(cells), statistics.stdev(cells)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.hist(cells, bins=range(min(cells) - 1, max(args.reference, max(cells)) + 3, 2), color="#3b7dd8",
        edgecolor="white", label=f"cycle_cv = 0.2, {len(cells)} seeds (mean {mean:.1f}, sd {sd:.1f})")
ax.axvline(args.reference, color="black", linestyle="--", label=f"deterministic (seed's) model: {args.reference}")
ax.set_xlabel("cells at t = 1300 (130 000 steps)")
ax.set_ylabel("runs")
ax.legend(loc="upper left", fontsize=8)
fig.tight_layout()
fig.savefig(args.png, dpi=120)
print(f"{len(cells)} runs: cells {min(cells)}..{max(cells)}, mean {mean:.2f}, sd {sd:.2f}")
