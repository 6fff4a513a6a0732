"""LinearSurrogateRanker: sklearn contract, optimality, sparse X, metadata routing."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import sparse
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from treerank.metrics import ndcg_score
from treerank.surrogates import (
    LinearSurrogateRanker,
    PairwiseLogistic,
    PointwiseLogistic,
    SLAMSurrogate,
)
from treerank.surrogates._groups import check_groups
from treerank.surrogates._linear_ranker import LOSSES, resolve_loss


@parametrize_with_checks([LinearSurrogateRanker(loss="squared")])
def test_sklearn_compatible_estimator(estimator, check):
    # the common checks call fit(X, y) without qid: a pointwise loss is used;
    # list losses are checked below with qid
    check(estimator)


def _ltr_data(rng, n_queries=30, m=8, d=4, sparse_x=False):
    w = np.array([2.0, -1.0, 0.5, 0.0])[:d]
    X = rng.normal(size=(n_queries * m, d))
    qid = np.repeat(np.arange(n_queries), m)
    y = np.clip(np.round(X @ w / 1.5 + 1 + rng.normal(size=X.shape[0]) * 0.3), 0, 3)
    if sparse_x:
        X = sparse.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    return X, y, qid


@pytest.mark.parametrize("loss", LOSSES)
def test_every_loss_fits_and_ranks_better_than_chance(loss, rng):
    X, y, qid = _ltr_data(rng)
    if loss == "slam_map":
        y = (y >= 2).astype(float)
    ranker = LinearSurrogateRanker(loss=loss, alpha=0.01).fit(X, y, qid=qid)
    scores = ranker.decision_function(X)
    fitted = ndcg_score(y, scores, qid=qid)
    random = ndcg_score(y, rng.normal(size=y.size), qid=qid)
    assert fitted > random + 0.1
    assert ranker.n_iter_ >= 1
    if resolve_loss(loss).translation_invariant:
        assert ranker.intercept_ == 0.0


@pytest.mark.parametrize(
    "loss",
    [
        PairwiseLogistic().instance("ndcg"),
        PointwiseLogistic(eta=1.0).instance("ndcg"),
        "listnet",
        "ranknet",
        "squared_ndcg",
    ],
)
def test_first_order_conditions_for_smooth_losses(loss, rng):
    X, y, qid = _ltr_data(rng)
    alpha = 0.1
    ranker = LinearSurrogateRanker(loss=loss, alpha=alpha, tol=1e-10, max_iter=2000)
    ranker.fit(X, y, qid=qid)
    surrogate = ranker.surrogate_
    scores = ranker.decision_function(X)
    grad_s = surrogate.grad(scores, y, qid=qid)
    n_queries = np.unique(qid).size
    grad_w = X.T @ grad_s / n_queries + alpha * ranker.coef_
    assert_allclose(grad_w, 0.0, atol=1e-6)
    if ranker.intercept_ != 0.0:
        assert grad_s.sum() / n_queries == pytest.approx(0.0, abs=1e-6)


def test_squared_loss_without_qid_is_ridge_regression(rng):
    X = rng.normal(size=(50, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=50)
    alpha = 0.2
    ranker = LinearSurrogateRanker(loss="squared", alpha=alpha, tol=1e-12).fit(X, y)
    # (1/n) sum (xw + b - y)^2 + alpha/2 |w|^2  <=>  ridge with n alpha / 2
    ridge = Ridge(alpha=50 * alpha / 2).fit(X, y)
    assert_allclose(ranker.coef_, ridge.coef_, atol=1e-6)
    assert ranker.intercept_ == pytest.approx(ridge.intercept_, abs=1e-6)


@pytest.mark.parametrize("loss", ["slam", "pairwise_logistic", "ranksvm"])
def test_sparse_input_gives_the_dense_result(loss, rng):
    X, y, qid = _ltr_data(rng, sparse_x=True)
    dense = LinearSurrogateRanker(loss=loss, alpha=0.05).fit(X.toarray(), y, qid=qid)
    ranker = LinearSurrogateRanker(loss=loss, alpha=0.05).fit(X, y, qid=qid)
    assert_allclose(ranker.coef_, dense.coef_, rtol=1e-6, atol=1e-8)
    assert_allclose(ranker.decision_function(X), dense.decision_function(X.toarray()))
    csc = LinearSurrogateRanker(loss=loss, alpha=0.05).fit(X.tocsc(), y, qid=qid)
    assert_allclose(csc.coef_, dense.coef_, rtol=1e-6, atol=1e-8)


def test_sparse_matrix_is_not_densified(rng, monkeypatch):
    X, y, qid = _ltr_data(rng, sparse_x=True)

    def refuse(*args, **kwargs):
        raise AssertionError("X was densified")

    monkeypatch.setattr(sparse.csr_matrix, "toarray", refuse)
    monkeypatch.setattr(sparse.csr_matrix, "todense", refuse)
    LinearSurrogateRanker(loss="slam").fit(X, y, qid=qid).decision_function(X)


def test_slam_ranker_minimizes_the_smoothed_objective(rng):
    X, y, qid = _ltr_data(rng)
    ranker = LinearSurrogateRanker(loss="slam", alpha=0.1, smoothing=0.05, tol=1e-9)
    ranker.fit(X, y, qid=qid)
    loss = SLAMSurrogate()
    groups = check_groups(qid, qid.size)

    def objective(w):
        per_query, _ = loss._smooth_value_and_grad(X @ w, y, groups, 0.05)
        return per_query.sum() / 30 + 0.05 * w @ w

    best = objective(ranker.coef_)
    assert ranker.objective_ == pytest.approx(best)
    for _ in range(20):
        assert objective(ranker.coef_ + rng.normal(size=4) * 1e-2) >= best - 1e-12
    # the smoothed objective is within mu log(m) of the exact SLAM risk
    exact = (
        loss.value(X @ ranker.coef_, y, qid=qid) / 30
        + 0.05 * ranker.coef_ @ ranker.coef_
    )
    assert exact <= best + 1e-12
    assert best <= exact + 0.05 * np.log(8) + 1e-12


def test_list_loss_requires_qid(rng):
    X, y, _ = _ltr_data(rng)
    with pytest.raises(ValueError, match="fit needs qid"):
        LinearSurrogateRanker(loss="slam").fit(X, y)
    with pytest.raises(ValueError, match="fit needs qid"):
        LinearSurrogateRanker(loss="squared_ndcg").fit(X, y)
    with pytest.raises(ValueError, match="qid has"):
        LinearSurrogateRanker().fit(X, y, qid=np.zeros(3))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"loss": "hinge"}, "'loss' parameter"),
        ({"alpha": -1.0}, "'alpha' parameter"),
        ({"smoothing": 0.0}, "'smoothing' parameter"),
        ({"max_iter": 0}, "'max_iter' parameter"),
    ],
)
def test_invalid_parameters(params, match, rng):
    X, y, qid = _ltr_data(rng, n_queries=2)
    with pytest.raises(ValueError, match=match):
        LinearSurrogateRanker(**params).fit(X, y, qid=qid)


def test_clone_pickle_and_refit_with_list_loss(rng):
    X, y, qid = _ltr_data(rng)
    ranker = LinearSurrogateRanker(loss=SLAMSurrogate(weights="ndcg@k", k=3), alpha=0.1)
    ranker.fit(X, y, qid=qid)
    restored = pickle.loads(pickle.dumps(ranker))
    assert_allclose(restored.decision_function(X), ranker.decision_function(X))
    cloned = clone(ranker)
    assert not hasattr(cloned, "coef_")
    assert cloned.get_params()["loss__k"] == 3
    assert_allclose(cloned.fit(X, y, qid=qid).coef_, ranker.coef_)

    # a permutation of the rows (and of the query ids) gives the same model for
    # a loss that is symmetric in the items (SLAM's weights are not: items of
    # equal relevance are weighted in index order)
    ranker = LinearSurrogateRanker(loss="pairwise_logistic", alpha=0.1, tol=1e-10)
    ranker.fit(X, y, qid=qid)
    perm = rng.permutation(y.size)
    permuted = clone(ranker).fit(X[perm], y[perm], qid=qid[perm])
    assert_allclose(permuted.coef_, ranker.coef_, rtol=1e-6, atol=1e-8)


def test_qid_is_routed_as_fit_metadata(rng):
    X, y, qid = _ltr_data(rng)
    expected = make_pipeline(StandardScaler(), LinearSurrogateRanker(alpha=0.1))
    expected.fit(X, y, linearsurrogateranker__qid=qid)
    with config_context(enable_metadata_routing=True):
        ranker = LinearSurrogateRanker(alpha=0.1).set_fit_request(qid=True)
        pipe = make_pipeline(StandardScaler(), ranker).fit(X, y, qid=qid)
        assert_allclose(pipe.decision_function(X), expected.decision_function(X))
        requests = ranker.get_metadata_routing()
        assert requests.fit.requests["qid"] is True


def test_convergence_warning(rng):
    X, y, qid = _ltr_data(rng)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        LinearSurrogateRanker(loss="slam", max_iter=1).fit(X, y, qid=qid)
