"""Builds the `tissue` Python package with the project's CMake (pyproject.toml names this file's setuptools
as the build backend).

    pip install --no-build-isolation .                      # CPU backend (the cpu preset's options)
    TISSUE_CMAKE_ARGS="-DTISSUE_BACKEND=cuda" pip install --no-build-isolation .   # CUDA and CPU backends
    TISSUE_BUILD_DIR=build/cpu pip install --no-build-isolation .                 # reuse a configured build

The extension (_tissue) and the pure-Python modules of python/tissue are taken from the CMake build tree's
python/tissue; a CUDA build's shared engine libraries are copied beside the extension (its RPATH looks there).
"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    """Configures (unless TISSUE_BUILD_DIR names a configured build) and builds the target tissue_python,
    then copies the package from the build tree into the wheel."""

    def build_extension(self, ext):
        build_dir = pathlib.Path(os.environ.get("TISSUE_BUILD_DIR") or ROOT / "build" / "pip").resolve()
        if not (build_dir / "CMakeCache.txt").exists():
            args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DTISSUE_BUILD_PYTHON=ON", "-DTISSUE_BUILD_TESTS=OFF", "-DTISSUE_BUILD_BENCH=OFF",
                    f"-DPython_EXECUTABLE={sys.executable}"]
            args += os.environ.get("TISSUE_CMAKE_ARGS", "").split()
            subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "tissue_python", "-j", jobs], check=True)
        package = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        package.mkdir(parents=True, exist_ok=True)
        built = build_dir / "python" / "tissue"
        for item in built.iterdir():
            if item.suffix in (".py", ".so") or ".so." in item.name:
                shutil.copy2(item, package / item.name)
        # a CUDA build's engine libraries are shared: the wheel carries them beside the extension
        for lib in list(build_dir.glob("engine/libtissue_*.so")) + list(build_dir.glob("modules/libtissue_*.so")) + \
                list(build_dir.glob("cuda/libtissue_*.so")):
            shutil.copy2(lib, package / lib.name)


setup(
    packages=["tissue"],
    package_dir={"": "python"},
    ext_modules=[Extension("tissue._tissue", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
