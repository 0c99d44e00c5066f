#!/usr/bin/python3
"""Independent check of a surface run's output with meshio: every .vtu of the .pvd series is a triangle mesh
with the OBJ file's counts (triangles, and vertices used by them; counted here from the file's `f` lines,
as meshio's OBJ reader refuses spot's texture coordinates), and the species arrays are finite and
non-negative.

usage: check_surface_output.py OUTPUT_DIR OBJ_FILE SPECIES... 
"""
import os
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np


def main():
    out, obj, species = sys.argv[1], sys.argv[2], sys.argv[3:]
    corners = [[int(w.split("/")[0]) for w in line.split()[1:]] for line in open(obj) if line.startswith("f ")]
    assert all(len(c) == 3 for c in corners), "the reference OBJ must be all triangles"
    faces = len(corners)
    used = np.unique(np.array(corners).ravel())
    entries = [(float(d.get("timestep")), d.get("file"))
               for d in ET.parse(os.path.join(out, "surface.pvd")).getroot().iter("DataSet")]
    assert len(entries) >= 2, entries
    for t, name in entries:
        mesh = meshio.read(os.path.join(out, name))
        triangles = mesh.cells_dict["triangle"]
        assert len(triangles) == faces, (len(triangles), faces)
        assert len(mesh.points) == len(used), (len(mesh.points), len(used))
        for s in species:
            v = mesh.point_data[s]
            assert v.shape == (len(used),) and np.all(np.isfinite(v)) and v.min() >= 0.0, (s, v.min())
        print(f"t={t:g}: {name}: {len(triangles)} triangles, " +
              ", ".join(f"{s} in [{mesh.point_data[s].min():.3f}, {mesh.point_data[s].max():.3f}]" for s in species))
    print(f"{len(entries)} snapshots ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
