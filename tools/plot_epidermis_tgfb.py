#!/usr/bin/python3
"""Figure of the TGF-beta supply sweep of scenarios/epidermis_tgfb.toml (docs/epidermis_tgfb.md).

usage: plot_epidermis_tgfb.py RUNS_DIR OUT.png
RUNS_DIR holds one folder tgfb_<supply> per run (bench/gpu_session.sh tgfb), each with the final
cells_000130000.vtu and tgfb_000130000.vti. Needs Debian's python3-meshio, numpy, matplotlib.
"""
import base64
import os
import struct
import sys
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import meshio
import numpy as np


def read_vti(path):
    """(array dict, spacing, origin, extent) of a .vti written with inline base64 binary arrays."""
    image = ET.parse(path).getroot().find("ImageData")
    ext = list(map(int, image.get("WholeExtent").split()))
    shape = (ext[5] + 1, ext[3] + 1, ext[1] + 1)
    arrays = {}
    for a in image.iter("DataArray"):
        count = struct.unpack("<Q", base64.b64decode(a.text[:12]))[0]
        data = base64.b64decode(a.text[12:])[:count]
        arrays[a.get("Name")] = np.frombuffer(data, {"Float32": "<f4", "Float64": "<f8"}[a.get("type")]).reshape(shape)
    spacing = float(image.get("Spacing").split()[0])
    origin = list(map(float, image.get("Origin").split()))
    return arrays, spacing, origin


def main():
    runs_dir, out = sys.argv[1], sys.argv[2]
    runs = sorted((float(d.split("_", 1)[1]), os.path.join(runs_dir, d)) for d in os.listdir(runs_dir)
                  if d.startswith("tgfb_") and d[5:].replace(".", "").isdigit())
    fig = plt.figure(figsize=(14, 8))
    outer = fig.add_gridspec(2, 1, height_ratios=[1, 0.8], hspace=0.3)
    top = outer[0].subgridspec(1, 2, wspace=0.45)
    bottom = outer[1].subgridspec(1, 4, wspace=0.15)
    ax_count, ax_profile = fig.add_subplot(top[0]), fig.add_subplot(top[1])
    supplies, cells, basal_g = [], [], []
    for supply, path in runs:
        m = meshio.read(os.path.join(path, "cells_000130000.vtu"))
        u, h, origin = read_vti(os.path.join(path, "tgfb_000130000.vti"))
        u = u["tgfb"]
        z = origin[2] + h * np.arange(u.shape[0])
        adherent = m.point_data["adhesive_elements"] > 0
        supplies.append(supply)
        cells.append(len(m.points))
        basal_g.append(m.point_data["tgfb"][adherent].mean())
        ax_profile.plot(z, u.mean(axis=(1, 2)), "o-", ms=3, label=f"supply {supply:g}")
        ax_profile.plot(z, supply * np.cosh(z / 2.0) / np.cosh(2.0 + 0.125 / 2.0), "k:", lw=0.8)
    ax_count.plot(supplies, cells, "s-", color="C3", label="cells at step 130000")
    ax_count.set_xlabel("TGF-beta supply (reservoir value at the top of the grid)")
    ax_count.set_ylabel("cells", color="C3")
    twin = ax_count.twinx()
    twin.plot(supplies, basal_g, "o--", color="C0", label="mean G at basal cells")
    twin.axhline(0.78, color="C0", lw=0.8, ls=":")
    twin.text(supplies[-1], 0.8, "basal Delta > 140 above G = 0.78", ha="right", va="bottom", color="C0", fontsize=8)
    twin.set_ylabel("mean G sampled by basal cells", color="C0")
    ax_count.set_title("(a) cells after 130000 steps against the supply")
    ax_profile.set_xlabel("height z [length]")
    ax_profile.set_ylabel("TGF-beta, mean over x and y")
    ax_profile.set_title("(b) TGF-beta profile at step 130000 (dotted: cosh steady state)")
    ax_profile.legend(fontsize=7, ncol=2)
    picks = [r for r in runs if r[0] in (0.0, 1.5, 4.5, 6.0)] or runs[:4]
    vmax = max(s for s, _ in picks) * 0.35 or 1.0
    for k, (supply, path) in enumerate(picks[:4]):
        ax = fig.add_subplot(bottom[k])
        m = meshio.read(os.path.join(path, "cells_000130000.vtu"))
        p = m.points
        sc = ax.scatter(p[:, 0], p[:, 2], c=m.point_data["tgfb"], s=14, cmap="viridis", vmin=0, vmax=vmax,
                        edgecolors=np.where(m.point_data["suprabasal"] > 0, "red", "none"), linewidths=0.6)
        ax.set_xlim(0, 6)
        ax.set_ylim(0, 3.2)
        ax.set_aspect("equal")
        ax.set_title(f"(c) supply {supply:g}: {len(p)} cells", fontsize=9)
        ax.set_xlabel("x")
        if k == 0:
            ax.set_ylabel("z (cell centres, side view)")
        else:
            ax.set_yticklabels([])
    fig.colorbar(sc, ax=fig.axes[-4:], shrink=0.8, label="G sampled by the cell\n(red edge: suprabasal state)")
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"wrote {out}")
    for s, c, g in zip(supplies, cells, basal_g):
        print(f"supply {s:g}: {c} cells, mean basal G {g:.3f}")


if __name__ == "__main__":
    main()
