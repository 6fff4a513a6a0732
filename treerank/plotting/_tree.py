"""Draw a ranking tree with matplotlib, leaves in rank order."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

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


def plot_tree(
    tree,
    *,
    feature_names=None,
    rules=False,
    node_size=(60.0, 1500.0),
    labels="rank",
    colorbar=True,
    ax=None,
):
    """Draw a ranking tree: leaves in rank order, colour = positive rate.

    The layout is :func:`tree_layout`: leaves evenly spaced from the best (left)
    to the worst (right), parents centred above their children. A node's
    colour is its positive rate on a diverging scale from red (0) through pale
    yellow (the overall positive rate, the root's) to green (1); its area is
    proportional to its training mass (weighted number of samples), between
    ``node_size[0]`` (an empty node) and ``node_size[1]`` (the root).

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted :class:`~treerank.TreeRank` or its ``tree_``.
    feature_names : sequence of str or None, default=None
        Feature names for the rules (defaults to the estimator's
        ``feature_names_in_`` if any, else ``x[i]``).
    rules : bool, default=False
        Write each internal node's LeafRank rule (the left, better, side)
        beside it, in small type. Readable for small trees only.
    node_size : tuple of two float, default=(60.0, 1500.0)
        Marker area (points^2) of an empty node and of the root.
    labels : {"rank", "id", "none"}, default="rank"
        Text in the nodes: leaf ranks for leaves and node ids for internal
        nodes (``"rank"``), node ids everywhere (``"id"``), or nothing.
    colorbar : bool, default=True
        Add a colour bar of the positive rate.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure is created if None.

    Returns
    -------
    ax : matplotlib Axes
        The nodes are its first :class:`~matplotlib.collections.PathCollection`
        (one marker per node, in node id order).

    See Also
    --------
    treerank.export.to_networkx : The graph drawn here.
    treerank.export.export_graphviz : The same tree as DOT text.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.plotting import plot_tree
    >>> X, y = make_nested_squares(1000, random_state=0)
    >>> tree = TreeRank(max_depth=3, random_state=0).fit(X, y)
    >>> ax = plot_tree(tree)
    >>> len(ax.collections[0].get_offsets()) == tree.tree_.node_count
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

    graph = to_networkx(tree, feature_names=feature_names)
    pos = tree_layout(structure)
    nodes = list(range(structure.node_count))
    rates = positive_rate(structure)
    center = float(rates[0])
    mass = (structure.n_pos + structure.n_neg) / (
        structure.n_pos[0] + structure.n_neg[0]
    )
    sizes = low + (high - low) * mass

    if ax is None:
        per_leaf = 2.2 if rules else 0.6
        width = min(max(4.0, per_leaf * structure.n_leaves + 2.0), 30.0)
        height = min(max(3.0, 0.9 * (structure.depth.max() + 1) + 1.0), 20.0)
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
        edge_color="#7f7f7f",
        width=1.0,
        ax=ax,
    )
    if labels != "none":
        text = {
            node: str(
                structure.leaf_rank[node]
                if labels == "rank" and structure.children_left[node] < 0
                else node
            )
            for node in nodes
        }
        nx.draw_networkx_labels(graph, pos, labels=text, font_size=8, ax=ax)
    if rules:
        for node in np.flatnonzero(~structure.is_leaf):
            x, y = pos[int(node)]
            ax.annotate(
                "\n".join(rule_lines(structure, int(node), names)),
                (x, y),
                xytext=(8, -4),
                textcoords="offset points",
                fontsize=6,
                va="top",
                color="#333333",
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
        ax.figure.colorbar(mappable, ax=ax, label="positive rate", shrink=0.8)
    ax.set_title(
        f"ranking tree: {structure.n_leaves} leaves, best (left) to worst (right)"
    )
    ax.set_xlim(-0.75, structure.n_leaves - 0.25)
    ax.set_ylim(-float(structure.depth.max()) - 0.6, 0.6)
    ax.set_axis_off()
    return ax
