"""scikit-learn API conformance of the treerank estimators."""

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from treerank import ClassifierLeafRank, LeafRank, RankingForest, TreeRank
from treerank.datasets import load_breast_cancer

_STRING_LABELS = (
    "String class labels are refused on purpose: bipartite ranking needs to "
    "know which class is positive, and strings carry no such order "
    "(encode y as 0/1 or bool)."
)
_WEIGHTS_AS_ROWS = (
    "min_samples_split and the LeafRank's min_samples_leaf count rows, as in "
    "scikit-learn's trees, so integer weights equal repeated rows only when those "
    "thresholds do not bind (zero weights do equal removed rows: tested in "
    "test_treerank.py). The check passes with scikit-learn 1.9, fails with 1.6."
)
_ORDERED_GRADES = (
    "More than two integer labels are accepted as ordered grades (multipartite "
    "ranking: the order of the values is the order of preference), not refused "
    "as nominal classes; scikit-learn's multiclass checks assume nominal classes "
    "(a decision_function of shape (n_samples, n_classes)), hence the tag "
    "multi_class=False, and this check expects a refusal."
)
EXPECTED_FAILED_CHECKS = {
    name: {
        "check_classifiers_classes": _STRING_LABELS,
        "check_classifier_not_supporting_multiclass": _ORDERED_GRADES,
        "check_sample_weight_equivalence_on_dense_data": _WEIGHTS_AS_ROWS,
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHTS_AS_ROWS,
    }
    for name in ["TreeRank", "RankingForest"]
}
_SCALED_BY_ROWS = (
    "ClassifierLeafRank rescales its class-balanced weights by n_rows / 2 (to keep "
    "them of order one), so integer weights and repeated rows give the wrapped "
    "classifier the same data at different scales: a regularized classifier "
    "(LogisticRegression) then fits a different line. The check passes with "
    "scikit-learn 1.9, fails with 1.6."
)
# The splitters are binary classifiers for scikit-learn (class-balanced: predict
# is the positive class on the left side); every other check passes.
EXPECTED_FAILED_CHECKS["LeafRank"] = {
    "check_classifiers_classes": _STRING_LABELS,
    "check_sample_weight_equivalence_on_dense_data": _WEIGHTS_AS_ROWS,
}
EXPECTED_FAILED_CHECKS["ClassifierLeafRank"] = {
    "check_classifiers_classes": _STRING_LABELS,
    "check_sample_weight_equivalence_on_dense_data": _SCALED_BY_ROWS,
}


def _estimators():
    yield TreeRank(random_state=0)
    yield RankingForest(n_estimators=5, random_state=0)


def _splitters():
    yield LeafRank(random_state=0)
    yield ClassifierLeafRank(LogisticRegression(), random_state=0)


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(
    [*_estimators(), *_splitters()], expected_failed_checks=_expected_failed_checks
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "estimator", [*_estimators(), *_splitters()], ids=lambda e: type(e).__name__
)
def test_binary_classifier_tags(estimator):
    tags = get_tags(estimator)
    assert is_classifier(estimator)
    assert tags.classifier_tags.multi_class is False
    # NaN as missing values: the trees' splitter, LeafRank, routes them; a
    # ClassifierLeafRank accepts them when its classifier does
    nan_ok = not isinstance(estimator, ClassifierLeafRank)
    assert tags.input_tags.allow_nan is nan_ok


@pytest.mark.parametrize("splitter", list(_splitters()), ids=lambda e: type(e).__name__)
def test_splitter_predict_is_the_left_side(splitter, breast_cancer):
    """predict is classes_[1] on the left side; score the balanced accuracy."""
    X, y = breast_cancer
    X = StandardScaler().fit_transform(X)
    labels = np.where(y == 1, 5, -2)
    fitted = clone(splitter).fit(X, labels)
    left = fitted.goes_left(X)
    np.testing.assert_array_equal(fitted.classes_, [-2, 5])
    np.testing.assert_array_equal(fitted.predict(X), np.where(left, 5, -2))
    tpr, fpr = left[labels == 5].mean(), left[labels == -2].mean()
    assert fitted.score(X, labels) == pytest.approx((1 + tpr - fpr) / 2)


@pytest.fixture(scope="module")
def breast_cancer():
    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize(
    "estimator", list(_estimators()), ids=lambda e: type(e).__name__
)
def test_clone_pipeline_grid_search_and_cross_validation(estimator, breast_cancer):
    X, y = breast_cancer
    fresh = clone(estimator)
    assert not hasattr(fresh, "tree_")
    pipe = make_pipeline(StandardScaler(), clone(estimator))
    scores = cross_val_score(pipe, X, y, cv=3, scoring="roc_auc")
    assert scores.shape == (3,) and np.all(scores > 0.85)
    # the estimator's own score is the AUC, so both scorings agree
    default = cross_val_score(clone(estimator), X, y, cv=3)
    explicit = cross_val_score(clone(estimator), X, y, cv=3, scoring="roc_auc")
    np.testing.assert_allclose(default, explicit)
    search = GridSearchCV(
        clone(estimator), {"max_depth": [1, 3]}, cv=3, scoring="roc_auc"
    ).fit(X, y)
    assert search.best_params_["max_depth"] in (1, 3)
    assert 0.85 < search.best_score_ <= 1
