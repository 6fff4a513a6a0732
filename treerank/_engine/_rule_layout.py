"""The layout of a rule's inner nodes: one bit per node says it all.

The engine grows each LeafRank rule depth first, left child first, and gives
the two children of a split the next two free indices at the moment the split
is made (:mod:`treerank._engine._rule_growth`). Visiting the nodes in that
order, node 0 is the root; the children of the k-th split visited are nodes
``2k + 1`` and ``2k + 2``; the rule ends when every node visited has been
expanded. So the children of every node follow from one flag per node, in
index order, telling whether it splits, and so do the boundaries between the
rules when the nodes of several rules are concatenated (each rule starts where
the previous one ends). Model files store the flags instead of the children
(:mod:`treerank.model_io`).

:func:`rule_children` rebuilds the children from the flags; a rule whose
children were numbered otherwise (a rule built by hand, or from another
source) is recognized by comparing its children with the rebuilt ones.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import jit

__all__ = ["rule_children"]


@jit
def _rebuild_children(splits, child_left, child_right, rule_sizes, stack):
    """Fill the children of concatenated rules; the number of rules, or -1.

    -1 when the flags run out inside a rule (a split whose children would lie
    past the end).
    """
    n_nodes = splits.shape[0]
    start = 0
    n_rules = 0
    while start < n_nodes:
        n_used = 1  # nodes of the current rule numbered so far
        stack[0] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if splits[start + node]:
                if start + n_used + 1 >= n_nodes:
                    return -1
                child_left[start + node] = n_used
                child_right[start + node] = n_used + 1
                stack[top] = n_used + 1  # the right child is visited last
                stack[top + 1] = n_used
                top += 2
                n_used += 2
            else:
                child_left[start + node] = -1
                child_right[start + node] = -1
        rule_sizes[n_rules] = n_used
        n_rules += 1
        start += n_used
    return n_rules


def rule_children(splits):
    """The children of concatenated rules from their split flags.

    Parameters
    ----------
    splits : array-like of bool of shape (n_nodes,)
        Whether each inner node splits, for the nodes of one or more rules laid
        out as the engine grows them (depth first, left child first, the two
        children of a split numbered with the next two free indices), one rule
        after the other.

    Returns
    -------
    child_left, child_right : ndarray of int32 of shape (n_nodes,)
        Children local to each rule (-1 at inner leaves), as in
        :class:`~treerank._engine.SplitRules`.
    rule_sizes : ndarray of int64 of shape (n_rules,)
        The number of nodes of each rule, in order.

    Raises
    ------
    ValueError
        If the flags end inside a rule (a split without room for its children).

    Examples
    --------
    A rule splitting its root and the root's left child, then a one-split rule:

    >>> from treerank._engine import rule_children
    >>> left, right, sizes = rule_children([1, 1, 0, 0, 0, 1, 0, 0])
    >>> left.tolist()
    [1, 3, -1, -1, -1, 1, -1, -1]
    >>> right.tolist()
    [2, 4, -1, -1, -1, 2, -1, -1]
    >>> sizes.tolist()
    [5, 3]
    """
    splits = np.ascontiguousarray(splits, dtype=np.bool_)
    if splits.ndim != 1:
        raise ValueError(f"splits must be one-dimensional, got shape {splits.shape}")
    n_nodes = splits.shape[0]
    child_left = np.empty(n_nodes, dtype=np.int32)
    child_right = np.empty(n_nodes, dtype=np.int32)
    rule_sizes = np.empty(n_nodes, dtype=np.int64)
    stack = np.empty(n_nodes + 2, dtype=np.int64)
    n_rules = _rebuild_children(splits, child_left, child_right, rule_sizes, stack)
    if n_rules < 0:
        raise ValueError(
            "the split flags end inside a rule: a split has no room for its children"
        )
    return child_left, child_right, rule_sizes[:n_rules].copy()
