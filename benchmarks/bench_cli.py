"""Scoring a large CSV through the command line vs pandas.read_csv + decision_function.

Writes a CSV of ``--rows`` rows (default 1,000,000) x 20 features plus an id
column, fits a model on 20,000 rows of the same distribution, then times in
fresh processes, alternately, best of ``--repeat``:

- the CLI: ``treerank score model.trk data.csv --out scores.csv`` (ids carried,
  scores written, chunks of 10,000 rows (the default));
- the reference: ``pandas.read_csv(data.csv)`` then ``model.decision_function``
  on the feature columns (nothing written).

Both processes start Python, import their libraries and load the model, so
the ratio compares whole runs. Peak memory is each process's maximum resident
set size. Targets (issue 14): CLI time <= 1.5x the reference, CLI peak memory
< 1 GB.

    python benchmarks/bench_cli.py [--rows 1000000] [--trees 100] [--repeat 3]
                                   [--aggregation median]

With today's engine the median forest's ``decision_function`` needs about
16 KB per row at once (1,000,000 rows: ~16 GB for the reference, which scores
the whole file in one call), so the committed run uses
``--aggregation mean``; the CLI streams chunks and is not affected.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import markdown_table, write_result
from _protocol import stamp

from treerank import RankingForest
from treerank.model_io import save_model

N_FEATURES = 20

# peak memory: VmHWM of the process's own address space (ru_maxrss would
# include the parent's resident set at fork, which Linux keeps across exec)
_MEASURE = """
import time
start = time.perf_counter()
{body}
elapsed = time.perf_counter() - start
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
print(f"{{elapsed}} {{peak / 1024}}")
"""

_CLI = """
from treerank.cli import main
status = main(["score", {model!r}, {data!r}, "--out", {out!r}, "--force"])
assert status == 0
"""

_REFERENCE = """
import pandas as pd
from treerank.model_io import load_model
model = load_model({model!r})
frame = pd.read_csv({data!r})
scores = model.decision_function(frame[{features!r}].to_numpy())
assert scores.shape[0] == {rows}
"""


def _sample(n, rng):
    X = rng.normal(size=(n, N_FEATURES))
    logit = X[:, 0] - 0.5 * X[:, 1] ** 2 + 0.8 * X[:, 2] * X[:, 3]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


def write_data(path, n_rows, rng, chunk=100_000):
    names = [f"x{j}" for j in range(N_FEATURES)]
    with open(path, "w") as handle:
        handle.write("id," + ",".join(names) + "\n")
        for start in range(0, n_rows, chunk):
            X, _ = _sample(min(chunk, n_rows - start), rng)
            ids = np.char.add("row", np.arange(start, start + X.shape[0]).astype(str))
            body = np.column_stack([ids, X.astype(str)])
            handle.write("\n".join(",".join(row) for row in body) + "\n")
    return names


def run(code):
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE.format(body=code)],
        capture_output=True,
        text=True,
        check=True,
    )
    elapsed, peak = map(float, result.stdout.split()[-2:])
    return elapsed, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--aggregation", choices=["median", "mean", "borda"], default="median"
    )
    args = parser.parse_args()
    info = stamp()  # before any fit
    rng = np.random.default_rng(0)
    folder = tempfile.mkdtemp(prefix="bench_cli_")
    data = os.path.join(folder, "data.csv")
    model_path = os.path.join(folder, "model.trk")
    out = os.path.join(folder, "scores.csv")

    start = time.perf_counter()
    names = write_data(data, args.rows, rng)
    size = os.path.getsize(data) / 2**20
    print(
        f"wrote {args.rows} rows ({size:.0f} MB) in {time.perf_counter() - start:.1f} s"
    )
    X, y = _sample(20_000, rng)
    forest = RankingForest(
        n_estimators=args.trees, aggregation=args.aggregation, random_state=0
    ).fit(X, y)
    metadata = {
        "features": names,
        "target": "y",
        "positive": None,
        "id_columns": ["id"],
    }
    save_model(forest, model_path, metadata=metadata)

    cli = _CLI.format(model=model_path, data=data, out=out)
    reference = _REFERENCE.format(
        model=model_path, data=data, features=names, rows=args.rows
    )
    times = {"cli": [], "reference": []}
    peaks = {"cli": [], "reference": []}
    for repeat in range(args.repeat):
        for name, code in [("reference", reference), ("cli", cli)]:
            elapsed, peak = run(code)
            times[name].append(elapsed)
            peaks[name].append(peak)
            print(f"run {repeat}: {name} {elapsed:.2f} s, peak {peak:.0f} MB")
    with open(out) as handle:
        n_out = sum(1 for _ in handle) - 1
    assert n_out == args.rows, n_out
    best = {name: min(values) for name, values in times.items()}
    ratio = best["cli"] / best["reference"]
    rows = [
        [
            "`treerank score` (CLI, chunks of 10,000, ids + scores written)",
            f"{best['cli']:.2f}",
            f"{ratio:.2f}",
            f"{max(peaks['cli']):.0f}",
        ],
        [
            "`pandas.read_csv` + `decision_function` (nothing written)",
            f"{best['reference']:.2f}",
            "1.00",
            f"{max(peaks['reference']):.0f}",
        ],
    ]
    body = (
        f"Scoring {args.rows:,} rows x {N_FEATURES} features (+ an id column, "
        f"{size:.0f} MB of CSV) with a RankingForest of {args.trees} trees "
        f"(aggregation={args.aggregation!r}, fitted on 20,000 rows). Each run is "
        "a fresh process (start-up, imports and model loading included); best of "
        f"{args.repeat} alternating runs; peak memory is the largest resident set "
        "of the runs.\n\nTargets (issue 14): CLI time <= 1.5x the reference, "
        "CLI peak memory < 1 GB.\n\n"
        + markdown_table(
            ["run", "time (s)", "time / reference", "peak memory (MB)"], rows
        )
        + f"\n\nAll runs (s): CLI {', '.join(f'{t:.2f}' for t in times['cli'])}; "
        f"reference {', '.join(f'{t:.2f}' for t in times['reference'])}.\n"
    )
    write_result("cli.md", "Scoring a large CSV: the CLI vs pandas", body, info)
    for path in (data, out, model_path):
        os.remove(path)
    os.rmdir(folder)


if __name__ == "__main__":
    main()
