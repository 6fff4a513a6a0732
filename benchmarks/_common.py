"""Shared helpers of the benchmark scripts (timing, markdown tables)."""

import os
import platform
import time

import numpy as np
import sklearn

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


def environment():
    return (
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs, "
        f"{platform.machine()}"
    )


def write_result(name, title, body):
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"# {title}\n\n{environment()}\n\n{body}\n")
    print(f"wrote {path}")
    return path
