#!/usr/bin/python3
"""Compares the results of run directories file for file and dataset for dataset.

usage: compare_runs.py [--interrupted] DIR_A DIR_B [DIR_A2 DIR_B2 ...]

Hashes what tools/scenario_hashes.py hashes (every output file whole, every checkpoint dataset and
attribute separately, leaving out what names the run rather than its state: run.json, view.pvsm, the
scenario copy, the scenario's path and hash, the engine's version) in each directory of a pair and lists
every difference. Exit status 0 when every pair is identical, 1 otherwise. Used to check that a member of a
sweep (tissue sweep) equals the same scenario run alone by tissue run, and that a resumed run equals an
uninterrupted one.

With --interrupted, DIR_B may hold a run that was stopped by a signal and resumed: such a run also wrote the
snapshot of the step it stopped at (as tissue run does), so snapshots only in DIR_B are allowed, and the .pvd
lists and the checkpoints' copies of them (/output) are not compared, and only the checkpoints both hold are
(the interrupted run wrote one more, and the oldest were removed); every snapshot of DIR_A and its last
checkpoint must still be in DIR_B with the same bytes.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scenario_hashes import run_dir_lines  # noqa: E402


def series_list(key):
    """A .pvd file or a checkpoint's copy of one (they list the snapshots written)."""
    return key.endswith(".pvd") or ":/output/" in key


def differences(a, b, interrupted=False):
    """Lines "<file> differs" / "<file> only in A|B" for the run directories a and b."""
    la = dict(line.rsplit(" ", 1) for line in run_dir_lines("", a))
    lb = dict(line.rsplit(" ", 1) for line in run_dir_lines("", b))
    out = []
    ca = {k.split(":")[0] for k in la if ".h5:" in k}
    cb = {k.split(":")[0] for k in lb if ".h5:" in k}
    if interrupted and ca and max(ca) not in cb:
        out.append(f"{max(ca)[1:]} (the last checkpoint) only in {a}")
    for key in sorted(set(la) | set(lb)):
        if interrupted and series_list(key):
            continue
        # the newest `keep` checkpoints are kept: an interrupted run wrote one more, so others were removed
        if interrupted and ".h5:" in key and not (key.split(":")[0] in ca and key.split(":")[0] in cb):
            continue
        if key not in lb:
            out.append(f"{key[1:]} only in {a}")
        elif key not in la:
            if not (interrupted and key.endswith((".vtu", ".vti", ".vtp", ".png"))):
                out.append(f"{key[1:]} only in {b}")
        elif la[key] != lb[key]:
            out.append(f"{key[1:]} differs")
    if not la:
        out.append(f"{a} holds no output")
    return out


def main(argv):
    interrupted = "--interrupted" in argv
    argv = [x for x in argv if x != "--interrupted"]
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    for a, b in zip(argv[0::2], argv[1::2]):
        diff = differences(a, b, interrupted)
        if diff:
            bad += 1
            print(f"{a} != {b}:")
            for d in diff[:20]:
                print("  " + d)
    pairs = len(argv) // 2
    print(f"{pairs - bad} of {pairs} pairs identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
