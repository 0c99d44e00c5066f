"""Fixtures of the Python tests: the tissue CLI binary and short runs made with it.

The binary is $TISSUE_BIN, else build/cpu/tools/tissue of this repository (``cmake --preset cpu &&
cmake --build build/cpu``). A missing binary fails the tests that need it: skipping them would hide
breakage.

Runs are made once per test session into a temporary directory, from the shipped scenarios or from
variants of them written next to the runs: a grid of distinct nx, ny, nz (so that a transposed axis shows),
an epidermis whose cells divide within a few steps (so that the cell count changes), a coarser graph.
Run: ``PYTHONPATH=python python3 -m pytest python/tests -q`` from the repository root.
"""

import os
import subprocess
from pathlib import Path

import matplotlib
import pytest

try:
    import tomllib  # Python 3.11
except ImportError:
    import tomli as tomllib

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
TESTS = REPO / "tests" / "scenarios"
#: the backend the API tests run on: cpu, or cuda in the GPU suite (TISSUE_TEST_BACKEND, set by CTest)
BACKEND = os.environ.get("TISSUE_TEST_BACKEND", "cpu")
#: the command-line tool, for comparisons with `tissue run` (the fixture tissue_bin checks it exists)
TISSUE_BIN = Path(os.environ.get("TISSUE_BIN") or REPO / "build" / "cpu" / "tools" / "tissue")


@pytest.fixture(scope="session")
def tissue_bin():
    """Path of the tissue CLI binary; fails the test when there is none."""
    path = Path(os.environ.get("TISSUE_BIN") or REPO / "build" / "cpu" / "tools" / "tissue")
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"tissue binary not found at {path}: build it (cmake --preset cpu && cmake --build "
                    "build/cpu) or set TISSUE_BIN to its path", pytrace=False)
    return path


def variant(scenario, out_dir, replacements):
    """Writes a copy of ``scenario`` into ``out_dir`` with each (old, new) line replaced; returns its path.

    Fails if a line to replace is not in the scenario (the shipped file changed)."""
    text = Path(scenario).read_text()
    for old, new in replacements:
        assert old in text, f"{scenario} has no line {old!r}"
        text = text.replace(old, new)
    path = Path(out_dir) / Path(scenario).name
    path.write_text(text)
    return path


def run_tissue(tissue_bin, scenario, out, steps, every):
    """Runs ``tissue run scenario --steps --every --out`` and returns ``out``; fails with its stderr."""
    command = [str(tissue_bin), "run", str(scenario), "--steps", str(steps), "--every", str(every),
               "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}", pytrace=False)
    return Path(out)


class Made:
    """A run made for the tests: its directory, the scenario it ran and that scenario parsed."""

    def __init__(self, path, scenario):
        self.path = Path(path)
        self.scenario = Path(scenario)
        self.toml = tomllib.loads(self.scenario.read_text())


@pytest.fixture(scope="session")
def runs(tissue_bin, tmp_path_factory):
    """Short runs by name, made on first use: epidermis (cells and elements, dividing), sorting (cells
    with a cell type), grid2d (schnakenberg, 64 x 48, h = 0.5), grid3d (gray_scott_3d, 40 x 32 x 24),
    spot (surface RD on a mesh), snakeskin (surface on a generated rectangle), graph (mcf_graph: .vti and
    .vts)."""
    root = tmp_path_factory.mktemp("runs")
    recipes = {
        "epidermis": (lambda d: variant(SCENARIOS / "epidermis.toml", d, [
            ("growth_interval = 2000", "growth_interval = 1\ncycle_cv = 0.5\ncycle_resolution = 1"),
            ("division_elements = 40", "division_elements = 24")]), 20, 5),
        "sorting": (lambda d: SCENARIOS / "cell_sorting.toml", 10, 5),
        "grid2d": (lambda d: variant(SCENARIOS / "schnakenberg.toml", d, [
            ("nx = 128", "nx = 64"), ("ny = 128", "ny = 48")]), 20, 10),
        "grid3d": (lambda d: variant(SCENARIOS / "gray_scott_3d.toml", d, [
            ("nx = 128", "nx = 40"), ("ny = 128", "ny = 32"), ("nz = 128", "nz = 24"),
            ("patch_size = 30", "patch_size = 8")]), 10, 5),
        "spot": (lambda d: SCENARIOS / "gray_scott_spot.toml", 20, 10),
        "snakeskin": (lambda d: SCENARIOS / "snakeskin_rectangle.toml", 10, 5),
        "graph": (lambda d: variant(SCENARIOS / "mcf_graph.toml", d, [("n = 128", "n = 32")]), 3, 1),
    }
    made = {}

    class Runs:
        def __getitem__(self, name):
            if name not in made:
                scenario_of, steps, every = recipes[name]
                directory = root / name
                directory.mkdir()
                scenario = scenario_of(directory)
                made[name] = Made(run_tissue(tissue_bin, scenario, directory / "out", steps, every),
                                  scenario)
            return made[name]

    return Runs()
