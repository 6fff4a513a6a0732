"""Affine decompositions of discrete losses (Nowak-Vila et al.) and the QS estimator."""

import itertools
import math
import pickle
from fractions import Fraction as F

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import sparse
from sklearn.base import clone
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge

from treerank.metrics import list_auc, pairwise_disagreement
from treerank.surrogates import (
    BlockZeroOneDecomposition,
    DCGSurrogate,
    FScoreDecomposition,
    HammingDecomposition,
    MAPSurrogate,
    PairwiseDisagreementDecomposition,
    PrecisionAtKDecomposition,
    QuadraticSurrogateEstimator,
    ZeroOneDecomposition,
)
from treerank.surrogates._decoders import all_rankings

M = 4
SETS = np.array(list(itertools.product([0, 1], repeat=M)))
RANKINGS = np.array(all_rankings(M))
BLOCKS = [0, 1, 1, 2, 0, 2, 1, 0, 3, 3, 1, 2, 0, 0, 3, 2]


def _scores(ranking):
    s = np.empty(len(ranking))
    s[np.asarray(ranking)] = np.arange(len(ranking), 0, -1)
    return s


def _code(z):
    return int(np.dot(z, 2 ** np.arange(len(z))))


# direct definitions of the losses, in exact arithmetic
def zero_one(z, y):
    return F(int(not np.array_equal(z, y)))


def hamming(z, y):
    return F(int(np.sum(z != y)), len(z))


def precision_at_2(z, y):
    return 1 - F(int(np.sum(z * y)), 2)


def f_score_loss(z, y):
    if z.sum() == 0 and y.sum() == 0:
        return F(0)
    return 1 - F(2 * int(np.sum(z * y)), int(z.sum() + y.sum()))


def block_loss(z, y):
    return F(int(BLOCKS[_code(z)] != BLOCKS[_code(y)]))


MULTILABEL = {
    "zero_one": (ZeroOneDecomposition(M), zero_one, SETS),
    "block": (BlockZeroOneDecomposition(BLOCKS), block_loss, SETS),
    "hamming": (HammingDecomposition(M), hamming, SETS),
    "precision@2": (
        PrecisionAtKDecomposition(M, k=2),
        precision_at_2,
        SETS[SETS.sum(1) == 2],
    ),
    "f_score_1": (FScoreDecomposition(M, 1), f_score_loss, SETS),
    "f_score_2": (FScoreDecomposition(M, 2), f_score_loss, SETS),
}


@pytest.mark.parametrize("name", sorted(MULTILABEL))
def test_multilabel_decomposition_reproduces_the_loss_matrix(name):
    dec, loss, outputs = MULTILABEL[name]
    assert sorted(map(tuple, dec.outputs())) == sorted(map(tuple, outputs))
    L = dec.loss_matrix(outputs, SETS, exact=True)
    expected = np.array([[loss(z, y) for y in SETS] for z in outputs], dtype=object)
    assert np.all(L == expected)
    assert all(isinstance(v, F) for v in L.ravel())
    # the float version agrees
    assert_allclose(dec.loss_matrix(outputs, SETS), expected.astype(float), atol=1e-14)


def test_pairwise_disagreement_decomposition_is_exact():
    dec = PairwiseDisagreementDecomposition(M)
    L = dec.loss_matrix(RANKINGS, SETS, exact=True)
    for a, ranking in enumerate(RANKINGS):
        for b, y in enumerate(SETS):
            if 0 < y.sum() < M:
                y_exact = [F(int(v)) for v in y]
                pd = pairwise_disagreement(y_exact, _scores(ranking), ties="stable")
                assert L[a, b] == pd
                auc = list_auc(y_exact, _scores(ranking), ties="stable")
                assert L[a, b] == 1 - auc
            else:
                assert L[a, b] == F(1, 2)  # undefined lists: constant 1/2


def test_ranking_decompositions_of_ndcg_and_map_use_the_p2_classes():
    # same decompositions as Ramaswamy et al.'s (checked against the metric layer
    # in test_surrogates_low_rank); here: dimension and constants of 003
    assert DCGSurrogate(M).dim == M
    assert MAPSurrogate(M).dim == M * (M + 1) // 2
    assert MAPSurrogate(M).F_norm ** 2 == pytest.approx(
        sum(1 / p for p in range(1, M + 1))
    )
    assert MAPSurrogate(1).F_norm ** 2 > math.log(2)  # H_1 = 1 > log(m + 1)


ALL = {
    **{name: (dec, outputs, SETS) for name, (dec, _, outputs) in MULTILABEL.items()},
    "pd": (PairwiseDisagreementDecomposition(M), RANKINGS, SETS),
    "ndcg": (
        DCGSurrogate(M),
        RANKINGS,
        np.array(list(itertools.product(range(3), repeat=M))),
    ),
    "map": (MAPSurrogate(M), RANKINGS, SETS),
}


@pytest.mark.parametrize("name", sorted(ALL))
def test_decoder_is_bayes_optimal(name, rng):
    dec, outputs, labels = ALL[name]
    L = dec.loss_matrix(outputs, labels)
    for _ in range(100):
        support = rng.choice(len(labels), size=int(rng.integers(1, 6)), replace=False)
        p = np.zeros(len(labels))
        p[support] = rng.dirichlet(np.ones(support.size))
        g_star = p @ dec.target(labels)
        z = dec.decode(g_star)
        risk = dec.loss_matrix(z[None], labels)[0] @ p
        assert risk <= (L @ p).min() + 1e-10
        # decode is argmin_z <F_z, theta>: compare with brute force
        assert (
            dec.output_embedding(z) @ g_star
            <= (dec.output_embedding(outputs) @ g_star).min() + 1e-10
        )


@pytest.mark.parametrize("name", sorted(ALL))
def test_comparison_inequality(name, rng):
    dec, outputs, labels = ALL[name]
    L = dec.loss_matrix(outputs, labels)
    for _ in range(100):
        p = rng.dirichlet(np.ones(len(labels)) * 0.3)
        g_star = p @ dec.target(labels)
        theta = g_star + rng.normal(size=dec.dim) * rng.choice([1e-3, 0.1, 1.0])
        regret = dec.loss_matrix(dec.decode(theta)[None], labels)[0] @ p - (L @ p).min()
        bound = dec.comparison_constant * np.linalg.norm(theta - g_star)
        assert regret <= bound + 1e-12


@pytest.mark.parametrize("name", sorted(ALL))
def test_constants_by_enumeration(name):
    dec, outputs, labels = ALL[name]
    F_all = dec.output_embedding(outputs)
    assert np.linalg.norm(F_all, axis=1).max() == pytest.approx(dec.F_norm)
    U_all = dec.target(labels)
    assert np.abs(U_all).max() == pytest.approx(dec.U_max)
    assert dec.A == pytest.approx(math.sqrt(dec.dim) * dec.F_norm * dec.U_max)


def test_corrected_constants():
    # Hamming: c = 1/2 (printed 1/(2m)); A = 1/2
    assert HammingDecomposition(M).offset == 0.5
    assert HammingDecomposition(7).A == pytest.approx(0.5)
    # PD: c = 1/2 (printed 1/4); U_max = 2 / (m - 1)
    assert PairwiseDisagreementDecomposition(M).offset == 0.5
    assert PairwiseDisagreementDecomposition(M).U_max == pytest.approx(2 / 3)
    # F-score: the empty output has F_last = -1 (printed +1)
    assert FScoreDecomposition(M).output_embedding(np.zeros(M, dtype=int))[-1] == -1


def test_gfm_decoder_matches_brute_force(rng):
    for decomposition in (1, 2):
        dec = FScoreDecomposition(5, decomposition)
        outputs = dec.outputs()
        F_all = dec.output_embedding(outputs)
        for _ in range(200):
            theta = rng.normal(size=dec.dim)
            assert dec.output_embedding(dec.decode(theta)) @ theta == pytest.approx(
                (F_all @ theta).min()
            )


# ---------------------------------------------------------------------------
# the QS estimator
# ---------------------------------------------------------------------------


def _multilabel_data(rng, n=120):
    X = rng.normal(size=(n, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, X[:, 0] + X[:, 2] > 0]).astype(int)
    return X, Y


def test_qs_estimator_equals_manual_regression_and_decoding(rng):
    X, Y = _multilabel_data(rng)
    dec = FScoreDecomposition(3)
    est = QuadraticSurrogateEstimator(
        dec, regressor=KernelRidge(alpha=0.1, kernel="rbf")
    )
    est.fit(X, Y)
    manual = KernelRidge(alpha=0.1, kernel="rbf").fit(X, dec.target(Y))
    assert_allclose(est.decision_function(X), manual.predict(X))
    assert_allclose(est.predict(X), dec.decode(manual.predict(X)))


def test_qs_estimator_learns_and_beats_a_constant(rng):
    X, Y = _multilabel_data(rng, n=300)
    dec = HammingDecomposition(3)
    est = QuadraticSurrogateEstimator(dec).fit(X[:200], Y[:200])
    Z = est.predict(X[200:])
    hamming_error = np.mean(Z != Y[200:])
    best_constant = np.mean(Y[200:] != (Y[:200].mean(axis=0) > 0.5))
    assert hamming_error < best_constant / 2


def test_qs_estimator_ranking_outputs_sparse_and_clone(rng):
    X = rng.normal(size=(80, 4))
    relevance = np.clip(np.round(X[:, :3] + 1), 0, 2)
    est = QuadraticSurrogateEstimator(DCGSurrogate(3), regressor=Ridge(alpha=1.0))
    Z = est.fit(X, relevance).predict(X)
    assert Z.shape == (80, 3)
    assert np.all(np.sort(Z, axis=1) == np.arange(3))
    est_sparse = clone(est).fit(sparse.csr_matrix(X), relevance)
    assert_allclose(est_sparse.decision_function(X), est.decision_function(X))
    restored = pickle.loads(pickle.dumps(est))
    assert_allclose(restored.decision_function(X), est.decision_function(X))


def test_qs_estimator_errors(rng):
    X, Y = _multilabel_data(rng, n=10)
    with pytest.raises(ValueError, match="AffineDecomposition"):
        QuadraticSurrogateEstimator("hamming").fit(X, Y)
    with pytest.raises(ValueError, match="Y has 9 labels"):
        QuadraticSurrogateEstimator(HammingDecomposition(3)).fit(X, Y[:9])
    with pytest.raises(ValueError, match="binary"):
        QuadraticSurrogateEstimator(HammingDecomposition(3)).fit(X, Y * 2)
    est = QuadraticSurrogateEstimator(HammingDecomposition(3)).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ZeroOneDecomposition(17), "n_items must be <="),
        (lambda: BlockZeroOneDecomposition([0, 2, 1]), "length 2\\^m"),
        (lambda: BlockZeroOneDecomposition([0, 2, 2, 0]), "no empty block"),
        (lambda: PrecisionAtKDecomposition(3, k=0), "k must be an integer"),
        (
            lambda: FScoreDecomposition(3, decomposition=3),
            "decomposition must be 1 or 2",
        ),
        (
            lambda: PrecisionAtKDecomposition(3, k=2).loss([1, 0, 0], [1, 0, 0]),
            "exactly k",
        ),
        (lambda: PairwiseDisagreementDecomposition(1), "integer >= 2"),
        (
            lambda: HammingDecomposition(3).label_embedding([1, 0]),
            "labels must have shape",
        ),
    ],
)
def test_invalid(call, match):
    with pytest.raises(ValueError, match=match):
        call()
