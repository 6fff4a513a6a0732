"""
=====================================================
A ranking tree on data with a known optimal ROC curve
=====================================================

The nested-squares design has a piecewise-constant regression function
``eta(x) = P(Y = 1 | X = x)``, so the best possible ROC curve (ROC*) is known
exactly. We grow a TreeRank, compare its test ROC curve with ROC*, check that
its training AUC is the sum of its splits' AUC gains, and prune it.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data with a known optimum
# -------------------------
import matplotlib.pyplot as plt

from treerank import TreeRank
from treerank.datasets import NestedSquares
from treerank.metrics import roc_auc_score, roc_curve, roc_sup_distance
from treerank.plotting import plot_roc

model = NestedSquares()
X, y = model.sample(2000, random_state=0)
X_test, y_test = model.sample(20000, random_state=1)

# %%
# Grow the ranking tree
# ---------------------
# Leaves read from left to right give the ranking; the training AUC is
# ``1/2 + sum of the splits' dAUC``.
ranker = TreeRank(random_state=0).fit(X, y)
print(f"{ranker.n_leaves_} leaves, training AUC {ranker.tree_.auc():.4f}")
scores = ranker.decision_function(X_test)
fpr, tpr, _ = roc_curve(y_test, scores)
distance = roc_sup_distance((fpr, tpr), model.optimal_roc_curve())
print(
    f"test AUC {roc_auc_score(y_test, scores):.4f} (optimum {model.optimal_auc():.4f})"
)
print(f"sup-norm distance to ROC* {distance:.4f}")

# %%
# Prune without refitting
# -----------------------
path = ranker.cost_complexity_pruning_path()
small = ranker.prune(path.ccp_alphas[-4])
print(f"pruned to {small.n_leaves_} leaves: test AUC {small.score(X_test, y_test):.4f}")

ax = plot_roc(
    y_test,
    {
        "TreeRank": scores,
        f"pruned ({small.n_leaves_} leaves)": small.decision_function(X_test),
    },
    optimal_roc=model,
)
ax.set_title("Test ROC curves against ROC*")
plt.show()
