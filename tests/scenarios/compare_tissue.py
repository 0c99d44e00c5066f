#!/usr/bin/env python3
"""Requires the final checkpoints of two runs to hold the same tissue: the same cells (stable ids, element
counts, gene-network species) and the same elements (positions, owners, SEM types), bit for bit. Other
columns may differ (a run with behaviour rules has columns of its own).

usage: compare_tissue.py DIR_A DIR_B
"""
import glob
import os
import sys

import h5py
import numpy as np

COLUMNS = ["cells/id", "cells/count", "cells/species", "elements/x", "elements/y", "elements/z",
           "elements/cell", "elements/type"]


def last_checkpoint(directory):
    files = sorted(glob.glob(os.path.join(directory, "checkpoint_*.h5")))
    if not files:
        sys.exit(f"no checkpoint in {directory}")
    return files[-1]


def main():
    a, b = (h5py.File(last_checkpoint(d), "r") for d in sys.argv[1:3])
    problems = []
    for name in COLUMNS:
        key = "tables/" + name
        if (key in a) != (key in b):
            problems.append(f"{name} only in one run")
        elif key in a and not np.array_equal(a[key][()], b[key][()]):
            problems.append(f"{name} differs: shapes {a[key].shape} and {b[key].shape}")
    if problems:
        sys.exit("\n".join(problems))
    print(f"same tissue: {a['tables/cells/id'].shape[0]} cells, {a['tables/elements/x'].shape[0]} elements")


if __name__ == "__main__":
    main()
