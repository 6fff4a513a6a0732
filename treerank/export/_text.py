"""A ranking tree as indented plain text."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

from treerank.export._graphviz import _check_precision
from treerank.export._nodes import (
    check_feature_names,
    format_count,
    format_score,
    leaf_scores,
    positive_rate,
    resolve_tree,
    rule_lines,
)

__all__ = ["export_text"]

_BAR = "|   "


def export_text(tree, feature_names=None, *, precision=3, rules=True, max_depth=None):
    """Describe a fitted ranking tree as indented text.

    One line per node, children below their parent, the left (better) child
    first, so the leaves appear in rank order, best first. A node line gives
    the node id, for a leaf its rank (0 = best), the weighted positive and
    negative counts ``#pos:#neg``, the positive rate, and the split's dAUC for
    an internal node or the leaf's score (and calibrated probability for a
    TreeRank). The LeafRank rule of an internal node follows on its own
    line(s), prefixed by ``rule:``: the points it sends left go to the
    better child.

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted :class:`~treerank.TreeRank` or its ``tree_``.
    feature_names : sequence of str or None, default=None
        Names of the features, used in the rules. Defaults to the estimator's
        ``feature_names_in_`` if any, else ``x[i]``.
    precision : int, default=3
        Decimals of rates and probabilities (one more for dAUC and the AUC),
        of scores (trailing zeros dropped) and of non-integer counts.
        Thresholds in the rules always have 6 significant digits.
    rules : bool, default=True
        Whether to print the split rules.
    max_depth : int or None, default=None
        Print nodes down to this depth only; a deeper subtree is summarized
        by one ``...`` line giving its number of leaves.

    Returns
    -------
    text : str

    See Also
    --------
    export_graphviz : The tree as Graphviz DOT text.
    to_networkx : The tree as a networkx graph.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank import LeafRank, TreeRank
    >>> from treerank.export import export_text
    >>> X = np.arange(8.0).reshape(-1, 1)
    >>> y = [0, 0, 1, 0, 1, 0, 1, 1]
    >>> tree = TreeRank(
    ...     max_depth=1, min_samples_split=2,
    ...     leafrank=LeafRank(max_depth=1, min_samples_leaf=1), random_state=0,
    ... ).fit(X, y)
    >>> print(export_text(tree, feature_names=["age"]))
    ranking tree: 2 leaves (leaf 0 = best), training AUC 0.7500
    node 0  #pos:#neg 4:4  rate 0.500  dAUC 0.2500
    |   rule: left if (age > 1.5)
    |-- L node 1  leaf 0  #pos:#neg 4:2  rate 0.667  score 0.5  P(Y=1) 0.562
    |-- R node 2  leaf 1  #pos:#neg 0:2  rate 0.000  score -0.5  P(Y=1) 0.250
    """
    structure, estimator = resolve_tree(tree)
    names = check_feature_names(feature_names, structure, estimator)
    precision = _check_precision(precision)
    if max_depth is not None and (
        isinstance(max_depth, bool)
        or not isinstance(max_depth, Integral)
        or max_depth < 0
    ):
        raise ValueError(f"max_depth must be None or an int >= 0; got {max_depth!r}.")
    rates = positive_rate(structure)
    scores, proba = leaf_scores(structure, estimator)
    n_leaves_below = _leaves_below(structure)

    lines = [
        f"ranking tree: {structure.n_leaves} leaves (leaf 0 = best), "
        f"training AUC {structure.auc():.{precision + 1}f}"
    ]
    stack = [(0, "")]
    while stack:
        node, side = stack.pop()
        depth = int(structure.depth[node])
        prefix = "" if depth == 0 else _BAR * (depth - 1) + f"|-- {side} "
        counts = (
            f"#pos:#neg {format_count(structure.n_pos[node], precision)}:"
            f"{format_count(structure.n_neg[node], precision)}"
            f"  rate {rates[node]:.{precision}f}"
        )
        is_leaf = structure.children_left[node] < 0
        if is_leaf:
            rank = int(structure.leaf_rank[node])
            score = format_score(scores[rank], precision)
            text = f"node {node}  leaf {rank}  {counts}  score {score}"
            if proba is not None:
                text += f"  P(Y=1) {proba[rank]:.{precision}f}"
            lines.append(prefix + text)
            continue
        lines.append(
            prefix
            + f"node {node}  {counts}  dAUC {structure.dauc[node]:.{precision + 1}f}"
        )
        if rules:
            rule = rule_lines(structure, node, names)
            lines.append(_BAR * (depth + 1) + "rule: " + rule[0])
            lines.extend(_BAR * (depth + 1) + "      " + more for more in rule[1:])
        if max_depth is not None and depth >= max_depth:
            lines.append(
                _BAR * depth
                + f"|-- ... ({n_leaves_below[node]} leaves below node {node})"
            )
            continue
        stack.append((int(structure.children_right[node]), "R"))
        stack.append((int(structure.children_left[node]), "L"))
    return "\n".join(lines)


def _leaves_below(structure):
    """Number of leaves in the subtree of each node (children follow parents)."""
    count = structure.is_leaf.astype(np.int64)
    for node in np.flatnonzero(~structure.is_leaf)[::-1]:
        count[node] = (
            count[structure.children_left[node]] + count[structure.children_right[node]]
        )
    return count
