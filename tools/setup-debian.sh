#!/usr/bin/env bash
# Installs what building and testing tissue needs on Debian 12 (bookworm), from Debian's packages only.
# Idempotent: packages already present are left alone. Uses sudo when not run as root.
set -euo pipefail
packages=(
  cmake ninja-build g++ git
  libthrust-dev libcub-dev          # Thrust/CUB (CPU backend: Thrust's OpenMP device system)
  librandom123-dev                  # Philox counter-based random numbers
  libtomlplusplus-dev               # scenario files (toml++)
  libcli11-dev                      # command-line options
  libpng-dev                        # PNG snapshots of 2D fields
  nlohmann-json3-dev libssl-dev     # run.json (JSON) and the scenario's SHA-256 in it
  libhdf5-dev                       # checkpoints (HDF5)
  libtinyobjloader-dev              # OBJ meshes
  libmetis-dev                      # mesh partitioning (surface reaction-diffusion patches)
  libeigen3-dev                     # sparse Cholesky of the conformal Willmore flow (Eigen)
  libboost-dev                      # Boost.Odeint steppers (header-only)
  libmuparser-dev                   # expressions of scenario-defined gene networks (muParser)
  libsbml5-dev python3-sbml5        # gene networks from SBML files (libSBML; the tests' SciPy reference parses SBML in Python)
  catch2                            # tests (Catch2 v2)
  python3-meshio python3-numpy      # independent reader of the VTK output in the tests
  python3-h5py                      # independent reader of the checkpoints in the tests
  python3-scipy python3-matplotlib  # tools/sorting_index.py: neighbours (cKDTree) and its plot (docs)
  python3-dev pybind11-dev python3-pybind11   # the Python package's extension (python/, docs/python.md)
  python3-pytest python3-pandas     # its tests (pytest under CTest) and tissue.read_run(...).to_pandas()
  python3-pip python3-setuptools python3-wheel python3-venv   # pip install . (setup.py, offline)
  python3-nbconvert python3-nbclient python3-ipykernel  # the example notebooks, executed in the suite
  openmpi-bin libopenmpi-dev        # tissue sweep over MPI ranks (mpirun -np N tissue sweep ...)
  paraview python3-paraview xvfb xauth  # tissue render, and the tests that load view.pvsm in pvbatch (X server: xvfb-run)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
