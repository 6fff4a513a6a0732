"""The Mann-Whitney (AUC) test and the two-sample test by ranking."""

import itertools

import numpy as np
import pytest
from scipy import sparse, stats
from sklearn.base import BaseEstimator
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

import treerank
from treerank.inference import mann_whitney_auc_test, two_sample_test

ALTERNATIVES = ["greater", "less", "two-sided"]


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_pvalue_matches_scipy_without_ties(alternative):
    rng = np.random.RandomState(0)
    for _ in range(60):
        x = rng.normal(size=int(rng.randint(1, 15)))
        y = rng.normal(size=int(rng.randint(1, 15))) + rng.choice([0.0, 1.0])
        got = mann_whitney_auc_test(x, y, alternative=alternative, method="exact")
        expected = stats.mannwhitneyu(y, x, alternative=alternative, method="exact")
        assert got.pvalue == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-12)
        assert got.statistic == pytest.approx(
            expected.statistic / (x.shape[0] * y.shape[0])
        )


def _enumerated_pvalues(pooled, n_x, alternative):
    """p-value of every split of the pooled scores, by enumeration (ties too)."""
    n = pooled.shape[0]
    aucs = []
    for chosen in itertools.combinations(range(n), n - n_x):
        is_y = np.zeros(n, dtype=bool)
        is_y[list(chosen)] = True
        aucs.append(roc_auc_score(is_y, pooled))
    aucs = np.array(aucs)
    center = 0.5
    upper = np.array([np.mean(aucs >= a - 1e-12) for a in aucs])
    lower = np.array([np.mean(aucs <= a + 1e-12) for a in aucs])
    if alternative == "greater":
        p = upper
    elif alternative == "less":
        p = lower
    else:
        p = np.minimum(1, 2 * np.minimum(upper, lower))
    del center
    return aucs, p


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_pvalue_with_ties_matches_enumeration_and_is_valid(alternative):
    rng = np.random.RandomState(1)
    for _ in range(15):
        n = int(rng.randint(2, 10))
        n_x = int(rng.randint(1, n))
        pooled = rng.randint(0, 3, n).astype(float)
        _, expected = _enumerated_pvalues(pooled, n_x, alternative)
        got = []
        for chosen in itertools.combinations(range(n), n - n_x):
            is_y = np.zeros(n, dtype=bool)
            is_y[list(chosen)] = True
            got.append(
                mann_whitney_auc_test(
                    pooled[~is_y], pooled[is_y], alternative=alternative
                ).pvalue
            )
        np.testing.assert_allclose(got, expected, atol=1e-12)
        # validity: P(p <= a) <= a for every level a under exchangeability
        got = np.sort(got)
        assert np.all(np.arange(1, got.shape[0] + 1) / got.shape[0] <= got + 1e-12)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_asymptotic_pvalue_matches_scipy_with_ties(alternative):
    rng = np.random.RandomState(2)
    for _ in range(30):
        x = rng.randint(0, 6, int(rng.randint(5, 80))).astype(float)
        y = rng.randint(0, 6, int(rng.randint(5, 80))) + rng.choice([0, 1])
        got = mann_whitney_auc_test(x, y, alternative=alternative, method="asymptotic")
        expected = stats.mannwhitneyu(
            y, x, alternative=alternative, method="asymptotic"
        )
        assert got.pvalue == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-14)


def test_permutation_pvalue_estimates_the_exact_one():
    rng = np.random.RandomState(3)
    x = rng.randint(0, 5, 12).astype(float)
    y = rng.randint(0, 5, 15) + 0.7
    exact = mann_whitney_auc_test(x, y, method="exact").pvalue
    perm = mann_whitney_auc_test(x, y, n_permutations=20000, random_state=0)
    assert perm.method == "permutation" and perm.n_permutations == 20000
    assert perm.pvalue == pytest.approx(exact, abs=4 * np.sqrt(exact / 20000) + 1e-4)
    again = mann_whitney_auc_test(x, y, n_permutations=20000, random_state=0)
    assert again.pvalue == perm.pvalue
    # never zero: (1 + hits) / (1 + B)
    far = mann_whitney_auc_test(np.zeros(30), np.ones(30), n_permutations=99)
    assert far.pvalue == 0.01


def test_auto_method_and_degenerate_scores():
    assert mann_whitney_auc_test([0.0] * 50, [1.0] * 50).method == "exact"
    assert mann_whitney_auc_test([0.0] * 50, [1.0] * 51).method == "asymptotic"
    for method in ["exact", "asymptotic"]:
        tied = mann_whitney_auc_test([1.0] * 5, [1.0] * 6, method=method)
        assert tied.statistic == 0.5 and tied.pvalue == 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alternative": "bigger"}, "alternative must be one of"),
        ({"method": "bootstrap"}, "method must be one of"),
        ({"method": "exact", "n_permutations": 10}, "n_permutations is given"),
        ({"n_permutations": 0}, "positive integer"),
    ],
)
def test_mann_whitney_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mann_whitney_auc_test([0.1, 0.2], [0.3], **kwargs)
    with pytest.raises(ValueError, match="non-empty"):
        mann_whitney_auc_test([], [0.3])
    with pytest.raises(ValueError, match="scores_y contains NaN"):
        mann_whitney_auc_test([0.1], [np.nan])


def _samples(rng, n, d, shift):
    X = rng.normal(size=(n, d))
    Y = rng.normal(size=(n, d))
    Y[:, 0] += shift
    return X, Y


def test_two_sample_split_and_scores():
    rng = np.random.RandomState(4)
    X, Y = _samples(rng, 41, 3, 1.0)
    Y = Y[:30]
    model = LogisticRegression()
    result = two_sample_test(X, Y, estimator=model, test_size=0.4, random_state=0)
    assert not hasattr(model, "coef_")  # the given estimator is cloned
    for train, test, n in [
        (result.x_train_index, result.x_test_index, 41),
        (result.y_train_index, result.y_test_index, 30),
    ]:
        np.testing.assert_array_equal(np.sort(np.r_[train, test]), np.arange(n))
    # stratified: each sample holds out 40 % of its rows
    assert result.x_test_index.shape[0] in (16, 17)
    assert result.y_test_index.shape[0] in (12, 13)
    fitted = result.estimator
    np.testing.assert_allclose(
        result.scores_x, fitted.decision_function(X[result.x_test_index])
    )
    np.testing.assert_allclose(
        result.scores_y, fitted.decision_function(Y[result.y_test_index])
    )
    labels = np.r_[np.zeros_like(result.scores_x), np.ones_like(result.scores_y)]
    assert result.statistic == pytest.approx(
        roc_auc_score(labels, np.r_[result.scores_x, result.scores_y])
    )
    assert result.method == "exact" and result.alternative == "greater"
    assert "TwoSampleTestResult(statistic=" in repr(result)
    # the same seed gives the same test
    again = two_sample_test(X, Y, estimator=model, test_size=0.4, random_state=0)
    np.testing.assert_array_equal(again.x_test_index, result.x_test_index)
    assert again.pvalue == result.pvalue


def test_two_sample_default_forest_predict_proba_and_sparse():
    rng = np.random.RandomState(5)
    X, Y = _samples(rng, 200, 4, 1.0)
    result = treerank.two_sample_test(X, Y, random_state=0)
    assert isinstance(result.estimator, treerank.RankingForest)
    assert result.statistic > 0.65 and result.pvalue < 1e-4
    forest = RandomForestClassifier(n_estimators=20, random_state=0)
    proba = two_sample_test(
        sparse.csr_matrix(X), Y, estimator=forest, n_permutations=199, random_state=0
    )
    assert proba.method == "permutation" and proba.n_permutations == 199
    assert proba.statistic > 0.55 and 0.005 <= proba.pvalue <= 0.05


@pytest.mark.parametrize(
    ("X", "Y", "kwargs", "match"),
    [
        (np.zeros((5, 2)), np.zeros((5, 3)), {}, "same features"),
        (np.zeros((1, 2)), np.zeros((5, 2)), {}, "X has 1 sample"),
        (np.zeros((5, 2)), np.zeros((5, 2)), {"test_size": 1.5}, "test_size"),
        (np.zeros((5, 2)), np.zeros((5, 2)), {"test_size": True}, "test_size"),
        (np.zeros((5, 2)), np.zeros((5, 2)), {"test_size": 1}, ">= 2"),
        (np.zeros((3, 2)), np.zeros((3, 2)), {"test_size": 0.1}, "cannot split"),
        (
            np.zeros((5, 2)),
            np.zeros((5, 2)),
            {"method": "asymptotic", "n_permutations": 9},
            "n_permutations is given",
        ),
        (np.zeros((5, 2)), np.full((5, 2), np.nan), {}, "NaN"),
    ],
)
def test_two_sample_errors(X, Y, kwargs, match):
    with pytest.raises(ValueError, match=match):
        two_sample_test(X, Y, estimator=LogisticRegression(), **kwargs)


class _MeanDifference(BaseEstimator):
    """A cheap scorer: projection on the difference of the class means."""

    def fit(self, X, y):
        self.direction_ = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)
        return self

    def decision_function(self, X):
        return X @ self.direction_


def _rejection_rate(shift, n_rep, seed):
    rng = np.random.RandomState(seed)
    pvalues = []
    for rep in range(n_rep):
        X, Y = _samples(rng, 40, 3, shift)
        result = two_sample_test(X, Y, estimator=_MeanDifference(), random_state=rep)
        pvalues.append(result.pvalue)
    return np.mean(np.array(pvalues) <= 0.05)


def test_level_and_power_with_a_cheap_scorer():
    # 400 null replications: the exact test rejects at most 5 % in expectation;
    # 3 binomial standard deviations above 0.05 is 0.083
    assert _rejection_rate(0.0, 400, seed=6) <= 0.083
    assert _rejection_rate(1.0, 100, seed=7) >= 0.8


@pytest.mark.slow
def test_level_and_power_with_the_default_forest():
    rng = np.random.RandomState(8)
    null, alt = [], []
    for rep in range(200):
        X, Y = _samples(rng, 200, 5, 0.0)
        null.append(two_sample_test(X, Y, random_state=rep).pvalue)
        X, Y = _samples(rng, 200, 5, 1.0)
        if rep < 50:
            alt.append(two_sample_test(X, Y, random_state=rep).pvalue)
    assert np.mean(np.array(null) <= 0.05) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 200)
    assert np.mean(np.array(alt) <= 0.05) >= 0.7
