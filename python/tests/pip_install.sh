#!/usr/bin/env bash
# `pip install .` of the Python package (setup.py), reusing the configured build tree BUILD_DIR, into a
# fresh target folder; then a fresh interpreter outside the source tree imports it from there and steps a
# scenario built from a dict. CTest python.pip_install.
#   usage: pip_install.sh PYTHON SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
python=$1 source=$2 build=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
TISSUE_BUILD_DIR=$build "$python" -m pip install -q --no-build-isolation --no-deps --no-cache-dir \
  --disable-pip-version-check --root-user-action=ignore --target "$work/site" "$source"
cd "$work"
PYTHONPATH="$work/site" "$python" - <<'PY'
import os, tissue
assert tissue.__file__.startswith(os.getcwd()), tissue.__file__
d = {"simulation": {"model": "grid_rd", "dt": 1.0, "steps": 5}, "grid": {"nx": 16, "ny": 12},
     "reaction": {"preset": "theta"}}
sim = tissue.Simulation(tissue.Scenario.from_dict(d), backend="cpu").step(5)
(field,) = sim.fields.values()
assert sim.steps == 5 and all(a.shape == (1, 12, 16) for a in field.arrays().values())
print("installed", tissue.version, "at", os.path.dirname(tissue.__file__))
PY
