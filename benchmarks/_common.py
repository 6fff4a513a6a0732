"""Shared helpers of the benchmark scripts (timing, markdown tables)."""

import os
import time

import numpy as np
from _protocol import stamp_lines

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def timed(function, *args, repeat=1, **kwargs):
    """Best wall time over ``repeat`` calls, and the last result."""
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_result(name, title, body, info):
    """Write ``results/<name>``: the title, the run's stamp, then ``body``.

    ``info`` is the stamp taken when the run started (``_protocol.stamp``):
    its commit, date, command and environment open the file, in the lines of
    ``_protocol.stamp_lines``.
    """
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join([f"# {title}", "", *stamp_lines(info), "", body]))
        handle.write("\n")
    print(f"wrote {path}")
    return path


WARM_UP_ROWS = (400, 20_000)
"""Table sizes of the warm-up fits: treerank compiles some kernels only for
large inputs (the compact layout of the median's rankings, the insertion of
many unseen rows), so a small table alone leaves compilations in timed fits."""


def warm_up_table(n_rows, categorical=True, missing=True, seed=0):
    """A table with a signal and (optionally) missing values and a text column."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n_rows),
            "b": np.where(
                missing & (rng.random(n_rows) < 0.1), np.nan, rng.normal(size=n_rows)
            ),
        }
    )
    if categorical:
        X["c"] = pd.Categorical(rng.choice(["u", "v", "w"], n_rows))
    else:
        X["c"] = rng.integers(0, 3, n_rows).astype(float)
    y = (X["a"] + rng.normal(size=n_rows) > 0).astype(int).to_numpy()
    return X, y


def warm_up(models, score, prepare=None, categorical=True, missing=True):
    """Fit and score every model once before anything is timed.

    ``models`` holds (label, spec, factory, ours) tuples; treerank's models
    (``ours``) are also fitted on :data:`WARM_UP_ROWS`'s large table. The first
    fit in a process loads (or, after a change of the sources, compiles) the
    compiled kernels; the timed fits must not include that. ``prepare(spec,
    X)`` adapts the table to a model (e.g. category codes for the peers).
    """
    for n_rows in WARM_UP_ROWS:
        X, y = warm_up_table(n_rows, categorical=categorical, missing=missing)
        for _, spec, factory, ours in models:
            if n_rows > WARM_UP_ROWS[0] and not ours:
                continue
            data = prepare(spec, X) if prepare is not None else X
            estimator = factory(data).fit(data, y)
            score(estimator, data)
