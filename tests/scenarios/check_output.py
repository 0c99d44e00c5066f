#!/usr/bin/python3
"""Independent check of a run's ParaView output with meshio (Debian's python3-meshio).

usage: check_output.py OUTPUT_DIR MIN_SNAPSHOTS [--sphere R] [--membrane A,B] SPECIES...
Reads elements.pvd and cells.pvd, loads every .vtu they list with meshio, and checks the data against
itself: one point per element / cell, the arrays present, cell ids consistent between the two files,
element counts summing to the number of elements, positions inside the periodic box and above the floor.
--sphere R: the tissue grows on a membrane sphere of radius R about the origin (open domain): every
element lies between R - 0.1 and R + 4 from the centre instead.
--membrane A,B: a field on the membrane mesh with these species: membrane.pvd lists one triangle mesh per
snapshot with the same vertex count every time and finite species values, and every cell carries its
samples membrane_A, membrane_B.
"""
import os
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np


def series(path):
    root = ET.parse(path).getroot()
    assert root.get("type") == "Collection", path
    entries = [(float(d.get("timestep")), d.get("file")) for d in root.iter("DataSet")]
    times = [t for t, _ in entries]
    assert times == sorted(times) and len(set(times)) == len(times), f"{path}: timesteps not increasing"
    return entries


def main():
    out, min_snapshots, species = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    sphere, membrane = None, []
    while species and species[0].startswith("--"):
        if species[0] == "--sphere":
            sphere = float(species[1])
        elif species[0] == "--membrane":
            membrane = species[1].split(",")
        else:
            raise SystemExit(f"unknown option {species[0]}")
        species = species[2:]
    if membrane:
        surfaces = series(os.path.join(out, "membrane.pvd"))
        assert len(surfaces) >= min_snapshots, f"{len(surfaces)} membrane snapshots < {min_snapshots}"
        vertices = None
        for t, f in surfaces:
            m = meshio.read(os.path.join(out, f))
            assert m.cells[0].type == "triangle" and len(m.cells[0].data) > 0, f
            assert vertices in (None, len(m.points)), f"{f}: the membrane mesh changed"
            vertices = len(m.points)
            for name in membrane:
                assert np.all(np.isfinite(m.point_data[name])), f"{f}: {name} not finite"
        print(f"{len(surfaces)} membrane snapshots of {vertices} vertices read by meshio")
    elements = series(os.path.join(out, "elements.pvd"))
    cells = series(os.path.join(out, "cells.pvd"))
    assert len(elements) >= min_snapshots, f"{len(elements)} snapshots < {min_snapshots}"
    assert [t for t, _ in elements] == [t for t, _ in cells]
    leftovers = [f for f in os.listdir(out) if ".tmp" in f]
    assert not leftovers, f"temporary files left: {leftovers}"
    for (t, ef), (_, cf) in zip(elements, cells):
        em = meshio.read(os.path.join(out, ef))
        cm = meshio.read(os.path.join(out, cf))
        for m in (em, cm):
            for name, values in m.point_data.items():
                if name.endswith("_gradient"):  # sampled field gradients are 3-vectors
                    assert values.ndim == 2 and values.shape[1] == 3, f"{name}: expected (n, 3), got {values.shape}"
                else:
                    assert values.ndim == 1, f"{name}: scalar arrays should be one-dimensional, got {values.shape}"
        n_el, n_cells = len(em.points), len(cm.points)
        assert n_el > 0 and n_cells > 0
        assert em.cells[0].type == "vertex" and len(em.cells[0].data) == n_el
        for name in ["cell_id", "element_type", "suprabasal", *species]:
            assert name in em.point_data, f"{ef}: no point array {name}"
            assert len(em.point_data[name]) == n_el
        for name in ["cell_id", "element_count", "adhesive_elements", "suprabasal", *species,
                     *[f"membrane_{m}" for m in membrane]]:
            assert name in cm.point_data, f"{cf}: no point array {name}"
        ids_el = np.unique(em.point_data["cell_id"])
        ids_cells = np.sort(cm.point_data["cell_id"])
        assert np.array_equal(ids_el, ids_cells), f"{ef}/{cf}: cell ids differ"
        assert cm.point_data["element_count"].sum() == n_el
        counts = np.bincount(np.searchsorted(ids_cells, em.point_data["cell_id"]), minlength=n_cells)
        assert np.array_equal(counts, cm.point_data["element_count"]), "element counts disagree"
        adhesive = np.bincount(np.searchsorted(ids_cells, em.point_data["cell_id"]),
                               weights=(em.point_data["element_type"] == 1), minlength=n_cells)
        assert np.array_equal(adhesive, cm.point_data["adhesive_elements"]), "adhesive counts disagree"
        assert np.all(np.isfinite(em.points))
        if sphere is None:
            assert em.points[:, 2].min() >= 0.0
            assert em.points[:, 0].min() >= 0.0 and em.points[:, 1].min() >= 0.0
        else:
            r = np.linalg.norm(em.points, axis=1)
            assert r.min() >= sphere - 0.1 and r.max() <= sphere + 4.0, f"radii {r.min()} .. {r.max()}"
        for name in species:
            assert np.all(em.point_data[name] >= 0.0), f"negative {name}"
        print(f"t={t:g}: {n_cells} cells, {n_el} elements, {ef} and {cf} read by meshio")
    print("output ok")


if __name__ == "__main__":
    main()
