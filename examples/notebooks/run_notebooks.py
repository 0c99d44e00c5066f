#!/usr/bin/env python3
"""Executes notebooks top to bottom with nbclient, as CTest does (examples/CMakeLists.txt), so they cannot rot.

    PYTHONPATH=build/cpu/python TISSUE_BIN=build/cpu/tools/tissue \\
        python3 examples/notebooks/run_notebooks.py --out /tmp/nb examples/notebooks/*.ipynb

Each notebook runs in a fresh kernel on this interpreter (sys.executable: the python3 kernel is resolved
from it, not from any installed kernelspec), with this process's environment (PYTHONPATH, TISSUE_*), in
the notebook's own folder as working directory (as Jupyter does), with the inline matplotlib backend (an
MPLBACKEND from the caller is dropped for the kernel). The executed copy, with its outputs, is written to
OUT/<name>.ipynb, also when a cell fails; the source notebooks are never written. A notebook's simulation
output goes to OUT/<name>-runs (TISSUE_NOTEBOOK_OUT, unless the caller set it).

``--check-clean`` executes nothing and fails when a notebook holds outputs or execution counts.

Exit status 0 when every notebook ran (or is clean); 1 when a cell raised (its traceback is printed) or timed out; 77
when nbclient, nbformat or jupyter_client cannot be imported (a failure in CTest, which registers the notebooks
only where they import).
"""

import argparse
import os
import re
import sys
import time
from pathlib import Path

# debugpy (imported with ipykernel, here and in the kernel) warns about frozen modules on every start
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")

try:
    import ipykernel  # noqa: F401 (the kernel)
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError
except ImportError as missing:  # a failure: CTest registers the notebooks only where these import
    print(f"cannot execute notebooks: {missing} (Debian: apt install python3-nbclient python3-ipykernel)",
          file=sys.stderr)
    sys.exit(77)

ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the colours of IPython's tracebacks, unreadable in a CTest log


def kernel_manager() -> KernelManager:
    """A manager for a python3 kernel on sys.executable: with no kernel directories, jupyter_client
    describes its native kernel (ipykernel) by the running interpreter, so an installed kernelspec that
    names another Python cannot take over."""
    specs = KernelSpecManager(kernel_dirs=[], ensure_native_kernel=True)
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs)


def kernel_env(runs_dir: Path) -> dict:
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # ipykernel then selects the inline backend: figures land in the outputs
    env.setdefault("TISSUE_NOTEBOOK_OUT", str(runs_dir))
    return env


def run_notebook(path: Path, out_dir: Path, timeout: int) -> bool:
    """Executes ``path``; writes the executed copy to out_dir/<name>.ipynb. Returns True when it ran."""
    nb = nbformat.read(path, as_version=4)
    runs_dir = out_dir / f"{path.stem}-runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / path.name
    km = kernel_manager()
    client = NotebookClient(nb, km=km, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    print(f"{path.name}: kernel {' '.join(km.kernel_spec.argv[:3])}, cell timeout {timeout} s", flush=True)
    start = time.monotonic()
    ok = False
    try:
        client.execute(env=kernel_env(runs_dir))
        ok = True
    except CellTimeoutError as error:
        print(f"{path.name}: a cell ran over {timeout} s\n{ANSI.sub('', str(error))}", file=sys.stderr)
    except CellExecutionError as error:
        # str(error) holds the failing cell's source and its traceback
        print(f"{path.name}: a cell failed\n{ANSI.sub('', str(error))}", file=sys.stderr)
    finally:
        if km.has_kernel:  # a manager passed to NotebookClient is not shut down by it
            km.shutdown_kernel(now=True)
        nbformat.write(nb, executed)
    wall = time.monotonic() - start
    print(f"{path.name}: {'ok' if ok else 'FAILED'} in {wall:.1f} s; executed copy {executed}", flush=True)
    return ok


def unclean_cells(path: Path) -> list:
    """Indices of the code cells of ``path`` that hold outputs or an execution count."""
    nb = nbformat.read(path, as_version=4)
    return [i for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help=".ipynb files to execute")
    parser.add_argument("--out", type=Path,
                        help="folder for the executed copies and the notebooks' runs (not the source tree)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    parser.add_argument("--check-clean", action="store_true",
                        help="execute nothing; fail when a notebook holds outputs or execution counts (the "
                             "committed notebooks are kept cleared)")
    args = parser.parse_args(argv)
    if args.check_clean:
        dirty = {nb: cells for nb in args.notebooks if (cells := unclean_cells(nb))}
        for nb, cells in dirty.items():
            print(f"{nb}: outputs or execution counts in cells {cells}; clear them with "
                  f"python3 -m nbconvert --clear-output --inplace {nb}", file=sys.stderr)
        return 1 if dirty else 0
    if args.out is None:
        parser.error("--out is required to execute notebooks")
    out_dir = args.out.resolve()
    for notebook in args.notebooks:
        if out_dir == notebook.resolve().parent:
            parser.error(f"--out {args.out} is the notebooks' own folder: executed copies would replace them")
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = [nb.name for nb in args.notebooks if not run_notebook(nb, out_dir, args.timeout)]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
