"""Tree leaves + list surrogates against the forest, linear rankers and LightGBM.

Part 1 (accuracy and fit time, one run). Synthetic learning-to-rank data from
``treerank.datasets.make_learning_to_rank`` (grades 0..4, 5..50 documents per
query, query offsets), 300 training and 300 test queries, in two settings: the
default model (linear part plus pairwise feature products) and a purely
linear one (``interaction=0``). Compared, all fitted on the same training set
in the same process, with one thread each:

- ``RankingForest`` (100 trees, depth 6) fitted on binarized relevance
  ``y >= 1``, scored by its own ``decision_function`` (median and mean
  aggregation): the baseline;
- the same forest's leaves (``LeafEmbedding``) + ``LinearSurrogateRanker``
  trained on the graded labels with SLAM (NDCG@10 weights), the squared loss
  on normalized gains (``squared_ndcg``) and the NDCG-instantiated pairwise
  logistic loss, with a fixed ridge strength and with one chosen by grouped
  cross-validation (``GridSearchCV`` + ``make_list_scorer``); the fit time
  includes growing the forest;
- ``LinearSurrogateRanker`` on the raw features (same losses);
- LightGBM's ``LGBMRanker(objective="lambdarank")`` with default parameters
  (100 boosted trees of 31 leaves);
- the Bayes-optimal scorer of the generator (the noise-free utility) as the
  ceiling.

Reported: mean NDCG@10 over the test queries with its 95% percentile
bootstrap interval over queries, the paired difference to the forest
baseline (interval from the same query resamples), and the fit time with its
ratio to the baseline forest's fit time.

Part 2 (memory). ``LeafEmbedding`` of a 100-tree forest (depth 6) on 100,000
rows: peak memory traced by ``tracemalloc`` during ``transform``, the size of
the CSR output and of the dense one-hot matrix it replaces.

    python benchmarks/bench_bridge.py [--quick]

LightGBM is a benchmark-only dependency (``pip install lightgbm``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import tracemalloc

import numpy as np
import sklearn
from _common import markdown_table, write_result
from _protocol import stamp
from lightgbm import LGBMRanker
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from threadpoolctl import threadpool_limits

from treerank import RankingForest
from treerank.bridge import LeafEmbedding, evaluate_from_scores, make_list_scorer
from treerank.datasets import make_learning_to_rank, qid_to_sizes
from treerank.surrogates import LinearSurrogateRanker, SLAMSurrogate

LOSSES = {
    "SLAM NDCG@10": (SLAMSurrogate(weights="ndcg@k", k=10), 0.1),
    "squared_ndcg": ("squared_ndcg", 1.0),
    "pairwise_logistic": ("pairwise_logistic", 0.1),
}
N_BOOTSTRAP = 2000
ALPHAS = [0.01, 0.1, 1.0, 10.0]


def _tuned_ranker(loss, leaves, y, qid):
    """alpha chosen by grouped 3-fold CV of NDCG@10 on the training queries."""
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = LinearSurrogateRanker(loss=loss, max_iter=2000).set_fit_request(
            qid=True
        )
        search = GridSearchCV(
            ranker,
            {"alpha": ALPHAS},
            scoring=make_list_scorer("ndcg@10"),
            cv=GroupKFold(3),
        ).fit(leaves, y, qid=qid, groups=qid)
    return search


def _timed_fit(function):
    start = time.perf_counter()
    model = function()
    return time.perf_counter() - start, model


def run_setting(n_train, n_test, n_trees, seed, **model_kwargs):
    X, y, qid = make_learning_to_rank(n_train, random_state=seed, **model_kwargs)
    X_test, y_test, qid_test, utility = make_learning_to_rank(
        n_test, random_state=seed + 1, return_utility=True, **model_kwargs
    )
    relevant = (y >= 1).astype(int)
    forest = RankingForest(n_estimators=n_trees, max_depth=6, random_state=seed)
    rows = []  # (name, fit seconds or None, test scores)

    fit_median, median = _timed_fit(lambda: clone(forest).fit(X, relevant))
    rows.append(
        ("RankingForest (median), y >= 1", fit_median, median.decision_function(X_test))
    )
    fit_mean, mean = _timed_fit(
        lambda: clone(forest).set_params(aggregation="mean").fit(X, relevant)
    )
    rows.append(
        ("RankingForest (mean), y >= 1", fit_mean, mean.decision_function(X_test))
    )
    # the aggregation does not change the trees: the embedding reuses "mean"
    same_trees = np.array_equal(median.apply(X_test), mean.apply(X_test))

    fit_embed, embedding = _timed_fit(
        lambda: LeafEmbedding(
            clone(forest).set_params(aggregation="mean"), threshold=1
        ).fit(X, y)
    )
    start = time.perf_counter()
    leaves = embedding.transform(X)
    transform_train = time.perf_counter() - start
    leaves_test = embedding.transform(X_test)
    for name, (loss, alpha) in LOSSES.items():
        fit_ranker, ranker = _timed_fit(
            lambda loss=loss, alpha=alpha: LinearSurrogateRanker(
                loss=loss, alpha=alpha, max_iter=2000
            ).fit(leaves, y, qid=qid)
        )
        rows.append(
            (
                f"forest leaves + {name}",
                fit_embed + transform_train + fit_ranker,
                ranker.decision_function(leaves_test),
            )
        )
    for name, (loss, _) in LOSSES.items():
        fit_search, search = _timed_fit(
            lambda loss=loss: _tuned_ranker(loss, leaves, y, qid)
        )
        alpha = search.best_params_["alpha"]
        rows.append(
            (
                f"forest leaves + {name}, alpha={alpha:g} by grouped CV",
                fit_embed + transform_train + fit_search,
                search.decision_function(leaves_test),
            )
        )
    for name, (loss, alpha) in LOSSES.items():
        fit_linear, linear = _timed_fit(
            lambda loss=loss, alpha=alpha: LinearSurrogateRanker(
                loss=loss, alpha=alpha, max_iter=2000
            ).fit(X, y, qid=qid)
        )
        rows.append(
            (
                f"linear raw features + {name}",
                fit_linear,
                linear.decision_function(X_test),
            )
        )
    fit_lgbm, lgbm = _timed_fit(
        lambda: LGBMRanker(
            objective="lambdarank", n_jobs=1, random_state=seed, verbose=-1
        ).fit(X, y, group=qid_to_sizes(qid))
    )
    rows.append(("LightGBM lambdarank", fit_lgbm, lgbm.predict(X_test)))
    rows.append(("Bayes-optimal (true utility)", None, utility))

    results = [
        evaluate_from_scores(
            y_test,
            scores,
            qid_test,
            metrics="ndcg@10",
            n_bootstrap=N_BOOTSTRAP,
            random_state=0,  # same query resamples for every model: paired
        )
        for _, _, scores in rows
    ]
    base = results[0]
    table = []
    for (name, fit, _), result in zip(rows, results):
        value = result.means["ndcg@10"]
        low, high = result.ci["ndcg@10"]
        diff = result.bootstrap_means["ndcg@10"] - base.bootstrap_means["ndcg@10"]
        d_low, d_high = np.quantile(diff, [0.025, 0.975])
        delta = value - base.means["ndcg@10"]
        table.append(
            [
                name,
                f"{value:.4f} [{low:.4f}, {high:.4f}]",
                "-"
                if result is base
                else f"{delta:+.4f} [{d_low:+.4f}, {d_high:+.4f}]",
                "-" if fit is None else f"{fit:.2f}",
                "-" if fit is None else f"{fit / fit_median:.3g}",
            ]
        )
    names = [name for name, _, _ in rows]
    info = {
        "better": [names[i] for i, r in enumerate(table) if _sign(r) > 0],
        "worse": [names[i] for i, r in enumerate(table) if _sign(r) < 0],
        "n_train_docs": X.shape[0],
        "n_test_docs": X_test.shape[0],
        "n_leaves": embedding.n_features_out_,
        "same_trees": same_trees,
        "relevant": float(np.mean(y >= 1)),
    }
    return table, info


def _sign(row):
    """+1 / -1 when the paired interval of the difference excludes 0, else 0."""
    if row[2] == "-":
        return 0
    low, high = (float(v) for v in row[2].split("[")[1].rstrip("]").split(","))
    return 1 if low > 0 else -1 if high < 0 else 0


def memory(n_rows, n_trees, seed):
    X, y, _ = make_learning_to_rank(200, random_state=seed)
    forest = RankingForest(
        n_estimators=n_trees, max_depth=6, aggregation="mean", random_state=seed
    )
    embedding = LeafEmbedding(forest, threshold=1).fit(X, y)
    X_big = np.random.default_rng(seed).standard_normal((n_rows, X.shape[1]))
    embedding.transform(X_big[:10])  # warm-up
    tracemalloc.start()
    start = time.perf_counter()
    leaves = embedding.transform(X_big)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    stored = leaves.data.nbytes + leaves.indices.nbytes + leaves.indptr.nbytes
    dense = 8 * leaves.shape[0] * leaves.shape[1]
    tracemalloc.start()
    ranks = embedding.estimator_.apply(X_big)
    _, apply_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del ranks
    return {
        "rows": n_rows,
        "trees": n_trees,
        "columns": leaves.shape[1],
        "nnz": leaves.nnz,
        "type": type(leaves).__name__,
        "stored_mb": stored / 1e6,
        "peak_mb": peak / 1e6,
        "apply_peak_mb": apply_peak / 1e6,
        "dense_mb": dense / 1e6,
        "seconds": seconds,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller run")
    args = parser.parse_args()
    run_stamp = stamp()  # before any fit
    if args.quick:
        n_train, n_test, n_trees, n_rows = 60, 60, 10, 10_000
    else:
        n_train, n_test, n_trees, n_rows = 300, 300, 100, 100_000
    settings = {
        "default model (linear part + pairwise products)": {},
        "linear model (interaction=0)": {"interaction": 0.0},
    }
    header = [
        "model",
        "test NDCG@10 [95% CI]",
        "difference to forest (median) [95% CI]",
        "fit (s)",
        "fit / forest fit",
    ]
    sections = []
    for title, kwargs in settings.items():
        with threadpool_limits(limits=1):  # one thread for every model
            table, info = run_setting(n_train, n_test, n_trees, 0, **kwargs)
        print(title)
        print(markdown_table(header, table))
        sections.append(
            f"### {title}\n\n"
            f"{info['n_train_docs']} training documents, {info['n_test_docs']} test "
            f"documents, {100 * info['relevant']:.0f}% of the training documents "
            f"relevant; {info['n_leaves']} leaves in the forest (one-hot columns). "
            f"Median and mean forests have identical trees: {info['same_trees']}.\n\n"
            + markdown_table(header, table)
            + "\n\nBetter than the forest (paired 95% interval above 0): "
            + ("; ".join(info["better"]) or "none")
            + ".\nWorse than the forest (interval below 0): "
            + ("; ".join(info["worse"]) or "none")
            + "."
        )
    mem = memory(n_rows, n_trees, 0)
    print(mem)
    mem_table = markdown_table(
        [
            "rows",
            "trees",
            "columns (leaves)",
            "nnz",
            "output",
            "CSR size (MB)",
            "peak traced in transform (MB)",
            "peak of the forest's apply alone (MB)",
            "dense one-hot (MB)",
            "transform (s)",
        ],
        [
            [
                f"{mem['rows']:,}",
                mem["trees"],
                f"{mem['columns']:,}",
                f"{mem['nnz']:,}",
                mem["type"],
                f"{mem['stored_mb']:.1f}",
                f"{mem['peak_mb']:.1f}",
                f"{mem['apply_peak_mb']:.1f}",
                f"{mem['dense_mb']:.1f}",
                f"{mem['seconds']:.2f}",
            ]
        ],
    )
    body = (
        f"Generated by `benchmarks/bench_bridge.py`{' --quick' if args.quick else ''}. "
        f"{n_train} training queries and {n_test} test queries per setting; forests "
        f"of {n_trees} trees of depth 6 fitted on `y >= 1`; every model with one "
        "thread (LightGBM `n_jobs=1`, BLAS/OpenMP pools limited to 1 by "
        "threadpoolctl). NDCG@10 (exp2 gain, ties averaged, 0 for a "
        "query without relevant document) is averaged over the test queries; the "
        f"intervals are percentile bootstrap intervals over {N_BOOTSTRAP} query "
        "resamples, the same resamples for every model, so the difference "
        "intervals are paired. Leaf-model fit times include growing the forest "
        "(mean aggregation, same trees as the median forest) and the one-hot "
        "transform. The ridge strength alpha of the surrogate rankers is fixed a "
        "priori (SLAM 0.1, squared_ndcg 1.0, pairwise_logistic 0.1), or chosen "
        f"in {ALPHAS} by GridSearchCV with GroupKFold(3) over the training queries "
        "and `make_list_scorer('ndcg@10')` (the partition is fitted once on all "
        "training queries; the search time is included). LightGBM keeps its "
        "defaults.\n\n## 1. NDCG@10 and fit time\n\n"
        + "\n\n".join(sections)
        + "\n\n## 2. Memory of LeafEmbedding.transform\n\n"
        + mem_table
        + "\n"
    )
    write_result(
        "bridge.md", "Tree leaves + list surrogates (treerank.bridge)", body, run_stamp
    )


if __name__ == "__main__":
    main()
