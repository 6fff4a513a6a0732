"""Sample weights of any finite scale: nothing overflows, the scale does not matter.

A ranker depends on its training weights through their ratios only.
``check_training_target`` divides them by their largest value
(:func:`~treerank.utils.normalize_sample_weight`), so that:

- finite weights up to the float64 limit fit without overflow (weights of
  1e160 crashed a median forest's Kemeny objective);
- uniform weights of any finite positive value fit the model of unit weights,
  bit for bit (tolerance 0), as does any rescaling exact in float64 (a power
  of two; integer weights times an integer);
- a rescaling the caller rounded (``3 * w`` for real ``w``) moves each
  normalized weight by at most 2 units in the last place.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from treerank import LinearLeafRank, RankingForest, TreeRank
from treerank._engine._rule_growth import _remaining_weight
from treerank.datasets import make_nested_squares
from treerank.utils import check_training_target, normalize_sample_weight

PROPERTY = settings(max_examples=100, derandomize=True, deadline=None, database=None)
N = 200
X, Y = make_nested_squares(N, random_state=0)
GRADES = np.digitize(X[:, 0] + 0.1 * X[:, 1], [0.35, 0.65])


def _forest(aggregation, **params):
    return RankingForest(
        n_estimators=4, max_depth=3, aggregation=aggregation, random_state=0, **params
    )


MODELS = {
    "TreeRank": lambda: TreeRank(max_depth=4, random_state=0),
    "TreeRank cv": lambda: TreeRank(max_depth=3, pruning="cv", cv=3, random_state=0),
    "TreeRank linear": lambda: TreeRank(
        max_depth=2, leafrank=LinearLeafRank(), random_state=0
    ),
    "RankingForest median": lambda: _forest("median"),
    "RankingForest median, ties kept": lambda: _forest("median", break_ties=False),
    "RankingForest mean": lambda: _forest("mean"),
    "RankingForest borda": lambda: _forest("borda"),
}


def _fit(name, sample_weight, y=Y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warns before it crashes
        model = MODELS[name]().fit(X, y, sample_weight=sample_weight)
        return model.decision_function(X), model.predict_proba(X)


@pytest.fixture(scope="module")
def unit_fits():
    return {name: _fit(name, None) for name in MODELS}


# ----------------------------------------------------------------------
# the normalization
# ----------------------------------------------------------------------
_WEIGHTS = st.lists(
    st.one_of(
        st.just(0.0),
        st.floats(min_value=5e-324, max_value=1.7e308, allow_subnormal=True),
    ),
    min_size=1,
    max_size=30,
).filter(lambda w: max(w) > 0)


@PROPERTY
@given(weights=_WEIGHTS)
def test_normalized_weights_are_in_0_1_and_keep_every_row(weights):
    w = np.array(weights)
    normalized = normalize_sample_weight(w)
    assert normalized.max() == 1.0 and normalized.min() >= 0.0
    np.testing.assert_array_equal(normalized > 0, w > 0)  # nothing dropped
    # the ratios, up to one rounding (or the underflow of the smallest)
    expected = w / w.max()
    resolved = expected > 0
    np.testing.assert_array_equal(normalized[resolved], expected[resolved])
    assert np.all(normalized[~resolved & (w > 0)] == np.nextafter(0.0, 1.0))
    assert np.isfinite(normalized.sum()) and normalized.sum() <= len(weights)


@PROPERTY
@given(value=st.floats(min_value=5e-324, max_value=1.7e308), n=st.integers(1, 50))
def test_uniform_weights_of_any_value_become_exactly_one(value, n):
    np.testing.assert_array_equal(normalize_sample_weight(np.full(n, value)), 1.0)


@PROPERTY
@given(
    counts=st.lists(st.integers(0, 2**20), min_size=1, max_size=30).filter(any),
    factor=st.integers(1, 2**30),
    power=st.integers(-1000, 1000),
)
def test_exact_rescalings_give_identical_weights(counts, factor, power):
    """Integer weights times an integer (products below 2**53), and any
    power of two: the normalized weights are the same bits."""
    w = np.array(counts, dtype=np.float64)
    reference = normalize_sample_weight(w)
    np.testing.assert_array_equal(normalize_sample_weight(w * factor), reference)
    scaled = np.ldexp(w, power)
    if np.all((scaled > 0) == (w > 0)) and np.all(np.isfinite(scaled)):
        exact = np.array_equal(np.ldexp(scaled, -power), w)  # no subnormal loss
        if exact:
            np.testing.assert_array_equal(normalize_sample_weight(scaled), reference)


@PROPERTY
@given(
    weights=st.lists(
        st.floats(min_value=1e-100, max_value=1e100), min_size=1, max_size=30
    ),
    factor=st.floats(min_value=1e-100, max_value=1e100),
)
def test_rounded_rescalings_move_each_weight_by_at_most_2_ulps(weights, factor):
    """``factor * w`` rounded by the caller: the normalized weights of the two
    differ by at most 2 units in the last place (stated tolerance)."""
    w = np.array(weights)
    a = normalize_sample_weight(w)
    b = normalize_sample_weight(w * factor)
    assert np.all(np.abs(a - b) <= 2 * np.spacing(np.maximum(a, b)))


def test_check_training_target_normalizes():
    _, _, weights = check_training_target([0, 1, 1], [2e300, 1e300, 0.0], 3)
    np.testing.assert_array_equal(weights, [1.0, 0.5, 0.0])
    # a class whose weights underflow relative to the other one is still there
    _, _, weights = check_training_target([0, 1], [1e300, 1e-300], 2)
    assert weights[1] > 0


# ----------------------------------------------------------------------
# the estimators
# ----------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("value", [1e-300, 0.1, 3.0, 7.3, 1e160, 1e300, 1.7e308])
def test_uniform_weights_of_any_value_give_the_unit_weight_model(
    unit_fits, name, value
):
    """Tolerance 0: the same scores and probabilities, bit for bit."""
    scores, proba = _fit(name, np.full(N, value))
    np.testing.assert_array_equal(scores, unit_fits[name][0])
    np.testing.assert_array_equal(proba, unit_fits[name][1])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_weights_up_to_1e300_do_not_overflow(name):
    """Weights spread over 20 orders of magnitude up to 1e300 fit without a
    warning, and give the model of the same weights scaled down by 2**-990
    (an exact rescaling: tolerance 0)."""
    w = 10 ** np.random.default_rng(0).uniform(280, 300, N)
    big = _fit(name, w)
    small = _fit(name, np.ldexp(w, -990))
    np.testing.assert_array_equal(big[0], small[0])
    np.testing.assert_array_equal(big[1], small[1])
    assert np.all(np.isfinite(big[0])) and np.all(np.isfinite(big[1]))


@pytest.mark.parametrize("name", ["TreeRank", "RankingForest median"])
def test_integer_weights_times_three_give_the_same_model(name):
    """A non-power-of-two rescaling that is exact in float64: tolerance 0."""
    counts = np.random.default_rng(1).integers(0, 50, N).astype(np.float64)
    counts[:2] = 1  # both classes keep rows
    reference = _fit(name, counts)
    tripled = _fit(name, 3 * counts)
    np.testing.assert_array_equal(tripled[0], reference[0])
    np.testing.assert_array_equal(tripled[1], reference[1])


def test_a_pure_child_holds_exactly_no_weight_of_the_absent_class():
    # the right child's class weights are the node's minus the left child's:
    # a residue within the rounding of the two sums is 0, a real weight stays
    rng = np.random.default_rng(0)
    for _ in range(200):
        weights = rng.uniform(0.5, 2.0, rng.integers(2, 300)) * 3.0
        total = float(np.sum(weights))
        part = float(np.sum(weights[rng.permutation(weights.shape[0])]))
        assert _remaining_weight(total, part, weights.shape[0]) == 0.0
        kept = float(np.sum(weights[1:]))
        assert _remaining_weight(total, kept, weights.shape[0]) == total - kept
    assert _remaining_weight(1.0, 1.0 + 2.0**-52, 2) == 0.0  # negative residue


@pytest.mark.parametrize("seed", range(10))
def test_real_weights_times_three_give_the_same_order(seed):
    """A rounded rescaling (3 w for real w): the mean forest orders the rows
    alike. Pure children used to keep residues of the rounding as weight of
    the absent class, grow splits of zero gain and shift the tree's random
    stream, changing the forest (same order in 3 of these 10 fits)."""
    weights = np.random.default_rng(seed).uniform(0.5, 2.0, N)
    once = _forest("mean").fit(X, Y, sample_weight=weights).decision_function(X)
    tripled = _forest("mean").fit(X, Y, sample_weight=3 * weights)
    np.testing.assert_array_equal(
        rankdata(tripled.decision_function(X), "min"), rankdata(once, "min")
    )


@pytest.mark.parametrize("name", ["TreeRank", "RankingForest median"])
@pytest.mark.parametrize("value", [3.0, 1e300])
def test_graded_targets_with_uniform_weights(name, value):
    reference = _fit(name, None, y=GRADES)
    scaled = _fit(name, np.full(N, value), y=GRADES)
    np.testing.assert_array_equal(scaled[0], reference[0])
    np.testing.assert_array_equal(scaled[1], reference[1])


def test_the_median_forest_of_the_issue():
    """``RankingForest(n_estimators=5).fit(X, y, sample_weight=np.full(120,
    1e160))`` raised ``TypeError: 'NoneType' object is not subscriptable``."""
    X120, y120 = make_nested_squares(120, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forest = RankingForest(n_estimators=5, random_state=0)
        heavy = forest.fit(X120, y120, sample_weight=np.full(120, 1e160))
        scores = heavy.decision_function(X120)
    unit = RankingForest(n_estimators=5, random_state=0).fit(X120, y120)
    np.testing.assert_array_equal(scores, unit.decision_function(X120))
    assert np.isfinite(heavy.consensus_objective_)
