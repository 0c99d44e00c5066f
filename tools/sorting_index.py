#!/usr/bin/python3
"""Sorting index of a run with cell types, one line per snapshot of elements.pvd; optionally a plot.

usage: sorting_index.py [--box LX LY] [--contact D] [--plot OUT.png [--name NAME] [--label NAME RUN_DIR ...]] RUN_DIR

Two cells are neighbours when an element of one and an element of the other are closer than the contact
distance (default 0.25, modules/sem/sorting_index.hpp; minimum image in x and y with --box, for periodic
runs). The sorting index is the fraction of same-type cells among each cell's neighbours, averaged over
the cells that have one (the same definition as the run's summary line, modules/sem/sorting_index.cpp).
Prints the time, the index, the cells with a contact and the mean number of contacts. With --plot, draws
the index against time for RUN_DIR and each further --label NAME RUN_DIR. Needs meshio, numpy and scipy
(Debian: python3-meshio, python3-scipy), and matplotlib for --plot; run with /usr/bin/python3.
"""
import argparse
import os
import xml.etree.ElementTree as ET

import meshio
import numpy as np
from scipy.spatial import cKDTree


def snapshot_index(path, box, contact):
    mesh = meshio.read(path)
    points = np.asarray(mesh.points, dtype=float).copy()
    owner = np.asarray(mesh.point_data["cell_id"]).ravel()
    kind = np.asarray(mesh.point_data["cell_type"]).ravel()
    if box is not None:
        points[:, 0] %= box[0]
        points[:, 1] %= box[1]
        # cKDTree's periodic box needs every coordinate periodic: give z a period far beyond the tissue
        tree = cKDTree(points, boxsize=[box[0], box[1], 1e6])
    else:
        tree = cKDTree(points)
    pairs = tree.query_pairs(contact, output_type="ndarray")
    a, b = owner[pairs[:, 0]], owner[pairs[:, 1]]
    other = a != b
    contacts = {(int(x), int(y)) for x, y in zip(a[other], b[other])}
    contacts |= {(y, x) for x, y in contacts}
    type_of = dict(zip(owner.tolist(), kind.tolist()))
    neighbours = {}
    for x, y in contacts:
        neighbours.setdefault(x, []).append(y)
    fractions = [np.mean([type_of[y] == type_of[x] for y in ys]) for x, ys in neighbours.items()]
    mean_contacts = np.mean([len(ys) for ys in neighbours.values()]) if neighbours else 0.0
    return (float(np.mean(fractions)) if fractions else float("nan")), len(neighbours), len(type_of), mean_contacts


def timeline(run, box, contact):
    root = ET.parse(os.path.join(run, "elements.pvd")).getroot()
    rows = []
    for dataset in root.iter("DataSet"):
        t = float(dataset.get("timestep"))
        rows.append((t, *snapshot_index(os.path.join(run, dataset.get("file")), box, contact)))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--box", nargs=2, type=float, metavar=("LX", "LY"))
    parser.add_argument("--contact", type=float, default=0.25)
    parser.add_argument("--plot")
    parser.add_argument("--label", nargs=2, action="append", default=[], metavar=("NAME", "RUN_DIR"))
    parser.add_argument("--title", default="")
    parser.add_argument("--name", help="legend name of RUN_DIR (default: its folder name)")
    args = parser.parse_args()
    runs = [(args.name or os.path.basename(os.path.normpath(args.run)), args.run)] + [tuple(x) for x in args.label]
    series = []
    for name, run in runs:
        rows = timeline(run, args.box, args.contact)
        print(f"# {name}: {run}")
        print(f"{'time':>8} {'index':>7} {'in contact':>11} {'cells':>6} {'contacts/cell':>14}")
        for t, index, touching, cells, mean_contacts in rows:
            print(f"{t:8g} {index:7.3f} {touching:11d} {cells:6d} {mean_contacts:14.2f}")
        series.append((name, rows))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
        for name, rows in series:
            ax.plot([r[0] for r in rows], [r[1] for r in rows], marker="o", markersize=3, label=name)
        ax.axhline(0.5, color="grey", lw=0.8, ls="--", label="random mixture (1/2)")
        ax.set_xlabel("time")
        ax.set_ylabel("sorting index (like neighbours)")
        ax.set_ylim(0.3, 1.0)
        ax.set_title(args.title)
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot)


if __name__ == "__main__":
    main()
