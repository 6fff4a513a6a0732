"""Where the median forest's ranking comes from: its buckets, its tie-break,
its insertion of unseen cells, against the mean.

On the folds of the real-data benchmark (``bench_real_data.py``: 34 data sets,
stratified 5-fold x 2, the same splits), one default ``RankingForest`` is
fitted per fold and its test rows are scored nine ways, so that every
difference is paired on the same trees:

- ``median``: the default (Kendall median of the cells, unseen cells placed by
  the fast insertion, galloping search; ties broken by the mean leaf score);
- ``median, exact insertion``: unseen cells placed at their exact Kendall
  optimum (every position evaluated);
- ``median, bisection``: the fast insertion with a bisection of all blocks
  (the search used with monotonic constraints, and the only one before);
- ``median, no tie-break``: ``break_ties=False``, the median's buckets alone;
- ``median, Borda tie-break``: the median's buckets, ties broken by the mean
  of the cells' mid-ranks under the training rows' leaf masses (the Borda
  score) instead of the mean normalized leaf rank;
- ``median, trimmed-mean tie-break``: the median's buckets, ties broken by
  the 10%-trimmed mean of the normalized leaf scores (robust to deviant trees);
- ``footrule median``: each row scored by the median over the trees of its
  normalized leaf score (the pointwise median of the trees' scores, which
  minimizes the summed absolute score differences), ties broken by the mean;
- ``Borda``: that score alone (``aggregation="borda"`` on the same trees);
- ``mean``: ``aggregation="mean"`` on the same trees.

Per fold it also records the number of buckets of the consensus, the number of
cells, and the share of the test fold's positive-negative pairs that the
default median and the mean order differently (the only pairs on which their
AUCs can differ). The report adds an equivalence test of the median against
the mean (two one-sided tests on the per-data-set differences).

Writes ``benchmarks/results/median_variants.md``; per-fold results go to a
JSON-lines file (``--cache``) so that a report can be rewritten without
refitting.

    python benchmarks/bench_median_variants.py [--datasets NAME ...]
"""

import argparse
import json
import os
import sys

import numpy as np
from _common import RESULTS, markdown_table, write_result
from _protocol import stamp
from _real_datasets import DATASETS, load_dataset
from bench_real_data import folds_of
from scipy.stats import trim_mean, ttest_1samp, wilcoxon
from sklearn.metrics import roc_auc_score

from treerank import RankingForest
from treerank.ensemble import leaf_midranks, mean_borda_scores, mean_leaf_scores

VARIANTS = (
    "median",
    "median, exact insertion",
    "median, bisection",
    "median, no tie-break",
    "median, Borda tie-break",
    "median, trimmed-mean tie-break",
    "footrule median",
    "Borda",
    "mean",
)


EQUIVALENCE_MARGINS = (0.0005, 0.001, 0.002)


def fold_scores(dataset, train, test):
    """Test AUC of every variant, from one forest fitted on ``train``."""
    forest = RankingForest(random_state=0, n_jobs=1)
    forest.fit(dataset.X[train], dataset.y[train])
    X, y = dataset.X[test], dataset.y[test]
    inserter = forest._inserter
    default = inserter.positions
    result = {"median": roc_auc_score(y, forest.decision_function(X))}
    for name, options in (
        ("median, exact insertion", {"method": "exact"}),
        ("median, bisection", {"search": "bisect"}),
    ):
        inserter.positions = lambda rows, _options=options, **_: default(
            rows, **_options
        )
        result[name] = roc_auc_score(y, forest.decision_function(X))
    inserter.positions = default
    forest.set_params(break_ties=False)
    buckets = forest.decision_function(X)
    result["median, no tie-break"] = roc_auc_score(y, buckets)
    # Borda scores: mean mid-rank of a row's leaves under the training masses
    train_leaves = forest._leaf_ranks(dataset.X[train])
    midranks = [
        leaf_midranks(np.bincount(train_leaves[:, b], minlength=forest._n_leaves[b]))
        for b in range(train_leaves.shape[1])
    ]
    borda = mean_borda_scores(forest._leaf_ranks(X), midranks)
    result["median, Borda tie-break"] = roc_auc_score(y, buckets + 0.9 * (borda - 0.5))
    result["Borda"] = roc_auc_score(y, borda)
    # per-tree normalized leaf scores (K_b - r_b) / K_b of the test rows
    leaf_ranks = forest._leaf_ranks(X)
    n_leaves = forest._n_leaves.astype(np.float64)
    tree_scores = (n_leaves[None, :] - leaf_ranks) / n_leaves[None, :]
    mean = mean_leaf_scores(leaf_ranks, forest._n_leaves)
    trimmed = trim_mean(tree_scores, 0.1, axis=1)
    result["median, trimmed-mean tie-break"] = roc_auc_score(
        y, buckets + 0.9 * (trimmed - 0.5)
    )
    result["footrule median"] = roc_auc_score(
        y, lexicographic_scores(np.median(tree_scores, axis=1), mean)
    )
    forest.set_params(break_ties=True, aggregation="mean")
    result["mean"] = roc_auc_score(y, forest.decision_function(X))
    forest.set_params(aggregation="median")
    result["buckets"] = int(forest.consensus_.max() + 1)
    result["cells"] = int(forest.n_cells_)
    result["discordant pairs"] = discordant_share(forest.decision_function(X), mean, y)
    return result


def lexicographic_scores(primary, secondary):
    """Scores ordering rows by ``primary``, ties broken by ``secondary``."""
    key = np.column_stack([primary, secondary])
    return np.unique(key, axis=0, return_inverse=True)[1].ravel().astype(float)


def discordant_share(first, second, y):
    """Share of positive-negative pairs that two scores order differently."""
    positive, negative = y == 1, y != 1
    first_sign = np.sign(first[positive][:, None] - first[negative][None, :])
    second_sign = np.sign(second[positive][:, None] - second[negative][None, :])
    return float(np.mean(first_sign != second_sign))


def run(names, cache):
    done = set()
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as handle:
            done = {
                (r["dataset"], r["rep"], r["fold"]) for r in map(json.loads, handle)
            }
    with open(cache, "a", encoding="utf-8") as handle:
        for name in names:
            dataset = load_dataset(name)
            for rep, fold, train, test in folds_of(dataset):
                if (name, rep, fold) in done:
                    continue
                record = {"dataset": name, "rep": rep, "fold": fold}
                record.update(fold_scores(dataset, train, test))
                handle.write(json.dumps(record) + "\n")
                handle.flush()
            print(name, flush=True)


def report(cache, info):
    with open(cache, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    names = sorted({r["dataset"] for r in records})
    means = {
        variant: np.array(
            [np.mean([r[variant] for r in records if r["dataset"] == n]) for n in names]
        )
        for variant in VARIANTS
    }
    rows = []
    for variant in VARIANTS:
        difference = means[variant] - means["mean"]
        if variant == "mean":
            rows.append([variant, f"{means[variant].mean():.4f}", "", "", ""])
            continue
        pvalue = wilcoxon(difference).pvalue if np.any(difference) else 1.0
        rows.append(
            [
                variant,
                f"{means[variant].mean():.4f}",
                f"{difference.mean():+.4f}",
                f"{int((difference > 0).sum())}/{int((difference == 0).sum())}/"
                f"{int((difference < 0).sum())}",
                f"{pvalue:.3f}",
            ]
        )
    table = markdown_table(
        [
            "scores",
            "mean AUC",
            "minus mean's",
            "data sets better/equal/worse than mean",
            "Wilcoxon p",
        ],
        rows,
    )
    difference = means["median"] - means["mean"]
    equivalence_rows = []
    for margin in EQUIVALENCE_MARGINS:
        # H0: the median is worse than the mean by the margin or more
        equivalence_rows.append(
            [
                f"{margin:.4f}",
                f"{ttest_1samp(difference, -margin, alternative='greater').pvalue:.2g}",
                f"{wilcoxon(difference + margin, alternative='greater').pvalue:.2g}",
                f"{ttest_1samp(difference, margin, alternative='less').pvalue:.2g}",
            ]
        )
    equivalence = markdown_table(
        [
            "margin",
            "median worse by >= margin: t-test p",
            "same, Wilcoxon p",
            "median better by >= margin: t-test p",
        ],
        equivalence_rows,
    )
    per_fold = {
        key: np.array([r[key] for r in records])
        for key in ("buckets", "cells", "discordant pairs")
        if all(key in r for r in records)
    }
    diagnostics = ""
    if len(per_fold) == 3:
        q = {key: np.percentile(v, [25, 50, 75]) for key, v in per_fold.items()}
        diagnostics = (
            "Over the folds (quartiles 25/50/75%): the consensus has "
            f"{q['buckets'][0]:.0f}/{q['buckets'][1]:.0f}/{q['buckets'][2]:.0f} "
            f"buckets for {q['cells'][0]:.0f}/{q['cells'][1]:.0f}/"
            f"{q['cells'][2]:.0f} cells, and the default median and the mean "
            "order differently "
            f"{100 * q['discordant pairs'][0]:.2f}/"
            f"{100 * q['discordant pairs'][1]:.2f}/"
            f"{100 * q['discordant pairs'][2]:.2f}% of the test fold's "
            "positive-negative pairs (mean "
            f"{100 * per_fold['discordant pairs'].mean():.2f}%, largest "
            f"{100 * per_fold['discordant pairs'].max():.2f}%): the only pairs "
            "on which their AUCs can differ.\n\n"
        )
    standard_error = difference.std(ddof=1) / np.sqrt(difference.size)
    body = (
        f"{len(names)} data sets of the real-data benchmark, "
        f"{len(records) // max(len(names), 1)} folds each (the same splits); "
        f"one default RankingForest per fold, scored {len(VARIANTS)} ways (see "
        "the script's docstring). Mean test AUC over the data sets; the paired "
        "differences are per data set (mean over its folds).\n\n"
        f"{table}\n\n"
        "The median's buckets alone are coarse: unseen rows are placed into "
        "ties with a consensus bucket or between two, and many test rows share "
        "a position. Broken by the mean leaf score, they rank as well as the "
        "mean (the difference is within noise); the search that places unseen "
        "cells (galloping, bisection, exact optimum) changes nothing that "
        "matters. Scores built on the training rows' leaf masses (Borda) rank "
        "worse than the mean normalized leaf rank, alone or as the tie-break: "
        "the masses of in-bag rows fit the training sample. The medians that "
        "let the trees' order decide more (the footrule median, a robust "
        "tie-break) rank a little worse than the mean: the trees' score "
        "differences carry information that an order-based consensus drops.\n\n"
        f"{diagnostics}"
        "**Median against mean, equivalence.** The per-data-set difference "
        f"(median minus mean) is {difference.mean():+.5f} on average (standard "
        f"error {standard_error:.5f}). Two one-sided tests (TOST) of the "
        "hypotheses that the median is worse, or better, than the mean by at "
        "least a margin; small p-values on both sides show the two equivalent "
        "within that margin:\n\n"
        f"{equivalence}\n"
    )
    write_result(
        "median_variants.md",
        "Median forest: buckets, tie-break, insertion",
        body,
        info,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=sorted(DATASETS))
    parser.add_argument(
        "--cache", default=os.path.join(RESULTS, "cache", "median_variants.jsonl")
    )
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    info = stamp(argv=None if argv is None else [sys.argv[0], *argv])
    os.makedirs(os.path.dirname(args.cache), exist_ok=True)
    if not args.report_only:
        run(args.datasets, args.cache)
    report(args.cache, info)


if __name__ == "__main__":
    main()
