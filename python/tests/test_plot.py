"""Tests of tissue.plot: each function draws what it was given (counted and compared with the data read
by tissue.output) into Axes it returns, and the figure saves as a PNG. Backend Agg (conftest.py)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from tissue import plot
from tissue.output import read_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def save(ax, path):
    """Saves the Axes' figure to ``path`` and checks that a PNG came out."""
    ax.figure.savefig(path)
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_cells_3d(runs, tmp_path):
    run = read_run(runs["epidermis"].path)
    last = run.series["cells"].last()
    ax = plot.cells(run)
    assert ax.name == "3d"
    ax.figure.canvas.draw()
    assert len(ax.collections[0].get_offsets()) == len(last.points)
    assert ax.collections[0].get_array() is None  # the epidermis has no cell_type: one colour
    save(ax, tmp_path / "cells.png")


def test_cells_projection_coloured_by_an_array(runs, tmp_path):
    run = read_run(runs["epidermis"].path)
    last = run.series["elements"].last()
    ax = plot.cells(run, color_by="delta", projection="xz", series="elements")
    np.testing.assert_array_equal(ax.collections[0].get_offsets(), last.points[:, [0, 2]])
    np.testing.assert_array_equal(ax.collections[0].get_array(), last.point_data["delta"])
    save(ax, tmp_path / "elements_xz.png")


def test_cells_default_colour_is_the_cell_type(runs, tmp_path):
    series = read_run(runs["sorting"].path).series["cells"]
    first = series[0]
    ax = plot.cells(first, projection="xy")
    np.testing.assert_array_equal(ax.collections[0].get_array(), first.point_data["cell_type"])
    assert len(ax.collections[0].get_offsets()) == len(first.points)
    save(ax, tmp_path / "sorting.png")


def test_cells_bad_arguments(runs):
    run = read_run(runs["epidermis"].path)
    with pytest.raises(KeyError, match="'delta'"):
        plot.cells(run, color_by="Delta")
    with pytest.raises(ValueError, match="projection"):
        plot.cells(run, projection="xx")
    with pytest.raises(ValueError, match="3D Axes"):
        plot.cells(run, ax=plt.figure().add_subplot())


def test_field_slice_2d(runs, tmp_path):
    made = runs["grid2d"]
    nx, ny, h = made.toml["grid"]["nx"], made.toml["grid"]["ny"], made.toml["grid"]["h"]
    snapshot = read_run(made.path).series["rd"].last()
    ax = plot.field_slice(snapshot, "a")
    assert len(ax.images) == 1
    image = ax.images[0].get_array()
    assert image.shape == (ny, nx)
    np.testing.assert_array_equal(image, snapshot.grid_data["a"])
    assert list(ax.images[0].get_extent()) == [0, nx * h, 0, ny * h]  # pixels centred on nodes at (i + 1/2) h
    save(ax, tmp_path / "grid2d.png")
    with pytest.raises(ValueError, match="only the slice normal to 'z'"):
        plot.field_slice(snapshot, "a", axis="x")


@pytest.mark.parametrize("axis,index", [("z", None), ("y", 3), ("x", 39)])
def test_field_slice_3d(runs, tmp_path, axis, index):
    made = runs["grid3d"]
    grid = made.toml["grid"]
    nx, ny, nz = grid["nx"], grid["ny"], grid["nz"]
    series = read_run(made.path).series["rd"]
    b = series.last().grid_data["b"]  # (nz, ny, nx)
    ax = plot.field_slice(series, "b", axis=axis, index=index)
    image = ax.images[0].get_array()
    expected = {"z": b[nz // 2], "y": b[:, 3, :], "x": b[:, :, 39]}[axis]
    assert image.shape == {"z": (ny, nx), "y": (nz, nx), "x": (nz, ny)}[axis]
    np.testing.assert_array_equal(image, expected)
    save(ax, tmp_path / f"grid3d_{axis}.png")


def test_field_slice_bad_arguments(runs):
    series = read_run(runs["grid3d"].path).series["rd"]
    with pytest.raises(ValueError, match="out of range"):
        plot.field_slice(series, "b", axis="x", index=40)
    with pytest.raises(KeyError, match="'a', 'b'"):
        plot.field_slice(series, "c")
    with pytest.raises(ValueError, match="not a grid"):
        plot.field_slice(read_run(runs["epidermis"].path).series["cells"], "delta")


def test_field_slice_structured_grid(runs, tmp_path):
    made = runs["graph"]
    n = made.toml["graph"]["n"]
    surface = read_run(made.path).series["surface"].last()
    ax = plot.field_slice(surface, "phi")
    assert ax.images[0].get_array().shape == (n + 1, n + 1)
    save(ax, tmp_path / "graph.png")


def test_surface(runs, tmp_path):
    snapshot = read_run(runs["spot"].path).series["surface"].last()
    ax = plot.surface(snapshot, "b")
    faces = ax.collections[0]
    assert len(faces.get_array()) == len(snapshot.faces)
    np.testing.assert_allclose(faces.get_array(), snapshot.point_data["b"][snapshot.faces].mean(axis=1))
    save(ax, tmp_path / "surface.png")
    with pytest.raises(ValueError, match="no faces"):
        plot.surface(read_run(runs["epidermis"].path).series["cells"], "delta")


def test_cell_count(runs, tmp_path):
    run = read_run(runs["epidermis"].path)
    counts = run.cell_counts()
    ax = plot.cell_count(run)
    x, y = ax.lines[0].get_data()
    np.testing.assert_array_equal(x, counts["time"])
    np.testing.assert_array_equal(y, counts["cells"])
    save(ax, tmp_path / "count.png")


def test_timeline(runs, tmp_path):
    df = read_run(runs["epidermis"].path).to_pandas()
    ax = plot.timeline(df, "z")
    x, y = ax.lines[0].get_data()
    means = df.groupby("time")["z"].mean()
    np.testing.assert_array_equal(x, means.index)
    np.testing.assert_allclose(y, means)
    assert len(ax.collections) == 1  # the min-max band
    save(ax, tmp_path / "timeline.png")
    with pytest.raises(KeyError, match="'delta'"):
        plot.timeline(df, "Delta")
