"""The default TreeRank against a CART tuned by cross-validation.

Two designs of 2,000 training rows, each with 10 seeds, scored on 20,000 test
rows from the same distribution:

- ``NestedSquares`` (``treerank.datasets``): an axis-aligned design whose
  optimal scorer is a small tree of nested square rings;
- a 10-D Gaussian design whose optimal scorer is linear in 3 features: both
  classes standard normal in 10 dimensions, the positives' mean shifted by
  ``1.5 / sqrt(3)`` along each of the first three axes (probability of a
  positive 1/2).

Models: the default ``TreeRank`` and scikit-learn's ``DecisionTreeClassifier``
with ``min_samples_leaf`` chosen by 5-fold stratified cross-validation on the
AUC among 1, 2, 5, 10, 20, 40, 80, 160 (``GridSearchCV``, refitted on all the
rows), scored by its ``predict_proba``; and, for reference, TreeRank with the
mixed splitter (``MixedLeafRank``: boxes or a half-space at each node, chosen
on held-out rows). Written to ``benchmarks/results/single_tree.md``.

    python benchmarks/bench_single_tree.py [--seeds 10]
"""

import argparse

import numpy as np
from _common import markdown_table, write_result
from _protocol import stamp
from scipy import stats
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from treerank import TreeRank
from treerank.datasets import NestedSquares
from treerank.tree import MixedLeafRank

LEAF_GRID = [1, 2, 5, 10, 20, 40, 80, 160]


def nested_squares(n, seed):
    return NestedSquares().sample(n, random_state=seed)


def linear_gaussian(n, seed):
    """10-D Gaussians whose optimal scorer is linear in the first 3 features."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(int)
    X = rng.normal(size=(n, 10))
    X[:, :3] += y[:, None] * (1.5 / np.sqrt(3))
    return X, y


DESIGNS = {"nested squares (axis-aligned)": nested_squares,
           "10-D Gaussian, linear in 3 features": linear_gaussian}  # fmt: skip


def tuned_cart(X, y, seed):
    search = GridSearchCV(
        DecisionTreeClassifier(random_state=seed),
        {"min_samples_leaf": LEAF_GRID},
        scoring="roc_auc",
        cv=StratifiedKFold(5, shuffle=True, random_state=seed),
    )
    return search.fit(X, y)


def run(seeds, n_train=2000, n_test=20_000):
    rows = []
    with threadpool_limits(1):
        for name, generate in DESIGNS.items():
            results = {"TreeRank": [], "CART (CV)": [], "TreeRank (mixed)": []}
            for seed in range(seeds):
                X, y = generate(n_train, seed)
                X_test, y_test = generate(n_test, 1000 + seed)
                cart = tuned_cart(X, y, seed)
                results["CART (CV)"].append(
                    roc_auc_score(y_test, cart.predict_proba(X_test)[:, 1])
                )
                for label, model in (
                    ("TreeRank", TreeRank(random_state=seed)),
                    (
                        "TreeRank (mixed)",
                        TreeRank(leafrank=MixedLeafRank(), random_state=seed),
                    ),
                ):
                    model.fit(X, y)
                    results[label].append(
                        roc_auc_score(y_test, model.decision_function(X_test))
                    )
                print(
                    f"{name:38s} seed {seed} "
                    + " ".join(f"{k} {v[-1]:.4f}" for k, v in results.items()),
                    flush=True,
                )
            cart = np.array(results["CART (CV)"])
            for label in ("TreeRank", "TreeRank (mixed)"):
                diff = np.array(results[label]) - cart
                rows.append(
                    [
                        name,
                        label,
                        f"{np.mean(results[label]):.4f}",
                        f"{cart.mean():.4f}",
                        f"{diff.mean():+.4f} ± {diff.std(ddof=1) / np.sqrt(seeds):.4f}",
                        f"{int((diff >= 0).sum())}/{seeds}",
                        f"{stats.ttest_rel(results[label], cart).pvalue:.2g}",
                    ]
                )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    info = stamp()  # before any fit
    rows = run(args.seeds)
    body = (
        f"{args.seeds} training sets of 2,000 rows per design, test sets of "
        "20,000; test AUC. `difference`: the model minus the tuned CART, mean "
        "± standard error over the training sets; `p`: paired t-test. Written "
        "by `benchmarks/bench_single_tree.py`.\n\n"
        + markdown_table(
            [
                "design",
                "model",
                "test AUC",
                "CART tuned by CV",
                "difference",
                "not behind",
                "p",
            ],
            rows,
        )
    )
    write_result("single_tree.md", "A single TreeRank against a tuned CART", body, info)


if __name__ == "__main__":
    main()
