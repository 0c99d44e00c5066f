"""Quick matplotlib plots of a tissue run: cells as points, grid slices, surfaces, counts over time.

Every function draws into ``ax`` when given, else into a new figure, and returns the Axes (its figure is
``ax.figure``; save it with ``ax.figure.savefig("x.png")``)::

    from tissue.output import read_run
    from tissue import plot
    run = read_run("runs/epidermis")
    plot.cell_count(run).figure.savefig("cells.png")
    plot.cells(run, color_by="delta", projection="xz")

Positions and grid coordinates are in the scenario's length units, times in its time units. In scripts
without a display, select the Agg backend first (``matplotlib.use("Agg")``, or ``MPLBACKEND=Agg``).
"""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from mpl_toolkits.mplot3d.art3d import Poly3DCollection

from .output import Run, Series, Snapshot

__all__ = ["cells", "field_slice", "surface", "cell_count", "timeline"]

_AXES = {"x": 0, "y": 1, "z": 2}


def _snapshot(data, series):
    """A Snapshot from a Snapshot, a Series (its last snapshot) or a Run (the last of ``series``)."""
    if isinstance(data, Snapshot):
        return data
    if isinstance(data, Series):
        return data.last()
    if isinstance(data, Run):
        return data.series[series].last()
    raise TypeError(f"expected a Snapshot, Series or Run, got {type(data).__name__}")


def _title(snapshot, what):
    return f"{what}, t = {snapshot.time:g} (step {snapshot.step})"


def _scalar(snapshot, name):
    """Point array ``name`` of ``snapshot`` as (n,); ValueError for a multi-component array."""
    values = snapshot.point_data[name]
    if values.ndim != 1:
        raise ValueError(f"{name!r} has {values.shape[1]} components; colour by a scalar array")
    return values


def cells(data, color_by=None, projection="3d", series="cells", ax=None, size=None, cmap=None):
    """Scatter plot of the points of a snapshot (cell centres, elements), coloured by a point array.

    @param data        a Snapshot, a Series (its last snapshot) or a Run (the last snapshot of ``series``)
    @param color_by    name of a scalar point array ("cell_type", "delta", "element_count", ...); None:
                       "cell_type" when the snapshot has it, else one colour
    @param projection  "3d" for a 3D scatter, or "xy", "xz", "yz" for the points projected on that plane
    @param series      series of a Run to plot ("cells" or "elements")
    @param ax          Axes to draw into (a 3D Axes for projection "3d"); None: a new figure
    @param size        marker area [points^2]; None: 20 for up to 1000 points, else 4
    @param cmap        colormap; None: one tab10 colour per value for an integer array of at most 10
                       values (cell types, flags), else "viridis"
    @return the Axes; its first collection holds the n points
    @raises KeyError naming the arrays there are when ``color_by`` is not one of them
    """
    snapshot = _snapshot(data, series)
    if color_by is None and "cell_type" in snapshot.point_data:
        color_by = "cell_type"
    values = None if color_by is None else _scalar(snapshot, color_by)
    # an integer array of at most 10 values (a cell type, a flag) gets one tab10 colour per value
    categories, vmin, vmax = None, None, None
    if values is not None and cmap is None:
        cmap = "viridis"
        if np.issubdtype(values.dtype, np.integer) and len(values) > 0:
            lo, hi = int(values.min()), int(values.max())
            if hi - lo < 10:
                categories = range(lo, hi + 1)
                cmap = ListedColormap(matplotlib.colormaps["tab10"].colors[:len(categories)])
                vmin, vmax = lo - 0.5, hi + 0.5
    if size is None:
        size = 20 if len(snapshot) <= 1000 else 4
    points = snapshot.points
    if projection == "3d":
        if ax is None:
            ax = plt.figure().add_subplot(projection="3d")
        elif ax.name != "3d":
            raise ValueError("projection '3d' needs a 3D Axes (add_subplot(projection='3d'))")
        artist = ax.scatter(points[:, 0], points[:, 1], points[:, 2], c=values, s=size, cmap=cmap,
                            vmin=vmin, vmax=vmax)
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_zlabel("z")
    elif len(projection) == 2 and set(projection) <= set(_AXES) and projection[0] != projection[1]:
        h, v = _AXES[projection[0]], _AXES[projection[1]]
        if ax is None:
            ax = plt.figure().add_subplot()
        artist = ax.scatter(points[:, h], points[:, v], c=values, s=size, cmap=cmap,
                            vmin=vmin, vmax=vmax)
        ax.set_xlabel(projection[0])
        ax.set_ylabel(projection[1])
        ax.set_aspect("equal")
    else:
        raise ValueError(f"projection must be '3d', 'xy', 'xz' or 'yz', got {projection!r}")
    if values is not None:
        ax.figure.colorbar(artist, ax=ax, label=color_by, shrink=0.8, ticks=categories)
    ax.set_title(_title(snapshot, f"{len(snapshot)} points"))
    return ax


def field_slice(data, array, axis="z", index=None, ax=None, cmap="viridis"):
    """Image of a grid array: a 2D grid whole, or a slice of a 3D grid normal to ``axis``.

    @param data   a grid Snapshot (ImageData or StructuredGrid), or a Series (its last snapshot)
    @param array  name of a scalar point array (a species: "a", "b", ...)
    @param axis   the slice's normal for a 3D grid: "z" shows (y, x) at z index ``index``, "y" shows
                  (z, x), "x" shows (z, y); a 2D grid only has "z"
    @param index  node index along ``axis``; None: the middle (n // 2)
    @param ax     Axes to draw into; None: a new figure
    @return the Axes; ``ax.images[0].get_array()`` is the slice, rows along the vertical axis. Image data
            is drawn in the scenario's coordinates (pixels centred on the nodes), a structured grid in
            node indices.
    @raises ValueError for a snapshot that is not a grid, a bad axis or an index out of range;
            KeyError naming the arrays for an unknown array
    """
    snapshot = _snapshot(data, None)
    if snapshot.grid_shape is None:
        raise ValueError(f"{snapshot.path.name} is {snapshot.kind}, not a grid")
    if axis not in _AXES:
        raise ValueError(f"axis must be 'x', 'y' or 'z', got {axis!r}")
    grid = _scalar(snapshot, array).reshape(snapshot.grid_shape)  # (nz, ny, nx)
    nz = snapshot.grid_shape[0]
    if nz == 1 and axis != "z":
        raise ValueError("a 2D grid has only the slice normal to 'z'")
    n = snapshot.grid_shape[2 - _AXES[axis]]
    if index is None:
        index = n // 2
    if not 0 <= index < n:
        raise ValueError(f"index {index} out of range: the grid has {n} nodes along {axis}")
    # (vertical, horizontal) axis names and the image, for each slice normal
    if axis == "z":
        (v, h), image = ("y", "x"), grid[index]
    elif axis == "y":
        (v, h), image = ("z", "x"), grid[:, index, :]
    else:
        (v, h), image = ("z", "y"), grid[:, :, index]
    extent = None
    where = f"{axis} index {index}"
    if snapshot.origin is not None:
        o, d = snapshot.origin, snapshot.spacing
        hi, vi = _AXES[h], _AXES[v]
        extent = [o[hi] - d[hi] / 2, o[hi] + (image.shape[1] - 0.5) * d[hi],
                  o[vi] - d[vi] / 2, o[vi] + (image.shape[0] - 0.5) * d[vi]]
        a = _AXES[axis]
        where = f"{axis} = {o[a] + index * d[a]:g}"
    if ax is None:
        ax = plt.figure().add_subplot()
    shown = ax.imshow(image, origin="lower", extent=extent, cmap=cmap, interpolation="nearest")
    ax.figure.colorbar(shown, ax=ax, label=array)
    ax.set_xlabel(h)
    ax.set_ylabel(v)
    ax.set_title(_title(snapshot, array if nz == 1 else f"{array} at {where}"))
    return ax


def surface(data, array, ax=None, cmap="viridis"):
    """A triangle mesh in 3D, each face coloured by the mean of ``array`` over its corners.

    @param data   a surface Snapshot (faces not None), or a Series (its last snapshot)
    @param array  name of a scalar point array (a species on the surface)
    @param ax     3D Axes to draw into; None: a new figure
    @return the Axes; its first collection holds one polygon per face
    """
    snapshot = _snapshot(data, None)
    if snapshot.faces is None:
        raise ValueError(f"{snapshot.path.name} has no faces: not a surface mesh")
    values = _scalar(snapshot, array)
    if ax is None:
        ax = plt.figure().add_subplot(projection="3d")
    points = np.asarray(snapshot.points, dtype=np.float64)
    faces = Poly3DCollection(points[snapshot.faces], cmap=cmap, linewidths=0)
    faces.set_array(values[snapshot.faces].mean(axis=1))
    ax.add_collection3d(faces)
    # equal scales on the three axes; a flat mesh gets a thin box instead of a zero-width one
    lo, hi = points.min(axis=0), points.max(axis=0)
    centre, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 0.01 * (hi - lo).max())
    ax.set_xlim(centre[0] - half[0], centre[0] + half[0])
    ax.set_ylim(centre[1] - half[1], centre[1] + half[1])
    ax.set_zlim(centre[2] - half[2], centre[2] + half[2])
    ax.set_box_aspect(half)
    ax.figure.colorbar(faces, ax=ax, label=array, shrink=0.8)
    ax.set_title(_title(snapshot, f"{array} on {len(snapshot.faces)} faces"))
    return ax


def cell_count(run, ax=None):
    """Number of cells over time (Run.cell_counts()), one marker per snapshot.

    @return the Axes; its first line holds (time, cells)
    """
    counts = run.cell_counts()
    if ax is None:
        ax = plt.figure().add_subplot()
    ax.plot(counts["time"], counts["cells"], marker=".")
    ax.set_xlabel("time")
    ax.set_ylabel("cells")
    ax.set_title(f"cells in {run.path.name}")
    return ax


def timeline(df, column, ax=None, band=True, label=None):
    """Mean of ``column`` over the rows of each time of a long DataFrame (Run.to_pandas()), with the
    min-max range shaded.

    @param df      DataFrame with a "time" column (one row per entity and snapshot)
    @param column  the column to summarise ("delta", "z", ...)
    @param band    shade between the minimum and the maximum at each time
    @param label   legend label of the mean line; None: ``column``
    @return the Axes; its first line holds (time, mean)
    @raises KeyError naming the columns when ``column`` is not one of them
    """
    if column not in df.columns:
        raise KeyError(f"no column {column!r}; available: {', '.join(map(repr, df.columns))}")
    stats = df.groupby("time")[column].agg(["mean", "min", "max"])
    if ax is None:
        ax = plt.figure().add_subplot()
    line, = ax.plot(stats.index, stats["mean"], label=label or column)
    if band:
        ax.fill_between(stats.index, stats["min"], stats["max"], color=line.get_color(), alpha=0.25)
    ax.set_xlabel("time")
    ax.set_ylabel(column)
    ax.legend()
    return ax
