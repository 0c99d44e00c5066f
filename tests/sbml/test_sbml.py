#!/usr/bin/python3
"""Gene networks from SBML (issue 37), checked against references independent of the engine.

The reference right-hand side is assembled here in Python from the SBML file itself (Debian's
python3-sbml5: libSBML's own converters inline function definitions and promote local parameters; the
formulas are evaluated by Python) and integrated with SciPy's solve_ivp. The engine's run goes through
`tissue run` and its ParaView output is read with meshio.

Environment: TISSUE = the tissue executable. Run with /usr/bin/python3 -m pytest (Debian's numpy, scipy,
meshio, libsbml).
"""
import math
import os
import subprocess
import xml.etree.ElementTree as ET

import libsbml
import meshio
import numpy as np
import pytest
from scipy.integrate import solve_ivp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TISSUE = os.environ.get("TISSUE", os.path.join(ROOT, "build", "cpu", "tools", "tissue"))


def run(scenario, out, *extra):
    """tissue run SCENARIO --out OUT --overwrite; returns the snapshots [(time, point_data)]."""
    subprocess.run([TISSUE, "run", scenario, "--backend", "cpu", "--out", out, "--overwrite", *extra],
                   check=True, capture_output=True, text=True)
    root = ET.parse(os.path.join(out, "cells.pvd")).getroot()
    return [(float(d.get("timestep")), meshio.read(os.path.join(out, d.get("file"))).point_data)
            for d in root.iter("DataSet")]


class Reference:
    """dx/dt of an SBML model assembled independently of the engine: species in concentration (amount when
    hasOnlySubstanceUnits), reaction rates divided by the compartment size for concentration species, rate
    rules, assignment rules evaluated before each use, `inputs` (id -> value) held fixed."""

    def __init__(self, path, inputs=None):
        doc = libsbml.readSBMLFromFile(path)
        assert doc.getNumErrors(libsbml.LIBSBML_SEV_ERROR) == 0, path
        for option in ("expandFunctionDefinitions", "promoteLocalParameters"):
            props = libsbml.ConversionProperties()
            props.addOption(option, True)
            assert doc.convert(props) == libsbml.LIBSBML_OPERATION_SUCCESS, option
        m = doc.getModel()
        self.env = {"exp": math.exp, "ln": math.log, "log10": math.log10, "pow": math.pow,
                    "sqrt": math.sqrt, "abs": abs}
        for c in m.getListOfCompartments():
            self.env[c.getId()] = c.getSize()
        for p in m.getListOfParameters():
            self.env[p.getId()] = p.getValue() if p.isSetValue() else 0.0
        self.env.update(inputs or {})
        ruled = {r.getVariable(): r for r in m.getListOfRules()}
        self.assign = [(r.getVariable(), self.formula(r.getMath())) for r in m.getListOfRules()
                       if r.isAssignment()]
        self.state, self.x0, self.volume = [], [], {}
        for s in m.getListOfSpecies():
            v = m.getCompartment(s.getCompartment()).getSize()
            amount = s.getHasOnlySubstanceUnits()
            x = s.getInitialConcentration() if s.isSetInitialConcentration() else s.getInitialAmount() / v
            if amount:
                x *= v
            else:
                self.volume[s.getId()] = v
            if s.getBoundaryCondition() and s.getId() not in ruled:
                self.env[s.getId()] = x
                continue
            self.state.append(s.getId())
            self.x0.append(x)
        for p in m.getListOfParameters():
            if p.getId() in ruled and ruled[p.getId()].isRate():
                self.state.append(p.getId())
                self.x0.append(p.getValue())
        self.terms = {s: [] for s in self.state}  # species -> [(factor, compiled rate)]
        for r in m.getListOfReactions():
            rate = self.formula(r.getKineticLaw().getMath())
            for refs, sign in ((r.getListOfReactants(), -1.0), (r.getListOfProducts(), 1.0)):
                for ref in refs:
                    sid = ref.getSpecies()
                    if sid in self.terms:
                        self.terms[sid].append((sign * ref.getStoichiometry() / self.volume.get(sid, 1.0), rate))
        for sid, r in ruled.items():
            if r.isRate():
                self.terms[sid].append((1.0, self.formula(r.getMath())))

    @staticmethod
    def formula(ast):
        text = libsbml.formulaToL3String(ast).replace("^", "**")
        return compile(text, "<sbml>", "eval")

    def rhs(self, t, x):
        env = dict(self.env)
        env.update(zip(self.state, x))
        for var, f in self.assign:
            env[var] = eval(f, env)
        return [sum(k * eval(f, env) for k, f in self.terms[s]) for s in self.state]

    def solve(self, times):
        sol = solve_ivp(self.rhs, (0.0, times[-1]), self.x0, t_eval=times, rtol=1e-11, atol=1e-13,
                        method="LSODA")
        assert sol.success
        return dict(zip(self.state, sol.y))


# Midpoint RK2 with dt = 0.01 has a global error O(dt^2) = 1e-4 relative on these O(1) rates over t = 10,
# and the float species column adds about 1000 steps x 6e-8; the tolerance is 1e-3 of each species' scale.
# toggle_ant: the same toggle written in Antimony (toggle.ant), against the SciPy integration of toggle.xml.
@pytest.mark.parametrize("name,model,inputs", [("decay", "decay", {}), ("toggle", "toggle", {}),
                                               ("toggle_ant", "toggle", {}), ("collier", "collier", {"dbar": 0.0})])
def test_isolated_cell_matches_scipy(tmp_path, name, model, inputs):
    snaps = run(os.path.join(HERE, f"isolated_{name}.toml"), str(tmp_path / name))
    times = np.array([t for t, _ in snaps])
    assert len(times) == 11 and times[-1] == pytest.approx(10.0)
    ref = Reference(os.path.join(HERE, f"{model}.xml"), inputs).solve(times)
    for sid, values in ref.items():
        engine = np.array([float(data[sid][0]) for _, data in snaps])
        scale = np.max(np.abs(values))
        assert np.max(np.abs(engine - values)) <= 1e-3 * scale, (sid, engine, values)


def test_decay_analytic(tmp_path):
    """decay.xml against its closed form: S = S0 exp(-k t), P = P0 + V S0 (1 - exp(-k t)) with V = 2.5
    (S starts at amount 5, concentration 2; P is an amount)."""
    snaps = run(os.path.join(HERE, "isolated_decay.toml"), str(tmp_path / "decay"))
    for t, data in snaps:
        s = 2.0 * math.exp(-0.3 * t)
        p = 0.5 + 2.5 * 2.0 * (1.0 - math.exp(-0.3 * t))
        assert float(data["S"][0]) == pytest.approx(s, rel=1e-4, abs=1e-6)
        assert float(data["P"][0]) == pytest.approx(p, rel=1e-4)


SPECIES = ["notch", "delta", "bound", "ovol2", "ovol1", "cmyc"]


@pytest.mark.parametrize("variant", ["sbml", "antimony"])
def test_epidermis_sbml_equals_builtin(tmp_path, variant):
    """The built-in network exported to SBML (examples/sbml/epidermis_network.xml), or written by hand in
    Antimony (examples/sbml/epidermis_network.ant), gives the built-in's trajectories on 16 coupled cells to
    float rounding (1e-5 of each species' scale), with the same states."""
    a = run(os.path.join(HERE, "epidermis_builtin_small.toml"), str(tmp_path / "builtin"))
    b = run(os.path.join(HERE, f"epidermis_{variant}_small.toml"), str(tmp_path / variant))
    assert len(a) == len(b) == 5
    for (ta, da), (tb, db) in zip(a, b):
        assert ta == tb
        np.testing.assert_array_equal(da["cell_id"], db["cell_id"])
        np.testing.assert_array_equal(da["suprabasal"], db["suprabasal"])
        for s in SPECIES:
            x, y = da[s].astype(float), db[s].astype(float)
            assert np.max(np.abs(x - y)) <= 1e-5 * max(np.max(np.abs(x)), 1e-30), (ta, s)


def test_export_file_is_current(tmp_path):
    """examples/sbml/epidermis_network.xml is what `tissue export-sbml scenarios/epidermis.toml` writes."""
    out = tmp_path / "epidermis.xml"
    subprocess.run([TISSUE, "export-sbml", os.path.join(ROOT, "scenarios", "epidermis.toml"), "--out", str(out)],
                   check=True, capture_output=True)
    ref = libsbml.readSBMLFromFile(os.path.join(ROOT, "examples", "sbml", "epidermis_network.xml"))
    new = libsbml.readSBMLFromFile(str(out))
    assert new.getNumErrors(libsbml.LIBSBML_SEV_ERROR) == 0
    assert libsbml.writeSBMLToString(new) == libsbml.writeSBMLToString(ref)


def random_rhs_values(path, ids, inputs, rng):
    ref = Reference(path, inputs)
    assert ref.state == ids
    values = []
    for _ in range(20):
        x = rng.uniform(0.0, 3.0, len(ids))
        values.append(ref.rhs(0.0, x))
    return np.array(values)


@pytest.mark.parametrize("scenario", ["examples/sbml/epidermis_sbml.toml", "examples/sbml/epidermis_antimony.toml",
                                      "tests/sbml/isolated_toggle.toml", "tests/sbml/isolated_toggle_ant.toml",
                                      "tests/sbml/isolated_collier.toml", "scenarios/epidermis_user_network.toml"])
def test_round_trip(tmp_path, scenario):
    """export-sbml, read back, export-sbml again: the same species, initial values and parameters, and the
    same right-hand side (evaluated by the Python reference at random states, inputs at random values) as
    the first export: a network survives export and import."""
    first, second = tmp_path / "first.xml", tmp_path / "second.xml"
    subprocess.run([TISSUE, "export-sbml", os.path.join(ROOT, scenario), "--out", str(first)], check=True,
                   capture_output=True)
    doc = libsbml.readSBMLFromFile(str(first))
    inputs = [p.getId() for p in doc.getModel().getListOfParameters() if not p.getConstant()]
    back = tmp_path / "back.toml"
    back.write_text(f'[simulation]\nentities = ["tissue"]\nmodules = ["cell_centres", "gene_network"]\n'
                    f'dt = 0.01\nsteps = 1\n[initial]\nlayout = "monolayer"\ncells_x = 1\ncells_y = 1\n'
                    f'elements_per_cell = 4\nadhesive_elements = 0\nspacing = 4.0\ncell_radius = 0.3\n'
                    f'[gene_network]\nsbml = "{first}"\n[gene_network.inputs]\n'
                    + "".join(f'{i} = "{i}"\n' for i in inputs))
    subprocess.run([TISSUE, "export-sbml", str(back), "--out", str(second)], check=True, capture_output=True)
    m1, m2 = (libsbml.readSBMLFromFile(str(f)).getModel() for f in (first, second))
    ids = [s.getId() for s in m1.getListOfSpecies()]
    assert ids == [s.getId() for s in m2.getListOfSpecies()]
    for s in ids:
        assert m1.getSpecies(s).getInitialConcentration() == m2.getSpecies(s).getInitialConcentration()
    for p in m1.getListOfParameters():
        assert m2.getParameter(p.getId()).getValue() == p.getValue(), p.getId()
    seed_inputs = np.random.default_rng(1).uniform(0.0, 3.0, len(inputs))
    values = dict(zip(inputs, seed_inputs))
    a = random_rhs_values(str(first), ids, values, np.random.default_rng(2))
    b = random_rhs_values(str(second), ids, values, np.random.default_rng(2))
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def scenario_with(tmp_path, sbml_line, inputs=""):
    return write(tmp_path, "bad.toml",
                 '[simulation]\nentities = ["tissue"]\nmodules = ["cell_centres", "gene_network"]\n'
                 'dt = 0.01\nsteps = 1\n[initial]\nlayout = "monolayer"\ncells_x = 1\ncells_y = 1\n'
                 'elements_per_cell = 4\nadhesive_elements = 0\nspacing = 4.0\ncell_radius = 0.3\n'
                 f'[gene_network]\n{sbml_line}\n' + inputs)


def expect_bad_input(scenario, *fragments):
    p = subprocess.run([TISSUE, "check", scenario], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def test_bad_input_malformed_xml(tmp_path):
    write(tmp_path, "broken.xml", '<?xml version="1.0"?><sbml xmlns="http://www.sbml.org/sbml/level3/version2/core"'
                                  ' level="3" version="2"><model id="m"><listOfSpecies>')
    expect_bad_input(scenario_with(tmp_path, 'sbml = "broken.xml"'), "bad.toml:15:8: gene_network.sbml: broken.xml: line 1: XML content is not well-formed")


EVENT = ('<listOfEvents><event id="pulse" useValuesFromTriggerTime="true"><trigger initialValue="false" '
         'persistent="true"><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><gt/><ci>x</ci><cn>2</cn>'
         '</apply></math></trigger>{extra}<listOfEventAssignments><eventAssignment variable="{variable}"><math '
         'xmlns="http://www.w3.org/1998/Math/MathML"><cn>0</cn></math></eventAssignment>'
         '</listOfEventAssignments></event></listOfEvents>')

UNSUPPORTED = {
    "algebraic rule": ('<listOfRules><algebraicRule><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><minus/>'
                       '<ci>x</ci><cn>1</cn></apply></math></algebraicRule></listOfRules>', "algebraicRule"),
    # events run per cell per step; what that cannot honour is refused naming the event
    "event with a delay": (EVENT.format(extra='<delay><math xmlns="http://www.w3.org/1998/Math/MathML"><cn>1</cn>'
                                              '</math></delay>', variable="x"),
                           "event 'pulse': has a delay"),
    "event with a priority": (EVENT.format(extra='<priority><math xmlns="http://www.w3.org/1998/Math/MathML"><cn>1'
                                                 '</cn></math></priority>', variable="x"),
                              "event 'pulse': has a priority"),
    "event assigning a compartment": (EVENT.format(extra="", variable="c"), "event 'pulse': assigns compartment 'c'"),
    "delay": ('<listOfRules><rateRule variable="x"><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><csymbol '
              'encoding="text" definitionURL="http://www.sbml.org/sbml/symbols/delay">delay</csymbol><ci>x</ci>'
              '<cn>1</cn></apply></math></rateRule></listOfRules>', "rateRule 'x': uses delay()"),
}


@pytest.mark.parametrize("construct", sorted(UNSUPPORTED))
def test_bad_input_unsupported_construct(tmp_path, construct):
    body, fragment = UNSUPPORTED[construct]
    write(tmp_path, "m.xml", '<?xml version="1.0" encoding="UTF-8"?><sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" '
          'level="3" version="2"><model id="m"><listOfCompartments><compartment id="c" size="1" '
          'spatialDimensions="3" constant="true"/></listOfCompartments><listOfSpecies><species id="x" '
          'compartment="c" initialConcentration="1" hasOnlySubstanceUnits="false" boundaryCondition="false" '
          f'constant="false"/></listOfSpecies>{body}</model></sbml>')
    expect_bad_input(scenario_with(tmp_path, 'sbml = "m.xml"'), "gene_network.sbml: m.xml: ", fragment)


def test_bad_input_non_constant_compartment(tmp_path):
    text = open(os.path.join(HERE, "decay.xml")).read().replace('size="2.5" spatialDimensions="3" constant="true"',
                                                               'size="2.5" spatialDimensions="3" constant="false"')
    write(tmp_path, "m.xml", text)
    expect_bad_input(scenario_with(tmp_path, 'sbml = "m.xml"'), "m.xml: compartment 'cyto': non-constant")


def test_bad_input_unknown_species_in_mapping(tmp_path):
    write(tmp_path, "collier.xml", open(os.path.join(HERE, "collier.xml")).read())
    expect_bad_input(scenario_with(tmp_path, 'sbml = "collier.xml"', '[gene_network.inputs]\ndbar = "mean_q"\n'),
                     "gene_network.inputs.dbar", "'q' is not a species")
    expect_bad_input(scenario_with(tmp_path, 'sbml = "collier.xml"', '[gene_network.inputs]\nzz = "mean_d"\n'),
                     "'zz', which is no species or parameter")


def test_bad_input_missing_file(tmp_path):
    expect_bad_input(scenario_with(tmp_path, 'sbml = "nowhere.xml"'), "gene_network.sbml:", "nowhere.xml: SBML file not found")


def test_bad_input_antimony(tmp_path):
    """Antimony statements outside the supported subset (delayed events, imports) are refused naming the
    file, line and event."""
    write(tmp_path, "m.ant", "x' = -x\nx = 1\nE1: at 2 after (x < 0.5): x = 1\n")
    expect_bad_input(scenario_with(tmp_path, 'sbml = "m.ant"'), "gene_network.sbml: m.ant: m.ant:3: event 'E1': delays")
    write(tmp_path, "p.ant", "x' = -x\nx = 1\nE1: at (x < 0.5), priority = 2: x = 1\n")
    expect_bad_input(scenario_with(tmp_path, 'sbml = "p.ant"'), "p.ant:3: event 'E1': option 'priority = 2'")
    write(tmp_path, "i.ant", "import \"other.ant\"\n")
    expect_bad_input(scenario_with(tmp_path, 'sbml = "i.ant"'), "i.ant:1: 'import' statements")
    write(tmp_path, "r.ant", "J1: A -> B\n")
    expect_bad_input(scenario_with(tmp_path, 'sbml = "r.ant"'), "r.ant:1: reaction 'J1' has no rate law")


# ---- events and the volume input ------------------------------------------------------------------------

def sawtooth_reference(path, t_end):
    """Firing times of sawtooth.xml's `reset` event from SciPy: x' = (the rate rule, read with libSBML),
    integrated by solve_ivp with the trigger (read with libSBML) as a terminal event, x reset to the
    assignment's value after each firing."""
    m = libsbml.readSBMLFromFile(path).getModel()
    env = {p.getId(): p.getValue() for p in m.getListOfParameters()}
    rate = libsbml.formulaToL3String(m.getRateRule("x").getMath())
    ev = m.getEvent("reset")
    trig = ev.getTrigger().getMath()
    assert trig.getType() == libsbml.AST_RELATIONAL_GEQ
    level = eval(libsbml.formulaToL3String(trig.getChild(1)), {}, env)
    reset = eval(libsbml.formulaToL3String(ev.getEventAssignment("x").getMath()), {}, env)
    f = lambda t, y: [eval(rate, {}, dict(env, x=y[0]))]
    hit = lambda t, y: y[0] - level
    hit.terminal, hit.direction = True, 1
    t, x, fired = 0.0, 0.0, []
    while t < t_end:
        sol = solve_ivp(f, (t, t_end), [x], events=hit, rtol=1e-11, atol=1e-12)
        if not sol.t_events[0].size:
            break
        t, x = float(sol.t_events[0][0]), reset
        fired.append(t)
    return np.array(fired)


def test_events_sawtooth_scipy(tmp_path):
    """The engine's sawtooth (sawtooth.xml, 4 cells) against SciPy's firing times: the count n at each output
    time equals the number of firings before it, except within one step of a firing time; x = t - last
    firing within one step; the swap uses pre-event values; initialValue true/false."""
    snaps = run(os.path.join(HERE, "sawtooth_cells.toml"), str(tmp_path / "out"))
    dt = 0.125
    fired = sawtooth_reference(os.path.join(HERE, "sawtooth.xml"), snaps[-1][0] + 1)
    assert fired.size >= 5
    for t, d in snaps:
        n = np.asarray(d["n"]).ravel()
        x = np.asarray(d["x"]).ravel()
        count = int(np.sum(fired <= t + 1e-9))
        near = np.any(np.abs(fired - t) <= dt + 1e-9)
        if not near:
            assert np.all(n == count), (t, n, count)
            last = fired[count - 1] if count else 0.0
            assert np.all(np.abs(x - (t - last)) <= dt + 1e-9), (t, x, last)
        a, b = np.asarray(d["a"]).ravel(), np.asarray(d["b"]).ravel()
        assert np.all(a == (3 if t > 0.5 else 1)) and np.all(b == (1 if t > 0.5 else 3)), (t, a, b)
        assert np.all(np.asarray(d["stays"]) == 0), "an event with initialValue true fired on a trigger true at t = 0"
        assert np.all(np.asarray(d["onces"]) == (1 if t > 0 else 0)), "initialValue false: fires once, at the first step"


def test_events_antimony_equals_xml(tmp_path):
    """The Antimony `at` statements give the same run as the SBML file."""
    xml = run(os.path.join(HERE, "sawtooth_cells.toml"), str(tmp_path / "xml"))
    ant = run(os.path.join(HERE, "sawtooth_cells_ant.toml"), str(tmp_path / "ant"))
    assert len(xml) == len(ant)
    for (t1, d1), (t2, d2) in zip(xml, ant):
        assert t1 == t2
        for name in ("x", "n", "a", "b", "stays", "onces"):
            assert np.array_equal(np.asarray(d1[name]), np.asarray(d2[name])), (t1, name)


def test_events_division(tmp_path):
    """Daughters keep their mother's trigger state (check_events.py division)."""
    out = str(tmp_path / "out")
    subprocess.run([TISSUE, "run", os.path.join(HERE, "events_division.toml"), "--backend", "cpu", "--out", out,
                    "--overwrite"], check=True, capture_output=True)
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "check_events.py"), "division", out], check=True)


def test_events_bad_input(tmp_path):
    """An event assigning an engine input, or reading a name the network lacks: one line, exit 2, the event."""
    write(tmp_path, "m.ant", "x' = 1\nx = 0\nspecies x\nE1: at (x > 1): x = 0, g = 1\ng = 0\n")
    expect_bad_input(scenario_with(tmp_path, 'sbml = "m.ant"', '[gene_network.inputs]\ng = "adhesion"\n'),
                     "m.ant: event 'E1': assigns 'g', an engine input")
    write(tmp_path, "k.ant", "x' = 1\nx = 0\nspecies x\nE1: at (y > 1): x = 0\n")
    expect_bad_input(scenario_with(tmp_path, 'sbml = "k.ant"'), "k.ant: event 'E1': unknown symbol 'y'")


def test_volume_input(tmp_path):
    """p' = k v with v bound to "volume": p equals k dt element_volume times the element counts the output shows
    (check_events.py volume), on growing cells."""
    out = str(tmp_path / "out")
    subprocess.run([TISSUE, "run", os.path.join(HERE, "volume_cells.toml"), "--backend", "cpu", "--out", out,
                    "--overwrite"], check=True, capture_output=True)
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "check_events.py"), "volume", out, "0.5", "0.25"],
                   check=True)


def test_volume_input_bad_keys(tmp_path):
    """element_volume must be a positive finite number: one line naming the key, exit 2."""
    write(tmp_path, "v.ant", "p' = v\np = 0\nspecies p\nv = 0\n")
    for value, fragment in (("0", "gene_network.element_volume"), ('"big"', "gene_network.element_volume"),
                            ("nan", "gene_network.element_volume"), ("inf", "gene_network.element_volume")):
        expect_bad_input(scenario_with(tmp_path, f'sbml = "v.ant"\nelement_volume = {value}',
                                       '[gene_network.inputs]\nv = "volume"\n'), fragment)


# ---- a network per cell type (docs/sbml.md, "A network per cell type") -----------------------------------

def types_scenario(tmp_path, name, types_toml, tissue_toml=""):
    """isolated_types.toml's 16 isolated cells with other [[cell_types]] and [gene_network] tables (the SBML
    files are this folder's)."""
    base = open(os.path.join(HERE, "isolated_types.toml")).read().split("[[cell_types]]")[0]
    base = base.replace('"decay_', f'"{HERE}/decay_')
    return write(tmp_path, name, base + tissue_toml + types_toml + "\n[output]\nevery = 100\n")


def test_typed_networks_decay(tmp_path):
    """Two types, two SBML files: each cell's S equals 2 exp(-k t) with k of its type (0.5 or 0.2); A (only in
    decay_fast.xml) decays in fast cells and stays 2 in slow ones, B (only in decay_slow.xml) the reverse."""
    snaps = run(os.path.join(HERE, "isolated_types.toml"), str(tmp_path / "types"))
    assert len(snaps) == 5
    for t, data in snaps:
        kind = data["cell_type"].astype(int)
        assert set(kind) == {0, 1}
        k = np.where(kind == 0, 0.5, 0.2)
        np.testing.assert_allclose(data["S"].astype(float), 2.0 * np.exp(-k * t), rtol=1e-4)
        fast = kind == 0
        np.testing.assert_allclose(data["A"][fast].astype(float), 2.0 * math.exp(-0.5 * t), rtol=1e-4)
        np.testing.assert_allclose(data["B"][~fast].astype(float), 3.0 * math.exp(-0.2 * t), rtol=1e-4)
        assert np.all(data["A"][~fast] == np.float32(2.0)) and np.all(data["B"][fast] == np.float32(3.0))


def test_typed_networks_same_file_bytes(tmp_path):
    """Two types that both name decay_fast.xml give the bytes of the scenario with decay_fast.xml as the
    tissue-wide network."""
    types = ('[[cell_types]]\nname = "a"\nfraction = 0.5\n{net}[[cell_types]]\nname = "b"\nfraction = 0.5\n{net}')
    per_type = types.format(net=f'[cell_types.gene_network]\nsbml = "{HERE}/decay_fast.xml"\n')
    wide = types.format(net="")
    a = run(types_scenario(tmp_path, "per_type.toml", per_type), str(tmp_path / "per_type"))
    b = run(types_scenario(tmp_path, "wide.toml", wide, f'[gene_network]\nsbml = "{HERE}/decay_fast.xml"\n'),
            str(tmp_path / "wide"))
    assert len(a) == len(b) == 5
    for (ta, da), (tb, db) in zip(a, b):
        assert ta == tb and sorted(da) == sorted(db)
        for key in da:
            np.testing.assert_array_equal(da[key], db[key])
    assert float(a[-1][1]["S"][0]) < 1.0  # the network ran (2 exp(-0.5 x 4) = 0.27)


def test_typed_networks_bad_input(tmp_path):
    """A per-type SBML network whose species starts elsewhere than the tissue-wide one's is refused."""
    other = write(tmp_path, "other.xml", open(os.path.join(HERE, "decay_slow.xml")).read()
                  .replace('initialConcentration="2"', 'initialConcentration="7"'))
    types = (f'[[cell_types]]\nname = "a"\nfraction = 0.5\n[cell_types.gene_network]\nsbml = "{other}"\n'
             '[[cell_types]]\nname = "b"\nfraction = 0.5\n')
    expect_bad_input(types_scenario(tmp_path, "bad.toml", types,
                                    f'[gene_network]\nsbml = "{HERE}/decay_fast.xml"\n'),
                     "cell_types[0].gene_network", "species 'S' starts at 7 here but at 2")


def test_typed_networks_export_refused():
    """export-sbml of a scenario whose types run different networks is refused (one SBML model, one network)."""
    p = subprocess.run([TISSUE, "export-sbml", os.path.join(HERE, "isolated_types.toml")], capture_output=True,
                       text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "runs a network per cell type" in lines[0], p.stderr

