"""Read a tissue run directory (finished or still running) into NumPy arrays and pandas DataFrames.

A run directory (docs/runs.md) holds ``run.json``, ``.pvd`` series of VTK XML snapshots (``.vtu`` point
clouds and triangle meshes, ``.vti`` image data, ``.vts`` structured grids, possibly ``.vtp``), and
HDF5 checkpoints ``checkpoint_<step>.h5`` (layout in engine/io/checkpoint.hpp)::

    from tissue.output import read_run
    run = read_run("runs/epidermis")
    run.cell_counts()                 # DataFrame: step, time, cells
    cells = run.to_pandas("cells")    # one row per cell and snapshot
    snap = run.series["rd"].last()    # a grid snapshot
    snap.grid_data["a"]               # (nz, ny, nx), or (ny, nx) for a 2D grid
    ckpt = run.checkpoint()           # the newest checkpoint
    ckpt.tables["elements"]["x"]      # (size,) float32

The VTK files are parsed here (``xml.etree`` and ``base64``), not through meshio: meshio does not read
ImageData, and one reader for every kind keeps names, dtypes and shapes the same across kinds. Supported
encodings: inline binary (what the engine writes: base64 of a UInt64 byte count, then base64 of the
bytes), ascii, and appended data (raw or base64; older engine versions wrote raw appended data).
Compressed files (a ``compressor`` attribute, as ParaView may write) are refused with
NotImplementedError.

Units are the scenario's: positions and grid spacing in its length units, times in its time units.

Cost: ``read_run`` reads ``run.json`` and the ``.pvd`` indices only. A snapshot file is read when it is
asked for (``series[i]``), every time it is asked for (nothing is cached), so a series of any length
costs memory for one snapshot at a time and reading all of it is linear in its length.
``cell_counts()`` reads only the first bytes of each cells file (its ``NumberOfPoints``).

What a call sees is the directory at that time: the engine replaces every file atomically, so a running
run's ``.pvd`` files list only complete snapshots; call ``read_run`` again to see newer ones.
"""

import base64
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

__all__ = ["read_run", "read_snapshot", "read_checkpoint", "Run", "Series", "Snapshot", "Checkpoint"]


class _Names(dict):
    """A dict whose missing keys raise a KeyError that names the keys there are.

    Used for every name lookup of this module (series, point arrays, tables, columns, fields), so that a
    misspelt name says what was available.
    """

    def __init__(self, what, items=(), where=""):
        super().__init__(items)
        self._what = what
        self._where = where

    def __missing__(self, key):
        available = ", ".join(repr(k) for k in sorted(self)) or "none"
        raise KeyError(f"no {self._what} {key!r}{self._where}; available: {available}")


# ---------------------------------------------------------------------------------------------------------
# VTK XML files
# ---------------------------------------------------------------------------------------------------------

_VTK_TYPES = {
    "Int8": "i1", "UInt8": "u1", "Int16": "i2", "UInt16": "u2", "Int32": "i4", "UInt32": "u4",
    "Int64": "i8", "UInt64": "u8", "Float32": "f4", "Float64": "f8",
}

# VTK cell types that are polygons (their connectivity can be returned as faces).
_VTK_TRIANGLE, _VTK_POLYGON, _VTK_QUAD = 5, 7, 9

# The step in a snapshot's file name: <name>_<step>.<ext>, the engine writes 9 or more digits.
_STEP_IN_NAME = re.compile(r"_(\d+)\.[A-Za-z0-9]+$")


def _step_of(path):
    """The step encoded in a snapshot or checkpoint file name (``rd_000001000.vti`` -> 1000), or -1."""
    match = _STEP_IN_NAME.search(Path(path).name)
    return int(match.group(1)) if match else -1


class _VtkDecoder:
    """Decodes the DataArrays of one VTK XML file: byte order, header type and appended block."""

    def __init__(self, root, appended, appended_encoding, path):
        if root.get("compressor"):
            raise NotImplementedError(
                f"{path}: compressed VTK data ({root.get('compressor')}) is not supported; "
                "the tissue engine writes uncompressed files")
        self.order = ">" if root.get("byte_order") == "BigEndian" else "<"
        self.header = np.dtype(self.order + ("u8" if root.get("header_type") == "UInt64" else "u4"))
        self.appended = appended
        self.appended_encoding = appended_encoding
        self.path = path

    def array(self, element):
        """The values of a <DataArray> element: shape (n,) for 1 component, (n, k) for k components."""
        type_name = element.get("type")
        if type_name not in _VTK_TYPES:
            raise ValueError(f"{self.path}: DataArray {element.get('Name')!r} has unsupported type {type_name!r}")
        dtype = np.dtype(self.order + _VTK_TYPES[type_name])
        fmt = element.get("format", "ascii")
        if fmt == "ascii":
            values = np.array((element.text or "").split(), dtype=dtype)
        elif fmt == "binary":
            text = b"".join((element.text or "").encode("ascii").split())
            values = self._base64_block(text, 0, dtype)
        elif fmt == "appended":
            if self.appended is None:
                raise ValueError(f"{self.path}: appended DataArray but no <AppendedData>")
            offset = int(element.get("offset"))
            if self.appended_encoding == "raw":
                count = int(np.frombuffer(self.appended, self.header, 1, offset)[0])
                start = offset + self.header.itemsize
                values = np.frombuffer(bytearray(self.appended[start:start + count]), dtype)
            else:
                values = self._base64_block(self.appended, offset, dtype)
        else:
            raise ValueError(f"{self.path}: DataArray {element.get('Name')!r} has unknown format {fmt!r}")
        values = values.astype(dtype.newbyteorder("="), copy=False)
        components = int(element.get("NumberOfComponents", "1"))
        return values if components == 1 else values.reshape(-1, components)

    def _base64_block(self, text, offset, dtype):
        """Decodes a base64 block at ``text[offset:]``: the byte count (header type), then the bytes.

        The header and the data may be encoded separately (VTK and the engine do: the header's group ends
        with '=' padding) or as one stream.
        """
        header_chars = 4 * math.ceil(self.header.itemsize / 3)
        head = text[offset:offset + header_chars]
        if head.endswith(b"="):
            count = int(np.frombuffer(base64.b64decode(head), self.header)[0])
            start = offset + header_chars
            data = base64.b64decode(text[start:start + 4 * math.ceil(count / 3)])
        else:
            size = self.header.itemsize
            head_bytes = base64.b64decode(text[offset:offset + 4 * math.ceil(size / 3)])[:size]
            count = int(np.frombuffer(head_bytes, self.header)[0])
            whole = base64.b64decode(text[offset:offset + 4 * math.ceil((size + count) / 3)])
            data = whole[size:size + count]
        return np.frombuffer(bytearray(data[:count]), dtype)


def _parse_vtk_xml(path):
    """Root element of a VTK XML file and a decoder for its arrays (an appended block is cut out first:
    raw appended bytes are not XML)."""
    data = Path(path).read_bytes()
    appended, encoding = None, None
    start = data.find(b"<AppendedData")
    if start >= 0:
        tag_end = data.index(b">", start)
        match = re.search(rb'encoding="(\w+)"', data[start:tag_end])
        encoding = match.group(1).decode() if match else "raw"
        marker = data.index(b"_", tag_end)
        end = data.rindex(b"</AppendedData>")
        appended = data[marker + 1:end]
        if encoding != "raw":
            appended = b"".join(appended.split())
        data = data[:tag_end + 1] + data[end:]
    root = ET.fromstring(data)
    return root, _VtkDecoder(root, appended, encoding, path)


def _point_data(piece, decoder):
    """Point data of a <Piece>: name -> array of shape (n,) or (n, k)."""
    arrays = _Names("point array")
    point_data = piece.find("PointData")
    if point_data is not None:
        for element in point_data.findall("DataArray"):
            arrays[element.get("Name")] = decoder.array(element)
    return arrays


def _faces(connectivity, offsets, types=None):
    """Polygon connectivity as a (m, k) array when all m cells are polygons of k corners, else None."""
    if len(offsets) == 0:
        return None
    sizes = np.diff(np.concatenate([[0], offsets]))
    if types is not None and not np.isin(types, [_VTK_TRIANGLE, _VTK_POLYGON, _VTK_QUAD]).all():
        return None
    if sizes.min() < 3 or sizes.min() != sizes.max():
        return None
    return connectivity.astype(np.int64, copy=False).reshape(len(offsets), int(sizes[0]))


class Snapshot:
    """One snapshot of a series: a VTK XML file read whole.

    Attributes:
        path (Path): the file.
        time (float): simulated time of the snapshot [time units], from the .pvd (nan if read alone).
        step (int): the step, from the file name ``<name>_<step>.<ext>`` (-1 if it has none).
        kind (str): the VTK data set type: "UnstructuredGrid" (.vtu), "ImageData" (.vti),
            "StructuredGrid" (.vts) or "PolyData" (.vtp).
        point_data (dict): name -> array of shape (n,) for a scalar, (n, k) for k components, dtype as
            stored (float32 species, int32 cell type, int64 cell id, uint8 flags, ...), points in the
            file's order (for grids: x fastest, then y, then z).
        faces (ndarray or None): (m, k) int64 point indices of the m polygons of a surface mesh
            (k = 3 for the triangle meshes the engine writes); None for point clouds and grids.
        grid_shape (tuple or None): (nz, ny, nx) for ImageData and StructuredGrid, else None.
        origin, spacing (ndarray or None): (3,) float64 for ImageData: node (i, j, k) lies at
            origin + (i, j, k) * spacing [length units] (the engine puts grid nodes at cell centres,
            origin = h/2); None for other kinds.
        grid_data (dict): for ImageData and StructuredGrid, name -> the point array as a view of shape
            (nz, ny, nx), or (ny, nx) when nz == 1, with a trailing axis of k for k components;
            empty for other kinds.
    """

    def __init__(self, path, time=math.nan, step=None):
        self.path = Path(path)
        self.time = float(time)
        self.step = _step_of(self.path) if step is None else int(step)
        root, decoder = _parse_vtk_xml(self.path)
        self.kind = root.get("type")
        data_set = root.find(self.kind) if self.kind else None
        if data_set is None:
            raise ValueError(f"{self.path}: not a VTK XML data set (type {self.kind!r})")
        pieces = data_set.findall("Piece")
        if len(pieces) != 1:
            raise NotImplementedError(f"{self.path}: {len(pieces)} pieces; only single-piece files are read")
        piece = pieces[0]
        self.point_data = _point_data(piece, decoder)
        self.faces = None
        self.grid_shape = None
        self.origin = None
        self.spacing = None
        self._points = None
        if self.kind in ("ImageData", "StructuredGrid"):
            extent = [int(v) for v in piece.get("Extent", data_set.get("WholeExtent")).split()]
            self._extent = extent
            self.grid_shape = (extent[5] - extent[4] + 1, extent[3] - extent[2] + 1, extent[1] - extent[0] + 1)
        if self.kind == "ImageData":
            self.origin = np.array([float(v) for v in data_set.get("Origin", "0 0 0").split()])
            self.spacing = np.array([float(v) for v in data_set.get("Spacing", "1 1 1").split()])
        elif self.kind in ("UnstructuredGrid", "StructuredGrid", "PolyData"):
            self._points = decoder.array(piece.find("Points").find("DataArray")).reshape(-1, 3)
        else:
            raise NotImplementedError(f"{self.path}: VTK data set type {self.kind!r} is not supported")
        if self.kind == "UnstructuredGrid":
            cells = {e.get("Name"): decoder.array(e) for e in piece.find("Cells").findall("DataArray")}
            self.faces = _faces(cells["connectivity"], cells["offsets"], cells["types"])
        elif self.kind == "PolyData":
            polys = piece.find("Polys")
            if polys is not None:
                cells = {e.get("Name"): decoder.array(e) for e in polys.findall("DataArray")}
                self.faces = _faces(cells["connectivity"], cells["offsets"])
        self.grid_data = _Names("grid array")
        if self.grid_shape is not None:
            nz, ny, nx = self.grid_shape
            shape = (ny, nx) if nz == 1 else (nz, ny, nx)
            for name, values in self.point_data.items():
                self.grid_data[name] = values.reshape(shape + values.shape[1:])

    @property
    def points(self):
        """(n, 3) point coordinates [length units]: float32 for the engine's .vtu files, float64 for
        .vts; for ImageData computed from origin and spacing (float64, x fastest)."""
        if self._points is None:
            x0, _, y0, _, z0, _ = self._extent
            nz, ny, nx = self.grid_shape
            k, j, i = np.meshgrid(np.arange(nz) + z0, np.arange(ny) + y0, np.arange(nx) + x0, indexing="ij")
            index = np.stack([i.ravel(), j.ravel(), k.ravel()], axis=1)
            self._points = self.origin + index * self.spacing
        return self._points

    def __len__(self):
        """Number of points n."""
        if self._points is None:
            return int(np.prod(self.grid_shape))
        return len(self._points)

    def __repr__(self):
        return (f"Snapshot({self.path.name!r}, kind={self.kind}, step={self.step}, time={self.time:g}, "
                f"points={len(self)}, arrays={list(self.point_data)})")


def read_snapshot(path):
    """Reads one VTK XML file (.vtu, .vti, .vts, .vtp) as a Snapshot (time nan, step from the name)."""
    return Snapshot(path)


def _number_of_points(path):
    """NumberOfPoints of a .vtu/.vtp file, read from its first bytes without decoding any array."""
    with open(path, "rb") as f:
        head = b""
        while True:
            chunk = f.read(4096)
            head += chunk
            match = re.search(rb'<Piece[^>]*NumberOfPoints="(\d+)"', head)
            if match:
                return int(match.group(1))
            if not chunk or len(head) > 1 << 20:
                raise ValueError(f"{path}: no <Piece NumberOfPoints=...> in its first bytes")


# ---------------------------------------------------------------------------------------------------------
# Series
# ---------------------------------------------------------------------------------------------------------

def _component_suffixes(k):
    """Column suffixes of a k-component array in to_pandas: x, y (, z) for 2 or 3, else 0 .. k-1."""
    return ["x", "y", "z"][:k] if k in (2, 3) else [str(c) for c in range(k)]


class Series:
    """A .pvd time series: the snapshots of one output (cells, elements, a grid field, a surface).

    Reading the series reads only its .pvd index; ``series[i]`` reads snapshot i (each time it is asked).

    Attributes:
        name (str): the .pvd file's stem ("cells", "elements", "rd", "surface", ...).
        path (Path): the .pvd file.
        times (ndarray): (len,) float64 simulated times [time units], in the order of the index.
        steps (ndarray): (len,) int64 steps, from the file names (-1 where a name has none).
        files (list of Path): the snapshot files, absolute.
    """

    def __init__(self, path):
        self.path = Path(path)
        self.name = self.path.stem
        root = ET.parse(self.path).getroot()
        entries = [(float(d.get("timestep", "nan")), d.get("file")) for d in root.iter("DataSet")]
        self.times = np.array([t for t, _ in entries], dtype=np.float64)
        self.files = [self.path.parent / f for _, f in entries]
        self.steps = np.array([_step_of(f) for f in self.files], dtype=np.int64)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        """Snapshot i (negative counts from the end), read from its file."""
        i = range(len(self.files))[i]  # IndexError for out-of-range, negative allowed
        return Snapshot(self.files[i], self.times[i], self.steps[i])

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def last(self):
        """The newest snapshot. @raises IndexError if the series is empty."""
        if not self.files:
            raise IndexError(f"series {self.name!r} has no snapshots yet")
        return self[-1]

    def to_pandas(self):
        """Point data of every snapshot as one long DataFrame, one row per point and snapshot.

        Columns: ``step`` (int64), ``time`` (float64), ``x``, ``y``, ``z`` (the point's position, dtype as
        stored), then one column per point array in file order: a scalar array as is, a k-component array
        split into ``<name>_x``, ``<name>_y`` (, ``<name>_z``) for k = 2 or 3, else ``<name>_0`` ...
        Rows of one snapshot are in file order. Each file is read once (linear in the series' length).
        @raises ValueError if an array's column name collides with another column (e.g. an array "x").
        """
        import pandas as pd

        frames = []
        for snapshot in self:
            n = len(snapshot)
            points = snapshot.points
            columns = {
                "step": np.full(n, snapshot.step, dtype=np.int64),
                "time": np.full(n, snapshot.time, dtype=np.float64),
                "x": points[:, 0], "y": points[:, 1], "z": points[:, 2],
            }
            for name, values in snapshot.point_data.items():
                if values.ndim == 1:
                    names_values = [(name, values)]
                else:
                    names_values = [(f"{name}_{s}", values[:, c])
                                    for c, s in enumerate(_component_suffixes(values.shape[1]))]
                for column, v in names_values:
                    if column in columns:
                        raise ValueError(f"{snapshot.path}: point array {name!r} gives column {column!r}, "
                                         "which another column already has")
                    columns[column] = v
            frames.append(pd.DataFrame(columns))
        if not frames:
            return pd.DataFrame({"step": np.zeros(0, np.int64), "time": np.zeros(0), "x": [], "y": [], "z": []})
        return pd.concat(frames, ignore_index=True)

    def __repr__(self):
        return f"Series({self.name!r}, snapshots={len(self)})"


# ---------------------------------------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------------------------------------

_CHECKPOINT_NAME = re.compile(r"^checkpoint_(\d+)(_failed)?\.h5$")


def _attribute(value):
    """An HDF5 attribute as a Python value: bytes -> str, NumPy scalar -> int/float."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, np.generic):
        return value.item()
    return value


class Checkpoint:
    """An HDF5 checkpoint read whole (engine/io/checkpoint.hpp; needs h5py).

    Attributes:
        path (Path): the file.
        header (dict): the root attributes (format, format_version, engine_version, model, backend,
            status, message, step, time [time units], dt [time units], seed, ...), strings as str.
        step (int), time (float): header["step"], header["time"].
        scenario (str): the scenario text the run was built from.
        tables (dict): table name ("cells", "elements") -> column name -> array of the table's size rows:
            (size,) for a 1-component column, (size, k) for k components (stored as (k, size); transposed
            here, so that row i is entity i as in the snapshots). dtypes as stored (positions float32).
        table_attrs (dict): table name -> {"size": rows, "capacity": allocated rows}.
        fields (dict): field name ("rd", "surface", "graph", ...) -> array name -> array as stored: a grid
            species (nz, ny, nx) (nz = 1 for a 2D grid), a graph (ny, nx), a surface species (n,); a
            surface's mesh as "mesh/points" (n, 3) float64 and "mesh/triangles" (m, 3) int32.
        field_attrs (dict): field name -> its attributes ({"grid_spacing": h [length units]}; 0 for a
            surface).
        output (dict): .pvd file name -> {"times": (len,) float64, "files": list of str}: the series the
            run had written when it wrote the checkpoint.
    """

    def __init__(self, path):
        import h5py

        self.path = Path(path)
        with h5py.File(self.path, "r") as f:
            self.header = {key: _attribute(value) for key, value in f.attrs.items()}
            self.scenario = _attribute(f["scenario"][()]) if "scenario" in f else ""
            self.tables = _Names("table")
            self.table_attrs = {}
            for name, group in f.get("tables", {}).items():
                columns = _Names("column", where=f" in table {name!r}")
                for column, dataset in group.items():
                    values = dataset[()]
                    columns[column] = np.ascontiguousarray(values.T) if values.ndim == 2 else values
                self.tables[name] = columns
                self.table_attrs[name] = {k: _attribute(v) for k, v in group.attrs.items()}
            self.fields = _Names("field")
            self.field_attrs = {}
            for name, group in f.get("fields", {}).items():
                arrays = _Names("array", where=f" in field {name!r}")
                group.visititems(lambda key, obj: arrays.__setitem__(key, obj[()])
                                 if isinstance(obj, h5py.Dataset) else None)
                self.fields[name] = arrays
                self.field_attrs[name] = {k: _attribute(v) for k, v in group.attrs.items()}
            self.output = {}
            for name, group in f.get("output", {}).items():
                files = _attribute(group.attrs.get("files", b""))
                self.output[name] = {"times": group["times"][()], "files": files.split()}
        self.step = int(self.header.get("step", _step_of(self.path)))
        self.time = float(self.header.get("time", math.nan))

    def __repr__(self):
        return (f"Checkpoint({self.path.name!r}, step={self.step}, time={self.time:g}, "
                f"tables={list(self.tables)}, fields={list(self.fields)})")


def read_checkpoint(path):
    """Reads a checkpoint file (checkpoint_<step>.h5) whole: see Checkpoint."""
    return Checkpoint(path)


# ---------------------------------------------------------------------------------------------------------
# Run
# ---------------------------------------------------------------------------------------------------------

class Run:
    """A run directory: its run record, its .pvd series and its checkpoints.

    Attributes:
        path (Path): the directory.
        record (dict): run.json (status, exit_code, scenario.path / sha256, backend, device, steps,
            wall_seconds, ...; docs/runs.md).
        series (dict): series name (the .pvd stem: "cells", "elements", "rd", "surface", ...) -> Series.
        checkpoints (list of Path): checkpoint_<step>.h5 and checkpoint_<step>_failed.h5 files, sorted by
            step (a failed one after an ordinary one of the same step).
        checkpoint_steps (list of int): the step of each of them.
        images (dict): name -> list of Path, the PNG snapshots <name>_<step>.png sorted by step (2D grids).
        final_meshes (dict): name -> Path of <name>_final.obj (surface models).
    """

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise FileNotFoundError(f"{self.path}: no such run directory")
        record = self.path / "run.json"
        if not record.is_file():
            raise FileNotFoundError(f"{self.path} has no run.json: not a tissue output directory")
        self.record = json.loads(record.read_text())
        self.series = _Names("series", ((p.stem, Series(p)) for p in sorted(self.path.glob("*.pvd"))))
        found = []
        for p in self.path.glob("checkpoint_*.h5"):
            match = _CHECKPOINT_NAME.match(p.name)
            if match:
                found.append((int(match.group(1)), bool(match.group(2)), p))
        found.sort()
        self.checkpoints = [p for _, _, p in found]
        self.checkpoint_steps = [step for step, _, _ in found]
        self.images = {}
        for p in sorted(self.path.glob("*_*.png"), key=_step_of):
            if _step_of(p) >= 0:
                self.images.setdefault(p.name[:p.name.rindex("_")], []).append(p)
        self.final_meshes = {p.name[:-len("_final.obj")]: p for p in sorted(self.path.glob("*_final.obj"))}

    def checkpoint(self, step=None):
        """The checkpoint of ``step`` (default: the newest), read whole.

        @raises KeyError naming the steps there are if there is no checkpoint of that step (or none).
        """
        if step is None and self.checkpoints:
            return Checkpoint(self.checkpoints[-1])
        if step is not None and step in self.checkpoint_steps:
            return Checkpoint(self.checkpoints[self.checkpoint_steps.index(step)])
        what = "no checkpoint" if step is None else f"no checkpoint of step {step}"
        raise KeyError(f"{what} in {self.path}; available steps: "
                       f"{', '.join(map(str, self.checkpoint_steps)) or 'none'}")

    def to_pandas(self, table="cells"):
        """Series ``table`` (a series name: "cells", "elements", or any other) as a long DataFrame: see
        Series.to_pandas. @raises KeyError naming the series there are."""
        return self.series[table].to_pandas()

    def cell_counts(self):
        """Cells over time: DataFrame with columns step (int64), time (float64) and cells (int64), one row
        per snapshot of the cells series. @raises KeyError if the run has no cells series."""
        import pandas as pd

        series = self.series["cells"]
        counts = np.array([_number_of_points(f) for f in series.files], dtype=np.int64)
        return pd.DataFrame({"step": series.steps, "time": series.times, "cells": counts})

    def __repr__(self):
        return (f"Run({str(self.path)!r}, status={self.record.get('status')!r}, "
                f"series={list(self.series)}, checkpoints={len(self.checkpoints)})")


def read_run(path):
    """Opens the run directory ``path`` (a finished or running run): see Run.

    @raises FileNotFoundError if ``path`` is not a directory or has no run.json.
    """
    return Run(path)
