#!/usr/bin/python3
"""Timeline of an epidermis run: one line per snapshot of cells.pvd.

usage: epidermis_timeline.py RUN_DIR

Prints the time, cell count, adherent cells (those that own adhesive elements),
cells in the suprabasal (high Ovol1) state, their median element count, and the height of the highest
cell centre. Needs meshio and numpy (Debian: python3-meshio; run with /usr/bin/python3).
"""
import os
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np


def main():
    run = sys.argv[1]
    root = ET.parse(os.path.join(run, "cells.pvd")).getroot()
    print(f"{'time':>8} {'cells':>6} {'adherent':>9} {'suprabasal':>11} {'supra elements':>15} {'top centre z':>13}")
    for dataset in root.iter("DataSet"):
        mesh = meshio.read(os.path.join(run, dataset.get("file")))
        data = {k: np.asarray(v).ravel() for k, v in mesh.point_data.items()}
        supra = data["suprabasal"] == 1
        elements = np.median(data["element_count"][supra]) if supra.any() else 0
        print(f"{float(dataset.get('timestep')):8g} {len(mesh.points):6d} {int((data['adhesive_elements'] > 0).sum()):9d} "
              f"{int(supra.sum()):11d} {elements:15g} {mesh.points[:, 2].max():13.3f}")


if __name__ == "__main__":
    main()
