"""Draw a ranking tree with matplotlib, leaves in rank order."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import textwrap
from numbers import Integral, Real

import numpy as np

from treerank.export._nodes import (
    RATE_PALETTE,
    check_feature_names,
    positive_rate,
    rate_colors,
    resolve_tree,
    rule_lines,
)

__all__ = ["plot_tree", "tree_layout"]


def tree_layout(tree):
    """Tidy layered positions of the nodes of a ranking tree.

    The K leaves sit at ``x = 0, 1, ..., K - 1`` in rank order (best on the
    left); every internal node is centred above its two children
    (``x = (x_left + x_right) / 2``); ``y = -depth``. Because the left child
    is the better one, a parent always lies between its children and edges
    never cross.

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted :class:`~treerank.TreeRank` or its ``tree_``.

    Returns
    -------
    pos : dict of int to tuple of float
        ``(x, y)`` of each node id, ready for :func:`networkx.draw`.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.plotting import tree_layout
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> tree = TreeRank(max_depth=1, random_state=0).fit(X, y)
    >>> tree_layout(tree)
    {0: (0.5, 0.0), 1: (0.0, -1.0), 2: (1.0, -1.0)}
    """
    structure, _ = resolve_tree(tree)
    x = _leaf_centred_x(structure)
    return {
        node: (float(x[node]), -float(structure.depth[node]))
        for node in range(structure.node_count)
    }


def _leaf_centred_x(structure):
    x = np.zeros(structure.node_count)
    x[structure.leaves] = np.arange(structure.n_leaves, dtype=float)
    # children have larger ids than their parent (preorder): go backwards
    for node in np.flatnonzero(~structure.is_leaf)[::-1]:
        x[node] = 0.5 * (
            x[structure.children_left[node]] + x[structure.children_right[node]]
        )
    return x


def _check_size_range(node_size):
    try:
        low, high = node_size
    except (TypeError, ValueError):
        raise ValueError(
            "node_size must be a pair (min, max) of positive numbers; got "
            f"{node_size!r}."
        ) from None
    if not (
        isinstance(low, Real) and isinstance(high, Real) and 0 < low <= high < np.inf
    ):
        raise ValueError(
            "node_size must be a pair (min, max) with 0 < min <= max; got "
            f"{node_size!r}."
        )
    return float(low), float(high)


def _format_count(value):
    value = float(value)
    if value == int(value):
        return str(int(value))
    return f"{value:.3g}"


def _node_width(x, depth, n_leaves):
    """Horizontal room of every node: distance to its nearest same-depth node."""
    room = np.full(x.shape[0], float(max(n_leaves, 1)))
    for level in np.unique(depth):
        nodes = np.flatnonzero(depth == level)
        order = nodes[np.argsort(x[nodes])]
        gaps = np.diff(x[order])
        if gaps.shape[0]:
            left = np.concatenate([[np.inf], gaps])
            right = np.concatenate([gaps, [np.inf]])
            room[order] = np.minimum(np.minimum(left, right), room[order])
    return room


def _wrap(lines, width, max_lines):
    wrapped = []
    for line in lines:
        wrapped += textwrap.wrap(
            line, width=max(int(width), 8), break_on_hyphens=False
        ) or [""]
    if len(wrapped) > max_lines:
        hidden = len(wrapped) - (max_lines - 1)
        wrapped = [*wrapped[: max_lines - 1], f"... (+{hidden} lines)"]
    return wrapped


def plot_tree(
    tree,
    *,
    feature_names=None,
    rules=True,
    counts=True,
    node_size=(40.0, 900.0),
    labels="rank",
    colorbar=True,
    max_rule_lines=4,
    fontsize=None,
    ax=None,
):
    """Draw a ranking tree: leaves in rank order, rules, counts, positive rates.

    The layout is :func:`tree_layout`: leaves evenly spaced from the best (left)
    to the worst (right), parents centred above their children. A node's
    colour is its positive rate on a diverging scale from red (0) through pale
    yellow (the overall positive rate, the root's) to green (1); its area is
    proportional to its training mass (weighted number of samples), between
    ``node_size[0]`` (an empty node) and ``node_size[1]`` (the root).

    By default every internal node shows its id (``n3``) and, below it, its
    splitting rule (the side sent left, that is ranked higher) and its
    counts; every leaf shows its rank (``leaf 0`` is the best) and its
    counts. Node ids and leaf ranks are written differently (``n...`` and
    ``leaf ...``), so they cannot be mistaken for one another. Without ``ax``
    the figure is sized for the tree (about one inch per leaf), which keeps
    trees of up to about 30 leaves readable; long rules are wrapped to the
    room a node has and cut after ``max_rule_lines`` lines.

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted :class:`~treerank.TreeRank` or its ``tree_``.
    feature_names : sequence of str or None, default=None
        Feature names for the rules (defaults to the estimator's
        ``feature_names_in_`` if any, else ``x[i]``).
    rules : bool, default=True
        Write each internal node's LeafRank rule (the left, better, side)
        below it.
    counts : bool, default=True
        Write each node's (weighted) numbers of positives and negatives,
        ``pos / neg``.
    node_size : tuple of two float, default=(40.0, 900.0)
        Marker area (points^2) of an empty node and of the root.
    labels : {"rank", "id", "none"}, default="rank"
        Names of the nodes: ``leaf k`` (its rank) for leaves and ``n<id>`` for
        internal nodes (``"rank"``), ``n<id>`` everywhere (``"id"``), or
        none.
    colorbar : bool, default=True
        Add a colour bar of the positive rate.
    max_rule_lines : int, default=4
        Most lines of rule text per node.
    fontsize : float or None, default=None
        Size of the node texts (None: 7 points, 6 beyond 20 leaves).
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure sized for the tree is created if None.

    Returns
    -------
    ax : matplotlib Axes
        The nodes are its first :class:`~matplotlib.collections.PathCollection`
        (one marker per node, in node id order).

    See Also
    --------
    treerank.export.to_networkx : The graph drawn here.
    treerank.export.export_graphviz : The same tree as DOT text.
    treerank.export.export_text : The same tree as indented text.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.plotting import plot_tree
    >>> X, y = make_nested_squares(1000, random_state=0)
    >>> tree = TreeRank(max_depth=3, random_state=0).fit(X, y)
    >>> ax = plot_tree(tree, feature_names=["u", "v"])
    >>> len(ax.collections[0].get_offsets()) == tree.tree_.node_count
    True
    >>> any(text.get_text().startswith("left if") for text in ax.texts)
    True
    """
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import LinearSegmentedColormap, TwoSlopeNorm

    from treerank.export import to_networkx

    structure, estimator = resolve_tree(tree)
    names = check_feature_names(feature_names, structure, estimator)
    low, high = _check_size_range(node_size)
    if labels not in ("rank", "id", "none"):
        raise ValueError(f"labels must be 'rank', 'id' or 'none'; got {labels!r}.")
    if not isinstance(max_rule_lines, Integral) or max_rule_lines < 1:
        raise ValueError(
            f"max_rule_lines must be a positive integer; got {max_rule_lines!r}."
        )
    if fontsize is not None and not (
        isinstance(fontsize, Real) and 0 < fontsize < np.inf
    ):
        raise ValueError(f"fontsize must be a positive number; got {fontsize!r}.")

    graph = to_networkx(tree, feature_names=feature_names)
    pos = tree_layout(structure)
    nodes = list(range(structure.node_count))
    is_leaf = structure.children_left < 0
    rates = positive_rate(structure)
    center = float(rates[0])
    mass = (structure.n_pos + structure.n_neg) / (
        structure.n_pos[0] + structure.n_neg[0]
    )
    sizes = low + (high - low) * mass
    n_leaves = structure.n_leaves
    max_depth = int(structure.depth.max())
    if fontsize is None:
        fontsize = 7.0 if n_leaves <= 20 else 6.0
    text_lines = (max_rule_lines if rules else 0) + (1 if counts else 0) + 1

    if ax is None:
        inch_per_leaf = 1.05 if (rules or counts) else 0.6
        width = min(max(5.0, inch_per_leaf * n_leaves + 2.0), 40.0)
        level = 0.9 + (text_lines * fontsize * 1.25 / 72 if rules or counts else 0)
        height = min(max(3.0, level * (max_depth + 1) + 0.8), 30.0)
        _, ax = plt.subplots(figsize=(width, height))
    nodes_artist = nx.draw_networkx_nodes(
        graph,
        pos,
        nodelist=nodes,
        node_size=sizes,
        node_color=rate_colors(rates, center),
        edgecolors="#4d4d4d",
        linewidths=0.8,
        ax=ax,
    )
    nodes_artist.set_zorder(2)
    nx.draw_networkx_edges(
        graph,
        pos,
        edgelist=list(graph.edges()),
        arrows=False,
        edge_color="#9a9a9a",
        width=1.0,
        ax=ax,
    )

    # characters that fit in the horizontal room of a node
    figure_width = ax.figure.get_size_inches()[0] * ax.get_position().width
    inch_per_unit = figure_width / (n_leaves + 0.5)
    char_inches = 0.55 * fontsize / 72
    x = np.array([pos[node][0] for node in nodes])
    room = _node_width(x, structure.depth, n_leaves)
    for node in nodes:
        x_node, y_node = pos[node]
        name = None
        if labels == "rank" and is_leaf[node]:
            name = f"leaf {int(structure.leaf_rank[node])}"
        elif labels != "none":
            name = f"n{node}"
        lines = []
        if rules and not is_leaf[node]:
            chars = 0.85 * room[node] * inch_per_unit / char_inches
            lines += _wrap(
                rule_lines(structure, node, names), min(chars, 48), max_rule_lines
            )
        if counts:
            lines.append(
                f"{_format_count(structure.n_pos[node])}+ / "
                f"{_format_count(structure.n_neg[node])}-"
            )
        radius_points = 0.5 * np.sqrt(sizes[node]) + 2.0
        if name is not None:
            ax.annotate(
                name,
                (x_node, y_node),
                xytext=(0, radius_points),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=fontsize + 0.5,
                fontweight="bold",
                color="#1a1a1a",
                zorder=4,
            )
        if lines:
            ax.annotate(
                "\n".join(lines),
                (x_node, y_node),
                xytext=(0, -radius_points),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=fontsize,
                color="#333333",
                linespacing=1.1,
                zorder=4,
                bbox={
                    "boxstyle": "round,pad=0.2",
                    "facecolor": "white",
                    "edgecolor": "none",
                    "alpha": 0.8,
                },
            )
    if colorbar:
        cmap = LinearSegmentedColormap.from_list("treerank_rate", RATE_PALETTE)
        norm = (
            TwoSlopeNorm(vmin=0.0, vcenter=center, vmax=1.0)
            if 0.0 < center < 1.0
            else None
        )
        mappable = ScalarMappable(norm=norm, cmap=cmap)
        mappable.set_array(rates)
        ax.figure.colorbar(mappable, ax=ax, label="positive rate", shrink=0.6, pad=0.01)
    title = f"ranking tree: {n_leaves} leaves, best (left) to worst (right)"
    if rules:
        title += "; a rule sends its points left (ranked higher)"
    ax.set_title(title, fontsize=fontsize + 3)
    ax.set_xlim(-0.6, n_leaves - 0.4)
    bottom = 0.35 if counts else 0.25
    ax.set_ylim(-float(max_depth) - bottom, 0.4)
    ax.set_axis_off()
    return ax
