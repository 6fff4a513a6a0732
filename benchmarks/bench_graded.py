"""Graded targets: the default forest against a regressor on the grade codes.

Two designs of three ordered grades, each with 30 seeds (a training set of
3,000 rows and a test set of 20,000 from the same distribution):

- ``OrdinalNestedSquares`` (``treerank.datasets``): three grades on four nested
  square rings, the monotone likelihood ratio condition holds;
- a smooth-score design: six uniform features on [-1, 1], a score
  ``sin(2 x0) + x1**2 + 0.5 x2 x3 + 0.3 noise`` cut at 0.3 and 1.0 into three
  grades (x4 and x5 are noise).

Models: the default ``RankingForest`` on the grades (stacked trees, Kendall
median; ``leaf_scores="auto"``), and ``RandomForestRegressor(n_estimators=300)``
on the grade codes, both with ``random_state`` = the seed, one thread. The
measure is the volume under the ROC surface (VUS) on the test set; the report
gives the mean, the paired differences, the number of seeds where the forest is
ahead and a paired t-test. Written to ``benchmarks/results/graded.md``.

    python benchmarks/bench_graded.py [--seeds 30]
"""

import argparse

import numpy as np
from _common import markdown_table, write_result
from _protocol import stamp
from scipy import stats
from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from treerank import RankingForest
from treerank.datasets import OrdinalNestedSquares
from treerank.metrics import volume_under_surface


def smooth_score(n, seed):
    """Three grades cut from a noisy smooth score of six features."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 6))
    score = (
        np.sin(2 * X[:, 0])
        + X[:, 1] ** 2
        + 0.5 * X[:, 2] * X[:, 3]
        + 0.3 * rng.normal(size=n)
    )
    return X, np.digitize(score, [0.3, 1.0])


def ordinal_squares(n, seed):
    return OrdinalNestedSquares().sample(n, random_state=seed)


DESIGNS = {"OrdinalNestedSquares": ordinal_squares, "smooth score": smooth_score}


def run(seeds, n_train, n_test):
    rows = []
    with threadpool_limits(1):
        for name, generate in DESIGNS.items():
            forest_vus, regressor_vus, choices = [], [], []
            for seed in range(seeds):
                X, y = generate(n_train, seed)
                X_test, y_test = generate(n_test, 10_000 + seed)
                forest = RankingForest(random_state=seed).fit(X, y)
                regressor = RandomForestRegressor(
                    n_estimators=300, random_state=seed, n_jobs=1
                ).fit(X, y)
                forest_vus.append(
                    volume_under_surface(y_test, forest.decision_function(X_test))
                )
                regressor_vus.append(
                    volume_under_surface(y_test, regressor.predict(X_test))
                )
                choices.append(forest.leaf_scores_)
                print(
                    f"{name:22s} seed {seed:2d} forest {forest_vus[-1]:.4f} "
                    f"({forest.leaf_scores_}) regressor {regressor_vus[-1]:.4f}",
                    flush=True,
                )
            diff = np.array(forest_vus) - np.array(regressor_vus)
            p = stats.ttest_rel(forest_vus, regressor_vus).pvalue
            rows.append(
                [
                    name,
                    f"{np.mean(forest_vus):.4f}",
                    f"{np.mean(regressor_vus):.4f}",
                    f"{diff.mean():+.4f} ± {diff.std(ddof=1) / np.sqrt(seeds):.4f}",
                    f"{int((diff > 0).sum())}/{seeds}",
                    f"{p:.2g}",
                    f"rank {choices.count('rank')}, rate {choices.count('rate')}",
                ]
            )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--n-train", type=int, default=3000)
    parser.add_argument("--n-test", type=int, default=20_000)
    args = parser.parse_args()
    info = stamp()  # before any fit
    rows = run(args.seeds, args.n_train, args.n_test)
    body = (
        f"{args.seeds} seeds per design, {args.n_train:,} training and "
        f"{args.n_test:,} test rows, one thread; VUS on the test set. "
        "`difference`: the forest's VUS minus the regressor's, mean ± its "
        "standard error over the seeds; `p`: paired t-test; `leaf scores`: "
        "what the forest's `leaf_scores='auto'` chose. Written by "
        "`benchmarks/bench_graded.py`.\n\n"
        + markdown_table(
            [
                "design",
                "RankingForest (default)",
                "RandomForestRegressor(300)",
                "difference",
                "forest ahead",
                "p",
                "leaf scores",
            ],
            rows,
        )
    )
    write_result("graded.md", "Graded targets: VUS against a regressor", body, info)


if __name__ == "__main__":
    main()
