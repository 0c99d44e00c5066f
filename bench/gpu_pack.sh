#!/usr/bin/env bash
# Build machine side of a GPU session: build the cuda preset, pack it into .gpu (../shared/tools/gpu-pack.sh),
# and add what the GPU machine lacks for the test suite: Debian's meshio (pure Python; numpy is there)
# and the source path the CTest files refer to. Then run bench/gpu_session.sh there, carrying .gpu.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --preset cuda >/dev/null
cmake --build --preset cuda
../shared/tools/gpu-pack.sh build/cuda
mkdir -p .gpu/py
cp -r /usr/lib/python3/dist-packages/meshio .gpu/py/
# Debian's meshio 7.0 predates NumPy 2, which the GPU image has: restore the one alias it uses
echo 'import numpy; numpy.string_ = getattr(numpy, "string_", numpy.bytes_)' > .gpu/py/sitecustomize.py
pwd > .gpu/source_dir
du -sh .gpu
