"""
=================================================
Calibration of surrogate losses: a counterexample
=================================================

A surrogate loss is *calibrated* for a ranking metric when minimizing its
expected value over the labels of a list gives a ranking that maximizes the
expected metric. Order-preserving losses are calibrated with DCG; the usual
pairwise comparison loss of RankNet, ``sum_{i,j} 1{y_i > y_j} log(1 + e^{-(s_i -
s_j)})``, is not. We check both on a four-item distribution where the
difference shows, then compare the metric regret of the pointwise squared loss
with its regret bound.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# A distribution of binary labels
# -------------------------------
# One list of four items; its label vector takes five values with the
# probabilities below (exact fractions). The expected relevance is
# (13, 14, 20, 7) / 33.
from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np

from treerank.metrics import PositionalMetric
from treerank.surrogates import (
    PairwiseComparisonLoss,
    PairwiseLogistic,
    PointwiseSquared,
    bayes_optimal_rankings,
    calibration_gap,
    expected_metric,
    metric_regret,
    minimize_inner_risk,
    regret_bound,
)


def labels(bits):
    return [Fraction(int(b)) for b in bits]


distribution = [
    (labels("0010"), Fraction(7, 33)),
    (labels("1000"), Fraction(9, 33)),
    (labels("0110"), Fraction(10, 33)),
    (labels("0011"), Fraction(3, 33)),
    (labels("1101"), Fraction(4, 33)),
]
dcg = PositionalMetric.dcg(4)
best, optimal = bayes_optimal_rankings(dcg, distribution)
print(f"best expected DCG {float(best):.6f}, attained only by {optimal}")

# %%
# Minimizers of the inner risk
# ----------------------------
# For each surrogate, ``minimize_inner_risk`` finds the scores minimizing the
# expected loss under the distribution; sorting them gives the surrogate's
# ranking, and ``calibration_gap`` is the expected DCG it loses. The RankNet
# loss ranks item 0 above item 1 although item 1 is more often relevant; the
# order-preserving pairwise logistic loss, ``sum_{i<j} y_i log(1 + e^{-(s_i -
# s_j)}) + y_j log(1 + e^{s_i - s_j})``, and the pointwise squared loss rank
# the items by expected relevance, which is optimal for DCG.
losses = {
    "RankNet (pairwise comparison)": PairwiseComparisonLoss(phi="logistic"),
    "pairwise logistic (order-preserving)": PairwiseLogistic().instance("dcg"),
    "pointwise squared": PointwiseSquared().instance("dcg"),
}
minimizers = {}
for name, loss in losses.items():
    s_star = minimize_inner_risk(loss, distribution)
    minimizers[name] = s_star - s_star.mean()
    ranking = tuple(int(i) for i in np.argsort(-s_star))
    gap = float(calibration_gap(loss, dcg, distribution))
    value = float(expected_metric(dcg, distribution, ranking))
    print(f"{name:38s} ranking {ranking}  expected DCG {value:.6f}  gap {gap:.6f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
width = 0.27
for j, (name, s_star) in enumerate(minimizers.items()):
    left.bar(np.arange(4) + (j - 1) * width, s_star, width, label=name)
left.set_xticks(
    range(4), [f"item {i}\nE[y] = {e}/33" for i, e in enumerate([13, 14, 20, 7])]
)
left.set_ylabel("minimizer of the inner risk (centred)")
left.set_title("Only the RankNet loss puts item 0 above item 1")
left.legend(fontsize=8)

# %%
# The regret bound
# ----------------
# For an order-preserving loss the metric regret of any scores is bounded by
# ``c * C_phi(2) * sqrt(surrogate regret)``. We draw random score vectors
# around the minimizer of the pointwise squared loss and compare the two sides.
loss = PointwiseSquared().instance("dcg")
U = loss.expected_utility(distribution)
rng = np.random.default_rng(0)
surrogate, metric = [], []
for _ in range(400):
    scores = U + rng.normal(scale=rng.choice([0.03, 0.1, 0.3]), size=4)
    surrogate.append(loss.inner_regret(scores, U))
    metric.append(float(metric_regret(dcg, distribution, scores)))
surrogate = np.array(surrogate)
grid = np.linspace(0, surrogate.max(), 200)
right.scatter(surrogate, metric, s=8, alpha=0.5, label="random scores")
right.plot(
    grid,
    [regret_bound(loss, dcg, r) for r in grid],
    "k-",
    label="c C_phi(2) sqrt(surrogate regret)",
)
right.set_xlabel("surrogate regret")
right.set_ylabel("DCG regret")
right.set_title("Pointwise squared loss: regret bound")
right.legend()
fig.tight_layout()
ratio = max(m / regret_bound(loss, dcg, r) for m, r in zip(metric, surrogate) if r > 0)
print(f"largest ratio of the DCG regret to its bound: {ratio:.3f} (at most 1)")
plt.show()
