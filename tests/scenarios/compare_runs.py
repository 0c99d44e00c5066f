#!/usr/bin/env python3
"""Requires two run directories to hold the same results, byte for byte.

usage: compare_runs.py DIR_A DIR_B [--same-files]

Every file of DIR_A except run.json (which records devices and times) and the lock file .tissue.lock (the
owner's pid) must exist in DIR_B with the same
bytes, checkpoints included (they carry no time stamps: identical states give identical files). With
--same-files DIR_B must not hold other files either.
"""
import os
import sys


def main():
    a, b = sys.argv[1], sys.argv[2]
    same_files = "--same-files" in sys.argv[3:]
    per_run = {"run.json", ".tissue.lock"}
    names = sorted(n for n in os.listdir(a) if n not in per_run)
    problems = []
    for name in names:
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        if not os.path.exists(pb):
            problems.append(f"{name} missing in {b}")
        elif open(pa, "rb").read() != open(pb, "rb").read():
            problems.append(f"{name} differs")
    if same_files:
        extra = sorted(set(os.listdir(b)) - set(names) - per_run)
        if extra:
            problems.append(f"only in {b}: {extra}")
    if problems:
        print("; ".join(problems))
        return 1
    print(f"{len(names)} files identical ({sum(n.endswith('.h5') for n in names)} checkpoints)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
