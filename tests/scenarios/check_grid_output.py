#!/usr/bin/python3
"""Independent check of a grid run's output: .pvd index, .vti image data decoded with numpy, PNG headers.

usage: check_grid_output.py OUTPUT_DIR FIELD NX NY NZ MIN_SNAPSHOTS
"""
import base64
import os
import struct
import sys
import xml.etree.ElementTree as ET

import numpy as np


def decode(text, dtype):
    """VTK inline binary: base64(UInt64 byte count) followed by base64(bytes), encoded separately."""
    header = base64.b64decode(text[:12])
    count = struct.unpack("<Q", header)[0]
    data = base64.b64decode(text[12:])
    assert len(data) == count, f"{len(data)} bytes, header says {count}"
    return np.frombuffer(data, dtype=dtype)


def main():
    out, field, nx, ny, nz, min_snapshots = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
    root = ET.parse(os.path.join(out, field + ".pvd")).getroot()
    entries = [(float(d.get("timestep")), d.get("file")) for d in root.iter("DataSet")]
    assert len(entries) >= min_snapshots, f"{len(entries)} snapshots"
    assert [t for t, _ in entries] == sorted(t for t, _ in entries)
    for t, name in entries:
        image = ET.parse(os.path.join(out, name)).getroot().find("ImageData")
        assert image.get("WholeExtent") == f"0 {nx - 1} 0 {ny - 1} 0 {nz - 1}", image.get("WholeExtent")
        arrays = {a.get("Name"): decode(a.text, {"Float32": "<f4", "Float64": "<f8"}[a.get("type")])
                  for a in image.iter("DataArray")}
        assert set(arrays) == {"a", "b"}, arrays.keys()
        for species, values in arrays.items():
            assert values.size == nx * ny * nz
            # Gray-Scott keeps [0, 1] invariant; the initial noise (0.02 in grid_short.toml) may exceed it
            assert np.all(np.isfinite(values)) and values.min() >= -0.05 and values.max() <= 1.05
        print(f"t={t:g}: {name}: a in [{arrays['a'].min():.3f}, {arrays['a'].max():.3f}], "
              f"b in [{arrays['b'].min():.3f}, {arrays['b'].max():.3f}]")
    pngs = sorted(f for f in os.listdir(out) if f.endswith(".png"))
    if nz == 1:
        assert len(pngs) == len(entries), f"{len(pngs)} PNGs for {len(entries)} snapshots"
        for p in pngs:
            with open(os.path.join(out, p), "rb") as f:
                head = f.read(24)
            assert head[:8] == b"\x89PNG\r\n\x1a\n", p
            width, height = struct.unpack(">II", head[16:24])
            assert (width, height) == (nx, ny), (p, width, height)
    assert not [f for f in os.listdir(out) if ".tmp" in f]
    print("output ok")


if __name__ == "__main__":
    main()
