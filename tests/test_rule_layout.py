"""The children of the engine's rule nodes rebuilt from one split flag per node."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treerank import RankingForest
from treerank._engine import rule_children
from treerank.datasets import make_nested_squares

PROPERTY = settings(max_examples=80, derandomize=True, deadline=None, database=None)


def _random_shape(rng, depth, max_depth):
    """A random binary tree as nested pairs (None is a leaf)."""
    if depth == max_depth or rng.random() < 0.35:
        return None
    return (
        _random_shape(rng, depth + 1, max_depth),
        _random_shape(rng, depth + 1, max_depth),
    )


def _number(shape):
    """Oracle: the engine's numbering, written recursively. A split's two
    children take the next two free indices when the split is made, and the
    left subtree is grown before the right one."""
    splits, left, right = {}, {}, {}
    free = [1]

    def grow(node, index):
        splits[index] = node is not None
        left[index] = right[index] = -1
        if node is None:
            return
        left[index], right[index] = free[0], free[0] + 1
        free[0] += 2
        grow(node[0], left[index])
        grow(node[1], right[index])

    grow(shape, 0)
    n = free[0]
    return (
        [splits[i] for i in range(n)],
        [left[i] for i in range(n)],
        [right[i] for i in range(n)],
    )


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), n_rules=st.integers(1, 6))
def test_children_match_the_recursive_numbering(seed, n_rules):
    rng = np.random.default_rng(seed)
    splits, left, right, sizes = [], [], [], []
    for _ in range(n_rules):
        s, a, b = _number(_random_shape(rng, 0, int(rng.integers(0, 6))))
        splits += s
        left += a
        right += b
        sizes.append(len(s))
    got_left, got_right, got_sizes = rule_children(np.array(splits))
    np.testing.assert_array_equal(got_left, left)
    np.testing.assert_array_equal(got_right, right)
    np.testing.assert_array_equal(got_sizes, sizes)
    assert got_left.dtype == np.int32 and got_sizes.dtype == np.int64


def test_the_engine_lays_out_its_rules_so():
    X, y = make_nested_squares(2000, random_state=0)
    X[::11, 0] = np.nan
    forest = RankingForest(n_estimators=3, random_state=0).fit(X, y)
    for tree in forest.estimators_:
        structure, rules = tree.tree_, tree.tree_.rules
        left, right, sizes = rule_children(rules.child_left >= 0)
        np.testing.assert_array_equal(left, rules.child_left)
        np.testing.assert_array_equal(right, rules.child_right)
        inner = structure.rule_start >= 0
        np.testing.assert_array_equal(
            sizes, structure.rule_stop[inner] - structure.rule_start[inner]
        )


def test_empty_and_single_leaf():
    left, right, sizes = rule_children(np.zeros(0, dtype=bool))
    assert left.shape == right.shape == sizes.shape == (0,)
    left, right, sizes = rule_children([False, False])
    assert left.tolist() == [-1, -1] and sizes.tolist() == [1, 1]


@pytest.mark.parametrize("splits", [[True], [True, False], [1, 1, 0, 0]])
def test_flags_ending_inside_a_rule_are_refused(splits):
    with pytest.raises(ValueError, match="end inside a rule"):
        rule_children(splits)


def test_two_dimensional_flags_are_refused():
    with pytest.raises(ValueError, match="one-dimensional"):
        rule_children(np.zeros((2, 2), dtype=bool))
