#!/usr/bin/python3
"""Independent check of a conformal Willmore run's output with meshio: every .vtu of surface.pvd has the
OBJ file's triangles; the area computed here from the triangles stays that of the input (preserve_area);
the Willmore energy sum_i A_i H_i^2, with the mean curvature the run wrote and barycentric vertex areas
computed here, decreases from snapshot to snapshot; surface_final.obj holds the last snapshot's positions.

usage: check_conformal_output.py OUTPUT_DIR OBJ_FILE
"""
import os
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np


def areas(points, triangles):
    p = points[triangles]
    face = 0.5 * np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    vertex = np.zeros(len(points))
    for c in range(3):
        np.add.at(vertex, triangles[:, c], face / 3.0)
    return face.sum(), vertex


def main():
    out, obj = sys.argv[1], sys.argv[2]
    faces = sum(1 for line in open(obj) if line.startswith("f "))
    entries = [(float(d.get("timestep")), d.get("file"))
               for d in ET.parse(os.path.join(out, "surface.pvd")).getroot().iter("DataSet")]
    assert len(entries) >= 3, entries
    area0, energy = None, None
    for t, name in entries:
        mesh = meshio.read(os.path.join(out, name))
        tri = mesh.cells_dict["triangle"]
        assert len(tri) == faces, (len(tri), faces)
        area, vertex_area = areas(mesh.points.astype(np.float64), tri)
        h = mesh.point_data["mean_curvature"]
        assert np.allclose(mesh.point_data["willmore_density"], h * h)
        w = float(np.sum(vertex_area * h * h))
        area0 = area if area0 is None else area0
        assert abs(area - area0) < 1e-5 * area0, (area, area0)  # float32 points
        assert energy is None or w < energy, (w, energy)
        print(f"t={t:g}: {name}: area {area:.6f}, Willmore energy {w:.4f}")
        energy = w
    final = np.array([[float(x) for x in line.split()[1:4]] for line in open(os.path.join(out, "surface_final.obj"))
                      if line.startswith("v ")])
    assert final.shape == mesh.points.shape and np.allclose(final, mesh.points, atol=1e-6)
    print(f"{len(entries)} snapshots ok; surface_final.obj matches the last")
    return 0


if __name__ == "__main__":
    sys.exit(main())
