"""RankingForest: bagging, randomization, median aggregation, parallel backends."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score, roc_curve

from treerank import ClassifierLeafRank, LeafRank, RankingForest, TreeRank
from treerank.aggregation import kemeny_median, kemeny_objective
from treerank.datasets import GaussianMeanShift, GaussianScale, NestedSquares
from treerank.ensemble import mean_leaf_scores
from treerank.metrics import roc_sup_distance


@pytest.fixture(scope="module")
def squares():
    model = NestedSquares()
    X, y = model.sample(600, random_state=0)
    return X, y


@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_n_jobs_and_determinism(squares, aggregation):
    X, y = squares
    params = {"n_estimators": 8, "aggregation": aggregation, "random_state": 3}
    a = RankingForest(n_jobs=1, **params).fit(X, y)
    b = RankingForest(n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.estimators_samples_, b.estimators_samples_)
    c = RankingForest(n_jobs=1, **{**params, "random_state": 4}).fit(X, y)
    assert not np.array_equal(a.decision_function(X), c.decision_function(X))


def test_threaded_aggregation_fits_the_same_forest(squares, monkeypatch):
    # the median's kernels in threads (every size allowed here): the same
    # cells, consensus and scores as one thread
    from treerank.aggregation import _threads

    monkeypatch.setattr(_threads, "MIN_THREADED_SIZE", 0)
    monkeypatch.setattr(_threads, "cpu_count", lambda: 8)  # 2 parts anywhere
    X, y = squares
    params = {"n_estimators": 12, "random_state": 5}
    a = RankingForest(n_jobs=1, **params).fit(X, y)
    b = RankingForest(n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(a.consensus_, b.consensus_)
    assert a.consensus_objective_ == b.consensus_objective_
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_batch_invariance(squares, aggregation):
    X, y = squares
    forest = RankingForest(n_estimators=10, aggregation=aggregation, random_state=0)
    forest.fit(X, y)
    X_new = NestedSquares().sample(300, random_state=9)[0]
    full = forest.decision_function(X_new)
    for i in [0, 5, 299]:
        assert forest.decision_function(X_new[i : i + 1])[0] == full[i]
    np.testing.assert_array_equal(forest.decision_function(X_new[::-1]), full[::-1])
    # appending other points does not change the scores of the first ones
    both = forest.decision_function(np.vstack([X_new, X]))
    np.testing.assert_array_equal(both[:300], full)


@pytest.mark.parametrize("break_ties", [False, True])
def test_median_seen_cells_get_their_consensus_score(squares, break_ties):
    X, y = squares
    forest = RankingForest(n_estimators=10, break_ties=break_ties, random_state=0).fit(
        X, y
    )
    leaf_ranks = forest.apply(X)
    cells, cell_of_row = np.unique(leaf_ranks, axis=0, return_inverse=True)
    assert forest.n_cells_ == cells.shape[0]
    scores = forest.decision_function(X)
    # rows of one cell share one score
    for cell in range(cells.shape[0]):
        assert np.unique(scores[cell_of_row.ravel() == cell]).shape[0] == 1
    matches = (forest.cells_[:, None, :] == leaf_ranks[None, :, :]).all(axis=2)
    bucket = forest.consensus_[matches.argmax(axis=0)]
    if not break_ties:  # the score order is the consensus order
        np.testing.assert_allclose(
            scores, -2.0 * bucket - forest._calibration.threshold_
        )
        return
    # buckets in the median's order, ties broken by the mean leaf score
    mean = mean_leaf_scores(leaf_ranks, forest._n_leaves)
    order = np.lexsort((-mean, bucket))
    assert np.all(np.diff(scores[order]) <= 0)
    assert np.unique(scores).shape[0] > np.unique(bucket).shape[0]


@pytest.mark.parametrize("n_trees", [3, 5, 30])
def test_median_runs_one_windowed_search_at_every_size(monkeypatch, n_trees):
    # small forests are small median problems, for which the solver would
    # search from five starts over all buckets: the forest asks for one search
    # from Borda or the mean rank with moves within 3 buckets, so that its
    # cost grows with the cells and the trees
    from treerank.ensemble import _tree_aggregate

    calls = []

    def spy(*args, **kwargs):
        result = kemeny_median(*args, **kwargs)
        calls.append((kwargs, result))
        return result

    monkeypatch.setattr(_tree_aggregate, "kemeny_median", spy)
    X, y = GaussianMeanShift(n_features=3).sample(300, random_state=0)
    forest = RankingForest(n_estimators=n_trees, random_state=0).fit(X, y)
    kwargs, result = calls[0]
    assert kwargs["window"] == 3 and kwargs["multi_start"] is False
    assert result.start in ("borda", "mean")
    assert set(result.start_objectives) == {"borda", "mean"}
    assert forest.consensus_objective_ == result.objective


def test_median_objective_never_worse_than_borda_or_mean():
    for seed in range(3):
        X, y = GaussianMeanShift(n_features=3).sample(500, random_state=seed)
        forest = RankingForest(n_estimators=15, random_state=seed).fit(X, y)
        assert forest.consensus_objective_ <= forest.borda_objective_ + 1e-9
        # the reported objective is the objective of the stored consensus
        keep = np.ones(X.shape[0], dtype=bool)
        leaf_ranks = forest.apply(X[keep])
        cells, inverse = np.unique(leaf_ranks, axis=0, return_inverse=True)
        masses = np.bincount(inverse.ravel())
        order = np.lexsort(forest.cells_.T[::-1])
        order_ref = np.lexsort(cells.T[::-1])
        np.testing.assert_array_equal(forest.cells_[order], cells[order_ref])
        consensus = np.empty(cells.shape[0], dtype=np.int64)
        consensus[order_ref] = forest.consensus_[order]
        objective = kemeny_objective(consensus, cells.T, item_weights=masses)
        assert objective == pytest.approx(forest.consensus_objective_, rel=1e-9)
        for method in ("borda", "mean"):
            start = kemeny_median(cells.T, item_weights=masses, method=method)
            assert forest.consensus_objective_ <= float(start.objective) + 1e-9
        # the order of aggregation="mean" (mean normalized leaf score) on these cells
        n_leaves = np.array([tree.n_leaves_ for tree in forest.estimators_])
        mean_scores = mean_leaf_scores(cells, n_leaves)
        mean_order = np.unique(-mean_scores, return_inverse=True)[1].ravel()
        mean_objective = kemeny_objective(mean_order, cells.T, item_weights=masses)
        assert forest.consensus_objective_ <= mean_objective + 1e-9


def test_out_of_bag_score(squares):
    X, y = squares
    forest = RankingForest(n_estimators=20, random_state=0, aggregation="mean").fit(
        X, y
    )
    oob = forest.oob_decision_function_
    assert np.isfinite(forest.oob_score_)
    seen_by_all = (forest.estimators_samples_ > 0).all(axis=0)
    assert np.all(np.isnan(oob[seen_by_all]))
    mask = ~np.isnan(oob)
    assert forest.oob_score_ == pytest.approx(roc_auc_score(y[mask], oob[mask]))
    # out-of-bag AUC is an honest estimate: lower than the training AUC
    assert forest.oob_score_ < roc_auc_score(y, forest.decision_function(X))
    assert 0.65 < forest.oob_score_ < 0.82


def test_consistent_predictions(squares):
    X, y = squares
    forest = RankingForest(n_estimators=10, random_state=0).fit(X, y)
    scores = forest.decision_function(X)
    proba = forest.predict_proba(X)[:, 1]
    order = np.argsort(scores, kind="stable")
    assert np.all(np.diff(proba[order]) >= -1e-12)
    np.testing.assert_array_equal(forest.predict(X), (scores > 0).astype(int))
    np.testing.assert_array_equal(forest.predict(X), (proba > 0.5).astype(int))
    assert forest.score(X, y) == pytest.approx(roc_auc_score(y, scores))


def test_feature_randomization_parameters(squares):
    X, y = squares
    forest = RankingForest(n_estimators=3, max_features=1, random_state=0).fit(X, y)
    assert all(t.leafrank.max_features == 1 for t in forest.estimators_)
    fr1 = RankingForest(
        n_estimators=3, max_features=None, max_features_node=1, random_state=0
    ).fit(X, y)
    # FR1 with one feature per node: each node's rule splits on a single feature
    nodes = [
        set(rule.feature[rule.children_left >= 0])
        for t in fr1.estimators_
        for rule in t.tree_.leafranks
        if rule is not None
    ]
    assert nodes and all(len(f) == 1 for f in nodes)
    importances = forest.feature_importances_
    assert importances.shape == (2,) and importances.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("max_features", ["sqrt", 0.5, 1])
def test_a_splitter_without_max_features_works_at_any_max_features(
    squares, max_features
):
    # FR2 is set on the splitters that have a max_features parameter; the
    # others are used as they are (they see all the features of a node)
    X, y = squares
    splitter = ClassifierLeafRank(LogisticRegression())
    params = {"n_estimators": 2, "leafrank": splitter, "random_state": 0}
    default = RankingForest(**params).fit(X, y)  # max_features="sqrt"
    assert len(default.estimators_) == 2
    randomized = RankingForest(max_features=max_features, **params).fit(X, y)
    unrandomized = RankingForest(max_features=None, **params).fit(X, y)
    np.testing.assert_array_equal(
        randomized.decision_function(X), unrandomized.decision_function(X)
    )
    assert "max_features" not in default.estimators_[0].leafrank.get_params()


def test_max_features_is_set_on_a_splitter_that_has_it(squares):
    X, y = squares
    forest = RankingForest(
        n_estimators=2, leafrank=LeafRank(max_depth=2), max_features=1
    ).fit(X, y)
    assert forest.estimators_[0].leafrank.max_features == 1
    assert forest.leafrank.max_features is None  # the parameter is unchanged
    keep = RankingForest(
        n_estimators=2, leafrank=LeafRank(max_features=1), max_features=None
    ).fit(X, y)
    assert keep.estimators_[0].leafrank.max_features == 1


def test_sample_size_and_subsampling(squares):
    X, y = squares
    forest = RankingForest(
        n_estimators=4, max_samples=0.5, bootstrap=False, random_state=0
    ).fit(X, y)
    assert np.all(forest.estimators_samples_.sum(axis=1) == 300)
    assert forest.estimators_samples_.max() == 1
    boot = RankingForest(n_estimators=4, max_samples=100, random_state=0).fit(X, y)
    assert np.all(boot.estimators_samples_.sum(axis=1) == 100)
    with pytest.raises(ValueError, match="exceeds n_samples=600"):
        RankingForest(n_estimators=2, max_samples=700, bootstrap=False).fit(X, y)


def test_bad_input(squares):
    X, y = squares
    with pytest.raises(ValueError, match="one class"):
        RankingForest(n_estimators=2).fit(X, np.ones(600))
    with pytest.raises(ValueError, match="continuous target"):
        RankingForest(n_estimators=2).fit(X, np.arange(600) / 7)
    with pytest.raises(ValueError, match="non-numeric labels"):
        RankingForest(n_estimators=2).fit(X, np.where(y == 1, "a", "b"))
    with pytest.raises(ValueError, match="'aggregation' parameter of RankingForest"):
        RankingForest(aggregation="vote").fit(X, y)
    forest = RankingForest(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features"):
        forest.decision_function(np.zeros((2, 3)))


def test_pickle_and_clone(squares):
    X, y = squares
    forest = RankingForest(n_estimators=5, random_state=0).fit(X, y)
    restored = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(
        restored.decision_function(X), forest.decision_function(X)
    )
    assert not hasattr(clone(forest), "estimators_")


def test_verbose_progress_bar(squares, capsys):
    X, y = squares
    RankingForest(n_estimators=4, verbose=1, random_state=0).fit(X, y)
    captured = capsys.readouterr()
    assert "growing trees [" in captured.err and "4/4" in captured.err
    assert "aggregation (median)" in captured.out


# Test sets are drawn with a seed no training set uses: NestedSquares.sample
# with the same seed returns the same leading rows, so a test set drawn with a
# training seed would contain that training set.
TEST_SEED = 1_000_000


def _tree_and_forest(model, seed, X_test, y_test):
    X, y = model.sample(2000, random_state=seed)
    results = []
    for ranker in (
        TreeRank(random_state=seed),
        RankingForest(n_estimators=100, n_jobs=2, random_state=seed),
    ):
        scores = ranker.fit(X, y).decision_function(X_test)
        fpr, tpr, _ = roc_curve(y_test, scores)
        results.append(
            (
                roc_auc_score(y_test, scores),
                roc_sup_distance((fpr, tpr), model.optimal_roc_curve()),
            )
        )
    return np.array(results)  # rows: tree, forest; columns: AUC, sup distance


def test_forest_beats_a_single_tree():
    """One training set per design (the many-set comparison is the slow test below)."""
    shift = GaussianMeanShift(n_features=5, separation=1.5)
    X_test, y_test = shift.sample(20000, random_state=TEST_SEED)
    results = _tree_and_forest(shift, 0, X_test, y_test)
    assert results[1, 0] >= results[0, 0] + 0.03
    assert results[1, 1] < 0.5 * results[0, 1]
    squares = NestedSquares()
    X_test, y_test = squares.sample(20000, random_state=TEST_SEED)
    results = _tree_and_forest(squares, 1, X_test, y_test)
    # a small axis-aligned tree is optimal here, and the default tree ranks
    # like a tuned CART: the forest gains little in AUC and, on one training
    # set, not always in sup-norm distance (see the slow test below)
    assert results[1, 0] >= results[0, 0] + 0.001


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "n_sets", "min_gain"),
    [
        (NestedSquares(), 20, 0.002),
        (GaussianMeanShift(n_features=5, separation=1.5), 5, 0.04),
        (GaussianScale(), 5, 0.08),
    ],
    ids=["nested squares", "gaussian shift", "gaussian scale"],
)
def test_forest_beats_a_single_tree_over_training_sets(model, n_sets, min_gain):
    """100-tree forest vs default tree: mean test-AUC gain over training sets.

    The forest issue's target was a gain of 0.01 or more. The gain cannot
    exceed the single tree's distance to AUC*, and on nested squares (whose
    optimal scorer is itself a small axis-aligned tree) the default tree is
    within 0.010 of AUC* on 2,000 rows since its splitter was made to rank like
    a tuned CART (issue 23; it was 0.0155 before). The forest ends 0.0068 from
    AUC* and gains 0.0032 on average over 20 training sets (standard error
    0.0007, from -0.0002 to +0.008; against the earlier tree it gained 0.0090).
    So on this design the test asks for a gain of 0.002 on average and a forest
    within 0.01 of AUC*; the Gaussian designs, where one axis-aligned tree is
    far from the optimum, gain far more, on every training set (+0.048 and
    +0.17 on average).
    """
    X_test, y_test = model.sample(20000, random_state=TEST_SEED)
    results = np.array(
        [_tree_and_forest(model, seed, X_test, y_test) for seed in range(n_sets)]
    )
    gains = results[:, 1, 0] - results[:, 0, 0]
    assert gains.mean() >= min_gain
    if isinstance(model, NestedSquares):
        assert model.optimal_auc() - results[:, 1, 0].mean() < 0.01
    else:
        assert np.all(gains > 0)
    assert results[:, 1, 1].mean() < results[:, 0, 1].mean()


@pytest.mark.distributed
def test_dask_local_cluster_gives_the_sequential_forest(squares):
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    X, y = squares
    params = {"n_estimators": 6, "random_state": 5}
    sequential = RankingForest(n_jobs=1, **params).fit(X, y)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
        joblib.parallel_config(backend="dask"),
    ):
        remote = RankingForest(n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(
        remote.estimators_samples_, sequential.estimators_samples_
    )
    np.testing.assert_array_equal(
        remote.decision_function(X), sequential.decision_function(X)
    )


def test_threaded_insertion_of_unseen_cells_changes_nothing():
    """Large batches of unseen cells are inserted in threads, chunk by chunk."""
    model = GaussianMeanShift(n_features=5)
    X, y = model.sample(1500, random_state=0)
    X_new, _ = model.sample(6000, random_state=1)  # 3 chunks with n_jobs=2
    params = {"n_estimators": 12, "random_state": 0}
    sequential = RankingForest(n_jobs=1, **params).fit(X, y)
    threaded = RankingForest(n_jobs=2, **params).fit(X, y)
    scores = threaded.decision_function(X_new)
    np.testing.assert_array_equal(scores, sequential.decision_function(X_new))
    for i in [0, 2999, 5999]:
        assert threaded.decision_function(X_new[i : i + 1])[0] == scores[i]


def test_breast_cancer_median_keeps_the_resolution_and_the_auc_of_the_mean():
    """Issue 12: the stratified 70/30 split of breast cancer (seed 0).

    The median's buckets alone give few distinct scores (12 to 21 after the
    default 3 passes of the local search, 4 or 5 after 10); broken by the mean
    leaf score, the 171 test rows get more than 85. Its AUC is the mean's up
    to a few of the 6,848 positive-negative pairs: over ten forests (seeds
    0-9) the two differ by at most 6 pairs (0.0009 AUC; at most 2 after 10
    passes) and by about one pair on average
    (``benchmarks/results/median_variants.md`` has the real-data benchmark:
    equivalent within 0.0005 AUC).
    """
    from sklearn.model_selection import train_test_split

    from treerank.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, X_test, y, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=0
    )
    pairs = int((y_test == 1).sum() * (y_test == 0).sum())
    differences = []
    for seed in range(10):
        forest = RankingForest(random_state=seed).fit(X, y)
        median = forest.decision_function(X_test)
        assert np.unique(median).shape[0] >= 85
        forest.set_params(break_ties=False)
        assert np.unique(forest.decision_function(X_test)).shape[0] < 25
        forest.set_params(break_ties=True, aggregation="mean")
        mean = forest.decision_function(X_test)
        differences.append(
            (roc_auc_score(y_test, median) - roc_auc_score(y_test, mean)) * pairs
        )
    differences = np.round(differences)
    assert np.all(np.abs(differences) <= 6)
    assert abs(differences.mean()) < 1.5


def test_aggregation_max_iter_must_be_positive():
    """0 passes was accepted by the forest and refused deep in the median solver."""
    X, y = NestedSquares().sample(60, random_state=0)
    with pytest.raises(ValueError, match="aggregation_max_iter"):
        RankingForest(n_estimators=2, aggregation_max_iter=0).fit(X, y)


def test_refined_objective_is_that_of_the_tie_broken_order_on_first_access():
    """The diagnostic is computed when asked for, as fitted, from any copy."""
    import pickle

    from treerank.aggregation import kemeny_objective

    X, y = NestedSquares().sample(400, random_state=1)
    forest = RankingForest(n_estimators=12, random_state=0).fit(X, y)
    assert forest.__dict__["_refined_objective"] == "pending"
    scores = forest._median_scores(forest.cells_)
    order = np.unique(-scores, return_inverse=True)[1].ravel()
    expected = kemeny_objective(
        order, forest._inserter.rankings, item_weights=forest.cell_weights_
    )
    copy = pickle.loads(pickle.dumps(forest))
    forest.set_params(break_ties=False)  # after the fit: no effect on it
    assert forest.refined_objective_ == expected
    assert copy.refined_objective_ == expected
    # the broken ties order pairs the trees tie: never below the median's
    assert expected >= forest.consensus_objective_
    unbroken = RankingForest(n_estimators=12, break_ties=False, random_state=0)
    assert unbroken.fit(X, y).refined_objective_ is None
    assert not hasattr(RankingForest(), "refined_objective_")


@pytest.mark.parametrize("bootstrap", [True, False])
def test_draw_sample_keeps_draws_holding_both_classes(bootstrap):
    # the accepted draw is the first of the generator's draws in which both
    # classes have a row of positive weight, as masks over the rows find it
    from treerank.ensemble._forest import _draw_sample

    rng = np.random.default_rng(0)
    y01 = (rng.random(60) < 0.1).astype(np.int64)  # few positives
    weights = rng.integers(0, 3, 60).astype(np.float64)  # some zero weights
    for seed in range(30):
        found = _draw_sample(
            np.random.RandomState(seed), 60, 6, bootstrap, y01, weights
        )
        draws = np.random.RandomState(seed)
        while True:
            if bootstrap:
                counts = np.bincount(draws.randint(0, 60, 6), minlength=60)
            else:
                counts = np.zeros(60, dtype=np.int64)
                counts[draws.choice(60, 6, replace=False)] = 1
            held = weights * counts
            if held[y01 == 1].sum() > 0 and held[y01 == 0].sum() > 0:
                break
        assert np.array_equal(found, counts)


def test_draw_sample_of_one_class_raises_naming_max_samples():
    from treerank.ensemble._forest import _draw_sample

    y01 = np.array([1, 0, 0, 0])
    weights = np.array([1.0, 0.0, 0.0, 0.0])  # no negative of positive weight
    with pytest.raises(ValueError, match="max_samples"):
        _draw_sample(np.random.RandomState(0), 4, 4, True, y01, weights)
