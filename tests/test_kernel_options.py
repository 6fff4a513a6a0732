"""The compilation settings shared by the compiled kernels (engine._jit)."""

import importlib
import pkgutil

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

import treerank
from treerank._engine._jit import KERNEL_OPTIONS, inner_jit, jit
from treerank.aggregation._cell_index import _row_hashes, _rows_equal, _tail_less


def _kernels():
    for module in pkgutil.walk_packages(treerank.__path__, "treerank."):
        if module.name.endswith("__main__") or module.name.startswith(
            ("treerank.plotting", "treerank.cli")
        ):
            continue
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if isinstance(value, Dispatcher) and value.__module__ == module.name:
                yield module.name + "." + name, value


def test_every_kernel_is_cached_and_makes_no_c_entry_point():
    # a kernel compiled with other options would bring back the C-callable
    # wrapper that no kernel uses (compilation time), or not be cached
    from treerank._compilation._cache import caching_disabled, declared_kernels

    kernels = dict(_kernels())
    declared = declared_kernels()
    assert len(kernels) > 40
    for name, kernel in kernels.items():
        assert kernel.targetoptions.get("no_cfunc_wrapper") is True, name
        assert kernel.targetoptions.get("nogil") is True, name
        # declared through cached_njit, which caches when numba can
        assert kernel in declared, name
    assert not caching_disabled()


def test_inner_kernels_run_as_python_from_python():
    # no Python entry point: called from Python, the plain function runs (a
    # compiled function without one would crash the interpreter)
    rows = np.array([[0, 2, 1], [0, 2, 3], [0, 2, 1]], dtype=np.int32)
    assert _rows_equal(rows, 0, rows, 2) is True
    assert _rows_equal(rows, 0, rows, 1) is False
    assert _tail_less(rows, 0, 1, 1) and not _tail_less(rows, 1, 0, 0)
    # and compiled inside their callers (the hash kernel calls _hash_row)
    hashes = _row_hashes(rows)
    assert hashes[0] == hashes[2] != hashes[1]


def test_inner_jit_compiles_into_its_callers_with_the_kernel_options():
    @inner_jit
    def ratio(a, b):
        return a / b

    @inner_jit(error_model="python")
    def strict_ratio(a, b):
        return a / b

    @jit
    def call(a, b):
        return ratio(a, b)

    @jit
    def strict_call(a, b):
        return strict_ratio(a, b)

    assert KERNEL_OPTIONS["error_model"] == "numpy"
    assert call(1.0, 0.0) == np.inf  # numpy's error model: no exception
    with pytest.raises(ZeroDivisionError):
        strict_call(1.0, 0.0)
    assert ratio(3.0, 2.0) == 1.5  # from Python: the Python function
