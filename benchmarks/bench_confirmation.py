"""Confirmation: the default RankingForest against its peers on unseen data.

The confirmation collection (``confirmation_collection.json``, read by
``_confirmation_datasets.py``) was fixed by a rule written before any result
on it was seen; it is run once a change to the forest is final and is never
used to choose anything (the development collection, ``bench_real_data.py``
and ``bench_scaling.py``, is where defaults are chosen). The protocol is in
the docs' benchmark page and in ``_protocol.py``:

- a table of fewer than 62,500 rows is split by stratified 5-fold
  cross-validation (``StratifiedKFold(5, shuffle=True, random_state=0)``); a
  larger one once, into a stratified 75% training and 25% test part (seed 0);
- every model sees the same splits; the measure is the test AUC of its
  ranking scores (``_peers.peer_scores``; treerank's ``decision_function``);
- the peers are those of ``_peers.py``, at their defaults, with the data as a
  table (native categories where the library has them, one-hot otherwise);
- per data set, a paired test (the corrected resampled t-test over the
  folds, DeLong's test on a single split) gives wins, ties and losses; across
  the data sets of a size band, the mean difference with its standard error,
  the share of sets where the forest is ahead and Holm-corrected Wilcoxon
  tests.

Results go to a JSON-lines cache (``benchmarks/results/cache/confirmation.jsonl``,
not committed; test scores of single-split sets beside it) and the report to
``benchmarks/results/confirmation.md``. The accuracy run may use several
threads per model (``--n-jobs``; it changes no AUC); fit and prediction times
compared with ``RandomForestClassifier()`` come from ``--timing``, one
thread, best of three, alone on the machine.

    python benchmarks/bench_confirmation.py --n-jobs 2          # accuracy
    python benchmarks/bench_confirmation.py --timing            # times
    python benchmarks/bench_confirmation.py --report-only

    pip install -e ".[benchmark]"
"""

import argparse
import hashlib
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from _common import RESULTS, markdown_table
from _confirmation_datasets import CONFIRMATION_DATASETS, load_confirmation_dataset
from _peers import PEER_SPECS, make_peer, peer_scores
from _protocol import (
    BANDS,
    compare_paired,
    corrected_t_test,
    delong_test,
    holm,
    size_band,
    stamp,
    stamp_lines,
)
from bench_real_data import _treerank_fingerprint, append_cache, read_cache
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, train_test_split

CACHE = os.path.join(RESULTS, "cache", "confirmation.jsonl")
SCORES = os.path.join(RESULTS, "cache", "confirmation_scores")
REPORT = "confirmation.md"
SINGLE_SPLIT_ROWS = 62_500
N_FOLDS, SPLIT_SEED, MODEL_SEED = 5, 0, 0
OURS = {"RankingForest": "RankingForest()"}
MODELS = [*PEER_SPECS, *OURS]
REFERENCE = "RF100"
TIMED = ("RF100", "RankingForest")


def splits(y):
    """The (train, test) splits of a data set with labels ``y``."""
    if y.size < SINGLE_SPLIT_ROWS:
        cv = StratifiedKFold(N_FOLDS, shuffle=True, random_state=SPLIT_SEED)
        return list(cv.split(np.zeros(y.size), y))
    train, test = train_test_split(
        np.arange(y.size), test_size=0.25, stratify=y, random_state=SPLIT_SEED
    )
    return [(np.sort(train), np.sort(test))]


def _data_hash(dataset):
    rows = pd.util.hash_pandas_object(dataset.X, index=False).to_numpy()
    digest = hashlib.sha256(rows.tobytes())
    digest.update(np.ascontiguousarray(dataset.y).tobytes())
    return digest.hexdigest()[:12]


def make_model(label, X, n_jobs):
    if label in OURS:
        from treerank import RankingForest

        return RankingForest(random_state=MODEL_SEED, n_jobs=n_jobs)
    return make_peer(label, X, seed=MODEL_SEED, n_jobs=n_jobs)


def scores_of(label, estimator, X):
    if label in OURS:
        return estimator.decision_function(X)
    return peer_scores(estimator, X)


def code_of(label):
    if label in OURS:
        return _treerank_fingerprint()
    library = PEER_SPECS[label][0]
    from importlib import metadata

    return f"{library} {metadata.version(library)}"


def _scores_path(name, label, code, fold):
    digest = hashlib.sha256(f"{name}|{label}|{code}|{fold}".encode()).hexdigest()
    return os.path.join(SCORES, f"{name}-{digest[:16]}.npy")


def run(names, models, cache, n_jobs, commit):
    from threadpoolctl import threadpool_limits

    done = {
        (r["dataset"], r["data"], r["model"], r["code"], r["fold"])
        for r in read_cache(cache)
        if r.get("kind") in ("accuracy", "failed")
    }
    codes = {label: code_of(label) for label in models}
    with threadpool_limits(limits=n_jobs):
        for name in names:
            dataset = load_confirmation_dataset(name)
            data = _data_hash(dataset)
            X, y = dataset.X, dataset.y
            folds = splits(y)
            for fold, (train, test) in enumerate(folds):
                for label in models:
                    key = (name, data, label, codes[label], fold)
                    if key in done:
                        continue
                    estimator = make_model(label, X.iloc[train], n_jobs)
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            start = time.perf_counter()
                            estimator.fit(X.iloc[train], y[train])
                            fit_time = time.perf_counter() - start
                            start = time.perf_counter()
                            scores = np.asarray(
                                scores_of(label, estimator, X.iloc[test]), dtype=float
                            )
                            predict_time = time.perf_counter() - start
                    except Exception as exc:  # a model that refuses the table
                        # at its defaults: recorded, reported, never retried
                        record = {
                            "kind": "failed",
                            "dataset": name,
                            "data": data,
                            "model": label,
                            "code": codes[label],
                            "fold": fold,
                            "error": f"{type(exc).__name__}: {exc}",
                            "commit": commit,
                        }
                        append_cache(cache, record)
                        done.add(key)
                        print(
                            f"{name:24s} {label:16s} f{fold} FAILED {exc}", flush=True
                        )
                        continue
                    if len(folds) == 1:  # DeLong's test needs the scores
                        os.makedirs(SCORES, exist_ok=True)
                        np.save(_scores_path(name, label, codes[label], fold), scores)
                    record = {
                        "kind": "accuracy",
                        "dataset": name,
                        "data": data,
                        "model": label,
                        "code": codes[label],
                        "fold": fold,
                        "n_folds": len(folds),
                        "n_train": int(train.size),
                        "n_test": int(test.size),
                        "auc": float(roc_auc_score(y[test], scores)),
                        "fit_time": fit_time,
                        "predict_time": predict_time,
                        "n_jobs": n_jobs,
                        "commit": commit,
                    }
                    append_cache(cache, record)
                    done.add(key)
                    print(
                        f"{name:24s} {label:16s} f{fold} AUC {record['auc']:.4f} "
                        f"fit {fit_time:8.2f}s",
                        flush=True,
                    )


def run_timing(names, cache, repeat=3):
    """One thread, best of ``repeat``: fit and prediction of RF100 and the forest."""
    from threadpoolctl import threadpool_limits

    codes = {label: code_of(label) for label in TIMED}
    with threadpool_limits(limits=1):
        for name in names:
            dataset = load_confirmation_dataset(name)
            data = _data_hash(dataset)
            X, y = dataset.X, dataset.y
            train, test = splits(y)[0]
            for label in TIMED:
                fits, predictions = [], []
                for _ in range(repeat):
                    estimator = make_model(label, X.iloc[train], 1)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        start = time.perf_counter()
                        estimator.fit(X.iloc[train], y[train])
                        fits.append(time.perf_counter() - start)
                        start = time.perf_counter()
                        if label in OURS:
                            estimator.decision_function(X.iloc[test])
                        else:
                            estimator.predict_proba(X.iloc[test])
                        predictions.append(time.perf_counter() - start)
                record = {
                    "kind": "timing",
                    "dataset": name,
                    "data": data,
                    "model": label,
                    "code": codes[label],
                    "n_train": int(train.size),
                    "n_test": int(test.size),
                    "fit_time": min(fits),
                    "predict_time": min(predictions),
                }
                append_cache(cache, record)
                print(
                    f"{name:24s} {label:16s} fit {min(fits):8.3f}s "
                    f"predict {min(predictions):7.3f}s",
                    flush=True,
                )


# -- the report ----------------------------------------------------------------


def _collect(records, names, models, hashes):
    codes = {label: code_of(label) for label in models}
    cells, failures = {}, {}
    for r in records:
        if r.get("kind") not in ("accuracy", "failed") or r["dataset"] not in names:
            continue
        if r["model"] not in codes or r["code"] != codes[r["model"]]:
            continue
        if r["data"] != hashes[r["dataset"]]:
            continue
        if r["kind"] == "failed":
            failures[(r["dataset"], r["model"])] = r["error"]
        else:
            cells.setdefault((r["dataset"], r["model"]), {})[r["fold"]] = r
    return cells, codes, failures


def per_set_test(name, cells, codes, ours, peer, y_test_of):
    """p-value of the paired test of ``ours`` against ``peer`` on one data set."""
    a, b = cells[(name, ours)], cells[(name, peer)]
    n_folds = next(iter(a.values()))["n_folds"]
    if n_folds > 1:
        diffs = [a[f]["auc"] - b[f]["auc"] for f in sorted(a)]
        first = a[0]
        return corrected_t_test(diffs, first["n_train"], first["n_test"])
    sa = np.load(_scores_path(name, ours, codes[ours], 0))
    sb = np.load(_scores_path(name, peer, codes[peer], 0))
    return delong_test(y_test_of(name), sa, sb)[2]


def write_report(names, models, cache, path, info):
    records = read_cache(cache)
    datasets = {name: load_confirmation_dataset(name) for name in names}
    hashes = {name: _data_hash(d) for name, d in datasets.items()}
    cells, codes, failures = _collect(records, set(names), models, hashes)
    n_folds_of = {name: len(splits(d.y)) for name, d in datasets.items()}
    # a table counts once every model has fitted all its splits; a table that
    # some model refuses at its defaults is left out of every comparison (so
    # that all comparisons are over the same tables) and listed apart
    failed = [n for n in names if any((n, m) in failures for m in models)]
    complete = [
        n
        for n in names
        if n not in failed
        and all(len(cells.get((n, m), {})) == n_folds_of[n] for m in models)
    ]
    auc = pd.DataFrame(
        {
            m: {
                n: np.mean([r["auc"] for r in cells[(n, m)].values()]) for n in complete
            }
            for m in models
        }
    )
    n_train = {
        n: next(iter(cells[(n, models[0])].values()))["n_train"] for n in complete
    }

    def y_test_of(name):
        y = datasets[name].y
        return y[splits(y)[0][1]]

    ours = "RankingForest"
    peers = [m for m in models if m != ours]
    lines = [
        "# Confirmation: the default RankingForest on data never used to choose",
        "",
    ]
    lines += stamp_lines(info)
    lines += [
        "",
        f"{len(complete)} of {len(names)} data sets complete (every model, every "
        f"split); {len(failed)} refused by some model at its defaults (below). "
        "The collection, its rule and each table's target and dropped "
        "columns: `benchmarks/confirmation_collection.json`; the protocol: "
        "`benchmarks/bench_confirmation.py` and the docs' benchmark page.",
        "",
    ]
    if failed:
        lines += [
            "## Tables a model refuses at its defaults",
            "",
            "Left out of every comparison; each model's error on the first split "
            "it refused.",
            "",
            markdown_table(
                ["data set", "model", "error"],
                [
                    [n, m, failures[(n, m)].replace("|", "/")]
                    for n in failed
                    for m in models
                    if (n, m) in failures
                ],
            ),
            "",
        ]
    bands = [
        (label, [n for n in complete if size_band(n_train[n]) == label])
        for label, *_ in BANDS
    ]
    bands.append(("all", complete))
    for label, members in bands:
        if not members or ours not in models:
            continue
        lines += [f"## {label} training rows: {len(members)} data sets", ""]
        rows, pvalues = [], []
        for peer in peers:
            p_sets = [
                per_set_test(n, cells, codes, ours, peer, y_test_of) for n in members
            ]
            summary = compare_paired(
                auc.loc[members, ours], auc.loc[members, peer], p_sets
            )
            pvalues.append(summary["wilcoxon_p"])
            rows.append((peer, summary))
        adjusted = holm(pvalues)
        table = []
        for (peer, s), p in zip(rows, adjusted):
            table.append(
                [
                    peer,
                    f"{auc.loc[members, peer].mean():.4f}",
                    f"{auc.loc[members, ours].mean():.4f}",
                    f"{s['mean']:+.4f} ± {s['se']:.4f}",
                    f"{s['ahead']}/{s['n']} ({100 * s['ahead'] / s['n']:.0f}%)",
                    f"{s['wins']}/{s['ties']}/{s['losses']}",
                    f"{p:.3g}",
                ]
            )
        lines.append(
            markdown_table(
                [
                    "peer",
                    "peer mean AUC",
                    "RankingForest mean AUC",
                    "difference ± SE",
                    "forest ahead",
                    "W/T/L",
                    "Wilcoxon p (Holm)",
                ],
                table,
            )
        )
        lines.append("")
    lines += ["## Test AUC per data set", ""]
    header = ["data set", "rows", "train", "band", *models]
    table = []
    for n in sorted(complete, key=lambda n: n_train[n]):
        best = auc.loc[n].max()
        table.append(
            [n, f"{datasets[n].X.shape[0]:,}", f"{n_train[n]:,}", size_band(n_train[n])]
            + [
                (
                    f"**{auc.loc[n, m]:.4f}**"
                    if auc.loc[n, m] == best
                    else f"{auc.loc[n, m]:.4f}"
                )
                for m in models
            ]
        )
    lines.append(markdown_table(header, table))
    lines.append("")
    timing = [
        r
        for r in records
        if r.get("kind") == "timing"
        and r["dataset"] in hashes
        and r["data"] == hashes[r["dataset"]]
    ]
    if timing:
        latest = {}
        for r in timing:
            if r["code"] == code_of(r["model"]):
                latest[(r["dataset"], r["model"])] = r
        timed = [n for n in complete if all((n, m) in latest for m in TIMED)]
        if timed:
            lines += [
                "## Fit and prediction time against RandomForestClassifier()",
                "",
                "One thread, best of three, alone on the machine (`--timing`): the "
                "first split of each set; prediction is `decision_function` on its "
                "test part against RF100's `predict_proba`.",
                "",
            ]
            table = []
            for label, *_ in BANDS:
                members = [n for n in timed if size_band(n_train[n]) == label]
                if not members:
                    continue
                fit = [
                    latest[(n, ours)]["fit_time"] / latest[(n, REFERENCE)]["fit_time"]
                    for n in members
                ]
                pred = [
                    latest[(n, ours)]["predict_time"]
                    / latest[(n, REFERENCE)]["predict_time"]
                    for n in members
                ]
                table.append(
                    [
                        label,
                        len(members),
                        f"{np.median(fit):.2f}x",
                        f"{max(fit):.2f}x",
                        f"{np.median(pred):.2f}x",
                        f"{max(pred):.2f}x",
                    ]
                )
            lines.append(
                markdown_table(
                    [
                        "band",
                        "sets",
                        "fit / RF100 (median)",
                        "fit (worst set)",
                        "predict / RF100 (median)",
                        "predict (worst set)",
                    ],
                    table,
                )
            )
            lines.append("")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", metavar="NAME")
    parser.add_argument("--models", nargs="+", metavar="MODEL", default=MODELS)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--timing", action="store_true")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--cache", default=CACHE)
    parser.add_argument("--output", default=os.path.join(RESULTS, REPORT))
    args = parser.parse_args(argv)
    names = args.datasets or CONFIRMATION_DATASETS
    unknown = [n for n in names if n not in CONFIRMATION_DATASETS]
    if unknown:
        parser.error(f"unknown data sets {unknown}")
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown models {unknown}; expected some of {MODELS}")
    info = stamp(argv=None if argv is None else [sys.argv[0], *argv])
    if args.timing:
        run_timing(names, args.cache)
    elif not args.report_only:
        run(names, args.models, args.cache, args.n_jobs, info["commit"])
    write_report(names, args.models, args.cache, args.output, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
