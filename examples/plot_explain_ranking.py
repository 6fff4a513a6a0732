"""
===========================================
Why is this row ranked here? Shapley values
===========================================

A screening list ranks tumours by how likely they are malignant. For one
tumour, :func:`~treerank.inspection.shapley_values` splits its score, the
forest's ranking read as a calibrated probability of malignancy
(:func:`~treerank.inspection.calibrated_score`), into the contributions of
its features (they add up to the score minus a base value, the score of the
background sample's mean); :func:`~treerank.inspection.reason_codes`
lists the features that pull it up (why it is near the top of the list);
the waterfall plot shows one tumour, the summary plot all of them.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# A ranking forest and the contributions to its scores
# ----------------------------------------------------
# The forest aggregates its trees by the mean: its score is a sum over the
# trees, so the Shapley values are computed exactly by walking the trees, then
# put on the calibrated scale (one factor per tumour, which keeps their signs
# and proportions). The background is the training rows: each tree is
# compared with 10 of them, drawn for it (``background_per_tree``).
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from treerank import RankingForest
from treerank.datasets import load_breast_cancer
from treerank.inspection import reason_codes, shapley_values
from treerank.plotting import plot_contribution_summary, plot_waterfall

data = load_breast_cancer()
X = pd.DataFrame(data.data, columns=data.feature_names)
X_train, X_test, y_train, y_test = train_test_split(
    X, data.target, test_size=0.3, stratify=data.target, random_state=0
)
forest = RankingForest(n_estimators=20, aggregation="mean", random_state=0)
forest.fit(X_train, y_train)
print(f"test AUC {forest.score(X_test, y_test):.3f}")

explanation = shapley_values(forest, X_test, background=X_train, random_state=0)
gap = explanation.base_value + explanation.values.sum(axis=1) - explanation.scores
print(
    f"base value {explanation.base_value:.3f}, efficiency error {np.abs(gap).max():.1e}"
)

# %%
# The tumour at the top of the list
# ---------------------------------
# Its score is far above the base value; the waterfall shows which features
# put it there, the largest contributions first.
top = int(np.argmax(explanation.scores))
plot_waterfall(explanation, row=top, max_display=8)
plt.tight_layout()

reasons = reason_codes(
    forest, X_test.iloc[[top]], explanation=explanation[top], top=3, direction="up"
)
print(reasons[["feature", "value", "contribution", "rule"]].to_string(index=False))

# %%
# All the tumours
# ---------------
# One line per feature, the most important at the top; a dot per tumour at
# its contribution, coloured by its value of the feature (red: high). Large
# values of the "worst" size features push a tumour up the list.
plot_contribution_summary(explanation, max_display=10)
plt.tight_layout()
plt.show()
