"""Benchmark: grouped list metrics on 10,000 queries x 100 documents.

The reference is scikit-learn's ``ndcg_score`` on the same data as a
(10000, 100) matrix (linear gain, ties averaged: its default). treerank's
``ndcg_score(..., qid=qid, gain="linear")`` computes the same numbers from flat
arrays with a query id per row; the script checks that the values agree, then
times every treerank list metric on the same rows and reports the ratio
``treerank time / scikit-learn ndcg_score time`` (< 1 means faster), measured
in the same process (best of several runs after a warm-up).

Scenarios: scores with many ties (integers 0..9, about 10 items per tie
block), continuous scores (no ties), and the rows shuffled so that the queries
are not contiguous (the qid array must then be grouped by a sort).

Run ``python benchmarks/bench_list_metrics.py`` (add ``--quick`` for a smaller
run); the table is written to ``benchmarks/results/list_metrics.md``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
from functools import partial
from pathlib import Path

import numpy as np
from _protocol import stamp, stamp_lines
from sklearn import metrics as sk_metrics

from treerank import metrics as tm

RESULTS = Path(__file__).resolve().parent / "results" / "list_metrics.md"


def best_time(function, repeats):
    function()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def paired_times(function, reference, repeats):
    """Best times of ``function`` and ``reference``, run alternately.

    Alternating the two keeps slow drifts of the machine (other processes)
    out of the ratio.
    """
    function()
    reference()
    ours, theirs = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        reference()
        theirs.append(time.perf_counter() - start)
    return min(ours), min(theirs)


def make_data(n_queries, n_docs, seed=0):
    rng = np.random.default_rng(seed)
    grades = rng.integers(0, 5, (n_queries, n_docs))
    tied_scores = rng.integers(0, 10, (n_queries, n_docs)).astype(np.float64)
    continuous_scores = rng.random((n_queries, n_docs))
    return grades, {"many ties": tied_scores, "no ties": continuous_scores}


def treerank_metrics(grades, scores, qid):
    """(name, callable) for every treerank list metric on the flat rows."""
    y = grades.ravel()
    binary = (y >= 3).astype(np.int64)
    s = scores.ravel()
    calls = [
        (
            "ndcg_score (linear gain)",
            lambda: tm.ndcg_score(y, s, qid=qid, gain="linear"),
        ),
        ("ndcg_score@10 (exp2 gain)", lambda: tm.ndcg_score(y, s, qid=qid, k=10)),
        ("dcg_score", lambda: tm.dcg_score(y, s, qid=qid)),
        (
            "average_precision_score (MAP)",
            lambda: tm.average_precision_score(binary, s, qid=qid),
        ),
        ("err_score", lambda: tm.err_score(y, s, qid=qid, max_grade=4)),
        ("precision_at_k (k=10)", lambda: tm.precision_at_k(binary, s, qid=qid, k=10)),
        ("recall_at_k (k=10)", lambda: tm.recall_at_k(binary, s, qid=qid, k=10)),
        ("expected_rank_utility", lambda: tm.expected_rank_utility(y, s, qid=qid)),
        ("reciprocal_rank (MRR)", lambda: tm.reciprocal_rank(binary, s, qid=qid)),
        ("list_auc", lambda: tm.list_auc(binary, s, qid=qid)),
        ("pairwise_disagreement", lambda: tm.pairwise_disagreement(y, s, qid=qid)),
    ]
    return calls


def run(n_queries, n_docs, repeats):
    grades, scenarios = make_data(n_queries, n_docs)
    qid = np.repeat(np.arange(n_queries), n_docs)
    rows = []
    for scenario, scores in scenarios.items():
        reference = partial(sk_metrics.ndcg_score, grades, scores)
        sk_value = reference()
        ours = tm.ndcg_score(grades.ravel(), scores.ravel(), qid=qid, gain="linear")
        for name, call in treerank_metrics(grades, scores, qid):
            elapsed, elapsed_sk = paired_times(call, reference, repeats)
            note = ""
            if name.startswith("ndcg_score (linear"):
                note = f"abs. difference to sklearn: {abs(ours - sk_value):.1e}"
            rows.append((scenario, name, elapsed, elapsed_sk, note))
    # rows shuffled: queries not contiguous
    scores = scenarios["many ties"]
    rng = np.random.default_rng(1)
    shuffle = rng.permutation(n_queries * n_docs)
    y_shuffled = grades.ravel()[shuffle]
    s_shuffled = scores.ravel()[shuffle]
    q_shuffled = qid[shuffle]
    call = partial(tm.ndcg_score, y_shuffled, s_shuffled, qid=q_shuffled, gain="linear")
    reference = partial(sk_metrics.ndcg_score, grades, scores)
    elapsed, elapsed_sk = paired_times(call, reference, repeats)
    diff = abs(call() - reference())
    rows.append(
        (
            "many ties, rows shuffled",
            "ndcg_score (linear gain)",
            elapsed,
            elapsed_sk,
            f"abs. difference to sklearn: {diff:.1e}",
        )
    )
    return rows


def scaling(n_docs, repeats):
    """ndcg_score time for growing numbers of queries (linear if vectorized)."""
    out = []
    for n_queries in (1000, 3000, 10000):
        grades, scenarios = make_data(n_queries, n_docs, seed=2)
        qid = np.repeat(np.arange(n_queries), n_docs)
        y, s = grades.ravel(), scenarios["many ties"].ravel()
        ours, theirs = paired_times(
            partial(tm.ndcg_score, y, s, qid=qid, gain="linear"),
            partial(sk_metrics.ndcg_score, grades, scenarios["many ties"]),
            repeats,
        )
        out.append((n_queries, ours, theirs))
    return out


def to_markdown(rows, scale, n_queries, n_docs, repeats, info):
    lines = [
        "# List metrics benchmark",
        "",
        *stamp_lines(info),
        "",
        f"{n_queries:,} queries x {n_docs} documents ({n_queries * n_docs:,} rows), "
        "grades 0..4; binary metrics use grade >= 3 as relevant. Time = best of "
        f"{repeats} runs after a warm-up, each treerank run alternating with a run "
        "of the reference `sklearn.metrics.ndcg_score` on the same data as a "
        "(n_queries, n_docs) matrix (linear gain, ties averaged); ratio = "
        "treerank time / reference time (< 1: faster than scikit-learn's NDCG).",
        "",
        "| scenario | treerank metric | time (s) | sklearn ndcg_score (s) | ratio "
        "| note |",
        "|---|---|---:|---:|---:|---|",
    ]
    for scenario, name, elapsed, elapsed_sk, note in rows:
        lines.append(
            f"| {scenario} | {name} | {elapsed:.3f} | {elapsed_sk:.3f} | "
            f"{elapsed / elapsed_sk:.2f} | {note} |"
        )
    lines += [
        "",
        "Scaling of `ndcg_score` (many ties, 100 documents per query):",
        "",
        "| queries | treerank (s) | sklearn (s) | ratio |",
        "|---:|---:|---:|---:|",
    ]
    for n_queries_, ours, theirs in scale:
        lines.append(
            f"| {n_queries_:,} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} |"
        )
    lines += [
        "",
        "treerank takes flat arrays with a query id per row (lists may have any "
        "lengths); scikit-learn's `ndcg_score` needs equal-length rows. The "
        "ties-averaged ERR, AP and reciprocal rank are exact expectations over "
        "tie orders (see their docstrings).",
        "",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 queries, 2 runs")
    args = parser.parse_args()
    info = stamp()  # before anything is timed
    n_queries, n_docs, repeats = (1000, 100, 2) if args.quick else (10000, 100, 5)
    rows = run(n_queries, n_docs, repeats)
    scale = scaling(n_docs, 2 if args.quick else 3)
    text = to_markdown(rows, scale, n_queries, n_docs, repeats, info)
    print(text)
    if not args.quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
