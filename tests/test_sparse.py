"""scipy sparse input: identical to the dense matrix, never densified whole
(issue 13)."""

import tracemalloc

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.utils import get_tags

from treerank import (
    ClassifierLeafRank,
    LeafRank,
    LinearLeafRank,
    MixedLeafRank,
    RankingForest,
    TreeRank,
)
from treerank._engine import BinMapper, Router, _routing
from treerank.model_io import load_model, save_model
from treerank.utils._sparse import canonical_sparse, values_at

FORMATS = [
    sparse.csr_matrix,
    sparse.csc_matrix,
    sparse.csr_array,
    sparse.csc_array,
]
FORMAT_IDS = ["csr_matrix", "csc_matrix", "csr_array", "csc_array"]


def _sparse_problem(seed, n=400, n_features=9, density=0.35, missing=0.03):
    """Mostly zero features, some stored NaN, one column of zeros only."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.rand(n, n_features) > density] = 0.0
    X[rng.rand(n, n_features) < missing] = np.nan
    X[:, 4] = 0.0
    signal = np.nan_to_num(X[:, 0] - X[:, 1] + 0.5 * X[:, 2])
    y = (signal + 0.4 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def problem():
    X, y = _sparse_problem(0)
    X_test, _ = _sparse_problem(1, n=300)
    return X, y, X_test


def _estimators():
    return [
        TreeRank(random_state=0),
        TreeRank(pruning="cv", cv=3, random_state=0),
        TreeRank(pruning="penalty", penalty_scale=0.005, random_state=0),
        RankingForest(n_estimators=8, random_state=0),
        RankingForest(n_estimators=8, aggregation="mean", random_state=0),
    ]


def _outputs(estimator, X):
    return {
        "decision_function": estimator.decision_function(X),
        "apply": estimator.apply(X),
        "predict_proba": estimator.predict_proba(X),
        "predict": estimator.predict(X),
    }


@pytest.mark.parametrize(
    "estimator",
    _estimators(),
    ids=["tree", "tree-cv", "tree-penalty", "forest-median", "forest-mean"],
)
def test_sparse_fit_and_predict_match_dense(estimator, problem):
    """Fitted on CSR, CSC or dense X with the same seed, every output on
    CSR, CSC or dense test rows is the same, bit for bit."""
    X, y, X_test = problem
    reference = _outputs(clone(estimator).fit(X, y), X_test)
    assert np.isnan(X).any() and np.unique(reference["apply"]).shape[0] > 2
    for to_fit in FORMATS[:2]:
        fitted = clone(estimator).fit(to_fit(X), y)
        for to_test in [*FORMATS, np.asarray]:
            got = _outputs(fitted, to_test(X_test))
            for name, expected in reference.items():
                np.testing.assert_array_equal(got[name], expected, err_msg=name)


def test_forest_out_of_bag_matches_dense(problem):
    X, y, _ = problem
    forest = RankingForest(n_estimators=10, random_state=0)
    dense = clone(forest).fit(X, y)
    for to_fit in FORMATS:
        fitted = clone(forest).fit(to_fit(X), y)
        assert fitted.oob_score_ == dense.oob_score_
        np.testing.assert_array_equal(
            fitted.oob_decision_function_, dense.oob_decision_function_
        )
        np.testing.assert_array_equal(
            fitted.estimators_samples_, dense.estimators_samples_
        )
        np.testing.assert_array_equal(
            fitted.feature_importances_, dense.feature_importances_
        )


@pytest.mark.parametrize("to_sparse", FORMATS, ids=FORMAT_IDS)
def test_leafrank_sparse_matches_dense(to_sparse, problem):
    X, y, X_test = problem
    leafrank = LeafRank(max_depth=3, min_samples_leaf=10, random_state=0)
    dense = clone(leafrank).fit(X, y)
    fitted = clone(leafrank).fit(to_sparse(X), y)
    assert fitted.describe() == dense.describe()
    assert fitted.gain_ == dense.gain_
    for to_test in [*FORMATS, np.asarray]:
        np.testing.assert_array_equal(
            fitted.goes_left(to_test(X_test)), dense.goes_left(X_test)
        )
        np.testing.assert_array_equal(
            fitted.predict(to_test(X_test)), dense.predict(X_test)
        )


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32])
def test_integer_and_float32_sparse_matrices(dtype):
    """A sparse matrix of another dtype means its values as float64."""
    rng = np.random.RandomState(3)
    X = rng.randint(-3, 4, size=(300, 6)) * (rng.rand(300, 6) < 0.3)
    X = (X * 1.25).astype(dtype) if dtype is np.float32 else X.astype(dtype)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=300) > 0).astype(int)
    for estimator in (
        TreeRank(random_state=0),
        RankingForest(n_estimators=5, random_state=0),
    ):
        dense = clone(estimator).fit(X.astype(np.float64), y)
        fitted = clone(estimator).fit(sparse.csr_matrix(X), y)
        np.testing.assert_array_equal(
            fitted.decision_function(sparse.csc_matrix(X)),
            dense.decision_function(X.astype(np.float64)),
        )


def test_all_zero_columns_and_an_all_zero_matrix():
    rng = np.random.RandomState(4)
    X = np.zeros((200, 5))
    X[:, 2] = rng.normal(size=200) * (rng.rand(200) < 0.5)
    y = (X[:, 2] > 0).astype(int)
    tree = TreeRank(random_state=0).fit(sparse.csr_matrix(X), y)
    assert tree.n_leaves_ > 1
    assert tree.feature_importances_[[0, 1, 3, 4]].tolist() == [0, 0, 0, 0]
    # nothing stored at all: every row in one leaf, as for the zero matrix
    empty = sparse.csr_matrix((50, 5))
    np.testing.assert_array_equal(tree.apply(empty), tree.apply(np.zeros((50, 5))))
    stump = TreeRank(random_state=0).fit(sparse.csr_matrix((200, 5)), y)
    assert stump.n_leaves_ == 1


def test_duplicates_unsorted_indices_and_explicit_zeros():
    """A non-canonical matrix means its toarray(): duplicates are summed,
    stored zeros are zeros, indices need not be sorted; the caller's matrix
    is left untouched."""
    X, y = _sparse_problem(5, n=200, missing=0.0)
    coo = sparse.coo_matrix(X)
    # every stored value as two entries, plus explicit zeros in column 4
    half = coo.data / 2
    rows = np.concatenate([coo.row, coo.row, np.arange(200)])
    cols = np.concatenate([coo.col, coo.col, np.full(200, 4)])
    values = np.concatenate([half, coo.data - half, np.zeros(200)])
    order = np.lexsort((-cols, rows))  # by row, columns decreasing
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=200))])
    messy = sparse.csr_matrix((values[order], cols[order], indptr), shape=X.shape)
    assert not messy.has_canonical_format
    before = messy.data.copy(), messy.indices.copy()
    exact = messy.toarray()  # the sums of the halves, as toarray adds them
    np.testing.assert_allclose(exact, X, rtol=1e-15)
    canonical = canonical_sparse(messy, "csr")
    assert canonical.has_canonical_format
    np.testing.assert_array_equal(canonical.toarray(), exact)
    expected = TreeRank(random_state=0).fit(exact, y).decision_function(exact)
    for matrix in (messy, messy.tocoo(), sparse.csc_matrix(messy)):
        fitted = TreeRank(random_state=0).fit(matrix, y)
        np.testing.assert_array_equal(fitted.decision_function(messy), expected)
    np.testing.assert_array_equal(messy.data, before[0])
    np.testing.assert_array_equal(messy.indices, before[1])


def test_bin_mapper_sparse_matches_dense_with_subsample():
    X, _ = _sparse_problem(6, n=600)
    for subsample in (None, 150):
        dense = BinMapper(subsample=subsample, random_state=0).fit(X)
        fitted = BinMapper(subsample=subsample, random_state=0).fit(
            sparse.csr_matrix(X)
        )
        for a, b in zip(dense.thresholds_, fitted.thresholds_):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(
            fitted.transform(sparse.csc_array(X)), dense.transform(X)
        )


def test_values_at_reads_stored_entries_and_zeros():
    X, _ = _sparse_problem(7, n=50)
    rows = np.repeat(np.arange(50), 9)
    cols = np.tile(np.arange(9), 50)
    for to_sparse in FORMATS:
        np.testing.assert_array_equal(values_at(to_sparse(X), rows, cols), X.ravel())
    assert values_at(sparse.csr_matrix(X), rows[:0], cols[:0]).shape == (0,)


@pytest.mark.parametrize("block_bytes", [1, 8 * 9 * 7])
def test_routing_blocks_do_not_change_the_leaves(monkeypatch, problem, block_bytes):
    """Sparse rows are routed in blocks (one row, or seven); every block size
    gives the dense leaves."""
    X, y, X_test = problem
    forest = RankingForest(n_estimators=6, random_state=0).fit(X, y)
    expected = forest.apply(X_test)
    monkeypatch.setattr(_routing, "SPARSE_BLOCK_BYTES", block_bytes)
    np.testing.assert_array_equal(forest.apply(sparse.csr_matrix(X_test)), expected)


def test_prediction_does_not_densify_a_large_sparse_matrix():
    """Scores of 200,000 x 1,000 sparse rows (1.6 GB dense) in a few MB."""
    rng = np.random.RandomState(8)
    n_features = 1000
    train = sparse.random(
        2000, n_features, density=0.01, format="csr", random_state=rng
    )
    y = (train[:, :10].sum(axis=1).A1 + 0.1 * rng.normal(size=2000) > 0.05).astype(int)
    forest = RankingForest(n_estimators=3, aggregation="mean", random_state=0).fit(
        train, y
    )
    n_rows = 200_000  # two entries per row, at random columns
    rows = np.repeat(np.arange(n_rows), 2)
    big = sparse.csr_matrix(
        (
            rng.uniform(size=2 * n_rows),
            (rows, rng.randint(n_features, size=2 * n_rows)),
        ),
        shape=(n_rows, n_features),
    )
    forest.decision_function(big[:10])  # compiled before measuring
    dense_bytes = big.shape[0] * big.shape[1] * 8
    tracemalloc.start()
    try:
        scores = forest.decision_function(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert scores.shape == (200_000,)
    # the leaves (n x trees int32), a few score vectors and one 8 MiB block
    assert peak < 40e6, peak
    assert peak < dense_bytes / 40
    np.testing.assert_array_equal(
        scores[:2000], forest.decision_function(big[:2000].toarray())
    )


def test_binning_a_sparse_matrix_does_not_densify_it():
    """Binning reads one column at a time: the codes (one byte per value)
    and a column, not the float64 matrix."""
    X = sparse.random(20_000, 300, density=0.01, format="csr", random_state=9)
    tracemalloc.start()
    try:
        codes = BinMapper(random_state=0).fit_transform(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    dense_bytes = X.shape[0] * X.shape[1] * 8
    assert peak < codes.nbytes + dense_bytes / 8, (peak, codes.nbytes)
    np.testing.assert_array_equal(
        codes, BinMapper(random_state=0).fit_transform(X.toarray())
    )


def test_model_file_of_a_sparse_fit(tmp_path, problem):
    X, y, X_test = problem
    for estimator in (
        TreeRank(random_state=0),
        RankingForest(n_estimators=5, random_state=0),
    ):
        fitted = clone(estimator).fit(sparse.csr_matrix(X), y)
        path = tmp_path / f"{type(estimator).__name__}.zip"
        save_model(fitted, path)
        loaded = load_model(path)
        for to_test in (sparse.csr_matrix, sparse.csc_array, np.asarray):
            np.testing.assert_array_equal(
                loaded.decision_function(to_test(X_test)),
                fitted.decision_function(X_test),
            )


def test_graded_target_sparse_matches_dense(problem):
    X, _, X_test = problem
    grades = np.digitize(np.nan_to_num(X[:, 0] - X[:, 1]), [-0.3, 0.3])
    for estimator in (
        TreeRank(random_state=0),
        RankingForest(n_estimators=4, random_state=0),
    ):
        dense = clone(estimator).fit(X, grades)
        fitted = clone(estimator).fit(sparse.csc_matrix(X), grades)
        np.testing.assert_array_equal(
            fitted.decision_function(sparse.csr_matrix(X_test)),
            dense.decision_function(X_test),
        )
        np.testing.assert_array_equal(
            fitted.predict_proba(sparse.csr_matrix(X_test)), dense.predict_proba(X_test)
        )


def test_classifier_leafrank_reads_sparse_rows(problem):
    """A ClassifierLeafRank whose classifier accepts sparse data is fitted on
    the sparse rows of each node; its tree predicts sparse rows as dense ones."""
    X, y, X_test = problem
    X, X_test = np.nan_to_num(X), np.nan_to_num(X_test)
    leafrank = ClassifierLeafRank(LogisticRegression(), random_state=0)
    tree = TreeRank(leafrank=leafrank, max_depth=3, random_state=0)
    fitted = tree.fit(sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(
        fitted.decision_function(sparse.csc_matrix(X_test)),
        fitted.decision_function(X_test),
    )
    assert fitted.score(sparse.csr_matrix(X_test), _sparse_problem(1, n=300)[1]) > 0.6


@pytest.mark.parametrize(
    "estimator",
    [
        TreeRank(leafrank=LinearLeafRank()),
        TreeRank(leafrank=MixedLeafRank()),
        RankingForest(leafrank=LinearLeafRank(), max_features=None, n_estimators=2),
        TreeRank(leafrank=ClassifierLeafRank(GaussianNB()), max_depth=2),
    ],
    ids=["tree-linear", "tree-mixed", "forest-linear", "tree-classifier"],
)
def test_splitters_needing_dense_rows_refuse_sparse_input(estimator, problem):
    X, y, _ = problem
    assert get_tags(estimator).input_tags.sparse is False
    with pytest.raises(ValueError, match="X is sparse, but the splitter"):
        clone(estimator).fit(sparse.csr_matrix(X), y)
    X = np.nan_to_num(X)
    fitted = clone(estimator).fit(X, y)
    with pytest.raises(ValueError, match="needs dense data"):
        fitted.decision_function(sparse.csr_matrix(X))


@pytest.mark.parametrize("leafrank", [LinearLeafRank(), MixedLeafRank()])
def test_dense_only_leafranks_refuse_sparse_alone(leafrank, problem):
    X, y, _ = problem
    with pytest.raises(TypeError, match="Sparse data was passed"):
        clone(leafrank).fit(sparse.csr_matrix(np.nan_to_num(X)), y)


def test_sparse_tags():
    assert get_tags(TreeRank()).input_tags.sparse is True
    assert get_tags(RankingForest()).input_tags.sparse is True
    assert get_tags(LeafRank()).input_tags.sparse is True
    assert get_tags(ClassifierLeafRank(LogisticRegression())).input_tags.sparse is True
    assert get_tags(ClassifierLeafRank(GaussianNB())).input_tags.sparse is False
    assert get_tags(LinearLeafRank()).input_tags.sparse is False


@pytest.mark.parametrize("categorical_features", [[0], np.array([True] + [False] * 8)])
def test_categorical_features_of_a_sparse_matrix_are_refused(
    categorical_features, problem
):
    X, y, _ = problem
    tree = TreeRank(categorical_features=categorical_features)
    with pytest.raises(
        ValueError, match=r"categorical_features selects features \[0\]"
    ):
        tree.fit(sparse.csr_matrix(X), y)


def test_from_dtype_finds_no_categorical_feature_in_a_sparse_matrix(problem):
    X, y, _ = problem
    for spec in ("from_dtype", None, []):
        tree = TreeRank(categorical_features=spec, random_state=0)
        fitted = tree.fit(sparse.csr_matrix(X), y)
        assert fitted._category_encoder is None


def test_model_with_categorical_features_refuses_sparse_rows():
    rng = np.random.RandomState(10)
    X = np.column_stack([rng.randint(0, 4, 300), rng.normal(size=300)])
    y = (X[:, 0] >= 2).astype(int)
    tree = TreeRank(categorical_features=[0], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fitted with categorical features"):
        tree.decision_function(sparse.csr_matrix(X))


def test_router_accepts_any_scipy_format(problem):
    X, y, X_test = problem
    forest = RankingForest(n_estimators=4, random_state=0).fit(X, y)
    router = Router(
        [tree.tree_.graph() for tree in forest.estimators_],
        [tree.tree_.rules.category_sets for tree in forest.estimators_],
    )
    expected = router.leaf_ranks(X_test)
    for matrix in (
        sparse.coo_matrix(X_test),
        sparse.lil_matrix(X_test),
        sparse.dok_matrix(X_test),
    ):
        np.testing.assert_array_equal(router.leaf_ranks(matrix), expected)


def test_two_sample_test_on_sparse_samples():
    """The default forest of the two-sample test reads sparse samples."""
    from treerank.inference import two_sample_test

    X, _ = _sparse_problem(11, n=150, missing=0.0)
    Y, _ = _sparse_problem(12, n=150, missing=0.0)
    Y[:, 0] += 1.0
    dense = two_sample_test(X, Y, random_state=0)
    result = two_sample_test(sparse.csr_matrix(X), sparse.csr_matrix(Y), random_state=0)
    assert result.statistic == dense.statistic and result.pvalue == dense.pvalue
