#!/usr/bin/python3
"""Independent check of a graph-flow run's output (XML parsed here, binary arrays decoded with numpy; meshio
reads neither .vts nor .vti): the surface series (.vts) holds an
(n + 1)^2 structured grid whose z coordinate is the point array phi over x, y nodes on [lo, hi]^2; the first
snapshot is the initial graph sin(3 pi sqrt(x^2 + y^2)) (35), computed here, at interior nodes, and boundary
nodes mirror the interior (Neumann); H and w are finite; the image
series (.vti) has the same phi.

usage: check_graph_output.py OUTPUT_DIR N LO HI SNAPSHOTS
"""
import base64
import os
import struct
import sys
import xml.etree.ElementTree as ET

import numpy as np


def decode(text, dtype):
    """VTK inline binary: base64(UInt64 byte count) followed by base64(bytes), encoded separately."""
    count = struct.unpack("<Q", base64.b64decode(text[:12]))[0]
    data = base64.b64decode(text[12:])
    assert len(data) == count, f"{len(data)} bytes, header says {count}"
    return np.frombuffer(data, dtype=dtype)


def read(path, kind):
    """(points or None, {name: values}) of a .vts/.vti file."""
    root = ET.parse(path).getroot()
    assert root.get("type") == kind, root.get("type")
    types = {"Float32": "<f4", "Float64": "<f8"}
    points = None
    pts = root.find(f"{kind}/Piece/Points/DataArray")
    if pts is not None:
        points = decode(pts.text, types[pts.get("type")]).reshape(-1, 3)
    arrays = {a.get("Name"): decode(a.text, types[a.get("type")]) for a in root.find(f"{kind}/Piece/PointData")}
    return points, arrays


def series(out, name):
    return [(float(d.get("timestep")), d.get("file")) for d in ET.parse(os.path.join(out, name)).getroot().iter("DataSet")]


def main():
    out, n, lo, hi, snapshots = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    surface, image = series(out, "surface.pvd"), series(out, "graph.pvd")
    assert len(surface) == snapshots and len(image) == snapshots, (len(surface), len(image))
    x = np.linspace(lo, hi, n + 1)
    gx, gy = np.meshgrid(x, x)  # x fastest, as written
    for k, ((t, vts), (t2, vti)) in enumerate(zip(surface, image)):
        assert t == t2
        p, data = read(os.path.join(out, vts), "StructuredGrid")
        assert p.shape == ((n + 1) ** 2, 3), p.shape
        assert np.allclose(p[:, 0], gx.ravel()) and np.allclose(p[:, 1], gy.ravel())
        phi = data["phi"]
        assert np.array_equal(p[:, 2], phi), "z is not phi"
        for name in ("H", "w"):
            assert data[name].shape == phi.shape and np.all(np.isfinite(data[name])), name
        _, img = read(os.path.join(out, vti), "ImageData")
        assert np.array_equal(img["phi"], phi), "vti and vts disagree"
        grid = phi.reshape(n + 1, n + 1)
        # Neumann boundary nodes hold their interior mirrors (19)-(20)
        assert np.array_equal(grid[0, 1:-1], grid[1, 1:-1]) and np.array_equal(grid[-1, 1:-1], grid[-2, 1:-1])
        assert np.array_equal(grid[1:-1, 0], grid[1:-1, 1]) and np.array_equal(grid[1:-1, -1], grid[1:-1, -2])
        if k == 0:
            expected = np.sin(3 * np.pi * np.sqrt(gx ** 2 + gy ** 2))
            err = np.max(np.abs(grid[1:-1, 1:-1] - expected[1:-1, 1:-1]))
            assert err < 1e-12, err
        print(f"t={t:g}: {vts}: phi in [{phi.min():.4f}, {phi.max():.4f}]")
    print(f"{snapshots} snapshots ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
