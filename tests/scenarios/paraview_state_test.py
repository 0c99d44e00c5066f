#!/usr/bin/env python3
"""ParaView opens every run directory's view.pvsm as intended, and `tissue render` draws it.

usage: paraview_state_test.py runs TISSUE SCENARIO_DIR TEST_SCENARIO_DIR WORK_DIR
       paraview_state_test.py load PVBATCH XVFB_RUN WORK_DIR
       paraview_state_test.py render TISSUE WORK_DIR

runs: short runs of an epidermis (cells of elements; no cell types, so coloured by the state `suprabasal`),
cell sorting (two cell types), a 3D grid (gray_scott_3d at 32^3) and a surface (chemotaxis on spot).
load: one pvbatch loads each view.pvsm with LoadState(..., data_directory=RUN_DIR) from another working
directory (paraview_load_state.py) and goes to the last time step. For each run: the number of points
ParaView reports for the elements (grid, surface) equals NumberOfPoints in the last snapshot file the .pvd
names (read here from the file's XML, not through ParaView), the colouring array is the cell type (else the
state flag, else the first species), the representation is the intended one (Point Gaussian, Slice through
the middle layer, Surface), the cells are listed and hidden, and the time steps are the .pvd's.
render: `tissue render` of the epidermis run writes a PNG of the requested size (decoded here with zlib)
that is not one flat colour.
"""
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zlib


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def last_snapshot(run_dir, pvd):
    """(times, path of the last snapshot) of a .pvd, read as XML."""
    datasets = ET.parse(os.path.join(run_dir, pvd)).getroot().iter("DataSet")
    entries = [(float(d.get("timestep")), d.get("file")) for d in datasets]
    return [t for t, _ in entries], os.path.join(run_dir, entries[-1][1])


def snapshot_header(path):
    """NumberOfPoints (a .vtu's Piece, or the product of an image's extent) and the point arrays' names, from
    the text of a VTK XML file (its arrays are inline base64: the tags are plain text)."""
    with open(path, "rb") as f:
        text = f.read().decode("ascii", "replace")
    m = re.search(r'NumberOfPoints="(\d+)"', text)
    if m:
        points = int(m.group(1))
    else:
        e = [int(v) for v in re.search(r'WholeExtent="([^"]+)"', text).group(1).split()]
        points = (e[1] - e[0] + 1) * (e[3] - e[2] + 1) * (e[5] - e[4] + 1)
    point_data = text[text.index("<PointData>"):text.index("</PointData>")]
    return points, re.findall(r'<DataArray [^>]*Name="([^"]+)"', point_data)


def read_png(path):
    """(width, height, rows of pixel bytes) of an 8-bit RGB or RGBA PNG without interlace, unfiltered."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        fail(f"{path}: unexpected PNG format (depth {depth}, colour type {color}, interlace {interlace})")
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


# name: (scenario, steps, every, series of the points checked, colouring array, representation); the 3D grid is
# gray_scott_3d at 32^3 (written beside the runs; its patch scaled with it)
CASES = {
    "epidermis": ("{tests}/epidermis_short.toml", 400, 200, "elements.pvd", "suprabasal", "Point Gaussian"),
    "cell_sorting": ("{scenarios}/cell_sorting.toml", 40, 20, "elements.pvd", "cell_type", "Point Gaussian"),
    "grid_3d": ("{work}/gray_scott_3d_32.toml", 4, 2, "rd.pvd", "a", "Slice"),
    "surface": ("{tests}/surface_short.toml", 40, 20, "surface.pvd", "fn", "Surface"),
}
GRID_LAYERS = 32
# the names of multi-component columns' components, where a model gives them (modules/epidermis/README.md)
COMPONENT_NAMES = {
    ("epidermis", "cells", "species"): ["notch", "delta", "bound", "ovol2", "ovol1", "cmyc", "adhesion"],
}


def run_pvbatch(xvfb_run, pvbatch, script, args):
    """pvbatch on `script` under its own X server (xvfb-run): the display search starts at a number of this
    process's own, and a start that lost the race for a display (two xvfb-run -a at once can pick the same
    one; pvbatch then aborts with "bad X server connection") is retried, twice at most."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), script)
    for attempt in range(3):
        server = 100 + (os.getpid() * 7 + attempt * 131) % 800
        proc = subprocess.run([xvfb_run, "-a", f"--server-num={server}", pvbatch, script] + list(args),
                              capture_output=True, text=True)
        if proc.returncode == 0 or "bad X server connection" not in proc.stdout + proc.stderr:
            break
        print(f"pvbatch lost its X display (attempt {attempt + 1}); again")
    return proc


def runs(tissue, scenarios, tests, work):
    """The short runs, each into WORK/<case>, each with its view.pvsm."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with open(os.path.join(scenarios, "gray_scott_3d.toml")) as f:
        text = f.read()
    for key, value in (("nx", GRID_LAYERS), ("ny", GRID_LAYERS), ("nz", GRID_LAYERS), ("patch_size", 8)):
        text, n = re.subn(rf"(?m)^{key} = \d+", f"{key} = {value}", text)
        if n != 1:
            fail(f"gray_scott_3d.toml: no single '{key} = ' line")
    with open(os.path.join(work, "gray_scott_3d_32.toml"), "w") as f:
        f.write(text)
    for name, (scenario, steps, every, *_rest) in CASES.items():
        scenario = scenario.format(tests=tests, scenarios=scenarios, work=work)
        out = os.path.join(work, name)
        started = time.time()
        proc = subprocess.run([tissue, "run", scenario, "--backend", "cpu", "--steps", str(steps), "--every",
                               str(every), "--out", out], capture_output=True, text=True)
        if proc.returncode != 0:
            fail(f"tissue run {scenario}: {proc.stderr.strip()}")
        if not os.path.isfile(os.path.join(out, "view.pvsm")):
            fail(f"{name}: no view.pvsm")
        print(f"{name}: ran {steps} steps in {time.time() - started:.1f} s")


def load(pvbatch, xvfb_run, work):
    """One pvbatch loads every run's view.pvsm; what it reports is compared with the files."""
    started = time.time()
    dirs = [os.path.join(work, name) for name in CASES]
    proc = run_pvbatch(xvfb_run, pvbatch, "paraview_load_state.py", dirs)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("REPORT ")]
    if proc.returncode != 0 or not lines:
        fail(f"pvbatch exit {proc.returncode}: {(proc.stdout + proc.stderr)[-3000:]}")
    report = json.loads(lines[-1][len("REPORT "):])
    print(f"pvbatch loaded {len(dirs)} states in {time.time() - started:.1f} s")

    problems = []
    for name, (scenario, steps, every, pvd, color, representation) in CASES.items():
        run_dir = os.path.join(work, name)
        got = report[os.path.abspath(run_dir)]
        times, snapshot = last_snapshot(run_dir, pvd)
        points, arrays = snapshot_header(snapshot)
        source = got["sources"].get(pvd)
        if source is None:
            problems.append(f"{name}: ParaView shows no source of {pvd}: {sorted(got['sources'])}")
            continue
        print(f"{name}: {pvd}: ParaView {source['points']} points, {os.path.basename(snapshot)} {points}; "
              f"{source['representation']} coloured by {source['color']}")
        if os.path.dirname(source["file"]) != os.path.abspath(run_dir):
            problems.append(f"{name}: the reader opened {source['file']}, not the run directory's {pvd}")
        if source["points"] != points:
            problems.append(f"{name}: ParaView reports {source['points']} points at the last time step, "
                            f"{os.path.basename(snapshot)} holds {points}")
        if source["color"] != ["POINTS", color] or color not in arrays:
            problems.append(f"{name}: coloured by {source['color']}, expected point array {color} ({arrays})")
        if source["representation"] != representation or not source["visible"]:
            problems.append(f"{name}: {source['representation']} (visible {source['visible']}), "
                            f"expected a visible {representation}")
        if [round(t, 9) for t in got["timesteps"]] != [round(t, 9) for t in times] or \
                abs(got["time"] - times[-1]) > 1e-9:
            problems.append(f"{name}: time steps {got['timesteps']} at {got['time']}, the .pvd has {times}")
        if representation == "Point Gaussian" and not source["radius"] > 0:
            problems.append(f"{name}: sphere radius {source['radius']}")
        if representation == "Slice" and source["slice"] != GRID_LAYERS // 2:
            problems.append(f"{name}: slice {source['slice']}, expected the middle layer {GRID_LAYERS // 2}")
        cells = got["sources"].get("cells.pvd")
        if pvd == "elements.pvd" and (cells is None or cells["visible"]):
            problems.append(f"{name}: the cells should be listed and hidden: {cells}")
    if problems:
        fail("; ".join(problems))
    print(f"ok: {len(CASES)} states loaded as intended")


def checkpoints(pvbatch, xvfb_run, work):
    """Each run's checkpoint .xdmf opened with ParaView's default reader for it (Xdmf3): every table with
    coordinates a point cloud of its size, species under their names with the stored values, grids and
    surfaces with their nodes; compared with the checkpoint read by h5py."""
    import h5py
    import numpy as np

    files = {name: sorted(glob.glob(os.path.join(work, name, "checkpoint_*.xdmf")))[-1] for name in CASES}
    proc = run_pvbatch(xvfb_run, pvbatch, "paraview_open_checkpoint.py", list(files.values()))
    lines = [l for l in proc.stdout.splitlines() if l.startswith("REPORT ")]
    if proc.returncode != 0 or not lines:
        fail(f"pvbatch exit {proc.returncode}: {(proc.stdout + proc.stderr)[-3000:]}")
    report = json.loads(lines[-1][len("REPORT "):])
    problems = []
    for name, xdmf in files.items():
        got = report[xdmf]
        if got["reader"] not in ("Xdmf3ReaderS", "Xdmf3ReaderT"):
            problems.append(f"{name}: opened by {got['reader']}, not ParaView's default XDMF 3 reader")
        # the reader's blocks follow the file's grids: the tables with coordinates, then the fields
        blocks = got["blocks"]
        with h5py.File(xdmf[:-len(".xdmf")] + ".h5", "r") as h5:
            expected = {}  # block -> (points, {array: values})
            for table in ("cells", "elements"):
                group = h5["tables"][table]
                size = int(group.attrs["size"])
                if size == 0 or ("cx" not in group and "x" not in group):
                    continue
                arrays = {}
                for column, data in group.items():
                    data = data[()]
                    if data.ndim == 1:
                        arrays[column] = data
                        continue
                    # one array per component, named after it (the gene network's species, in its order),
                    # else <column>_<k>
                    names = COMPONENT_NAMES.get((name, table, column),
                                                [f"{column}_{k}" for k in range(data.shape[0])])
                    for k, label in enumerate(names):
                        arrays[label] = data[k]
                for axis in ("x", "y", "z", "cx", "cy", "cz"):
                    arrays.pop(axis, None)
                expected[table] = (size, arrays)
            for field, group in h5["fields"].items():
                # <species>_compensation: restart state of compensated summation, not for viewers
                arrays = {k: v[()] for k, v in group.items()
                          if isinstance(v, h5py.Dataset) and not k.endswith("_compensation")}
                points = "mesh" in group and group["mesh"]["points"].shape[0] or next(iter(arrays.values())).size
                expected[field] = (points, arrays)
        if len(blocks) != len(expected):
            problems.append(f"{name}: ParaView shows {len(blocks)} blocks, the checkpoint has {list(expected)}")
            continue
        for b, (block, (points, arrays)) in zip(blocks, expected.items()):
            if b["points"] != points:
                problems.append(f"{name}: {block}: ParaView {b['points']} points, the checkpoint {points}")
            for array, values in arrays.items():
                shown = b["arrays"].get(array)
                total = float(np.asarray(values, dtype=np.float64).sum())
                if shown is None:
                    problems.append(f"{name}: {block}: no array {array} in {sorted(b['arrays'])}")
                elif shown[0] != values.size or abs(shown[1] - total) > 1e-6 * max(1.0, abs(total)):
                    problems.append(f"{name}: {block}.{array}: ParaView {shown}, the checkpoint "
                                    f"[{values.size}, {total}]")
        print(f"{name}: {os.path.basename(xdmf)}: {got['reader']}, "
              + ", ".join(f"{block} {b['points']} points, {len(b['arrays'])} arrays"
                          for block, b in zip(expected, got["blocks"])))
    if problems:
        fail("; ".join(problems))
    print(f"ok: {len(files)} checkpoints open in ParaView with their points and named arrays")


def render(tissue, work):
    """`tissue render` of the epidermis run: a PNG of the requested size that is not one flat colour."""
    png, size = os.path.join(work, "epidermis.png"), (320, 240)
    if os.path.exists(png):
        os.remove(png)
    started = time.time()
    proc = subprocess.run([tissue, "render", os.path.join(work, "epidermis"), png, "--size",
                           f"{size[0]}x{size[1]}"], capture_output=True, text=True)
    if proc.returncode != 0 or not os.path.isfile(png):
        fail(f"tissue render: exit {proc.returncode}: {proc.stderr.strip()}")
    width, height, rows, bpp = read_png(png)
    colours = {row[i:i + bpp] for row in rows for i in range(0, len(row), bpp)}
    print(f"{proc.stdout.strip()}: {width}x{height}, {len(colours)} colours, {time.time() - started:.1f} s")
    if (width, height) != size:
        fail(f"the image is {width}x{height}, asked for {size[0]}x{size[1]}")
    if len(colours) < 16:
        fail(f"the image has only {len(colours)} colours: not a picture of the run")
    print("ok: rendered")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"runs": runs, "load": load, "render": render, "checkpoints": checkpoints}[mode](*args)
