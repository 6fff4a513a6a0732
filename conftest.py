"""Root conftest: doctest namespace, a non-interactive matplotlib backend, and
single-threaded BLAS.

The tests fit small problems: OpenBLAS's threads only cost there (on a busy
two-core machine, a TreeRank of logistic-regression splits fitted ten times
slower with two BLAS threads than with one). The variables are read when
numpy and scipy load their BLAS, so they are set before numpy is imported, and
they reach the command-line tests' subprocesses. A value already set wins.
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["np"] = np
