#!/usr/bin/python3
"""SBML events and the volume input (issue 37) checked from a run's output, with numpy and meshio only (no
libSBML in Python: the GPU machine has none), so that the check runs on every backend.

usage: check_events.py sawtooth OUT      tests/sbml/sawtooth_cells.toml's run (sawtooth.xml or .ant)
       check_events.py division OUT      tests/sbml/events_division.toml's run
       check_events.py volume OUT K EV   tests/sbml/volume_cells.toml's run (p' = K v, v = count x EV)

sawtooth: x' = 1, reset at x >= 2 (x = 0, n = n + 1), dt = 1/8: after K steps x = (K mod 16) / 8 and
n = floor(K / 16) exactly (x is exact in float); the swap a = b, b = a at the first end of step with
t > 1/2 (K = 5) gives a = 3, b = 1 from a = 1, b = 3 (pre-event values: a sequential a = b; b = a would
give 3, 3); `stay` (initialValue true, trigger true from t = 0) never fires; `once` (initialValue false)
fires at the end of the first step.
division: `once` counts m = 1 in every cell before any division; a division halves every species (the
lifecycle's rule), so a cell of generation g has m = 2^-g; a daughter that did not inherit its mother's
trigger state (true) would fire again (m = 2^-g + 1).
volume: the cell's production p(K) = sum over steps j < K of K dt count(j) EV, with count(j) the element
count the output shows after step j (the network reads the count the previous step left).
"""
import os
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np


def snapshots(out):
    root = ET.parse(os.path.join(out, "cells.pvd")).getroot()
    return [(float(d.get("timestep")), meshio.read(os.path.join(out, d.get("file"))).point_data)
            for d in root.iter("DataSet")]


def per_cell(data, name):
    """One value per cell (the cells file repeats a cell's value at each of its points? no: one point per
    cell), as float64."""
    return np.asarray(data[name], dtype=np.float64).ravel()


def check_sawtooth(out):
    snaps = snapshots(out)
    assert len(snaps) >= 40, len(snaps)
    dt = 0.125
    for t, d in snaps:
        k = int(round(t / dt))
        assert abs(k * dt - t) < 1e-9, t
        expect = {"x": (k % 16) * dt, "n": k // 16, "a": 3.0 if k >= 5 else 1.0, "b": 1.0 if k >= 5 else 3.0,
                  "stays": 0.0, "onces": 1.0 if k >= 1 else 0.0}
        for name, v in expect.items():
            got = per_cell(d, name)
            assert got.size == 4, (name, got)
            assert np.all(got == v), (t, name, got, v)
    print(f"sawtooth: {len(snaps)} snapshots x 4 cells exact (last t = {snaps[-1][0]}, n = {snaps[-1][0] // 2:.0f})")


def check_division(out):
    snaps = snapshots(out)
    first, last = snaps[0][1], snaps[-1][1]
    n0, n1 = per_cell(first, "m").size, per_cell(last, "m").size
    assert n1 > n0, f"no division: {n0} -> {n1} cells"
    m = per_cell(last, "m")
    g = -np.log2(m)
    ok = np.isfinite(g) & (np.abs(g - np.round(g)) < 1e-6)
    assert np.all(ok), f"m not a power of 2 in every cell (a daughter fired again): {m[~ok]}"
    assert np.any(g >= 1), "no divided cell"
    print(f"division: {n0} -> {n1} cells, m in {sorted(set(np.round(m, 6)))}")


def check_volume(out, k, ev):
    snaps = snapshots(out)
    times = np.array([t for t, _ in snaps])
    dt = times[1] - times[0]
    counts = np.array([per_cell(d, "element_count") for _, d in snaps])
    p = np.array([per_cell(d, "p") for _, d in snaps])
    assert counts.shape == p.shape, (counts.shape, p.shape)
    assert counts.max() > counts.min(), "the cells did not grow: the test needs changing volumes"
    expect = np.concatenate([np.zeros((1, p.shape[1])), np.cumsum(k * dt * ev * counts[:-1], axis=0)])
    err = np.max(np.abs(p - expect) / np.maximum(1.0, np.abs(expect)))
    assert err < 1e-5, f"volume input: relative error {err}"
    print(f"volume: {p.shape[0]} snapshots x {p.shape[1]} cells, counts {counts.min():.0f}..{counts.max():.0f},"
          f" max relative error {err:.2e}")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "sawtooth":
        check_sawtooth(sys.argv[2])
    elif mode == "division":
        check_division(sys.argv[2])
    elif mode == "volume":
        check_volume(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit(f"unknown mode {mode}")
