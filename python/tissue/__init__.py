"""tissue: multiscale tissue simulation on GPUs and CPUs, from Python.

Three lines run the epidermis and plot its cell count over time::

    import tissue
    run = tissue.Simulation(tissue.Scenario.from_file("scenarios/epidermis.toml"), out="runs/epidermis").run()
    tissue.plot.cell_count(tissue.read_run(run.output_dir))

The objects (docs/python.md has the whole guide):

- ``Scenario``: a scenario file or dict (``from_file``, ``from_dict``), checked with ``check()``.
- ``Simulation``: one run of a scenario on the ``"cpu"`` or ``"cuda"`` backend; ``step(n)``, ``run()``,
  ``checkpoint(path)``, ``Simulation.restart(path)``; the state as ``tables`` (cells, elements: NumPy copies
  or zero-copy CUDA views) and ``fields`` (grids and surface fields).
- ``read_run(dir)``: a run directory's record, snapshot series and checkpoints (``tissue.output``).
- ``tissue.plot``: quick matplotlib figures.

Errors: invalid scenarios raise ``ScenarioError`` (a ``ValueError`` with ``file``, ``line``, ``column``,
``key``, ``reason`` attributes); NaN/Inf in a run ``NumericalError``; GPU failures ``BackendError``; a run
stopped by Ctrl-C (SIGINT) or SIGTERM after finishing its step raises ``Interrupted`` (a
``KeyboardInterrupt``), and the simulation can go on stepping.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence

import numpy as np

from . import _tissue
from ._tissue import BackendError, NumericalError, ScenarioError, cuda_available
from .output import read_run  # noqa: F401  (public API)

__all__ = [
    "Scenario", "Simulation", "Table", "Field", "DeviceColumn", "ScenarioError", "NumericalError",
    "BackendError", "Interrupted", "read_run", "cuda_available", "version", "plot",
]

#: "tissue <version> (<git revision>, backends: <compiled backends>)"
version: str = _tissue.version


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT (Ctrl-C, a notebook's interrupt) or SIGTERM after finishing a step.

    The step's snapshot and a checkpoint are written (when the simulation writes output) and the
    simulation stays usable: ``step()`` or ``run()`` continue it. ``signal`` is the signal number.
    """

    def __init__(self, message: str, signal: int):
        super().__init__(message)
        self.signal = signal


# ---- scenarios --------------------------------------------------------------------------------------


def _with_dict_path(error: ScenarioError) -> ScenarioError:
    """Adds ``dict_path`` (the key as a tuple of dict keys and list indices) to a ScenarioError."""
    key = getattr(error, "key", None)
    path: List[object] = []
    if key:
        for part in key.replace("[", ".[").split("."):
            if part.startswith("[") and part.endswith("]") and part[1:-1].isdigit():
                path.append(int(part[1:-1]))
            elif part:
                path.append(part)
    error.dict_path = tuple(path)
    return error


class Scenario:
    """A scenario: the TOML text of a scenario file (docs/scenarios.md), parsed.

    Parsing checks the TOML syntax only; the values are checked by ``check()`` and when a ``Simulation``
    is built, which raise ``ScenarioError`` naming the file, line, column and key.
    """

    def __init__(self, native: "_tissue._Scenario"):
        self._native = native

    @classmethod
    def from_file(cls, path: "os.PathLike[str] | str") -> "Scenario":
        """Reads a scenario file (TOML). Relative paths in it (meshes) are relative to its folder.

        Raises ScenarioError when the file is missing, not a regular file, larger than 4 MiB or not TOML.
        """
        return cls(_tissue._Scenario.from_file(os.fspath(path)))

    @classmethod
    def from_string(cls, text: str, name: str = "scenario.toml") -> "Scenario":
        """Parses scenario text; ``name`` stands for the file in messages and its folder for relative paths."""
        return cls(_tissue._Scenario.from_string(text, name))

    @classmethod
    def from_dict(cls, d: Mapping[str, object], name: str = "<dict>") -> "Scenario":
        """A scenario from a dict shaped like the TOML file: tables as dicts, arrays of tables as lists of
        dicts, values bool/int/float/str (NumPy scalars accepted), e.g.
        ``{"model": "gray_scott", "grid": {"nx": 64}, "simulation": {"steps": 100}}``. Sweeps build one per
        parameter set (``copy.deepcopy`` a base dict). The dict is written as TOML (``toml``) and parsed;
        relative paths in it are relative to the current directory (or ``name``'s folder).

        Raises ScenarioError for a value of another type (with ``dict_path``); errors found later by
        ``check()`` or ``Simulation`` name the key as a dotted path (``error.key``, and ``error.dict_path``
        as a tuple) and the line of the generated TOML (``scenario.toml``).
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"from_dict takes a dict, got {type(d).__name__}")
        try:
            native = _tissue._Scenario.from_dict(dict(d), "" + name)
        except ScenarioError as e:
            raise _with_dict_path(e) from None
        scenario = cls(native)
        scenario._from_dict = True
        return scenario

    _from_dict = False

    @property
    def toml(self) -> str:
        """The scenario's TOML text (generated for a dict)."""
        return self._native.text

    @property
    def path(self) -> str:
        """The file (or the name given) the scenario came from."""
        return self._native.path

    def check(self, backend: str = "") -> dict:
        """Validates every value and composes the model, as ``tissue check`` does; runs nothing.

        Returns a dict: ``model``, ``description``, ``steps``, ``dt``, ``output_every``, ``systems`` (the
        composed schedule's systems, in step order), ``schedule`` (its description: cadences, reads and
        writes, hooks) and the memory estimate ``memory_host``/``memory_device`` [bytes] on ``backend``
        ("cpu" or "cuda"; default: the backend of the live simulations, else "cpu").
        Raises ScenarioError on the first invalid value.
        """
        try:
            return self._native.check(backend)
        except ScenarioError as e:
            raise self._located(e) from None

    def _located(self, error: ScenarioError) -> ScenarioError:
        return _with_dict_path(error) if self._from_dict else error

    def __repr__(self) -> str:
        return f"Scenario({self.path!r})"


# ---- state access -----------------------------------------------------------------------------------


class DeviceColumn:
    """A zero-copy view of a column on the GPU (CUDA backend), for CuPy, PyTorch, Numba:
    ``cupy.asarray(view)``, ``torch.as_tensor(view, device="cuda")``.

    It exports ``__cuda_array_interface__`` (version 3): shape ``(rows,)`` or ``(rows, components)``
    (strided: components are ``capacity`` rows apart), the column's dtype, no stream synchronisation needed
    (the engine's work is complete when the interface is read). Lifetime: valid until the simulation takes
    its next step, writes a column (``set_column``) or is closed; a step may reallocate the table (cells
    divide), after which reading the interface raises and arrays made from it must not be used. Writes
    through the view are seen by the next step (which synchronises the device first).
    """

    def __init__(self, sim: "Simulation", table: str, name: str):
        self._sim, self._table, self._name = sim, table, name
        self._version = sim._run.version
        self._interface = sim._run.device_interface(table, name)

    @property
    def __cuda_array_interface__(self) -> dict:
        if self._sim._run is None or self._sim._run.version != self._version:
            raise RuntimeError(
                f"device view of {self._table}.{self._name} is stale: the simulation stepped, wrote a "
                "column or closed since it was made; take a new one")
        return self._interface

    @property
    def shape(self):
        return self._interface["shape"]

    def __repr__(self) -> str:
        return f"DeviceColumn({self._table}.{self._name}, shape={self.shape}, {self._interface['typestr']})"


class Table(Mapping):
    """An entity table of the World (``"cells"`` or ``"elements"``): columns by name, as NumPy copies.

    ``table["x"]`` is a host copy of the column, shape ``(rows,)`` for one component and
    ``(rows, components)`` for several (a gene network's species); a component's name (a species such as
    ``"Delta"``) gives that component, shape ``(rows,)``. Units are those of the scenario: the engine's
    columns are listed in docs/python.md (positions x, y, z [length]; cx, cy, cz cell centres [length];
    id (stable cell id), first, count, cell: indices; flags: bits), the modules' in their READMEs. Copies are
    snapshots: they do not change when the simulation steps. ``columns`` describes every column;
    ``device(name)`` is a zero-copy GPU view.
    """

    def __init__(self, sim: "Simulation", name: str):
        self._sim, self.name = sim, name

    @property
    def rows(self) -> int:
        """Number of rows (cells or elements) now."""
        return self._sim._native().rows(self.name)

    def __len__(self) -> int:
        return len(self.columns)

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    @property
    def columns(self) -> Dict[str, dict]:
        """{column: {"dtype", "components", "component_names"}} in the table's order."""
        return {name: {"dtype": np.dtype(dtype), "components": k, "component_names": list(names)}
                for name, dtype, k, names in self._sim._native().columns(self.name)}

    def __getitem__(self, name: str) -> np.ndarray:
        return self._sim._native().get(self.name, name)

    def device(self, name: str) -> DeviceColumn:
        """Zero-copy view of a column (or component) on the GPU; see DeviceColumn. CUDA backend only."""
        return DeviceColumn(self._sim, self.name, name)

    def __repr__(self) -> str:
        return f"Table({self.name!r}, rows={self.rows}, columns={list(self.columns)})"


class Field:
    """A field of the World besides its tables: a grid (arrays shaped (nz, ny, nx), ``spacing`` [length])
    or a field on a triangle mesh (arrays shaped (vertices,), with ``vertices`` (n, 3) [length] and
    ``faces`` (m, 3) vertex indices). ``field["u"]`` is a host copy of the array (species) ``u``;
    ``arrays()`` all of them.
    """

    def __init__(self, sim: "Simulation", name: str):
        self._sim, self.name = sim, name

    def arrays(self) -> Dict[str, np.ndarray]:
        """{name: host copy} of every array (species) of the field."""
        return dict(self._sim._native().field_arrays(self.name))

    def __getitem__(self, array: str) -> np.ndarray:
        arrays = self.arrays()
        if array not in arrays:
            raise KeyError(f"field {self.name!r} has no array {array!r} (it has: {', '.join(arrays)})")
        return arrays[array]

    def keys(self) -> List[str]:
        return list(self.arrays())

    @property
    def spacing(self) -> float:
        """Node spacing of a grid [length]; 0 for fields that are not uniform grids."""
        return self._sim._native().field_spacing(self.name)

    @property
    def vertices(self) -> Optional[np.ndarray]:
        """Mesh vertex positions (n, 3) [length] of a surface field, else None."""
        geometry = self._sim._native().field_geometry(self.name)
        return None if geometry is None else geometry[0]

    @property
    def faces(self) -> Optional[np.ndarray]:
        """Triangles (m, 3) as vertex indices of a surface field, else None."""
        geometry = self._sim._native().field_geometry(self.name)
        return None if geometry is None else geometry[1]

    def __repr__(self) -> str:
        return f"Field({self.name!r}, arrays={self.keys()})"


# ---- simulations ------------------------------------------------------------------------------------


class Simulation:
    """One run of a scenario, stepped from Python by the engine's own run loop (the one ``tissue run``
    uses: same output and checkpoint cadences, same files, same bytes).

    Parameters
    ----------
    scenario : Scenario, or a path to a scenario file
    backend : "cpu", "cuda", or "" (cuda when compiled in and a GPU is present, else cpu). One backend
        per process at a time: a second live simulation must use the first one's.
    out : None (nothing is written: state in memory only) or an output directory, which gets what
        ``tissue run --out`` writes (snapshots, checkpoints, run.json; refused when not empty unless
        ``overwrite``).
    steps, every, checkpoint_every : override simulation.steps (the end step), output.every and
        checkpoint.every, as ``tissue run``'s flags do.
    verbose : print the run's header and summary (to the process's stdout, which a notebook does not show).

    Raises ScenarioError for invalid input (nothing is written then), BackendError when the backend
    cannot start.
    """

    def __init__(self, scenario: "Scenario | os.PathLike[str] | str", backend: str = "",
                 out: "Optional[os.PathLike[str] | str]" = None, *, overwrite: bool = False,
                 steps: Optional[int] = None, every: Optional[int] = None,
                 checkpoint_every: Optional[int] = None, verbose: bool = False,
                 _restart: str = ""):
        if scenario is not None and not isinstance(scenario, Scenario):
            scenario = Scenario.from_file(scenario)
        self.scenario = scenario
        for name, value in (("steps", steps), ("every", every), ("checkpoint_every", checkpoint_every)):
            if value is not None and (not isinstance(value, (int, np.integer)) or value < 0):
                raise ScenarioError(f"{name} must be an integer >= 0, got {value!r}")
        try:
            self._run = _tissue._Run(
                scenario._native if scenario is not None else None, _restart, backend,
                None if out is None else os.fspath(out), overwrite, steps, every, checkpoint_every,
                verbose, [sys.executable or "python3"] + sys.argv[:1])
        except ScenarioError as e:
            raise (scenario._located(e) if scenario is not None else e) from None
        self.tables: Dict[str, Table] = {"cells": Table(self, "cells"), "elements": Table(self, "elements")}
        self._output_dir = self._run.output_dir

    @classmethod
    def restart(cls, checkpoint: "os.PathLike[str] | str", backend: str = "",
                out: "Optional[os.PathLike[str] | str]" = None, *, steps: Optional[int] = None,
                every: Optional[int] = None, checkpoint_every: Optional[int] = None,
                verbose: bool = False) -> "Simulation":
        """Continues from a checkpoint (a ``checkpoint_<step>.h5`` file, a ``checkpoint(path)`` file, or a
        run directory: its newest checkpoint), with results identical to an uninterrupted run on the same
        backend. The scenario is the checkpoint's own. ``out`` as in the constructor (passing the
        checkpoint's run directory continues its series there); ``steps`` sets the end step (default: the
        checkpoint's). Raises ScenarioError for a missing, corrupt or failed checkpoint.
        """
        return cls(None, backend, out, steps=steps, every=every, checkpoint_every=checkpoint_every,
                   verbose=verbose, _restart=os.fspath(checkpoint))

    def _native(self) -> "_tissue._Run":
        if self._run is None:
            raise RuntimeError("this simulation is closed")
        return self._run

    # -- clock
    @property
    def steps(self) -> int:
        """Steps taken since the start of the run (the checkpoint's step after a restart): World::step."""
        return self._native().step_index

    @property
    def time(self) -> float:
        """Simulated time [time units of the scenario]."""
        return self._native().time

    @property
    def dt(self) -> float:
        """Time step [time units]."""
        return self._native().dt

    @property
    def end_step(self) -> int:
        """The step the run ends at (simulation.steps, or ``steps=``)."""
        return self._native().end_step

    @property
    def finished(self) -> bool:
        """True once the end step was reached or the model converged (a converged run takes no more steps)."""
        return self._native().finished

    @property
    def model(self) -> str:
        return self._native().model

    @property
    def output_dir(self) -> Optional[str]:
        """The output directory, or None when nothing is written (also after close())."""
        return self._output_dir

    # -- stepping
    def step(self, n: int = 1) -> "Simulation":
        """Takes ``n`` steps (past the end step too), writing output and checkpoints at the run's cadences.

        Ctrl-C (SIGINT) or SIGTERM stops after the current step, writes it (and a checkpoint) and raises
        Interrupted; NumericalError when the state went NaN/Inf (a failed checkpoint is written).
        Returns the simulation.
        """
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"step(n): n must be an integer >= 0, got {n!r}")
        code = self._native().step(int(n))
        if code != 0:
            raise Interrupted(f"stopped by signal {code - 128} at step {self.steps}; the state of that "
                              "step is written", code - 128)
        return self

    def run(self, callback: Optional[Callable[["Simulation"], object]] = None, every: Optional[int] = None,
            close: bool = True) -> "Simulation":
        """Steps to the end step (or convergence), calling ``callback(sim)`` every ``every`` steps
        (default: the output cadence) and at the end; then ends the run (``close()``: summary, run.json
        completed) unless ``close=False``. The files written are those of ``tissue run``. Returns the
        simulation.
        """
        native = self._native()
        if every is None:
            every = native.output_every or max(1, native.end_step - native.step_index)
        if every <= 0:
            raise ValueError(f"run(every=...) must be > 0, got {every}")
        while not native.finished and native.step_index < native.end_step:
            self.step(min(every, native.end_step - native.step_index))
            if callback is not None:
                callback(self)
        if close:
            self.close()
        return self

    def checkpoint(self, path: "os.PathLike[str] | str") -> str:
        """Writes the whole state to the HDF5 checkpoint ``path`` (and an .xdmf beside it) now; restart
        with ``Simulation.restart(path)``. Returns the path."""
        path = os.fspath(path)
        self._native().checkpoint(path)
        return path

    def close(self) -> None:
        """Ends the run: marks run.json completed (when writing output) and frees the simulation's memory.
        Idempotent; the simulation cannot be used afterwards."""
        if self._run is not None:
            try:
                self._run.close()
            finally:
                self._run = None

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- state
    @property
    def fields(self) -> Dict[str, Field]:
        """The World's fields by name (grids, surface fields)."""
        return {name: Field(self, name) for name in self._native().field_names()}

    def summary(self) -> str:
        """The model's summary of the current state (what ``tissue run`` prints at the end)."""
        return self._native().summary()

    def set_column(self, table: str, name: str, values) -> None:
        """Writes ``values`` into a column (or a named component) of ``table``: shape ``(rows,)`` or
        ``(rows, components)`` as ``tables[table][name]`` returns, numbers (cast to the column's dtype;
        floats into an integer column are refused), all finite. The structure columns (cells.first,
        cells.count, cells.id, elements.cell) cannot be set. Raises ScenarioError (a ValueError) on a
        wrong shape or value, KeyError on an unknown name."""
        self._native().set(table, name, np.asarray(values))

    def set_field(self, field: str, array: str, values) -> None:
        """Writes ``values`` (the array's shape, finite numbers) into a field's array (species)."""
        self._native().set_field_array(field, array, np.asarray(values))

    def __repr__(self) -> str:
        if self._run is None:
            return "Simulation(closed)"
        return (f"Simulation({self.model!r}, backend={_tissue.backend()!r}, step {self.steps} of "
                f"{self.end_step}, t = {self.time:g})")


from . import plot  # noqa: E402  (after the API it plots)
