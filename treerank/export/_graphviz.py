"""A ranking tree as Graphviz DOT text (no Graphviz needed to write it)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import os

import numpy as np

from treerank.export._nodes import (
    check_feature_names,
    format_count,
    format_score,
    leaf_scores,
    positive_rate,
    rate_colors,
    resolve_tree,
    rule_lines,
    to_hex,
)
from treerank.utils._io import atomic_write

__all__ = ["export_graphviz"]


def _quote(text):
    """A DOT double-quoted string; ``\\n`` in ``text`` becomes a line break."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n") + '"'


def _check_precision(precision):
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)):
        raise ValueError(f"precision must be an int >= 0; got {precision!r}.")
    if precision < 0:
        raise ValueError(f"precision must be an int >= 0; got {precision}.")
    return int(precision)


def _node_label(structure, node, names, rates, scores, proba, precision, rules):
    counts = (
        f"#pos:#neg = {format_count(structure.n_pos[node], precision)}:"
        f"{format_count(structure.n_neg[node], precision)}"
    )
    lines = []
    if structure.children_left[node] < 0:
        rank = int(structure.leaf_rank[node])
        lines.append(f"node {node}: leaf {rank}")
        lines.append(counts)
        lines.append(f"positive rate = {rates[node]:.{precision}f}")
        lines.append(f"score = {format_score(scores[rank], precision)}")
        if proba is not None:
            lines.append(f"P(Y=1) = {proba[rank]:.{precision}f}")
    else:
        lines.append(f"node {node}")
        lines.append(counts)
        lines.append(f"positive rate = {rates[node]:.{precision}f}")
        lines.append(f"dAUC = {structure.dauc[node]:.{precision + 1}f}")
        if rules:
            lines.extend(rule_lines(structure, node, names))
    return "\n".join(lines)


def export_graphviz(
    tree,
    out_file=None,
    *,
    feature_names=None,
    precision=3,
    rules=True,
    filled=True,
    leaves_parallel=True,
    legend=True,
):
    """Export a fitted ranking tree in Graphviz DOT format.

    The left child of every node is the better one and is drawn on the left
    (``ordering=out``), so the leaves read from best to worst from left to
    right. With ``leaves_parallel=True`` the leaves are also drawn on one row,
    chained left to right by invisible edges. The DOT text needs no Graphviz to
    be written; render it with ``dot -Tpng tree.dot -o tree.png``.

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted :class:`~treerank.TreeRank` or its ``tree_``.
    out_file : str, path-like, file object or None, default=None
        Where to write the DOT text: None returns it as a string; a path is
        written atomically (a complete file or none); an object with a
        ``write`` method receives the text.
    feature_names : sequence of str or None, default=None
        Names of the features, used in the split rules. Defaults to the
        estimator's ``feature_names_in_`` if any, else ``x[i]``.
    precision : int, default=3
        Decimals of the positive rates and probabilities (one more for dAUC),
        of the scores (trailing zeros dropped) and of non-integer weighted
        counts. Thresholds in the rules always have 6 significant digits.
    rules : bool, default=True
        Whether to write each internal node's LeafRank rule (the left side;
        for the CART LeafRank one line per box of the union).
    filled : bool, default=True
        Fill the nodes with the colour of their positive rate: a diverging
        scale from red (rate 0) through pale yellow (the overall positive rate
        of the training data, the root's) to green (rate 1).
    leaves_parallel : bool, default=True
        Draw all the leaves on the bottom row, in rank order.
    legend : bool, default=True
        Add a caption stating the reading order and the colour scale.

    Returns
    -------
    dot_data : str or None
        The DOT text if ``out_file`` is None, else None.

    See Also
    --------
    to_networkx : The tree as a networkx graph.
    export_text : The tree as indented text.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.export import export_graphviz
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> tree = TreeRank(max_depth=1, random_state=0).fit(X, y)
    >>> dot = export_graphviz(tree, feature_names=["u", "v"], legend=False)
    >>> print(dot)  # doctest: +NORMALIZE_WHITESPACE
    digraph RankingTree {
    graph [ordering=out, ranksep=0.4, nodesep=0.25];
    node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];
    edge [fontname="Helvetica", fontsize=9];
    0 [label="node 0\\n#pos:#neg = ...\\nleft if (...)", fillcolor="#..."];
    1 [label="node 1: leaf 0\\n...", fillcolor="#..."];
    2 [label="node 2: leaf 1\\n...", fillcolor="#..."];
    0 -> 1 [label="better"];
    0 -> 2 [label="worse"];
    {
    rank=same;
    1;
    2;
    1 -> 2 [style=invis];
    }
    }
    """
    structure, estimator = resolve_tree(tree)
    names = check_feature_names(feature_names, structure, estimator)
    precision = _check_precision(precision)
    rates = positive_rate(structure)
    scores, proba = leaf_scores(structure, estimator)
    center = float(rates[0])
    colors = to_hex(rate_colors(rates, center))

    out = ["digraph RankingTree {"]
    graph_attributes = "ordering=out, ranksep=0.4, nodesep=0.25"
    if legend:
        caption = (
            "Left child = better. Leaves ranked best (left) to worst (right)."
            f"\nTraining AUC = {structure.auc():.{precision + 1}f}."
        )
        if filled:
            caption += (
                "\nFill = positive rate: red = 0, pale yellow = "
                f"{center:.{precision}f} (overall), green = 1."
            )
        graph_attributes += (
            f", labelloc=b, fontname=Helvetica, fontsize=11, label={_quote(caption)}"
        )
    out.append(f"graph [{graph_attributes}];")
    style = '"rounded,filled"' if filled else "rounded"
    out.append(f'node [shape=box, style={style}, fontname="Helvetica", fontsize=10];')
    out.append('edge [fontname="Helvetica", fontsize=9];')
    for node in range(structure.node_count):
        label = _node_label(
            structure, node, names, rates, scores, proba, precision, rules
        )
        fill = f', fillcolor="{colors[node]}"' if filled else ""
        out.append(f"{node} [label={_quote(label)}{fill}];")
    for node in np.flatnonzero(~structure.is_leaf):
        left = structure.children_left[node]
        right = structure.children_right[node]
        root = node == 0
        out.append(f"{node} -> {left}" + (' [label="better"];' if root else ";"))
        out.append(f"{node} -> {right}" + (' [label="worse"];' if root else ";"))
    leaves = structure.leaves
    if leaves_parallel and leaves.shape[0] > 1:
        out.append("{")
        out.append("rank=same;")
        out.extend(f"{leaf};" for leaf in leaves)
        out.extend(f"{a} -> {b} [style=invis];" for a, b in itertools.pairwise(leaves))
        out.append("}")
    out.append("}")
    dot_data = "\n".join(out) + "\n"

    if out_file is None:
        return dot_data
    if hasattr(out_file, "write"):
        out_file.write(dot_data)
        return None
    if isinstance(out_file, (str, os.PathLike)):
        with atomic_write(out_file, "w") as handle:
            handle.write(dot_data)
        return None
    raise ValueError(
        "out_file must be None, a path or a file object with a write method; "
        f"got {type(out_file).__name__}."
    )
