"""Zero-copy device views of the tables on the CUDA backend, consumed by CuPy (on the GPU machine's image)
and PyTorch: the view's values equal the host copies, writes through it reach the engine, and a
stale view is refused. Registered only in CUDA builds (CTest python.cuda.device_views)."""
import numpy as np
import pytest

import tissue
from conftest import TESTS

import cupy as cp  # the GPU machine's image has CuPy and PyTorch: a missing one fails the test


def test_views_alias_the_engine_columns():
    sim = tissue.Simulation(tissue.Scenario.from_file(TESTS / "epidermis_short.toml"), backend="cuda")
    sim.step(10)
    elements, cells = sim.tables["elements"], sim.tables["cells"]
    view = elements.device("x")
    x = cp.asarray(view)
    assert x.shape == (elements.rows,) and x.dtype == cp.float32
    # zero copy: the device pointer is the column's
    assert x.data.ptr == view.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(cp.asnumpy(x), elements["x"])
    # a multi-component column: (rows, components), strided by the capacity
    species = cp.asarray(cells.device("species"))
    np.testing.assert_array_equal(cp.asnumpy(species), cells["species"])
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(cells.device("delta"))), cells["delta"])
    # a write through the view is the engine's state
    z = cp.asarray(elements.device("z"))
    z += 0.125
    expected = cp.asnumpy(z)
    np.testing.assert_array_equal(elements["z"], expected)
    sim.step(1)
    with pytest.raises(RuntimeError, match="stale"):
        view.__cuda_array_interface__


def test_views_with_torch():
    import torch

    sim = tissue.Simulation(tissue.Scenario.from_file(TESTS / "epidermis_short.toml"), backend="cuda")
    t = torch.as_tensor(sim.tables["elements"].device("y"), device="cuda")
    np.testing.assert_array_equal(t.cpu().numpy(), sim.tables["elements"]["y"])
