#!/usr/bin/python3
"""Independent check of a coupled tissue run's signal field: the .pvd series of .vti image data (decoded
with numpy), values finite and within [0, max(top value, ...)], the top-supplied field increasing with
height on average, and each cell's sampled value (cells_*.vtu, read by meshio) equal to a trilinear
interpolation of the grid written at the same step, up to one field step.

usage: check_signal_output.py OUTPUT_DIR FIELD NX NY NZ SPACING MIN_SNAPSHOTS
"""
import os
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np

from check_grid_output import decode


def trilinear(u, h, p):
    """u[z, y, x] at nodes (i + 1/2) h, periodic in x and y, clamped (zero flux) in z."""
    nz, ny, nx = u.shape
    s = p / h - 0.5
    s[2] = min(max(s[2], 0.0), nz - 1.0)
    i0 = np.floor(s).astype(int)
    f = s - i0
    value = 0.0
    for a in (0, 1):
        for b in (0, 1):
            for c in (0, 1):
                i, j, k = (i0[0] + a) % nx, (i0[1] + b) % ny, min(i0[2] + c, nz - 1)
                w = (f[0] if a else 1 - f[0]) * (f[1] if b else 1 - f[1]) * (f[2] if c else 1 - f[2])
                value += w * u[k, j, i]
    return value


def main():
    out, field = sys.argv[1], sys.argv[2]
    nx, ny, nz = map(int, sys.argv[3:6])
    h, min_snapshots = float(sys.argv[6]), int(sys.argv[7])
    grids = [(float(d.get("timestep")), d.get("file"))
             for d in ET.parse(os.path.join(out, field + ".pvd")).getroot().iter("DataSet")]
    cells = [(float(d.get("timestep")), d.get("file"))
             for d in ET.parse(os.path.join(out, "cells.pvd")).getroot().iter("DataSet")]
    assert len(grids) >= min_snapshots and [t for t, _ in grids] == [t for t, _ in cells]
    for (t, gf), (_, cf) in zip(grids, cells):
        image = ET.parse(os.path.join(out, gf)).getroot().find("ImageData")
        assert image.get("WholeExtent") == f"0 {nx - 1} 0 {ny - 1} 0 {nz - 1}", image.get("WholeExtent")
        arrays = {a.get("Name"): decode(a.text, {"Float32": "<f4", "Float64": "<f8"}[a.get("type")])
                  for a in image.iter("DataArray")}
        u = arrays[field].reshape(nz, ny, nx).astype(np.float64)
        assert np.all(np.isfinite(u)) and u.min() >= 0.0
        m = meshio.read(os.path.join(out, cf))
        sampled = m.point_data[field]
        assert m.point_data[field + "_gradient"].shape == (len(m.points), 3)
        if t > 0:
            profile = u.mean(axis=(1, 2))
            assert profile[-1] > profile[0], f"t={t}: no supply from the top? {profile}"
            worst = max(abs(trilinear(u, h, p.astype(np.float64)) - s) for p, s in zip(m.points, sampled))
            assert worst < 0.02 * max(u.max(), 1e-12), f"t={t}: sampled values off by {worst}"
            print(f"t={t:g}: {gf}: {field} in [{u.min():.3f}, {u.max():.3f}], cells sample within {worst:.2e}")
    print("signal output ok")


if __name__ == "__main__":
    main()
