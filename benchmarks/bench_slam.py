"""Benchmark and slow checks of the surrogate layer.

1. **SLAM speed.** Value and gradient of the SLAM surrogate (NDCG weights, the
   weights included) on 10,000 lists of 100 items (1,000,000 items, grades
   0..4), vectorized over the lists, against a naive reference in the same run:
   a Python loop over the lists, each list done the direct way (weights by a
   sort, then the O(m^2) matrix ``b_ij = 1(y_i > y_j)(1 + s_j - s_i)`` of
   eq. 11). The values and gradients must agree. Also timed: the flat layout
   (one global sort instead of row-wise sorts), the smoothed SLAM used by
   ``LinearSurrogateRanker`` and ListNet.
2. **Upper-bound property, exhaustively** for lists of up to 6 items: every
   label vector (grades 0..2, binary for MAP) and every ranking; the infimum of
   SLAM over the scores inducing the ranking (and SLAM at unit-gap scores) is
   compared with ``1 - metric`` computed by ``treerank.metrics`` (stable ties).
3. **Adversarial search for the regret bounds** ``perf_regret <= c C_phi(2)
   sqrt(surrogate regret)`` of the template losses: Nelder-Mead maximizes the
   ratio over the expected utility U and the scores s (n = 2..4, several
   position weights phi); the worst ratio per loss is reported (it must stay
   <= 1; close to 1 means the constant is tight).

Run ``python benchmarks/bench_slam.py`` (``--quick`` for a smaller run); the
tables are written to ``benchmarks/results/slam.md``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
from _protocol import stamp, stamp_lines
from scipy.optimize import minimize

from treerank.metrics import average_precision_score, ndcg_score
from treerank.surrogates import (
    BregmanLoss,
    ListNetSurrogate,
    PairwiseExponential,
    PairwiseLogistic,
    PairwiseSquared,
    PointwiseDifferentiableHinge,
    PointwiseExponential,
    PointwiseLogistic,
    PointwiseSquared,
    PointwiseSquaredHinge,
    SLAMSurrogate,
    slam_weights,
    weight_gap_norm,
)
from treerank.surrogates._groups import check_groups
from treerank.surrogates._slam import _compute_weights, _slam_dispatch

RESULTS = Path(__file__).resolve().parent / "results" / "slam.md"


def best_time(function, repeats):
    function()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# 1. speed
# ---------------------------------------------------------------------------


def naive_slam_list(s, y, margin=1.0):
    """One list, the direct way: NDCG weights by a sort, then O(m^2) b_ij."""
    m = s.shape[0]
    order = np.lexsort((np.arange(m), -y))
    gains = 2.0 ** y[order] - 1.0
    disc = 1.0 / np.log2(np.arange(2, m + 2))
    z = np.sum(gains * disc)
    v = np.zeros(m)
    if z > 0:
        v[order] = (gains - gains[-1]) * (disc - disc[-1]) / z
    # columns in (relevance, index) order: argmax takes the first maximum, the
    # subgradient rule of the vectorized code
    cols = np.lexsort((np.arange(m), y))
    b = np.where(
        y[:, None] > y[None, cols], margin + s[None, cols] - s[:, None], -np.inf
    )
    best = np.argmax(b, axis=1)
    rival = cols[best]
    hinge = np.maximum(0.0, b[np.arange(m), best])
    value = float(np.sum(v * hinge))
    active = hinge > 0
    grad = np.bincount(rival[active], weights=v[active], minlength=m)
    grad -= np.bincount(np.flatnonzero(active), weights=v[active], minlength=m)
    return value, grad


def naive_slam(S, Y):
    values = np.empty(S.shape[0])
    grads = np.empty_like(S)
    for q in range(S.shape[0]):
        values[q], grads[q] = naive_slam_list(S[q], Y[q])
    return values, grads


def bench_speed(n_lists, n_items, repeats):
    rng = np.random.default_rng(0)
    Y = rng.integers(0, 5, size=(n_lists, n_items)).astype(float)
    S = rng.normal(size=(n_lists, n_items))
    loss = SLAMSurrogate(weights="ndcg")

    def vectorized():
        return loss.value_and_grad(S, Y, return_per_query=True)

    t_vec = best_time(vectorized, repeats)
    values, grads = vectorized()
    start = time.perf_counter()
    ref_values, ref_grads = naive_slam(S, Y)
    t_naive = time.perf_counter() - start
    max_diff = max(
        np.max(np.abs(values - ref_values)), np.max(np.abs(grads - ref_grads))
    )

    # the same lists, shuffled and with a flat query id
    qid = np.repeat(np.arange(n_lists), n_items)
    perm = rng.permutation(qid.size)
    s_flat, y_flat, q_flat = S.ravel()[perm], Y.ravel()[perm], qid[perm]

    def shuffled():
        return loss.value_and_grad(s_flat, y_flat, qid=q_flat)

    t_shuffled = best_time(shuffled, repeats)
    groups = check_groups(q_flat, q_flat.size)
    v = _compute_weights(y_flat, groups, "ndcg", None, "exp2")

    def flat_layout():
        return _slam_dispatch(s_flat, y_flat, v, groups, 1.0, layout="flat")

    t_flat = best_time(flat_layout, repeats)
    # the shuffled rows change the order of equally relevant items inside a
    # list, hence the NDCG weights: compare the two layouts on the same rows
    flat_values, flat_grad = flat_layout()
    _, padded_grad = shuffled()
    layout_diff = max(
        np.max(
            np.abs(
                flat_values
                - loss.value(s_flat, y_flat, qid=q_flat, return_per_query=True)
            )
        ),
        np.max(np.abs(flat_grad - padded_grad)),
    )
    max_diff = max(max_diff, layout_diff)

    def smoothed():
        return loss.smoothed_value_and_grad(S, Y, smoothing=0.05)

    t_smooth = best_time(smoothed, repeats)
    listnet = ListNetSurrogate()
    t_listnet = best_time(lambda: listnet.value_and_grad(S, Y), repeats)

    rows = [
        ("SLAM value+grad, batch (n_lists, m) [vectorized]", t_vec, t_vec / t_naive),
        ("SLAM, shuffled rows + qid [vectorized]", t_shuffled, t_shuffled / t_naive),
        ("SLAM, flat layout (one global sort)", t_flat, t_flat / t_naive),
        ("smoothed SLAM (mu = 0.05), batch", t_smooth, t_smooth / t_naive),
        ("ListNet value+grad, batch", t_listnet, t_listnet / t_naive),
        ("naive reference: loop over lists, O(m^2) each", t_naive, 1.0),
    ]
    body = table(
        ["computation", "time (s)", "ratio to naive"],
        [(name, f"{t:.3f}", f"{r:.4f}") for name, t, r in rows],
    )
    return body, max_diff, t_naive / t_vec


# ---------------------------------------------------------------------------
# 2. exhaustive upper-bound check
# ---------------------------------------------------------------------------


def _rml(y, s, weights, k):
    n_rows, m = y.shape
    qid = np.repeat(np.arange(n_rows), m)
    if weights == "map":
        keep = y.sum(axis=1) > 0
        loss = np.zeros(n_rows)
        _, ap = average_precision_score(
            y[keep].ravel().astype(int),
            s[keep].ravel(),
            qid=np.repeat(np.arange(keep.sum()), m),
            ties="stable",
            return_per_query=True,
        )
        loss[keep] = 1 - ap
        return loss
    _, nd = ndcg_score(
        y.ravel(),
        s.ravel(),
        qid=qid,
        k=k,
        ties="stable",
        empty=1.0,
        return_per_query=True,
    )
    return 1 - nd


def bench_upper_bound(max_items):
    rows = []
    for weights in ("ndcg", "ndcg@k", "map"):
        for m in range(1, max_items + 1):
            n_grades = 2 if weights == "map" else 3
            labels = np.array(list(itertools.product(range(n_grades), repeat=m)), float)
            rankings = np.array(list(itertools.permutations(range(m))))
            y = np.repeat(labels, len(rankings), axis=0)
            ranking = np.tile(rankings, (len(labels), 1))
            s = np.empty(y.shape)
            np.put_along_axis(s, ranking, np.broadcast_to(m - np.arange(m), y.shape), 1)
            y_ranked = np.take_along_axis(y, ranking, axis=1)
            beaten = np.zeros(y.shape, dtype=bool)
            beaten[:, 1:] = (
                np.minimum.accumulate(y_ranked, axis=1)[:, :-1] < y_ranked[:, 1:]
            )
            violations, slack = 0, np.inf
            for k in range(1, m + 1) if weights == "ndcg@k" else [None]:
                v = slam_weights(y, weights=weights, k=k)
                rml = _rml(y, s, weights, k)
                envelope = np.sum(
                    np.take_along_axis(v, ranking, axis=1) * beaten, axis=1
                )
                value = SLAMSurrogate(weights, k=k).value(s, y, return_per_query=True)
                violations += int(np.sum(envelope < rml - 1e-12))
                violations += int(np.sum(value < rml - 1e-12))
                slack = min(slack, float(np.min(envelope - rml)))
            rows.append((weights, m, len(y), violations, f"{slack:.3g}"))
    return table(
        [
            "weights",
            "m",
            "(labels, ranking) pairs",
            "violations",
            "min(inf SLAM - (1 - metric))",
        ],
        rows,
    )


# ---------------------------------------------------------------------------
# 3. adversarial regret-bound search
# ---------------------------------------------------------------------------

ETA = 1.0
LOSSES = {
    "pointwise squared": PointwiseSquared(),
    "pointwise logistic (eta=1)": PointwiseLogistic(eta=ETA),
    "pointwise exponential (eta=1)": PointwiseExponential(eta=ETA),
    "pointwise squared hinge (eta=1, t=1)": PointwiseSquaredHinge(eta=ETA, t=1.0),
    "differentiable hinge (eta=1, alpha=0.3)": PointwiseDifferentiableHinge(
        eta=ETA, alpha=0.3
    ),
    "differentiable hinge (eta=10, alpha=4.9, margin=10)": PointwiseDifferentiableHinge(
        eta=10.0, alpha=4.9, margin=10.0
    ),
    "pairwise squared": PairwiseSquared(),
    "pairwise logistic": PairwiseLogistic(),
    "pairwise exponential": PairwiseExponential(),
    "Bregman (entropy, exp link; mu = 1/eta)": BregmanLoss(
        psi="entropy", link="exp", eta=ETA
    ),
}


def _phis(n):
    dcg = 1 / np.log2(np.arange(2, n + 2))
    return {
        "DCG": dcg,
        "DCG@2": np.where(np.arange(n) < 2, dcg, 0.0),
        "P@1": np.where(np.arange(n) < 1, 1.0, 0.0),
        "linear": np.arange(n, 0, -1, dtype=float),
    }


def _metric_regret(phi, U, s):
    """Rbar - R(s) = sum_k phi_k (U*_k - Ubar_k), ties in s averaged.

    ``U*`` is U sorted decreasingly and ``Ubar_k`` the mean of U over the tie
    block of s holding rank k (a tie block of ranks a..b gives each item the
    mean weight of a..b, i.e. each rank the mean utility of the block).
    Differences are taken rank by rank: the subtraction of two close floats is
    exact, so tiny regrets keep their relative accuracy.
    """
    order = np.argsort(-s, kind="stable")
    s_sorted = s[order]
    new = np.r_[True, s_sorted[1:] != s_sorted[:-1]]
    block = np.cumsum(new) - 1
    mean_u = np.bincount(block, weights=U[order]) / np.bincount(block)
    return float(np.sum(phi * (np.sort(U)[::-1] - mean_u[block])))


def _ratio(loss, phi, cphi, U, s):
    perf = _metric_regret(phi, U, s)
    sur = loss.inner_regret(s, U)
    bound = loss.regret_constant(U) * cphi * np.sqrt(max(sur, 0.0))
    if perf <= 1e-13:
        return 0.0
    return perf / bound if bound > 0 else np.inf


def bench_adversarial(n_starts, max_iter, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for name, loss in LOSSES.items():
        eta = getattr(loss, "eta", ETA) or ETA
        worst, where = 0.0, ""
        for n in (2, 3, 4):
            for phi_name, phi in _phis(n).items():
                cphi = weight_gap_norm(phi)

                def negative(x, n=n, phi=phi, cphi=cphi, loss=loss, eta=eta):
                    U = np.clip(x[:n], 1e-4 * eta, eta * (1 - 1e-4))
                    return -_ratio(loss, phi, cphi, U, x[n:])

                for _ in range(n_starts):
                    U = rng.uniform(0.05, 0.95, size=n) * eta
                    s = loss.argmin(U, allow_infinite=True)
                    s = np.clip(s, -20, 20)
                    i, j = rng.choice(n, size=2, replace=False)
                    s[i] = s[j] = 0.5 * (s[i] + s[j]) + rng.normal() * 1e-3
                    res = minimize(
                        negative,
                        np.r_[U, s],
                        method="Nelder-Mead",
                        options={"maxiter": max_iter, "xatol": 1e-12, "fatol": 1e-14},
                    )
                    if -res.fun > worst:
                        worst, where = -res.fun, f"n={n}, {phi_name}"
        rows.append(
            (
                name,
                f"{loss.regret_constant([eta]):.4g}",
                f"{worst:.6f}",
                f"{worst - 1:+.1e}",
                where,
            )
        )
    return table(["loss", "c", "worst ratio found", "ratio - 1", "at"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    info = stamp()  # before anything is timed
    if args.quick:
        n_lists, repeats, max_items, n_starts, max_iter = 1000, 2, 5, 3, 300
    else:
        n_lists, repeats, max_items, n_starts, max_iter = 10_000, 3, 6, 8, 1500
    n_items = 100

    speed, max_diff, speedup = bench_speed(n_lists, n_items, repeats)
    print(speed)
    bound = bench_upper_bound(max_items)
    print(bound)
    adversarial = bench_adversarial(n_starts, max_iter)
    print(adversarial)

    stamp_text = "\n".join(stamp_lines(info))
    text = f"""# SLAM surrogate benchmark and slow checks

{stamp_text}

## 1. SLAM value + gradient on {n_lists:,} lists x {n_items} items

Grades 0..4, Gaussian scores, NDCG weights (computed inside every call).
Time = best of {repeats} runs after a warm-up; the naive reference (a Python
loop over the lists, O(m^2) per list) runs once in the same process; ratio =
time / naive time. Largest absolute difference between the vectorized and the
naive values and gradients (and the flat layout): {max_diff:.2e}.
Vectorized speed-up over the naive loop: {speedup:.0f}x.

{speed}

## 2. Upper-bound property, exhaustive

Every label vector (grades 0..2; binary for MAP) and every ranking of lists of
1..{max_items} items (all k for NDCG@k). "violations" counts the pairs where the
infimum of SLAM over the scores inducing the ranking, or SLAM at unit-gap
scores, is below ``1 - metric`` (metric from `treerank.metrics`, stable ties).

{bound}

## 3. Adversarial search on the regret bounds

``ratio = (Rbar - R(s)) / (c C_phi(2) sqrt(L(s) - Lmin))`` maximized by
Nelder-Mead over (U, s) from {n_starts} starts per (n, phi), n = 2..4, phi in
{{DCG, DCG@2, P@1, linear}}, up to {max_iter} iterations each; U in
[0, eta]. A ratio <= 1 everywhere confirms the bound; near 1 means the
constant c is tight.

{adversarial}
"""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
