#!/usr/bin/python3
"""Regression gate for refactors: hashes the output of every shipped scenario, run briefly.

usage: scenario_hashes.py TISSUE_BINARY [--backend cpu|cuda] [--out FILE] [--compare FILE]
                          [--only NAME ...] [--work DIR]

Runs each scenarios/*.toml for a few steps (the table STEPS below; output every `every` steps and a
checkpoint at the end) and prints one line per output file: `<scenario>/<file> <sha256>`. For HDF5
checkpoints every dataset and every root attribute is hashed separately, except what names the run
rather than its state (the stored scenario text, its hash and path, the engine version and revision,
the model name) and the viewer copies under /view (points and components of /tables, reshaped for
ParaView): `<scenario>/<checkpoint>:/tables/cells/cx <sha256>`. run.json and view.pvsm (the ParaView
state, a viewer file) are not hashed. `.vtu`/`.vti`/`.vtp`/`.pvd`/`.png`
files are hashed whole. With --compare FILE the lines are compared with a file written earlier and every
difference is listed; the exit status is 1 if any.

Needs /usr/bin/python3 with h5py (python3-h5py). CTest runs the comparison with the CPU build
(regression.scenario_hashes). After a change that is meant to alter results, record the hashes again in a
commit of its own that says why:
    tools/scenario_hashes.py build/cpu/tools/tissue --out tests/regression/scenario_hashes_cpu.txt
On the GPU machine (its python3 has h5py), the CUDA backend's hashes compare with
tests/regression/scenario_hashes_cuda_h200.txt:
    python3 tools/scenario_hashes.py .gpu/build/tools/tissue --backend cuda --compare ...
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

# scenario -> (steps, output every); short enough for the CPU, long enough to pass a division or a
# surface step where the model has them.
STEPS = {
    "chemotaxis_source": (120, 40),
    "cell_sorting": (100, 50),
    "epidermis": (120, 40),
    "epidermis_stochastic": (120, 40),
    "epidermis_rules": (120, 40),
    "epidermis_spot": (40, 20),
    "epidermis_tgfb": (120, 40),
    "epidermis_user_network": (120, 40),
    "placodes": (40, 20),
    "gray_scott_3d": (20, 10),
    "gray_scott_bubbles": (40, 20),
    "gray_scott_gamma": (40, 20),
    "gray_scott_mu": (40, 20),
    "gray_scott_negatons": (40, 20),
    "gray_scott_spot": (20, 10),
    "gray_scott_theta": (40, 20),
    "schnakenberg": (40, 20),
    "snakeskin_bunny": (10, 5),
    "snakeskin_rectangle": (20, 10),
    "mcf_graph": (20, 10),
    "willmore_graph": (2, 1),
    "conformal_willmore_spot": (4, 2),
    "conformal_willmore_noisy_sphere": (4, 2),
}
# Text substitutions that make a scenario cheap enough for the gate (applied to a copy beside the original,
# so that relative paths still resolve): the Willmore graph flow takes minutes per output step at n = 128.
SHRINK = {"willmore_graph": [(r"(?m)^n = 128", "n = 24")]}
# files that describe the run or how to view it rather than its results: run.json (devices, times), the lock
# (the owner's pid), view.pvsm (ParaView's state of the series: colour ranges and camera, not results), and
# scenario.toml (the copy of its input a sweep member's directory holds)
RUN_FILES = {"run.json", ".tissue.lock", "view.pvsm", "scenario.toml"}
RUN_ATTRIBUTES = {"scenario_path", "scenario_sha256", "engine_version", "engine_revision", "model", "input_files"}


def sha(data):
    return hashlib.sha256(data).hexdigest()


def checkpoint_lines(prefix, path):
    lines = []
    with h5py.File(path, "r") as f:
        for name in sorted(f.attrs):
            if name in RUN_ATTRIBUTES:
                continue
            v = f.attrs[name]
            lines.append(f"{prefix}:@{name} {sha(repr(v.tolist() if hasattr(v, 'tolist') else v).encode())}")

        def visit(name, obj):
            if name == "scenario" or name.startswith("view/") or not isinstance(obj, h5py.Dataset):
                return
            data = obj[()]
            raw = data.tobytes() if isinstance(data, np.ndarray) else repr(data).encode()
            attrs = ",".join(f"{k}={obj.attrs[k]!r}" for k in sorted(obj.attrs))
            lines.append(f"{prefix}:/{name} {sha(raw + attrs.encode() + str(obj.dtype).encode())}")

        f.visititems(visit)
        # group attributes (table sizes, grid spacing, pvd file lists)
        def visit_groups(name, obj):
            if isinstance(obj, h5py.Group):
                for k in sorted(obj.attrs):
                    lines.append(f"{prefix}:/{name}@{k} {sha(repr(obj.attrs[k]).encode())}")

        f.visititems(visit_groups)
    return lines


def run_scenario(binary, backend, scenario, work):
    name = os.path.splitext(os.path.basename(scenario))[0]
    steps, every = STEPS.get(name, (10, 5))
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    if name in SHRINK:
        with open(scenario) as fh:
            text = fh.read()
        for pattern, repl in SHRINK[name]:
            text, n = re.subn(pattern, repl, text)
            if n != 1:
                return [f"{name}/SHRINK pattern {pattern!r} matched {n} times"]
        scenario = os.path.join(os.path.dirname(scenario), f".{name}.gate.toml")
        with open(scenario, "w") as fh:
            fh.write(text)
    cmd = [binary, "run", scenario, "--steps", str(steps), "--every", str(every), "--out", out]
    if backend:
        cmd += ["--backend", backend]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    finally:
        if name in SHRINK:
            os.remove(scenario)
    if proc.returncode != 0:
        return [f"{name}/EXIT {proc.returncode} {proc.stderr.strip().splitlines()[-1] if proc.stderr else ''}"]
    return run_dir_lines(name, out)


def run_dir_lines(prefix, out):
    """One line per output file of the run directory `out` (datasets of checkpoints separately), named
    `<prefix>/<file>`; what names the run rather than its state is left out (see the module comment)."""
    lines = []
    for fname in sorted(os.listdir(out)):
        path = os.path.join(out, fname)
        if fname in RUN_FILES or fname.startswith(".") or fname.endswith(".xdmf") or os.path.isdir(path):
            continue
        if fname.endswith(".h5"):
            lines += checkpoint_lines(f"{prefix}/{fname}", path)
        else:
            with open(path, "rb") as fh:
                lines.append(f"{prefix}/{fname} {sha(fh.read())}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--out")
    ap.add_argument("--compare")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--work", default="/tmp/tissue_scenario_hashes")
    ap.add_argument("--scenarios", default=os.path.join(os.path.dirname(__file__), "..", "scenarios"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    scenarios = sorted(os.path.join(a.scenarios, s) for s in os.listdir(a.scenarios) if s.endswith(".toml"))
    if a.only:
        scenarios = [s for s in scenarios if os.path.splitext(os.path.basename(s))[0] in a.only]
    lines = []
    for s in scenarios:
        got = run_scenario(os.path.abspath(a.binary), a.backend, os.path.abspath(s), a.work)
        print(f"{os.path.basename(s)}: {len(got)} hashes", file=sys.stderr, flush=True)
        lines += got
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)
    if a.compare:
        with open(a.compare) as fh:
            want = dict(l.rsplit(" ", 1) for l in fh.read().splitlines() if l)
        have = dict(l.rsplit(" ", 1) for l in lines)
        if a.only:
            want = {k: v for k, v in want.items() if k.split("/")[0] in a.only}
        diffs = [k for k in sorted(set(want) | set(have)) if want.get(k) != have.get(k)]
        for k in diffs:
            print(f"DIFF {k}: {want.get(k, 'missing')} -> {have.get(k, 'missing')}")
        print(f"{len(have)} hashes, {len(diffs)} differ")
        return 1 if diffs else 0
    if not a.out:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
