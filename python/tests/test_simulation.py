"""The Python package's API: scenarios, simulations, tables and fields, checkpoints and restart, Ctrl-C.

Runs on the backend named by TISSUE_TEST_BACKEND (default cpu; the GPU suite sets cuda). Expected values
come from independent sources: the scenario's own numbers, the CLI's output files (byte comparison),
an uninterrupted run (restart), and the table invariants (cell ranges over the elements).
"""
import filecmp
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tissue
from conftest import BACKEND, REPO, TESTS, TISSUE_BIN

EPIDERMIS = TESTS / "epidermis_short.toml"
GRID = TESTS / "grid_short.toml"
SURFACE = TESTS / "surface_short.toml"


def sim_of(path, **kw):
    return tissue.Simulation(tissue.Scenario.from_file(path), backend=BACKEND, **kw)


# ---- scenarios ----------------------------------------------------------------------------------------


def test_check_returns_the_composed_schedule():
    path = TESTS / "rules_short.toml"
    info = tissue.Scenario.from_file(path).check(BACKEND)
    assert "sem" in info["systems"] and "motility" in info["systems"]
    assert info["steps"] == 1000 and info["dt"] == pytest.approx(0.01)
    assert info["memory_host"] > 0
    # the schedule `tissue check` prints
    printed = subprocess.run([str(TISSUE_BIN), "check", str(path)], capture_output=True, text=True,
                             check=True).stdout
    assert info["schedule"] in printed


def test_missing_file_raises_scenario_error():
    with pytest.raises(tissue.ScenarioError, match="not found") as e:
        tissue.Scenario.from_file(TESTS / "does_not_exist.toml")
    assert isinstance(e.value, ValueError)


def test_bad_value_in_a_file_names_file_line_column_and_key():
    bad = REPO / "tests" / "scenarios" / "bad" / "negative_dt.toml"
    with pytest.raises(tissue.ScenarioError) as e:
        tissue.Scenario.from_file(bad).check()
    err = e.value
    assert err.file.endswith("negative_dt.toml")
    assert (err.line, err.column) == (2, 6)
    assert err.key == "simulation.dt"
    assert "expected a number > 0" in err.reason


GRAY_SCOTT = {
    "simulation": {"model": "grid_rd", "dt": 1.0, "steps": 20, "seed": 3},
    "grid": {"nx": 32, "ny": 24},
    "reaction": {"preset": "theta"},
    "initial": {"patch_size": 8, "noise": 0.02},
    "output": {"every": 10},
}


def test_from_dict_equals_the_same_scenario_as_a_file(tmp_path):
    from_dict = tissue.Scenario.from_dict(GRAY_SCOTT)
    text = from_dict.toml
    path = tmp_path / "gs.toml"
    path.write_text(text)
    a = tissue.Simulation(from_dict, backend=BACKEND).step(20)
    b = sim_of(path).step(20)
    for name in a.fields:
        for species, values in a.fields[name].arrays().items():
            np.testing.assert_array_equal(values, b.fields[name][species])


def test_from_dict_bad_type_names_the_dict_path():
    d = {"simulation": {"model": "grid_rd"}, "grid": {"nx": [1, {"a": object()}]}}
    with pytest.raises(tissue.ScenarioError) as e:
        tissue.Scenario.from_dict(d)
    assert e.value.dict_path == ("grid", "nx", 1, "a")
    assert "got a object" in str(e.value)


def test_from_dict_bad_value_names_key_and_generated_line():
    d = {**GRAY_SCOTT, "simulation": {**GRAY_SCOTT["simulation"], "dt": -1.0}}
    scenario = tissue.Scenario.from_dict(d)
    with pytest.raises(tissue.ScenarioError) as e:
        scenario.check()
    err = e.value
    assert err.dict_path == ("simulation", "dt") and err.key == "simulation.dt"
    # the line named is the generated TOML's line that holds the key
    assert scenario.toml.splitlines()[err.line - 1].strip().startswith("dt = -1")
    with pytest.raises(tissue.ScenarioError, match="simulation.dt"):
        tissue.Simulation(scenario, backend=BACKEND)


def test_from_dict_unknown_key_and_non_finite_value():
    d = {**GRAY_SCOTT, "grid": {"nx": 32, "ny": 24, "nxx": 3}}
    with pytest.raises(tissue.ScenarioError, match="unknown key 'grid.nxx'") as e:
        tissue.Scenario.from_dict(d).check()
    assert e.value.dict_path == ("grid", "nxx")
    d = {**GRAY_SCOTT, "initial": {"patch_size": 8, "noise": float("nan")}}
    with pytest.raises(tissue.ScenarioError, match="initial.noise"):
        tissue.Scenario.from_dict(d).check()
    with pytest.raises(TypeError):
        tissue.Scenario.from_dict([("a", 1)])


# ---- stepping, output identical to the command line -----------------------------------------------------


def test_step_advances_the_clock():
    sim = sim_of(EPIDERMIS)
    assert (sim.steps, sim.time, sim.end_step) == (0, 0.0, 1000)
    sim.step(10).step(5)
    assert sim.steps == 15
    assert sim.time == pytest.approx(15 * 0.01, rel=1e-12)
    with pytest.raises(ValueError):
        sim.step(-1)
    sim.close()
    with pytest.raises(RuntimeError, match="closed"):
        sim.step(1)


def run_cli(scenario, out, *flags):
    subprocess.run([str(TISSUE_BIN), "run", str(scenario), "--out", str(out), "--backend", BACKEND, *flags],
                   check=True, stdout=subprocess.DEVNULL)


def assert_same_run_files(a, b):
    names_a = sorted(p.name for p in a.iterdir() if p.name not in ("run.json", ".tissue.lock"))
    names_b = sorted(p.name for p in b.iterdir() if p.name not in ("run.json", ".tissue.lock"))
    assert names_a == names_b and len(names_a) > 3
    differ = [n for n in names_a if not filecmp.cmp(a / n, b / n, shallow=False)]
    assert differ == []


@pytest.mark.parametrize("scenario,chunk", [(EPIDERMIS, None), (EPIDERMIS, 37), (GRID, 7), (SURFACE, None)])
def test_python_run_writes_the_bytes_of_tissue_run(tmp_path, scenario, chunk):
    steps = {"epidermis_short.toml": "500", "grid_short.toml": "200", "surface_short.toml": "1000"}[scenario.name]
    run_cli(scenario, tmp_path / "cli", "--steps", steps, "--checkpoint-every", "200")
    calls = []
    sim = tissue.Simulation(tissue.Scenario.from_file(scenario), backend=BACKEND, out=tmp_path / "py",
                            steps=int(steps), checkpoint_every=200)
    sim.run(callback=lambda s: calls.append(s.steps), every=chunk)
    assert calls[-1] == int(steps) and calls == sorted(calls)
    if chunk:
        assert calls[0] == chunk
    assert_same_run_files(tmp_path / "cli", tmp_path / "py")
    record = tissue.read_run(tmp_path / "py").record
    assert record["status"] == "completed" and record["steps"]["done"] == int(steps)


def test_output_directory_is_refused_when_not_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(tissue.ScenarioError, match="not empty"):
        sim_of(GRID, out=tmp_path)


# ---- checkpoints and restart ---------------------------------------------------------------------------------


def all_columns(sim):
    return {(t, c): sim.tables[t][c] for t in sim.tables for c in sim.tables[t].columns}


def test_restart_from_python_is_bit_exact(tmp_path):
    # 300 steps pass a growth round (every 200 steps): the tables change shape in between
    a = sim_of(EPIDERMIS)
    a.step(150)
    path = a.checkpoint(tmp_path / "at150.h5")
    a.step(250)
    a.checkpoint(tmp_path / "a400.h5")
    b = tissue.Simulation.restart(path, backend=BACKEND)
    assert b.steps == 150 and b.time == pytest.approx(1.5)
    b.step(250)
    b.checkpoint(tmp_path / "b400.h5")
    ca, cb = all_columns(a), all_columns(b)
    assert ca.keys() == cb.keys()
    for key in ca:
        np.testing.assert_array_equal(ca[key], cb[key], err_msg=str(key))
    assert filecmp.cmp(tmp_path / "a400.h5", tmp_path / "b400.h5", shallow=False)


def test_restart_of_a_missing_checkpoint(tmp_path):
    with pytest.raises(tissue.ScenarioError):
        tissue.Simulation.restart(tmp_path / "nothing.h5", backend=BACKEND)


# ---- tables ---------------------------------------------------------------------------------------------------


def test_tables_have_the_documented_shapes_and_invariants():
    sim = sim_of(EPIDERMIS).step(1000)  # past four growth rounds: divisions at 24 elements
    cells, elements = sim.tables["cells"], sim.tables["elements"]
    n, m = cells.rows, elements.rows
    assert n > 16  # divided
    for name in ("x", "y", "z"):
        assert elements[name].shape == (m,) and elements[name].dtype == np.float32
    first, count, owner = cells["first"], cells["count"], elements["cell"]
    assert count.sum() == m
    # the elements of cell c are rows [first, first + count), each owned by c
    for c in range(n):
        assert np.all(owner[first[c]:first[c] + count[c]] == c)
    # the cell centre is the mean of its elements (not periodic in z)
    z = elements["z"].astype(np.float64)
    np.testing.assert_allclose(cells["cz"], [z[first[c]:first[c] + count[c]].mean() for c in range(n)],
                               rtol=1e-5, atol=1e-5)
    # a multi-component column: (rows, components), and each component by its name
    species = [c for c, info in cells.columns.items() if info["component_names"]]
    assert species, cells.columns
    column = species[0]
    info = cells.columns[column]
    values = cells[column]
    assert values.shape == (n, info["components"])
    for k, name in enumerate(info["component_names"]):
        np.testing.assert_array_equal(cells[name], values[:, k])
    assert set(cells) == set(cells.columns)


def test_unknown_column_and_table():
    sim = sim_of(EPIDERMIS)
    with pytest.raises(KeyError, match="no column or component 'nope'.*cx"):
        sim.tables["cells"]["nope"]
    with pytest.raises(KeyError):
        sim.tables["vertices"]


def test_set_column_writes_and_validates():
    sim = sim_of(EPIDERMIS)
    elements = sim.tables["elements"]
    m = elements.rows
    z = elements["z"] + np.float32(0.25)
    sim.set_column("elements", "z", z)
    np.testing.assert_array_equal(elements["z"], z)
    with pytest.raises(ValueError, match=r"expected an array of shape \(%d,\), got \(3,\)" % m):
        sim.set_column("elements", "z", np.zeros(3))
    with pytest.raises(ValueError, match="not finite"):
        sim.set_column("elements", "z", np.full(m, np.nan))
    with pytest.raises(ValueError, match="structure"):
        sim.set_column("elements", "cell", np.zeros(m, dtype=np.int32))
    with pytest.raises(ValueError, match="structure"):
        sim.set_column("cells", "count", np.zeros(sim.tables["cells"].rows, dtype=np.int32))
    with pytest.raises(ValueError, match="explicitly"):
        sim.set_column("elements", "type", np.zeros(m))
    types = elements["type"]
    sim.set_column("elements", "type", types)  # integers are taken
    species = sim.tables["cells"]["species"]
    species[:, 1] = 3.0
    sim.set_column("cells", "species", species)
    np.testing.assert_array_equal(sim.tables["cells"]["delta"], np.full(species.shape[0], 3.0, np.float32))
    sim.set_column("cells", "notch", species[:, 0] * 2)  # one component by name
    np.testing.assert_array_equal(sim.tables["cells"]["species"][:, 0], species[:, 0] * 2)
    with pytest.raises(KeyError):
        sim.set_column("elements", "nope", z)
    sim.step(5)  # the written state steps


def test_device_views_need_cuda():
    if BACKEND == "cuda":
        pytest.skip("the CPU case; the CUDA views are tested by test_cuda_views.py")
    sim = sim_of(EPIDERMIS)
    with pytest.raises(RuntimeError, match="cuda backend"):
        sim.tables["elements"].device("x")


# ---- fields ---------------------------------------------------------------------------------------------------


def test_grid_field_arrays_are_shaped_like_the_grid():
    sim = sim_of(GRID).step(3)
    (name,) = sim.fields
    field = sim.fields[name]
    arrays = field.arrays()
    assert arrays and all(a.shape == (1, 48, 64) for a in arrays.values())
    assert field.spacing > 0 and field.vertices is None
    species = next(iter(arrays))
    values = arrays[species].copy()
    values[0, 0, 0] = 0.5
    sim.set_field(name, species, values)
    np.testing.assert_array_equal(field[species], values)
    with pytest.raises(ValueError):
        sim.set_field(name, species, values[0])
    with pytest.raises(KeyError, match="has no array"):
        field["nope"]


def test_surface_field_has_its_mesh():
    sim = sim_of(SURFACE)
    (field,) = sim.fields.values()
    vertices, faces = field.vertices, field.faces
    assert vertices.shape[1] == 3 and faces.shape[1] == 3
    assert faces.min() == 0 and faces.max() == len(vertices) - 1
    # spot.obj's vertex count, read independently
    obj = (REPO / "scenarios" / "meshes" / "spot.obj").read_text().splitlines()
    assert len(vertices) == sum(1 for line in obj if line.startswith("v "))
    assert all(a.shape == (len(vertices),) for a in field.arrays().values())


# ---- Ctrl-C ---------------------------------------------------------------------------------------------------


def test_sigint_stops_after_the_current_step_and_the_simulation_goes_on(tmp_path):
    script = textwrap.dedent(f"""
        import os, signal, threading, time
        import tissue
        sim = tissue.Simulation(tissue.Scenario.from_file({str(EPIDERMIS)!r}), backend={BACKEND!r},
                                out={str(tmp_path / 'run')!r}, steps=10**9)
        sim.step(1)
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            sim.step(10**9)
        except tissue.Interrupted as e:
            print("interrupted", e.signal, sim.steps, flush=True)
        at = sim.steps
        sim.step(3)
        assert sim.steps == at + 3
        # Python's own handler is back: a second Ctrl-C outside a step is a KeyboardInterrupt
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            print("keyboard interrupt", flush=True)
        sim.close()
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env=os.environ)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    word, signo, step = lines[0].split()
    assert (word, int(signo)) == ("interrupted", signal.SIGINT) and int(step) > 1
    assert lines[1] == "keyboard interrupt"
    run = tissue.read_run(tmp_path / "run")
    assert run.record["status"] == "completed"
    # the interrupted step was written, with a checkpoint
    assert (tmp_path / "run" / f"checkpoint_{int(step):09d}.h5").exists()


# ---- the README's example and pip install -------------------------------------------------------------------------


def test_readme_example_runs(tmp_path, monkeypatch):
    """The README's three lines, on a shortened epidermis (their only change: steps=300 and the paths)."""
    text = (REPO / "README.md").read_text()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) == 3 and lines[0] == "import tissue", lines
    code = "\n".join(lines).replace('"scenarios/epidermis.toml"', repr(str(REPO / "scenarios" / "epidermis.toml")))
    code = code.replace('out="runs/epidermis-py"', f'out={str(tmp_path / "run")!r}, steps=300, backend={BACKEND!r}')
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "cells.png").stat().st_size > 1000
    counts = tissue.read_run(tmp_path / "run").cell_counts()
    assert list(counts["step"]) == [0, 300] and list(counts["cells"]) == [100, 100]
