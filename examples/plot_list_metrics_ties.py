"""
=====================================
List metrics when scores are tied
=====================================

A scorer that gives several items of a list the same score (a ranking tree
gives one score per leaf) does not define one ranking but many. treerank's
list metrics take a tie policy: ``"average"`` (the default, except for
``average_precision_score``, which follows scikit-learn's step convention
``"threshold"`` unless told otherwise) is the exact expected value over
uniformly random orders of the tied items, ``"pessimistic"`` and
``"optimistic"`` the worst and best orders, ``"stable"`` the input order. We
check the average against random tie-breaking, watch the three policies
separate as scores get coarser, and look at the policy for lists without any
relevant item.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Query-grouped data
# ------------------
# 300 queries of 20 documents; each document has a latent quality, a relevance
# grade 0..3 derived from it, and a noisy score. Rows of a query are identified
# by ``qid``.
import matplotlib.pyplot as plt
import numpy as np

from treerank.metrics import average_precision_score, ndcg_score

rng = np.random.default_rng(0)
n_queries, n_docs = 300, 20
qid = np.repeat(np.arange(n_queries), n_docs)
quality = rng.normal(size=qid.size)
grade = np.digitize(quality, [0.5, 1.2, 1.8])  # 0, 1, 2 or 3
score = quality + rng.normal(scale=0.8, size=qid.size)

# %%
# The average policy is an exact expectation
# ------------------------------------------
# Rounding the scores to integers creates many ties. The NDCG@10 under
# ``ties="average"`` equals the mean over random tie-breaks, here estimated by
# breaking the ties with small random perturbations.
coarse = np.round(score)
exact = ndcg_score(grade, coarse, qid=qid, k=10)
draws = [
    ndcg_score(grade, coarse + 1e-6 * rng.random(qid.size), qid=qid, k=10)
    for _ in range(200)
]
print(f"NDCG@10, ties averaged exactly:        {exact:.5f}")
print(
    f"mean over 200 random tie-breaks:       {np.mean(draws):.5f}"
    f" (standard error {np.std(draws) / np.sqrt(len(draws)):.5f})"
)

# %%
# Coarser scores, wider bands
# ---------------------------
# Scores rounded to a grid of step h: the pessimistic and optimistic values
# bound every tie-breaking, the average lies between them, and the stable
# policy (input order) is one arbitrary tie-breaking. Here the documents come
# in random order, so the stable value stays close to the average; on data
# stored sorted by relevance it would be as flattering as the optimistic one.
steps = [0.01, 0.1, 0.25, 0.5, 1.0, 2.0]
values = {policy: [] for policy in ["pessimistic", "average", "optimistic", "stable"]}
for h in steps:
    rounded = h * np.round(score / h)
    for policy, row in values.items():
        row.append(ndcg_score(grade, rounded, qid=qid, k=10, ties=policy))

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
left.fill_between(
    steps,
    values["pessimistic"],
    values["optimistic"],
    alpha=0.3,
    label="pessimistic .. optimistic",
)
left.plot(steps, values["average"], "o-", label="average (default)")
left.plot(steps, values["stable"], "x--", label="stable (input order)")
left.set_xscale("log")
left.set_xlabel("rounding step of the scores")
left.set_ylabel("mean NDCG@10 over 300 queries")
left.set_title("Tie policies")
left.legend()
for h, low, mid, high in zip(
    steps, values["pessimistic"], values["average"], values["optimistic"]
):
    print(
        f"step {h:5.2f}: pessimistic {low:.4f}  average {mid:.4f}"
        f"  optimistic {high:.4f}"
    )

# %%
# Lists without a relevant item
# -----------------------------
# NDCG and average precision are 0/0 on a list without any relevant item. The
# ``empty`` parameter says what such a list is worth: 0 by default (as in
# scikit-learn), 1 (LightGBM and XGBoost for NDCG), NaN, or ``"skip"`` to
# leave these lists out of the mean.
relevant = grade >= 2
print(
    f"queries without a relevant document (grade >= 2): "
    f"{n_queries - np.unique(qid[relevant]).size}"
)
policies = {"0 (default)": 0.0, "1": 1.0, '"skip"': "skip"}
ap = {
    name: average_precision_score(relevant, score, qid=qid, empty=empty)
    for name, empty in policies.items()
}
for name, value in ap.items():
    print(f"MAP with empty={name}: {value:.4f}")
right.bar(list(ap), list(ap.values()))
right.set_ylim(0, 1)
right.set_xlabel("value of a list without relevant item (empty=)")
right.set_ylabel("MAP over 300 queries")
right.set_title("Empty-list policy")
fig.tight_layout()
plt.show()
