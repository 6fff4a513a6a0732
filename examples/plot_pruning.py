"""
======================================================
Pruning a ranking tree: the weakest-link path and CV
======================================================

The training AUC of a ranking tree is additive over its splits, so the
subtrees maximizing ``AUC(T) - lambda * #leaves(T)`` are nested and found by
weakest-link pruning, exactly as CART's cost-complexity pruning. We grow a
deliberately large tree, follow its pruning path on training and test data,
and let cross-validation on held-out folds choose ``lambda``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# A large tree
# ------------
# A permissive LeafRank (10 samples per inner leaf instead of 50) and a depth
# of 8 let the tree follow the noise of 1,000 training points.
import matplotlib.pyplot as plt
import numpy as np

from treerank import LeafRank, TreeRank
from treerank.datasets import NestedSquares

model = NestedSquares()
X, y = model.sample(1000, random_state=0)
X_test, y_test = model.sample(20000, random_state=1)

params = {
    "max_depth": 8,
    "min_samples_split": 20,
    "leafrank": LeafRank(max_depth=3, min_samples_leaf=10, criterion="gini"),
    "random_state": 0,
}
full = TreeRank(**params).fit(X, y)
print(f"full tree: {full.n_leaves_} leaves, test AUC {full.score(X_test, y_test):.4f}")

# %%
# The pruning path, without refitting
# -----------------------------------
# ``cost_complexity_pruning_path`` lists the nested optimal subtrees; each one
# is obtained from the fitted tree by ``prune(lambda)``. The training AUC can
# only decrease as leaves are removed; the test AUC is flat over a long range.
path = full.cost_complexity_pruning_path()
test_auc = np.array(
    [full.prune(alpha).score(X_test, y_test) for alpha in path.ccp_alphas]
)

# %%
# Cross-validated pruning
# -----------------------
# ``pruning="cv"`` grows a tree on each training part of 5 stratified folds
# and scores its pruned subtrees on the held-out part; the ``lambda`` with the
# best mean held-out AUC is applied to the tree grown on all the data (ties go
# to the smaller tree).
pruned = TreeRank(pruning="cv", **params).fit(X, y)
print(
    f"CV-pruned tree: {pruned.n_leaves_} leaves, "
    f"test AUC {pruned.score(X_test, y_test):.4f} (lambda = {pruned.ccp_alpha_:.2e})"
)
best = int(np.argmax(test_auc))
print(
    f"best subtree on the test set (not available in practice): "
    f"{path.n_leaves[best]} leaves, test AUC {test_auc[best]:.4f}"
)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
left.plot(path.n_leaves, path.train_auc, "o-", ms=3, label="training AUC")
left.plot(path.n_leaves, test_auc, "s-", ms=3, label="test AUC")
left.axvline(pruned.n_leaves_, color="grey", ls="--", label="chosen by CV")
left.axhline(model.optimal_auc(), color="k", lw=0.8, label="AUC*")
left.set_xscale("log")
left.set_xlabel("number of leaves")
left.set_ylabel("AUC")
left.set_title("Weakest-link pruning path")
left.legend(loc="lower right")

cv = pruned.cv_results_
right.errorbar(
    cv["n_leaves"], cv["mean_test_auc"], yerr=cv["std_test_auc"], fmt="o-", ms=3
)
right.axvline(pruned.n_leaves_, color="grey", ls="--")
right.set_xscale("log")
right.set_xlabel("number of leaves of the full-data subtree")
right.set_ylabel("held-out AUC (mean and sd over 5 folds)")
right.set_title("Cross-validation")
fig.tight_layout()

# %%
# Cross-validation mainly *simplifies* the tree: it keeps a fraction of the
# leaves at about the same test AUC. Ranking trees overfit little in AUC,
# because every split is chosen to increase it and the LeafRank keeps a
# minimum number of samples per inner leaf.
plt.show()
