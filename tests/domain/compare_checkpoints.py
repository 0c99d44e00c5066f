#!/usr/bin/python3
"""Compares the state in the checkpoints of run directories: the tables, fields and system states.

usage: compare_checkpoints.py CHECKPOINT_NAME DIR_A DIR_B [DIR_C ...]

Every dataset and attribute of DIR_A/CHECKPOINT_NAME is compared with the same file in each other directory
(tools/scenario_hashes.py hashes them), leaving out what a decomposed run writes differently without a
different state: the snapshot lists (/output: .pvtu files instead of .vtu) and the tables' capacity
attribute (the rows reserved, which depends on how the rows arrived). Exit status 0 when all equal, 1
otherwise; each difference is printed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from scenario_hashes import checkpoint_lines  # noqa: E402


def state(directory, name):
    path = os.path.join(directory, name)
    lines = dict(line.rsplit(" ", 1) for line in checkpoint_lines("", path))
    return {k: v for k, v in lines.items() if not k.startswith(":/output") and not k.endswith("@capacity")}


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    name, first, others = sys.argv[1], sys.argv[2], sys.argv[3:]
    want = state(first, name)
    if not any(k.startswith(":/tables/elements/") for k in want):
        print(f"{first}/{name}: no element table", file=sys.stderr)
        return 1
    failed = False
    for other in others:
        got = state(other, name)
        diffs = [k for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k)]
        for k in diffs:
            print(f"{other}/{name}{k}: differs from {first}" if k in want and k in got
                  else f"{other}/{name}{k}: only in {'the first' if k in want else other}")
        print(f"{other}/{name}: {len(want)} datasets and attributes, {len(diffs)} differ")
        failed = failed or bool(diffs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
