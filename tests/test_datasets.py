"""Synthetic data sets with a known optimum, and the breast cancer loader."""

import numpy as np
import pytest
from scipy import integrate
from sklearn.metrics import roc_auc_score

from treerank.datasets import (
    GaussianMeanShift,
    GaussianScale,
    NestedSquares,
    load_breast_cancer,
    make_gaussian_mean_shift,
    make_gaussian_scale,
    make_nested_squares,
)

MODELS = [
    NestedSquares(),
    NestedSquares(rates=(0.9, 0.5, 0.1), radii=(0.5, 1.0, 2.0)),
    GaussianMeanShift(n_features=3, separation=1.5, positive_fraction=0.3),
    GaussianScale(n_features=5, scale_negative=1.5, scale_positive=1.0),
    GaussianScale(n_features=4, scale_negative=1.0, scale_positive=2.0),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_optimal_auc_is_the_area_under_optimal_roc(model):
    area, _ = integrate.quad(model.optimal_roc, 0, 1, limit=500, epsabs=1e-10)
    assert model.optimal_auc() == pytest.approx(area, abs=1e-6)
    fpr, tpr = model.optimal_roc_curve()
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    assert (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0.0, 0.0, 1.0, 1.0)
    # a concave curve lies above the diagonal
    assert np.all(
        model.optimal_roc(np.linspace(0, 1, 101)) >= np.linspace(0, 1, 101) - 1e-12
    )


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_eta_is_the_bayes_scorer_and_labels_follow_eta(model):
    X, y = model.sample(60000, random_state=0)
    eta = model.eta(X)
    # labels are Bernoulli(eta): calibration within Monte Carlo error
    bins = np.quantile(eta, np.linspace(0, 1, 6))
    which = np.clip(np.searchsorted(bins, eta, side="right") - 1, 0, 4)
    for b in range(5):
        sel = which == b
        if sel.sum() > 2000:
            assert y[sel].mean() == pytest.approx(eta[sel].mean(), abs=0.02)
    # the AUC of eta on a large sample is AUC*
    assert roc_auc_score(y, eta) == pytest.approx(model.optimal_auc(), abs=0.008)


def test_nested_squares_rings_and_exact_roc():
    model = NestedSquares(rates=(0.74, 0.62, 0.28, 0.12))
    np.testing.assert_allclose(model.masses_, 0.25)
    assert model.positive_fraction_ == pytest.approx(0.44)
    fpr, tpr = model.optimal_roc_curve()
    assert fpr.shape == (5,)
    # segment slopes are the likelihood ratios eta/(1-eta) * (1-p)/p, decreasing
    slopes = np.diff(tpr) / np.diff(fpr)
    rates = np.array([0.74, 0.62, 0.28, 0.12])
    np.testing.assert_allclose(slopes, rates / (1 - rates) * 0.56 / 0.44)
    X = np.array([[0.0, 0.0], [1.2, 0.0], [0.0, -1.6], [1.9, 1.9]])
    np.testing.assert_array_equal(model.eta(X), rates)


def test_gaussian_closed_forms():
    shift = GaussianMeanShift(n_features=4, separation=2.0)
    from scipy.stats import norm

    assert shift.optimal_auc() == pytest.approx(norm.cdf(2 / np.sqrt(2)))
    # eta is a function of the projection on the mean direction only
    X = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    assert shift.eta(X)[0] == pytest.approx(shift.eta(X)[1])
    scale = GaussianScale()
    assert scale.optimal_auc() == pytest.approx(0.8368378343, abs=1e-9)


def test_generators_are_deterministic_and_validate():
    X1, y1 = make_nested_squares(100, random_state=3)
    X2, y2 = make_nested_squares(100, random_state=3)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    X, y = make_gaussian_mean_shift(50, n_features=7, random_state=0)
    assert X.shape == (50, 7) and set(np.unique(y)) <= {0, 1}
    X, y = make_gaussian_scale(50, n_features=3, random_state=0)
    assert X.shape == (50, 3)
    with pytest.raises(ValueError, match="n_samples must be a positive integer"):
        make_nested_squares(0)
    with pytest.raises(ValueError, match="rates must lie in"):
        NestedSquares(rates=(1.2, 0.1))
    with pytest.raises(ValueError, match="strictly increasing"):
        NestedSquares(rates=(0.5, 0.1), radii=(1.5, 1.0))
    with pytest.raises(ValueError, match="positive_fraction must be a number in"):
        GaussianMeanShift(positive_fraction=1.0)
    with pytest.raises(ValueError, match="must differ"):
        GaussianScale(scale_negative=1.0, scale_positive=1.0)
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, 2\)"):
        NestedSquares().eta(np.zeros((3, 3)))


def test_breast_cancer_malignant_is_positive():
    data = load_breast_cancer()
    X, y = load_breast_cancer(return_X_y=True)
    assert X.shape == (569, 30)
    assert y.sum() == 212  # malignant
    np.testing.assert_array_equal(data.target, y)
    assert list(data.target_names) == ["benign", "malignant"]
    # larger tumours (mean radius) are more often malignant
    assert roc_auc_score(y, X[:, 0]) > 0.9
