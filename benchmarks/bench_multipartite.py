"""Multipartite ranking: graded forests against binarization, one-vs-rest, regression.

Part 1 (VUS against the optimum). ``treerank.datasets.OrdinalNestedSquares``
(three grades on four nested square rings, the monotone likelihood ratio
condition holds, so the ring order is optimal and VUS* is exact). For each of
``--seeds`` training sets of ``--n-train`` points, every model is fitted on
the same data and scored on the same test set of ``--n-test`` points by the
volume under the ROC surface (``treerank.metrics.volume_under_surface``) and
the AUCs of the two problems "grade >= k". Models, all with the same trees
where trees are grown (100 trees, the forest's default growth: unlimited
depth, ``min_samples_split="auto"``, i.e. ``max(10, ceil(n / 250))`` rows):

- ``RankingForest`` on the grades: the default (every tree on the stacked
  problem of all thresholds, a row of grade g being a positive of weight g
  and a negative of weight 2 - g; Kendall median), with
  ``aggregation="mean"``, and with ``multipartite="thresholds"`` (each tree
  on one threshold "grade >= k", thresholds cycled over the trees);
- ``TreeRank`` on the grades (median of the two threshold trees);
- the stacked problem learned by one TreeRank;
- binarization: ``RankingForest`` on one threshold, ``y >= 1`` or ``y >= 2``;
- ordinal binary decomposition (Frank and Hall): the two threshold forests,
  scored by ``P(Y >= 1 | x) + P(Y >= 2 | x)`` from their calibrated
  ``predict_proba`` (an estimate of the expected grade);
- one-vs-rest: one ``RankingForest`` per grade ("grade k" against the other
  grades), scored by the expected grade ``sum_k k p_k(x) / sum_k p_k(x)``
  from their calibrated probabilities: three forests of 100 trees (three
  times the trees), and three of 34, 33 and 33 trees (the same number);
- regression on the grade: scikit-learn's ``RandomForestRegressor`` with the
  same number of trees, depth and ``min_samples_split``, and with its
  defaults (fully grown trees), and ``HistGradientBoostingRegressor``;
- the optimal scorer (the ring order) as the ceiling.

Part 2 (graded relevance in queries). ``make_learning_to_rank`` (grades 0..4,
300 training and 300 test queries): ``RankingForest`` on the grades against
the forest on ``y >= 1`` (the bipartite reduction), LightGBM's
``LGBMRanker(objective="lambdarank")`` (defaults) and the Bayes-optimal
scorer, evaluated through ``treerank.bridge.evaluate(..., qid=qid,
metrics=["ndcg@10"])`` with bootstrap intervals over queries.

    python benchmarks/bench_multipartite.py [--quick]

LightGBM is a benchmark-only dependency (``pip install lightgbm``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from _common import markdown_table, write_result
from _protocol import stamp
from scipy import stats
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from treerank import RankingForest, TreeRank
from treerank.bridge import evaluate
from treerank.datasets import OrdinalNestedSquares, make_learning_to_rank
from treerank.metrics import cumulative_auc_scores, volume_under_surface
from treerank.tree._classes import resolve_min_samples_split

N_TREES = 100
DEFAULT = "RankingForest on grades (stacked, median: the default)"
DEPTH = None  # the forest's defaults
MIN_SPLIT = "auto"


def _min_split(n_samples):
    """The number of rows ``min_samples_split="auto"`` resolves to."""
    return resolve_min_samples_split(MIN_SPLIT, n_samples)


def _forest(**params):
    return RankingForest(
        n_estimators=N_TREES, max_depth=DEPTH, min_samples_split=MIN_SPLIT, **params
    )


def _timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def _part1_models(X, y, seed):
    """(name, fit seconds, scorer of new X) of every model, fitted on (X, y)."""
    models = []
    base = _forest(random_state=seed)
    fit, graded = _timed(lambda: clone(base).fit(X, y))
    models.append((DEFAULT, fit, graded))
    fit, mean = _timed(lambda: clone(base).set_params(aggregation="mean").fit(X, y))
    models.append(("RankingForest on grades (stacked, mean)", fit, mean))
    fit, cycled = _timed(
        lambda: clone(base).set_params(multipartite="thresholds").fit(X, y)
    )
    models.append(("RankingForest on grades (thresholds cycled, median)", fit, cycled))
    fit, tree = _timed(lambda: TreeRank(random_state=seed).fit(X, y))
    models.append(("TreeRank on grades (median of 2 trees)", fit, tree))
    # measured alternative: one bipartite problem holding the two thresholds
    # (a row of grade g is a positive of weight g and a negative of weight
    # 2 - g): its AUC is an increasing affine function of sum_k n+_k n-_k AUC_k
    Xs, ys, ws = _stacked(X, y, 3)
    fit, model = _timed(
        lambda: TreeRank(random_state=seed).fit(Xs, ys, sample_weight=ws)
    )
    models.append(("TreeRank on the stacked thresholds (one tree)", fit, model))
    thresholds = {}
    for k in (1, 2):
        fit, forest = _timed(lambda k=k: clone(base).fit(X, (y >= k).astype(int)))
        thresholds[k] = (fit, forest)
        models.append((f"RankingForest on y >= {k} (binarized)", fit, forest))
    models.append(
        (
            "ordinal decomposition: P(y >= 1) + P(y >= 2) (2 forests)",
            thresholds[1][0] + thresholds[2][0],
            _Sum([thresholds[1][1], thresholds[2][1]]),
        )
    )
    fits, per_grade = 0.0, []
    for k in range(3):
        fit, forest = _timed(lambda k=k: clone(base).fit(X, (y == k).astype(int)))
        fits += fit
        per_grade.append(forest)
    models.append(
        ("one-vs-rest: expected grade (3 forests)", fits, _OneVsRest(per_grade))
    )
    fits, per_grade = 0.0, []
    for k, size in enumerate((34, 33, 33)):
        small = clone(base).set_params(n_estimators=size)
        fit, forest = _timed(lambda k=k, small=small: small.fit(X, (y == k).astype(int)))
        fits += fit
        per_grade.append(forest)
    models.append(
        (
            "one-vs-rest: expected grade (3 forests, 100 trees in all)",
            fits,
            _OneVsRest(per_grade),
        )
    )
    rf = RandomForestRegressor(
        n_estimators=N_TREES,
        max_depth=DEPTH,
        min_samples_split=_min_split(X.shape[0]),
        random_state=seed,
    )
    fit, model = _timed(lambda: clone(rf).fit(X, y))
    models.append(("RandomForestRegressor (same trees)", fit, _Predict(model)))
    fit, model = _timed(
        lambda: RandomForestRegressor(n_estimators=N_TREES, random_state=seed).fit(X, y)
    )
    models.append(
        ("RandomForestRegressor (defaults, full depth)", fit, _Predict(model))
    )
    fit, model = _timed(
        lambda: HistGradientBoostingRegressor(random_state=seed).fit(X, y)
    )
    models.append(("HistGradientBoostingRegressor (defaults)", fit, _Predict(model)))
    return models


def _stacked(X, y, n_grades):
    positive, negative = y >= 1, y <= n_grades - 2
    X_stacked = np.concatenate([X[positive], X[negative]])
    y_stacked = np.concatenate([np.ones(positive.sum()), np.zeros(negative.sum())])
    weight = np.concatenate([y[positive], n_grades - 1 - y[negative]]).astype(float)
    return X_stacked, y_stacked.astype(int), weight


class _Predict:
    def __init__(self, model):
        self.model = model

    def decision_function(self, X):
        return self.model.predict(X)


class _Sum:
    def __init__(self, forests):
        self.forests = forests

    def decision_function(self, X):
        return sum(forest.predict_proba(X)[:, 1] for forest in self.forests)


class _OneVsRest:
    def __init__(self, forests):
        self.forests = forests

    def decision_function(self, X):
        proba = np.column_stack([f.predict_proba(X)[:, 1] for f in self.forests])
        total = proba.sum(axis=1)
        grades = np.arange(proba.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = proba @ grades / total
        return np.where(total > 0, expected, 0.0)


def part1(n_train, n_test, seeds):
    design = OrdinalNestedSquares()
    optimum = design.optimal_vus()
    X_test, y_test = design.sample(n_test, random_state=10_000)
    rows = {}
    for seed in seeds:
        X, y = design.sample(n_train, random_state=seed)
        for name, fit, model in _part1_models(X, y, seed):
            scores = model.decision_function(X_test)
            vus = volume_under_surface(y_test, scores)
            aucs = cumulative_auc_scores(y_test, scores)
            rows.setdefault(name, []).append((vus, *aucs, fit))
        print(f"seed {seed} done")
    oracle = design.optimal_score(X_test)
    oracle_row = (
        volume_under_surface(y_test, oracle),
        *cumulative_auc_scores(y_test, oracle),
    )
    table = []
    default = np.array(rows[DEFAULT])[:, 0]
    for name, values in rows.items():
        values = np.array(values)
        mean, sd = values.mean(axis=0), values.std(axis=0)
        difference = default - values[:, 0]
        if name == DEFAULT or len(seeds) < 2:
            paired = "-"
        else:
            error = difference.std(ddof=1) / np.sqrt(len(seeds))
            pvalue = stats.wilcoxon(difference).pvalue if np.any(difference) else 1.0
            paired = (
                f"{difference.mean():+.4f} ± {error:.4f} "
                f"({int((difference > 0).sum())}/{len(seeds)}, p = {pvalue:.1g})"
            )
        table.append(
            [
                name,
                f"{mean[0]:.4f} ± {sd[0]:.4f}",
                f"{optimum - mean[0]:+.4f}",
                paired,
                f"{mean[1]:.4f}",
                f"{mean[2]:.4f}",
                f"{mean[3]:.2f}",
            ]
        )
    table.append(
        [
            "optimal scorer (ring order), empirical on the test set",
            f"{oracle_row[0]:.4f}",
            f"{optimum - oracle_row[0]:+.4f}",
            "-",
            f"{oracle_row[1]:.4f}",
            f"{oracle_row[2]:.4f}",
            "-",
        ]
    )
    aucs = design.optimal_cumulative_aucs()
    header = [
        "model",
        "test VUS (mean ± sd)",
        "VUS* - VUS",
        "default minus model (mean ± s.e.; seeds where the default is higher; "
        "Wilcoxon p)",
        "AUC y >= 1",
        "AUC y >= 2",
        "fit (s)",
    ]
    text = (
        f"`OrdinalNestedSquares()` (3 grades, fractions "
        f"{np.round(design.grade_fractions_, 3).tolist()}): VUS* = {optimum:.4f} "
        f"(exact), AUC* = {aucs[0]:.4f} (y >= 1) and {aucs[1]:.4f} (y >= 2); "
        f"chance level 1/6 = 0.1667. {n_train} training points, {len(seeds)} "
        f"training sets (seeds {list(seeds)}), one test set of {n_test} points. "
        f"Trees: {N_TREES} per forest, the forest's defaults (unlimited depth, "
        f"min_samples_split 'auto' = {_min_split(n_train)} rows here; the "
        "regressor 'same trees' gets the same depth and split size); fit times "
        "on 2 shared cores (indicative).\n\n"
        + markdown_table(header, table)
    )
    return text, rows


def part2(n_train, n_test, seed):
    from lightgbm import LGBMRanker

    from treerank.datasets import qid_to_sizes

    X, y, qid = make_learning_to_rank(n_train, random_state=seed)
    X_test, y_test, qid_test, utility = make_learning_to_rank(
        n_test, random_state=seed + 1, return_utility=True
    )
    base = _forest(random_state=seed)
    models = []
    fit, graded = _timed(lambda: clone(base).fit(X, y))
    models.append(("RankingForest on grades 0..4 (stacked, median)", fit, graded))
    fit, mean = _timed(lambda: clone(base).set_params(aggregation="mean").fit(X, y))
    models.append(("RankingForest on grades 0..4 (stacked, mean)", fit, mean))
    fit, cycled = _timed(
        lambda: clone(base).set_params(multipartite="thresholds").fit(X, y)
    )
    models.append(("RankingForest on grades 0..4 (thresholds cycled)", fit, cycled))
    fit, binary = _timed(lambda: clone(base).fit(X, (y >= 1).astype(int)))
    models.append(("RankingForest on y >= 1 (median)", fit, binary))
    fit, lgbm = _timed(
        lambda: LGBMRanker(
            objective="lambdarank", n_jobs=1, random_state=seed, verbose=-1
        ).fit(X, y, group=qid_to_sizes(qid))
    )
    models.append(("LightGBM lambdarank (defaults)", fit, _Predict(lgbm)))
    models.append(("Bayes-optimal (true utility)", None, None))
    table = []
    for name, fit, model in models:
        if model is None:
            from treerank.bridge import evaluate_from_scores

            result = evaluate_from_scores(
                y_test, utility, qid_test, metrics=["ndcg@10"], random_state=0
            )
            scores = utility
        else:
            result = evaluate(
                model, X_test, y_test, qid=qid_test, metrics=["ndcg@10"], random_state=0
            )
            scores = model.decision_function(X_test)
        low, high = result.ci["ndcg@10"]
        table.append(
            [
                name,
                f"{result.means['ndcg@10']:.4f} [{low:.4f}, {high:.4f}]",
                f"{volume_under_surface(y_test, scores):.4f}",
                "-" if fit is None else f"{fit:.2f}",
            ]
        )
    header = [
        "model",
        "test NDCG@10 [95% CI]",
        "test VUS (5 grades, pooled)",
        "fit (s)",
    ]
    fractions = np.round(np.bincount(y) / y.shape[0], 3).tolist()
    text = (
        f"`make_learning_to_rank` defaults (grades 0..4), {n_train} training queries "
        f"({X.shape[0]} documents), {n_test} test queries ({X_test.shape[0]} "
        f"documents); grade fractions {fractions}. "
        "NDCG@10 (exp2 gain) through `treerank.bridge.evaluate(model, X, y, "
        "qid=qid, metrics=['ndcg@10'])`, mean over test queries with a 95% "
        "bootstrap interval over queries; the VUS pools all test documents (chance "
        "1/120).\n\n" + markdown_table(header, table)
    )
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    info = stamp()  # before any fit
    if args.quick:
        text1, _ = part1(1000, 5000, [0])
        print(text1)
        return
    text1, _ = part1(2000, 20_000, list(range(30)))
    text2 = part2(300, 300, 0)
    body = (
        "Generated by `benchmarks/bench_multipartite.py`.\n\n"
        "## 1. Three grades with a known optimum\n\n" + text1 + "\n\n"
        "## 2. Graded relevance in queries: NDCG@10 against LightGBM's lambdarank\n\n"
        + text2
    )
    write_result("multipartite.md", "Multipartite ranking", body, info)


if __name__ == "__main__":
    main()
