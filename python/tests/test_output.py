"""Tests of tissue.output against independent readings of the same files.

What read_run returns is compared with the files read another way: the .vtu header's NumberOfPoints (a
regular expression), the .pvd index (ElementTree), the checkpoint (h5py directly), the scenario (tomllib),
the .vtu arrays (meshio), and hand-written VTK files in the encodings the engine does not write today.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np
import pytest

from tissue import output
from tissue.output import read_run, read_snapshot

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def number_of_points(path):
    """NumberOfPoints of a .vtu file's <Piece>, read with a regular expression."""
    return int(re.search(r'NumberOfPoints="(\d+)"', Path(path).read_text()[:4096]).group(1))


def pvd_entries(path):
    """(times, file names) of a .pvd file, read with ElementTree."""
    sets = ET.parse(path).getroot().iter("DataSet")
    entries = [(float(d.get("timestep")), d.get("file")) for d in sets]
    return [t for t, _ in entries], [f for _, f in entries]


# --- run directory --------------------------------------------------------------------------------------

def test_run_record_series_and_checkpoints(runs):
    made = runs["epidermis"]
    run = read_run(made.path)
    assert run.record == json.loads((made.path / "run.json").read_text())
    assert run.record["status"] == "completed"
    assert run.record["steps"]["done"] == 20
    assert sorted(run.series) == sorted(p.stem for p in made.path.glob("*.pvd")) == ["cells", "elements"]
    for name, series in run.series.items():
        times, files = pvd_entries(made.path / f"{name}.pvd")
        np.testing.assert_array_equal(series.times, times)
        assert [f.name for f in series.files] == files
        assert list(series.steps) == [0, 5, 10, 15, 20]
        assert len(series) == 5
    assert [p.name for p in run.checkpoints] == ["checkpoint_000000020.h5"]
    assert run.checkpoint_steps == [20]


def test_points_equal_vtu_header_and_checkpoint_size(runs):
    made = runs["epidermis"]
    run = read_run(made.path)
    for name, table in (("cells", "cells"), ("elements", "elements")):
        series = run.series[name]
        for i in range(len(series)):
            snapshot = series[i]
            assert snapshot.points.shape == (number_of_points(series.files[i]), 3)
            assert snapshot.points.dtype == np.float32
            for values in snapshot.point_data.values():
                assert len(values) == len(snapshot.points)
        with h5py.File(run.checkpoints[-1]) as f:
            assert len(series.last().points) == f[f"tables/{table}"].attrs["size"]
    counts = [number_of_points(f) for f in run.series["cells"].files]
    assert counts[-1] > counts[0], "the test scenario should divide cells"


def test_snapshots_equal_meshio(runs):
    meshio = pytest.importorskip("meshio")
    for name, series in (("epidermis", "cells"), ("epidermis", "elements"), ("spot", "surface")):
        snapshot = read_run(runs[name].path).series[series].last()
        mesh = meshio.read(snapshot.path)
        np.testing.assert_array_equal(snapshot.points, mesh.points)
        assert snapshot.points.dtype == mesh.points.dtype
        assert sorted(snapshot.point_data) == sorted(mesh.point_data)
        for key, values in mesh.point_data.items():
            np.testing.assert_array_equal(snapshot.point_data[key], values)
            assert snapshot.point_data[key].dtype == values.dtype
        if series == "surface":
            np.testing.assert_array_equal(snapshot.faces, mesh.cells_dict["triangle"])
        else:
            assert snapshot.faces is None


def test_to_pandas_rows_per_step_equal_cell_counts(runs):
    made = runs["epidermis"]
    run = read_run(made.path)
    df = run.to_pandas("cells")
    counts = run.cell_counts()
    assert list(counts.columns) == ["step", "time", "cells"]
    assert list(counts["cells"]) == [number_of_points(f) for f in run.series["cells"].files]
    assert list(df.groupby("step").size()) == list(counts["cells"])
    times, _ = pvd_entries(made.path / "cells.pvd")
    assert list(df.groupby("step")["time"].first()) == times
    last = run.series["cells"].last()
    assert list(df.columns) == ["step", "time", "x", "y", "z"] + list(last.point_data)
    rows = df[df["step"] == last.step]
    np.testing.assert_array_equal(rows[["x", "y", "z"]].to_numpy(), last.points)
    np.testing.assert_array_equal(rows["cell_id"].to_numpy(), last.point_data["cell_id"])
    assert df["cell_id"].dtype == np.int64 and df["delta"].dtype == np.float32

    elements = run.to_pandas("elements")
    assert list(elements.groupby("step").size()) == [number_of_points(f) for f in run.series["elements"].files]


def test_to_pandas_splits_vector_arrays(tmp_path):
    """A 3-component array becomes <name>_x, _y, _z; a 4-component one <name>_0 .. _3."""
    write_vtu(tmp_path / "cells_000000007.vtu", "binary", {
        "v": np.arange(6, dtype=np.float32).reshape(2, 3), "q": np.arange(8, dtype=np.int32).reshape(2, 4)})
    (tmp_path / "cells.pvd").write_text(pvd_text([(0.5, "cells_000000007.vtu")]))
    (tmp_path / "run.json").write_text("{}")
    df = read_run(tmp_path).to_pandas()
    assert list(df.columns) == ["step", "time", "x", "y", "z", "v_x", "v_y", "v_z", "q_0", "q_1", "q_2", "q_3"]
    assert list(df["step"]) == [7, 7] and list(df["time"]) == [0.5, 0.5]
    assert list(df["v_z"]) == [2, 5] and list(df["q_3"]) == [3, 7]


# --- checkpoints ----------------------------------------------------------------------------------------

def test_checkpoint_equals_h5py_and_last_snapshot(runs):
    made = runs["epidermis"]
    run = read_run(made.path)
    checkpoint = run.checkpoint()
    assert checkpoint.step == run.series["elements"].steps[-1] == 20
    with h5py.File(run.checkpoints[-1]) as f:
        for table in ("cells", "elements"):
            size = int(f[f"tables/{table}"].attrs["size"])
            assert checkpoint.table_attrs[table]["size"] == size
            assert sorted(checkpoint.tables[table]) == sorted(f[f"tables/{table}"])
            for column, dataset in f[f"tables/{table}"].items():
                values = checkpoint.tables[table][column]
                if dataset.ndim == 1:
                    assert values.shape == (size,)
                    np.testing.assert_array_equal(values, dataset[()])
                else:
                    assert values.shape == (size, dataset.shape[0])
                    np.testing.assert_array_equal(values, dataset[()].T)
                assert values.dtype == dataset.dtype
        assert checkpoint.header["model"] == f.attrs["model"].decode()
        assert checkpoint.header["seed"] == f.attrs["seed"]

    elements = run.series["elements"].last()
    xyz = np.stack([checkpoint.tables["elements"][c] for c in ("x", "y", "z")], axis=1)
    assert xyz.dtype == elements.points.dtype == np.float32
    np.testing.assert_array_equal(xyz, elements.points)
    cells = run.series["cells"].last()
    centres = np.stack([checkpoint.tables["cells"][c] for c in ("cx", "cy", "cz")], axis=1)
    np.testing.assert_array_equal(centres, cells.points)
    np.testing.assert_array_equal(checkpoint.tables["cells"]["id"], cells.point_data["cell_id"])
    # row i of the (size, species) column is cell i: each species equals one of the snapshot's arrays
    species = checkpoint.tables["cells"]["species"]
    for k in range(species.shape[1]):
        assert any(np.array_equal(species[:, k], v) for v in cells.point_data.values()), k


def test_checkpoint_header_and_scenario(runs):
    made = runs["epidermis"]
    run = read_run(made.path)
    checkpoint = run.checkpoint(20)
    text = made.scenario.read_text()
    assert checkpoint.scenario == text
    assert checkpoint.header["scenario_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert checkpoint.header["scenario_sha256"] == run.record["scenario"]["sha256"]
    assert checkpoint.header["format"] == "tissue checkpoint"
    assert checkpoint.header["status"] == "ok"
    assert checkpoint.time == pytest.approx(run.series["cells"].times[-1])
    assert checkpoint.output["cells.pvd"]["files"] == [f.name for f in run.series["cells"].files]
    np.testing.assert_array_equal(checkpoint.output["cells.pvd"]["times"], run.series["cells"].times)


# --- grids ----------------------------------------------------------------------------------------------

def test_grid_2d_shape_spacing_and_values(runs):
    made = runs["grid2d"]
    nx, ny, h = made.toml["grid"]["nx"], made.toml["grid"]["ny"], made.toml["grid"]["h"]
    run = read_run(made.path)
    series = run.series["rd"]
    assert list(series.steps) == [0, 10, 20]
    snapshot = series.last()
    assert snapshot.kind == "ImageData"
    assert snapshot.grid_shape == (1, ny, nx)
    assert snapshot.grid_data["a"].shape == (ny, nx)
    np.testing.assert_array_equal(snapshot.spacing, [h, h, h])
    np.testing.assert_array_equal(snapshot.origin, [h / 2, h / 2, 0])
    points = snapshot.points
    assert points.shape == (nx * ny, 3)
    np.testing.assert_allclose(points[1] - points[0], [h, 0, 0])
    np.testing.assert_allclose(points[nx] - points[0], [0, h, 0])
    fields = run.checkpoint().fields["rd"]
    assert fields["a"].shape == (1, ny, nx)
    for species in ("a", "b"):
        np.testing.assert_array_equal(snapshot.grid_data[species], fields[species][0])
    assert run.checkpoint().field_attrs["rd"]["grid_spacing"] == h
    assert [p.name for p in run.images["a"]] == ["a_000000000.png", "a_000000010.png", "a_000000020.png"]


def test_grid_3d_shape_and_values(runs):
    made = runs["grid3d"]
    grid = made.toml["grid"]
    nx, ny, nz = grid["nx"], grid["ny"], grid["nz"]
    assert len({nx, ny, nz}) == 3, "distinct sizes, so that a transposed axis shows"
    run = read_run(made.path)
    snapshot = run.series["rd"].last()
    assert snapshot.grid_shape == (nz, ny, nx)
    assert snapshot.grid_data["b"].shape == (nz, ny, nx)
    assert snapshot.grid_data["b"].dtype == np.float32  # precision = "float"
    assert snapshot.points.shape == (nx * ny * nz, 3)
    np.testing.assert_allclose(snapshot.points[nx * ny] - snapshot.points[0], [0, 0, 1])
    checkpoint = run.checkpoint()
    assert checkpoint.step == snapshot.step == 10
    for species in ("a", "b"):
        np.testing.assert_array_equal(snapshot.grid_data[species], checkpoint.fields["rd"][species])


def test_graph_image_and_structured_grid(runs):
    made = runs["graph"]
    n = made.toml["graph"]["n"]
    run = read_run(made.path)
    image, surface = run.series["graph"].last(), run.series["surface"].last()
    assert image.kind == "ImageData" and surface.kind == "StructuredGrid"
    assert image.grid_shape == surface.grid_shape == (1, n + 1, n + 1)
    assert surface.points.dtype == np.float64
    np.testing.assert_array_equal(surface.points[:, 2], surface.point_data["phi"])  # the graph z = phi
    np.testing.assert_allclose(surface.points[:, :2], image.points[:, :2])
    np.testing.assert_array_equal(image.grid_data["phi"], surface.grid_data["phi"])
    # the checkpoint holds the solver's state, whose boundary nodes are Neumann mirrors filled only when
    # the snapshot is written: the interior is the same
    phi = run.checkpoint().fields["graph"]["phi"]
    assert phi.shape == (n + 1, n + 1)
    np.testing.assert_array_equal(phi[1:-1, 1:-1], image.grid_data["phi"][1:-1, 1:-1])


# --- surfaces -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["spot", "snakeskin"])
def test_surface_mesh_equals_checkpoint(runs, name):
    run = read_run(runs[name].path)
    snapshot = run.series["surface"].last()
    field = run.checkpoint().fields["surface"]
    assert snapshot.faces.shape == field["mesh/triangles"].shape
    np.testing.assert_array_equal(snapshot.faces, field["mesh/triangles"])
    assert snapshot.points.shape == field["mesh/points"].shape
    np.testing.assert_array_equal(snapshot.points, field["mesh/points"].astype(np.float32))
    for species, values in snapshot.point_data.items():
        np.testing.assert_array_equal(values, field[species])


# --- names, errors --------------------------------------------------------------------------------------

def test_wrong_names_raise_key_error_naming_available(runs):
    run = read_run(runs["epidermis"].path)
    with pytest.raises(KeyError, match="no series 'cell'.*'cells', 'elements'"):
        run.series["cell"]
    with pytest.raises(KeyError, match="'cells', 'elements'"):
        run.to_pandas("tissue")
    with pytest.raises(KeyError, match="step 3 .*available steps: 20"):
        run.checkpoint(3)
    checkpoint = run.checkpoint()
    with pytest.raises(KeyError, match="no table 'cell'.*'cells', 'elements'"):
        checkpoint.tables["cell"]
    with pytest.raises(KeyError, match="no column 'xx' in table 'elements'.*'x', 'y', 'z'"):
        checkpoint.tables["elements"]["xx"]
    with pytest.raises(KeyError, match="no field 'rd'; available: none"):
        checkpoint.fields["rd"]
    with pytest.raises(KeyError, match="no point array 'Delta'.*'delta'"):
        run.series["cells"].last().point_data["Delta"]
    with pytest.raises(KeyError, match="no series 'cells'; available: 'rd'"):
        read_run(runs["grid2d"].path).cell_counts()
    with pytest.raises(KeyError, match="no array 'c' in field 'rd'.*'a', 'b'"):
        read_run(runs["grid2d"].path).checkpoint().fields["rd"]["c"]


def test_read_run_refuses_a_directory_without_run_json(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run.json"):
        read_run(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such run directory"):
        read_run(tmp_path / "missing")


# --- a running run --------------------------------------------------------------------------------------

def test_read_a_running_run_then_its_interrupted_end(tissue_bin, tmp_path):
    """A run read while it writes lists only complete snapshots; after SIGTERM it reads as interrupted."""
    out = tmp_path / "out"
    command = [str(tissue_bin), "run", str(SCENARIOS / "epidermis.toml"), "--steps", "1000000",
               "--every", "2", "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (out / "cells.pvd").exists() and len(pvd_entries(out / "cells.pvd")[1]) >= 3:
                break
            time.sleep(0.05)
        run = read_run(out)
        assert run.record["status"] == "running"
        assert len(run.series["cells"]) >= 3
        for i in range(len(run.series["cells"])):
            assert len(run.series["cells"][i].points) == 100
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    assert process.returncode == 143
    run = read_run(out)
    assert run.record["status"] == "interrupted"
    assert run.checkpoint().step == run.series["cells"].steps[-1]


# --- cost -----------------------------------------------------------------------------------------------

def test_long_series_reads_each_file_once(runs, tmp_path, monkeypatch):
    """300 snapshots: to_pandas parses each file once, cell_counts decodes none; prints the times."""
    source = read_run(runs["epidermis"].path).series["cells"].files[-1]
    n = number_of_points(source)
    entries = []
    for i in range(300):
        name = f"cells_{i:09d}.vtu"
        shutil.copyfile(source, tmp_path / name)
        entries.append((0.01 * i, name))
    (tmp_path / "cells.pvd").write_text(pvd_text(entries))
    (tmp_path / "run.json").write_text('{"status": "completed"}')
    parsed = []
    parse = output._parse_vtk_xml
    monkeypatch.setattr(output, "_parse_vtk_xml", lambda path: parsed.append(path) or parse(path))

    start = time.perf_counter()
    run = read_run(tmp_path)
    counts = run.cell_counts()
    counted = time.perf_counter() - start
    assert parsed == [] and list(counts["cells"]) == [n] * 300

    start = time.perf_counter()
    df = run.to_pandas()
    read = time.perf_counter() - start
    assert sorted(parsed) == sorted(tmp_path / name for _, name in entries)
    assert len(df) == 300 * n and list(df.groupby("step").size()) == [n] * 300
    print(f"300 snapshots of {n} cells: cell_counts {counted:.3f} s, to_pandas {read:.3f} s")


# --- encodings ------------------------------------------------------------------------------------------

def pvd_text(entries):
    """A .pvd collection of (time, file) entries."""
    sets = "".join(f'    <DataSet timestep="{t!r}" group="" part="0" file="{f}"/>\n' for t, f in entries)
    return ('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">\n'
            f"  <Collection>\n{sets}  </Collection>\n</VTKFile>\n")


_TYPES = {"float32": "Float32", "float64": "Float64", "int32": "Int32", "int64": "Int64", "uint8": "UInt8"}


def write_vtu(path, encoding, arrays, points=None, triangles=None):
    """A .vtu file written to the VTK XML spec, independently of the engine: point data ``arrays``
    (name -> (n,) or (n, k)), points (n, 3) float32 (default: (i, 0, 0)), triangles (m, 3) or vertices.
    ``encoding``: "ascii", "binary" (inline base64, header and data encoded separately), "appended-raw" or
    "appended-base64" (header and data encoded as one stream)."""
    n = len(next(iter(arrays.values())))
    points = np.stack([np.arange(n), np.zeros(n), np.zeros(n)], 1).astype(np.float32) if points is None else points
    if triangles is None:
        connectivity, offsets, types = np.arange(n), np.arange(1, n + 1), np.ones(n, np.uint8)
    else:
        connectivity, offsets = triangles.ravel(), 3 * np.arange(1, len(triangles) + 1)
        types = np.full(len(triangles), 5, np.uint8)
    appended = bytearray()

    def data_array(name, values, components=1):
        values = np.ascontiguousarray(values)
        head = f'<DataArray type="{_TYPES[values.dtype.name]}"'
        head += f' Name="{name}"' if name else ""
        head += f' NumberOfComponents="{components}"' if components != 1 else ""
        raw = values.tobytes()
        count = np.array([len(raw)], np.uint64).tobytes()
        if encoding == "ascii":
            return head + ' format="ascii">' + " ".join(map(str, values.ravel().tolist())) + "</DataArray>\n"
        if encoding == "binary":
            text = (base64.b64encode(count) + base64.b64encode(raw)).decode()
            return head + f' format="binary">\n{text}\n</DataArray>\n'
        offset = len(appended)
        appended.extend(count + raw if encoding == "appended-raw" else base64.b64encode(count + raw))
        return head + f' format="appended" offset="{offset}"/>\n'

    body = "".join(data_array(k, v, 1 if v.ndim == 1 else v.shape[1]) for k, v in arrays.items())
    xml = ('<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" '
           f'header_type="UInt64">\n<UnstructuredGrid>\n<Piece NumberOfPoints="{n}" '
           f'NumberOfCells="{len(offsets)}">\n<PointData>\n{body}</PointData>\n<Points>\n'
           + data_array("", points, 3) + "</Points>\n<Cells>\n"
           + data_array("connectivity", connectivity.astype(np.int64))
           + data_array("offsets", offsets.astype(np.int64))
           + data_array("types", types) + "</Cells>\n</Piece>\n</UnstructuredGrid>\n")
    data = xml.encode()
    if encoding.startswith("appended"):
        kind = "raw" if encoding == "appended-raw" else "base64"
        data += f'<AppendedData encoding="{kind}">\n   _'.encode() + bytes(appended) + b"\n</AppendedData>\n"
    Path(path).write_bytes(data + b"</VTKFile>\n")


@pytest.mark.parametrize("encoding", ["ascii", "binary", "appended-raw", "appended-base64"])
def test_vtk_encodings(tmp_path, encoding):
    rng = np.random.default_rng(1)
    arrays = {"f": rng.random(7).astype(np.float32), "d": rng.random(7), "i": np.arange(7, dtype=np.int64),
              "t": np.array([0, 1, 1, 0, 2, 1, 0], np.int32), "v": rng.random((7, 3)).astype(np.float32)}
    points = rng.random((7, 3)).astype(np.float32)
    triangles = np.array([[0, 1, 2], [2, 3, 4], [4, 5, 6]])
    write_vtu(tmp_path / "surface_000000042.vtu", encoding, arrays, points, triangles)
    snapshot = read_snapshot(tmp_path / "surface_000000042.vtu")
    assert snapshot.step == 42
    np.testing.assert_array_equal(snapshot.points, points)
    np.testing.assert_array_equal(snapshot.faces, triangles)
    assert list(snapshot.point_data) == list(arrays)
    for name, values in arrays.items():
        np.testing.assert_array_equal(snapshot.point_data[name], values)
        assert snapshot.point_data[name].dtype == values.dtype
        assert snapshot.point_data[name].flags.writeable


def test_compressed_vtk_is_refused(tmp_path):
    write_vtu(tmp_path / "c.vtu", "binary", {"f": np.zeros(2, np.float32)})
    text = (tmp_path / "c.vtu").read_text().replace('header_type="UInt64"',
                                                    'header_type="UInt64" compressor="vtkZLibDataCompressor"')
    (tmp_path / "c.vtu").write_text(text)
    with pytest.raises(NotImplementedError, match="compressed"):
        read_snapshot(tmp_path / "c.vtu")


def test_polydata_ascii(tmp_path):
    """A .vtp (PolyData) with two quads, written in ascii: points, point data and faces."""
    (tmp_path / "skin_000000003.vtp").write_text(
        '<?xml version="1.0"?>\n<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian">\n'
        '<PolyData>\n<Piece NumberOfPoints="6" NumberOfPolys="2">\n<PointData>\n'
        '<DataArray type="Float64" Name="u" format="ascii">0 0.5 1 1.5 2 2.5</DataArray>\n</PointData>\n'
        '<Points>\n<DataArray type="Float32" NumberOfComponents="3" format="ascii">\n'
        "0 0 0 1 0 0 2 0 0 0 1 0 1 1 0 2 1 0\n</DataArray>\n</Points>\n<Polys>\n"
        '<DataArray type="Int64" Name="connectivity" format="ascii">0 1 4 3 1 2 5 4</DataArray>\n'
        '<DataArray type="Int64" Name="offsets" format="ascii">4 8</DataArray>\n</Polys>\n'
        "</Piece>\n</PolyData>\n</VTKFile>\n")
    snapshot = read_snapshot(tmp_path / "skin_000000003.vtp")
    assert snapshot.kind == "PolyData" and snapshot.step == 3 and snapshot.grid_shape is None
    np.testing.assert_array_equal(snapshot.points[4], [1, 1, 0])
    np.testing.assert_array_equal(snapshot.point_data["u"], 0.5 * np.arange(6))
    np.testing.assert_array_equal(snapshot.faces, [[0, 1, 4, 3], [1, 2, 5, 4]])
