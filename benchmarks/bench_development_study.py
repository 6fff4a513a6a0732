"""The study that chooses the forest's defaults, on the development collection only.

Variants of ``RankingForest`` against its default and against
``RandomForestClassifier()`` and ``ExtraTreesClassifier()`` (100 trees), on
four suites of the development collection (never the confirmation collection,
``bench_confirmation.py``):

- ``real``: the 34 data sets of ``_real_datasets.py``, stratified 5-fold
  cross-validation (seed 0), one repeat;
- ``s16``: the seven sets of ``_scaling_datasets.py`` whose training pool
  holds 16,000 rows: their fixed test part and the 16,000-row training
  subsample of repeat 0 of ``bench_scaling.py``;
- ``sfull``: the nine scaling sets, their whole training pool;
- ``synth``: the eleven designs of ``_synthetic_designs.py``, stratified
  3-fold cross-validation.

A cheaper protocol than the headline benchmarks' (one repeat, two threads
per model: threads change no AUC), so that many variants can be compared; a
variant is kept only when it helps on the suites together, not on one data
set. The report gives, per suite, each model's mean AUC and its mean
difference to the reference (the default by default) with its standard error
over the data sets and the number of sets where it is ahead.

    python benchmarks/bench_development_study.py --suites real synth \\
        --models RF100 ET100 "RankingForest()" \\
        "RankingForest(leafrank=LeafRank(max_depth=7, min_samples_leaf=5))"
    python benchmarks/bench_development_study.py --report-only

Models are the peers of ``_peers.py`` by label or constructor expressions of
treerank's estimators (parsed, never evaluated; see ``bench_real_data.py``).
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from _common import RESULTS, markdown_table
from _peers import PEER_SPECS
from _protocol import compare_paired, stamp, stamp_lines
from _synthetic_designs import SYNTHETIC_DESIGNS, load_synthetic
from bench_real_data import (
    _treerank_fingerprint,
    append_cache,
    parse_model,
    read_cache,
    test_scores,
)
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

CACHE = os.path.join(RESULTS, "cache", "development_study.jsonl")
REPORT = "development_study.md"
SUITES = ("real", "s16", "sfull", "synth")
N_JOBS = 2


def _tasks(suite):
    """(data set, fold, X, y, train rows, test rows) of a suite."""
    if suite == "real":
        from _real_datasets import DATASETS, load_dataset

        for name in DATASETS:
            data = load_dataset(name)
            cv = StratifiedKFold(5, shuffle=True, random_state=0)
            for fold, (train, test) in enumerate(cv.split(data.X, data.y)):
                yield name, fold, data.X, data.y, train, test
    elif suite in ("s16", "sfull"):
        from _scaling_datasets import SCALING_DATASETS, load_scaling_dataset
        from bench_scaling import split, training_rows

        for name in SCALING_DATASETS:
            data = load_scaling_dataset(name)
            pool, test = split(data)
            if suite == "s16":
                if len(pool) <= 16_000:
                    continue
                train = training_rows(pool, 16_000, 0, data.y)
            else:
                train = pool
            yield name, 0, data.X, data.y, train, test
    elif suite == "synth":
        for name in SYNTHETIC_DESIGNS:
            X, y = load_synthetic(name)
            cv = StratifiedKFold(3, shuffle=True, random_state=0)
            for fold, (train, test) in enumerate(cv.split(X, y)):
                yield name, fold, X, y, train, test
    else:
        raise ValueError(f"unknown suite {suite!r}; expected one of {SUITES}")


def _rows(X, rows):
    return X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]


def _code(ours):
    if ours:
        return _treerank_fingerprint()
    from importlib import metadata

    import sklearn

    return f"scikit-learn {sklearn.__version__}, lightgbm " + (
        metadata.version("lightgbm")
    )


def run(suites, models, cache):
    done = {
        (r["suite"], r["dataset"], r["spec"], r["code"], r["fold"])
        for r in read_cache(cache)
        if r.get("kind") == "study"
    }
    codes = {True: _code(True), False: _code(False)}
    for suite in suites:
        for name, fold, X, y, train, test in _tasks(suite):
            for label, spec, factory, ours in models:
                key = (suite, name, spec, codes[ours], fold)
                if key in done:
                    continue
                estimator = factory(_rows(X, train))
                params = estimator.get_params()
                for k in [k for k in params if k.endswith(("random_state", "n_jobs"))]:
                    estimator.set_params(**{k: fold if "random" in k else N_JOBS})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start = time.perf_counter()
                    estimator.fit(_rows(X, train), y[train])
                    fit_time = time.perf_counter() - start
                    scores = test_scores(estimator, _rows(X, test))
                record = {
                    "kind": "study",
                    "suite": suite,
                    "dataset": name,
                    "model": label,
                    "spec": spec,
                    "code": codes[ours],
                    "fold": fold,
                    "auc": float(roc_auc_score(y[test], scores)),
                    "fit_time": fit_time,
                }
                append_cache(cache, record)
                done.add(key)
                print(
                    f"{suite:6s} {name:24s} {label[:50]:50s} f{fold} "
                    f"AUC {record['auc']:.4f} fit {fit_time:6.2f}s",
                    flush=True,
                )


def write_report(suites, models, cache, path, reference, info):
    codes = {True: _code(True), False: _code(False)}
    specs = {spec: (label, ours) for label, spec, _, ours in models}
    frame = pd.DataFrame(
        [
            r
            for r in read_cache(cache)
            if r.get("kind") == "study"
            and r["spec"] in specs
            and r["code"] == codes[specs[r["spec"]][1]]
        ]
    )
    labels = [label for label, *_ in models]
    lines = ["# Development study: variants of the forest", ""]
    lines += stamp_lines(info)
    lines += [
        "",
        "The protocol, the suites and the models are described in "
        "`benchmarks/bench_development_study.py`. Development data only: the "
        "defaults are chosen here, and confirmed on "
        "`benchmarks/results/confirmation.md`. Per suite: each model's mean AUC "
        f"over the data sets where every model has all its folds, its mean "
        f"difference to {reference} with the standard error over the data sets, "
        "and the number of sets where it is ahead.",
        "",
        "Models:",
        "",
    ]
    for label, spec, _, ours in models:
        lines.append(f"- {label}: `{spec}`" + ("" if ours else " (peer)"))
    lines.append("")
    for suite in suites:
        part = frame[frame.suite == suite] if len(frame) else frame
        if not len(part):
            continue
        table = part.groupby(["dataset", "model"]).auc.mean().unstack()
        counts = part.groupby(["dataset", "model"]).auc.count().unstack()
        expected = counts.max(axis=None)
        keep = [m for m in labels if m in table]
        full = table.index[(counts[keep] == expected).all(axis=1)]
        if not len(full) or reference not in keep:
            continue
        table = table.loc[full, keep]
        lines += [f"## {suite}: {len(full)} data sets", ""]
        rows = []
        for m in keep:
            s = compare_paired(table[m], table[reference], np.ones(len(full)))
            rows.append(
                [
                    m,
                    f"{table[m].mean():.4f}",
                    "" if m == reference else f"{s['mean']:+.4f} ± {s['se']:.4f}",
                    "" if m == reference else f"{s['ahead']}/{s['n']}",
                ]
            )
        lines.append(
            markdown_table(
                ["model", "mean AUC", f"minus {reference}", "ahead"],
                rows,
            )
        )
        lines.append("")
        lines.append("<details><summary>per data set</summary>")
        lines.append("")
        per_set = [[n] + [f"{table.loc[n, m]:.4f}" for m in keep] for n in full]
        lines.append(markdown_table(["data set", *keep], per_set))
        lines += ["", "</details>", ""]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", nargs="+", default=list(SUITES), choices=SUITES)
    parser.add_argument(
        "--models", nargs="+", default=["RF100", "ET100", "RankingForest()"]
    )
    parser.add_argument(
        "--reference",
        default=None,
        help="the model the others are compared with (default: RankingForest())",
    )
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--cache", default=CACHE)
    parser.add_argument("--output", default=os.path.join(RESULTS, REPORT))
    args = parser.parse_args(argv)
    info = stamp(argv=None if argv is None else [sys.argv[0], *argv])
    unknown = [m for m in args.models if m not in PEER_SPECS and "(" not in m]
    if unknown:
        parser.error(f"unknown models {unknown}")
    try:
        models = [parse_model(m) for m in args.models]
    except (ValueError, ImportError) as exc:
        parser.error(str(exc))
    reference = args.reference or next(
        (label for label, _, _, ours in models if ours), models[0][0]
    )
    if not args.report_only:
        run(args.suites, models, args.cache)
    write_report(args.suites, models, args.cache, args.output, reference, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
