#!/usr/bin/env bash
# Build machine side of a GPU session: build the cuda preset, pack it into .gpu (../shared/tools/gpu-pack.sh),
# and add what the GPU machine lacks for the test suite: Debian's meshio (pure Python; numpy is there)
# and the source path the CTest files refer to. Then run bench/gpu_session.sh there, carrying .gpu.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --preset cuda >/dev/null
cmake --build --preset cuda
../shared/tools/gpu-pack.sh build/cuda
# NVRTC (110 MB) cannot travel: the GPU machine's CUDA 13 toolkit has it (/usr/local/cuda/lib64 is on the
# library path in env.sh); fall back to the NVIDIA wheel of its Python when the toolkit lacks it
rm -f .gpu/lib/libnvrtc*
# the same for cuSPARSE/cuSOLVER and what they load (about 700 MB): the toolkit's, or NVIDIA's wheels
rm -f .gpu/lib/libcusparse* .gpu/lib/libcusolver* .gpu/lib/libcublas* .gpu/lib/libnvJitLink*
rm -f .gpu/lib/libnccl*  # 200 MB: the GPU machine's own (system or the Python wheels') is found by env.sh
cat >> .gpu/env.sh <<'ENV'
if [ ! -e /usr/local/cuda/lib64/libcusparse.so.12 ]; then
  for lib in libcusparse.so.12 libcusolver.so.12 libcublas.so.13 libnvJitLink.so.13; do
    dir=$(python3 -c "import glob, site, sys; h = [g for p in site.getsitepackages() for g in glob.glob(p + '/nvidia/**/' + sys.argv[1], recursive=True)]; print(h[0].rsplit('/', 1)[0] if h else '')" "$lib" 2>/dev/null)
    [ -n "$dir" ] && export LD_LIBRARY_PATH="$dir:$LD_LIBRARY_PATH"
  done
fi
if ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2 && [ ! -e /usr/local/cuda/lib64/libnccl.so.2 ]; then
  nccl_dir=$(python3 -c "import glob, site; h = [g for p in site.getsitepackages() for g in glob.glob(p + '/nvidia/**/libnccl.so.2', recursive=True)]; print(h[0].rsplit('/', 1)[0] if h else '')" 2>/dev/null)
  [ -n "$nccl_dir" ] && export LD_LIBRARY_PATH="$nccl_dir:$LD_LIBRARY_PATH"
fi
if [ ! -e /usr/local/cuda/lib64/libnvrtc.so.13 ]; then
  nvrtc_dir=$(python3 -c "import glob, site; print(' '.join(glob.glob(p + '/nvidia/**/libnvrtc.so.13', recursive=True)[0].rsplit('/', 1)[0] for p in site.getsitepackages() if glob.glob(p + '/nvidia/**/libnvrtc.so.13', recursive=True)))" 2>/dev/null | cut -d' ' -f1)
  [ -n "$nvrtc_dir" ] && export LD_LIBRARY_PATH="$nvrtc_dir:$LD_LIBRARY_PATH"
fi
ENV
mkdir -p .gpu/py .gpu/include
cp -r /usr/lib/python3/dist-packages/meshio .gpu/py/
# the Python extension is rebuilt there for the image's Python 3.12 (bench/gpu_session.sh, build_python);
# of what it includes, only toml++ (header-only) is missing on that machine
cp -r /usr/include/toml++ .gpu/include/
# Debian's meshio 7.0 predates NumPy 2, which the GPU image has: restore the one alias it uses
echo 'import numpy; numpy.string_ = getattr(numpy, "string_", numpy.bytes_)' > .gpu/py/sitecustomize.py
pwd > .gpu/source_dir
du -sh .gpu
