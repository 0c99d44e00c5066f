#!/usr/bin/python3
"""Figures of the membrane-mesh scenarios (docs/placodes.md) from their final snapshots.

usage: plot_membrane_runs.py placodes RUN_DIR OUT.png
       plot_membrane_runs.py spot RUN_DIR OUT.png
RUN_DIR holds cells_000130000.vtu, elements_000130000.vtu and, for placodes, membrane_000130000.vtu
(bench/gpu_session.sh membrane). Needs Debian's python3-meshio, numpy, matplotlib.
placodes: the activator a on the membrane with the cell centres above it coloured by height, and the
elements of a slab with the activator along it; spot: the elements in 3D over the membrane and a section
through the middle with the membrane's outline, attached and detached cells coloured.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import meshio
import numpy as np

STEP = "000130000"


def placodes(run, out):
    membrane = meshio.read(os.path.join(run, f"membrane_{STEP}.vtu"))
    cells = meshio.read(os.path.join(run, f"cells_{STEP}.vtu"))
    elements = meshio.read(os.path.join(run, f"elements_{STEP}.vtu"))
    p, tri, a = membrane.points, membrane.cells_dict["triangle"], membrane.point_data["a"]
    c = cells.points
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [1, 1.15]})
    pattern = left.tripcolor(p[:, 0], p[:, 1], tri, a, shading="gouraud", cmap="Greys")
    fig.colorbar(pattern, ax=left, label="activator a on the membrane")
    order = np.argsort(c[:, 2])
    dots = left.scatter(c[order, 0], c[order, 1], c=c[order, 2], s=12, cmap="viridis", edgecolors="none")
    fig.colorbar(dots, ax=left, label="cell centre height z")
    left.set_aspect("equal")
    left.set_title(f"{len(c)} cells over the pattern, t = 1300")
    e = elements.points
    band = np.abs(e[:, 1] - 6.0) < 1.5  # a slab through the middle of the box
    right.scatter(e[band, 0], e[band, 2], c=e[band, 2], s=3, cmap="viridis", edgecolors="none")
    xs = p[np.abs(p[:, 1] - 6.0) < 0.11]
    order = np.argsort(xs[:, 0])
    ax2 = right.twinx()
    ax2.plot(xs[order, 0], a[np.abs(p[:, 1] - 6.0) < 0.11][order], color="C3", lw=1)
    ax2.set_ylabel("activator a at y = 6", color="C3")
    right.set_xlabel("x")
    right.set_ylabel("element height z (slab 4.5 < y < 7.5)")
    right.set_title("thickened where the activator is high")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def read_obj(path, scale):
    """Vertices and triangles of an OBJ (v and f lines; meshio refuses spot's texture coordinates)."""
    points, faces = [], []
    for line in open(path):
        w = line.split()
        if w and w[0] == "v":
            points.append([float(x) * scale for x in w[1:4]])
        elif w and w[0] == "f":
            faces.append([int(x.split("/")[0]) - 1 for x in w[1:4]])
    return np.array(points), np.array(faces)


def spot(run, out):
    cells = meshio.read(os.path.join(run, f"cells_{STEP}.vtu"))
    elements = meshio.read(os.path.join(run, f"elements_{STEP}.vtu"))
    here = os.path.dirname(os.path.abspath(__file__))
    mp, mt = read_obj(os.path.join(here, "..", "scenarios", "meshes", "spot.obj"), 4.0)
    e = elements.points
    ids = elements.point_data["cell_id"]
    adhesive = cells.point_data["adhesive_elements"] > 0
    attached = np.isin(ids, cells.point_data["cell_id"][adhesive])
    fig = plt.figure(figsize=(14, 6.5))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    ax.plot_trisurf(mp[:, 0], mp[:, 1], mp[:, 2], triangles=mt, color="0.8", linewidth=0, alpha=0.25)
    ax.scatter(e[attached, 0], e[attached, 1], e[attached, 2], c="C0", s=1, label="attached cells")
    ax.scatter(e[~attached, 0], e[~attached, 1], e[~attached, 2], c="C3", s=1, alpha=0.35, label="detached")
    ax.view_init(elev=12, azim=-70)
    ax.set_box_aspect(np.ptp(e, axis=0))
    ax.set_axis_off()
    ax.legend(loc="lower left", markerscale=6)
    # a slab through the middle: the membrane's outline and the stratified tissue on it
    right = fig.add_subplot(1, 2, 2)
    x0 = 0.05  # off the mirror plane of spot, where vertices lie exactly on x = 0
    slab = np.abs(e[:, 0] - x0) < 0.3
    right.scatter(e[slab & attached, 1], e[slab & attached, 2], c="C0", s=4, label="attached cells")
    right.scatter(e[slab & ~attached, 1], e[slab & ~attached, 2], c="C3", s=4, label="detached (stratified)")
    # the membrane's section: edges of triangles crossing the plane x = x0
    for t in mt:
        q = mp[t]
        side = q[:, 0] - x0
        cut = []
        for i, j in ((0, 1), (1, 2), (2, 0)):
            if side[i] * side[j] < 0:
                f = side[i] / (side[i] - side[j])
                cut.append(q[i] + f * (q[j] - q[i]))
        if len(cut) == 2:
            right.plot([cut[0][1], cut[1][1]], [cut[0][2], cut[1][2]], color="k", lw=1)
    right.set_aspect("equal")
    right.set_xlabel("y")
    right.set_ylabel("z")
    right.set_title("section |x - 0.05| < 0.3 (membrane in black)")
    right.legend(loc="lower right", markerscale=3)
    fig.suptitle(f"epidermis grown on spot (scaled 4x), t = 1300: {len(cells.points)} cells, "
                 f"{adhesive.sum()} attached to the membrane")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    {"placodes": placodes, "spot": spot}[sys.argv[1]](sys.argv[2], sys.argv[3])
