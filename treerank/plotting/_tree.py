"""Draw a ranking tree with matplotlib, leaves in rank order."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

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

__all__ = ["AUTO_MAX_LEAVES", "drawn_subtree", "plot_tree", "tree_layout"]


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


def _check_limit(value, name, *, auto):
    if value is None or (auto and isinstance(value, str) and value == "auto"):
        return value
    if isinstance(value, Integral) and not isinstance(value, bool) and value >= 1:
        return int(value)
    choices = "a positive integer, 'auto' or None" if auto else "a positive integer"
    raise ValueError(f"{name} must be {choices}; got {value!r}.")


def _format_count(value):
    value = float(value)
    if value == int(value) or value >= 1000:
        return str(round(value))
    return f"{value:.3g}"


AUTO_MAX_LEAVES = 32
"""Most terminal nodes drawn by ``plot_tree(max_leaves="auto")`` in a new figure."""

_SLOT_INCHES = 1.05  # width of a leaf's column with rules or counts
_MIN_SLOT_INCHES = 0.9  # "auto" in a given axes: as many columns as fit


def drawn_subtree(structure, *, max_depth=None, max_leaves=None):
    """The nodes of a ranking tree that a plot draws, and those it collapses.

    The root is drawn; an internal node is *expanded* (its two children
    drawn) by decreasing training mass (weighted number of samples; ties by
    node id) while the number of terminal nodes (leaves and collapsed
    subtrees) stays within ``max_leaves`` and the children are no deeper than
    ``max_depth``. A drawn internal node that is not expanded is a collapsed
    subtree.

    Parameters
    ----------
    structure : RankingTreeStructure
    max_depth : int or None, default=None
        Deepest nodes drawn (the root has depth 0).
    max_leaves : int or None, default=None
        Most terminal nodes drawn (at least 1).

    Returns
    -------
    drawn : ndarray of bool of shape (node_count,)
    collapsed : ndarray of bool of shape (node_count,)
        Drawn internal nodes whose subtree is not drawn.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.plotting._tree import drawn_subtree
    >>> X, y = make_nested_squares(2000, random_state=0)
    >>> tree = TreeRank(max_depth=4, random_state=0).fit(X, y).tree_
    >>> drawn, collapsed = drawn_subtree(tree, max_leaves=5)
    >>> int((drawn & (tree.is_leaf | collapsed)).sum())
    5
    """
    import heapq

    left, right = structure.children_left, structure.children_right
    mass = np.asarray(structure.n_pos, dtype=float) + structure.n_neg
    is_leaf = left < 0
    drawn = np.zeros(structure.node_count, dtype=bool)
    expanded = np.zeros(structure.node_count, dtype=bool)
    drawn[0] = True
    depth_limit = np.inf if max_depth is None else max_depth
    budget = np.inf if max_leaves is None else max_leaves
    heap, terminals = [], 1

    def push(node):
        if not is_leaf[node] and structure.depth[node] < depth_limit:
            heapq.heappush(heap, (-mass[node], node))

    push(0)
    while heap and terminals + 1 <= budget:
        _, node = heapq.heappop(heap)
        expanded[node] = True
        terminals += 1
        for child in (left[node], right[node]):
            drawn[child] = True
            push(child)
    return drawn, drawn & ~is_leaf & ~expanded


class _TextWidth:
    """Width in points of one-line texts in matplotlib's default font."""

    def __init__(self, fontsize, weight="normal"):
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import TextToPath

        self._prop = FontProperties(size=fontsize, weight=weight)
        self._engine = TextToPath()
        self._cache = {}

    def __call__(self, text):
        width = 0.0
        for char in text:
            if char not in self._cache:
                w, _, _ = self._engine.get_text_width_height_descent(
                    char, self._prop, ismath=False
                )
                self._cache[char] = w
            width += self._cache[char]
        return 1.04 * width  # kerning and rounding, on the safe side


def _wrap(lines, width_points, measure, max_lines):
    """Lines wrapped to ``width_points`` (words, or characters when too long)."""
    wrapped = []
    for line in lines:
        current = ""
        for word in line.split(" "):
            candidate = word if not current else current + " " + word
            if measure(candidate) <= width_points:
                current = candidate
                continue
            if current:
                wrapped.append(current)
            current = ""
            for char in word:  # a word wider than the room: cut it
                if current and measure(current + char) > width_points:
                    wrapped.append(current)
                    current = ""
                current += char
        wrapped.append(current)
    if len(wrapped) > max_lines:
        hidden = len(wrapped) - (max_lines - 1)
        note = f"... (+{hidden} lines)"
        if measure(note) > width_points:
            note = f"+{hidden}"
        wrapped = [*wrapped[: max_lines - 1], note]
    return wrapped


def _plain(text):
    """Text drawn as it is: a ``$`` of a feature name does not start mathtext."""
    return text.replace("$", r"\$")


def _room(x, depth, n_slots):
    """Horizontal room of every node: distance to its nearest same-depth node,
    and to the edges of the drawing."""
    room = np.minimum(2 * (x + 0.6), 2 * (n_slots - 0.4 - x))
    for level in np.unique(depth):
        nodes = np.flatnonzero(depth == level)
        order = nodes[np.argsort(x[nodes])]
        gaps = np.diff(x[order])
        if gaps.shape[0]:
            left = np.concatenate([[np.inf], gaps])
            right = np.concatenate([gaps, [np.inf]])
            room[order] = np.minimum(np.minimum(left, right), room[order])
    return room


def _drawn_layout(structure, drawn, collapsed):
    """x (terminal slots in rank order, parents centred) of the drawn nodes."""
    left, right = structure.children_left, structure.children_right
    count = structure.node_count
    first_rank = np.zeros(count, dtype=np.int64)
    last_rank = np.zeros(count, dtype=np.int64)
    n_leaves = np.ones(count, dtype=np.int64)
    leaves = structure.leaves
    first_rank[leaves] = last_rank[leaves] = structure.leaf_rank[leaves]
    # children have larger ids than their parent (preorder): go backwards
    for node in np.flatnonzero(left >= 0)[::-1]:
        first_rank[node] = min(first_rank[left[node]], first_rank[right[node]])
        last_rank[node] = max(last_rank[left[node]], last_rank[right[node]])
        n_leaves[node] = n_leaves[left[node]] + n_leaves[right[node]]
    terminal = drawn & ((left < 0) | collapsed)
    slots = np.flatnonzero(terminal)
    slots = slots[np.argsort(first_rank[slots], kind="stable")]
    x = np.full(count, np.nan)
    x[slots] = np.arange(slots.shape[0], dtype=float)
    for node in np.flatnonzero(drawn & ~terminal)[::-1]:
        x[node] = 0.5 * (x[left[node]] + x[right[node]])
    return x, slots.shape[0], first_rank, last_rank, n_leaves


def plot_tree(
    tree,
    *,
    feature_names=None,
    max_depth=None,
    max_leaves="auto",
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

    The layout is :func:`tree_layout`'s: leaves evenly spaced from the best
    (left) to the worst (right), parents centred above their children. A
    node's colour is its positive rate on a diverging scale from red (0)
    through pale yellow (the overall positive rate, the root's) to green (1);
    its area is proportional to its training mass (weighted number of
    samples), between ``node_size[0]`` (an empty node) and ``node_size[1]``
    (the root).

    By default every internal node shows its id (``n3``) and, below it, its
    splitting rule (the side sent left, that is ranked higher) and its
    counts; every leaf shows its rank (``leaf 0`` is the best) and its
    counts. Node ids and leaf ranks are written differently (``n...`` and
    ``leaf ...``), so they cannot be mistaken for one another.

    A large tree is drawn in part, so that its text stays readable: the
    subtrees of the most populated nodes are drawn first, within
    ``max_leaves`` terminal nodes and ``max_depth`` levels; a subtree that is
    not drawn is *collapsed* into its root, labelled with the ranks of its
    leaves (``leaves 12-40``) and its counts. The figure created without
    ``ax`` is sized for what is drawn (about one inch per terminal node, and
    the height its texts need): no two texts overlap and they are at least 8
    points high. Long rules are wrapped to the room a node has and cut after
    ``max_rule_lines`` lines. :func:`~treerank.export.export_text` and
    :func:`~treerank.export.export_graphviz` give the whole tree.

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted :class:`~treerank.TreeRank` or its ``tree_``.
    feature_names : sequence of str or None, default=None
        Feature names for the rules (defaults to the estimator's
        ``feature_names_in_`` if any, else ``x[i]``).
    max_depth : int or None, default=None
        Deepest level drawn (the root is level 0); deeper subtrees are
        collapsed, as with scikit-learn's ``plot_tree``.
    max_leaves : int, "auto" or None, default="auto"
        Most terminal nodes (leaves and collapsed subtrees) drawn. ``"auto"``:
        32 in a new figure, or as many as fit in ``ax`` at about 0.9 inch
        each. None: every leaf (the new figure grows with the tree).
    rules : bool, default=True
        Write each internal node's LeafRank rule (the left, better, side)
        below it.
    counts : bool, default=True
        Write each node's (weighted) numbers of positives and negatives,
        ``pos+ / neg-``.
    node_size : tuple of two float, default=(40.0, 900.0)
        Marker area (points^2) of an empty node and of the root.
    labels : {"rank", "id", "none"}, default="rank"
        Names of the nodes: ``leaf k`` (its rank) for leaves, ``leaves i-j``
        for collapsed subtrees and ``n<id>`` for internal nodes (``"rank"``),
        ``n<id>`` everywhere (``"id"``), or none.
    colorbar : bool, default=True
        Add a colour bar of the positive rate.
    max_rule_lines : int, default=4
        Most lines of rule text per node.
    fontsize : float or None, default=None
        Size of the node texts in points (None: 8).
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure sized for the tree is created if None
        (only then is the readability of the text ensured).

    Returns
    -------
    ax : matplotlib Axes
        The drawn nodes are its first
        :class:`~matplotlib.collections.PathCollection` (one marker per drawn
        node, in node id order).

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
    >>> ax = plot_tree(tree, max_leaves=3)   # three subtrees, collapsed
    >>> sorted(t.get_text() for t in ax.texts if t.get_text().startswith("leaves"))
    ['leaves 0-3', 'leaves 4-5', 'leaves 6-7']
    """
    import matplotlib.pyplot as plt
    from matplotlib.cm import ScalarMappable
    from matplotlib.collections import LineCollection
    from matplotlib.colors import LinearSegmentedColormap, TwoSlopeNorm

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
    max_depth = _check_limit(max_depth, "max_depth", auto=False)
    max_leaves = _check_limit(max_leaves, "max_leaves", auto=True)
    fontsize = 8.0 if fontsize is None else float(fontsize)
    texts_below = rules or counts
    slot_inches = _SLOT_INCHES if texts_below else 0.6
    if max_leaves == "auto":
        if ax is None:
            max_leaves = AUTO_MAX_LEAVES
        else:
            width = ax.figure.get_size_inches()[0] * ax.get_position().width
            max_leaves = max(2, int(width / _MIN_SLOT_INCHES))

    drawn, collapsed = drawn_subtree(
        structure, max_depth=max_depth, max_leaves=max_leaves
    )
    x, n_slots, first_rank, last_rank, n_under = _drawn_layout(
        structure, drawn, collapsed
    )
    nodes = np.flatnonzero(drawn)
    depth = structure.depth
    deepest = int(depth[nodes].max())
    is_leaf = structure.children_left < 0
    rates = positive_rate(structure)
    center = float(rates[0])
    mass = (structure.n_pos + structure.n_neg) / (
        structure.n_pos[0] + structure.n_neg[0]
    )
    sizes = low + (high - low) * mass
    radius = 0.5 * np.sqrt(sizes) + 2.0  # points

    # horizontal scale: inches per slot
    if ax is None:
        inch_per_unit = slot_inches
    else:
        figure_width = ax.figure.get_size_inches()[0] * ax.get_position().width
        inch_per_unit = figure_width / (n_slots + 0.2)
    room = np.zeros(structure.node_count)
    room[nodes] = _room(x[nodes], depth[nodes], n_slots)

    # the texts of every drawn node
    measure = _TextWidth(fontsize)
    line_points = 1.2 * 1.1 * fontsize  # font height x line spacing
    pad = 0.2 * fontsize  # of the white box behind the text
    name_text, box_lines = {}, {}
    for node in nodes:
        if labels == "rank" and is_leaf[node]:
            name_text[node] = f"leaf {int(structure.leaf_rank[node])}"
        elif labels == "rank" and collapsed[node]:
            name_text[node] = f"leaves {first_rank[node]}-{last_rank[node]}"
        elif labels != "none":
            name_text[node] = f"n{node}"
        width = max(0.9 * room[node] * inch_per_unit * 72 - 2 * pad, 4 * fontsize)
        lines = []
        if collapsed[node] and texts_below:
            lines += _wrap(
                [f"n{node}: {n_under[node]} leaves not drawn"], width, measure, 2
            )
        elif rules and not is_leaf[node]:
            lines += _wrap(
                [_plain(line) for line in rule_lines(structure, node, names)],
                min(width, measure("x" * 48)),
                measure,
                max_rule_lines,
            )
        if counts:
            lines += _wrap(
                [
                    f"{_format_count(structure.n_pos[node])}+ / "
                    f"{_format_count(structure.n_neg[node])}-"
                ],
                width,
                measure,
                2,
            )
        if lines:
            box_lines[node] = lines

    # vertical scale: the room between two levels that their texts need
    name_points = 1.2 * (fontsize + 0.5)
    top = np.zeros(deepest + 1)  # above the nodes of each level
    bottom = np.zeros(deepest + 1)  # below them
    for node in nodes:
        level = depth[node]
        if node in name_text:
            top[level] = max(top[level], radius[node] + name_points)
        below = radius[node]
        if node in box_lines:
            below += len(box_lines[node]) * line_points + 2 * pad
        bottom[level] = max(bottom[level], below)
    gap = 0.4 * fontsize
    level_points = max([36.0] + [bottom[d] + top[d + 1] + gap for d in range(deepest)])
    top_units = (top[0] + gap) / level_points
    bottom_units = (bottom[deepest] + gap) / level_points

    n_drawn_leaves = int(n_under[0])
    title = f"ranking tree: {n_drawn_leaves} leaves, best (left) to worst (right)"
    if rules:
        title += "; a rule sends its points left (ranked higher)"
    n_collapsed = int(collapsed.sum())
    if n_collapsed:
        title += (
            f"; {n_collapsed} subtree{'s' if n_collapsed > 1 else ''} "
            f"({int(n_under[collapsed].sum())} leaves) collapsed"
        )
    title_size = fontsize + 3

    if ax is None:
        axes_width = (n_slots + 0.2) * inch_per_unit
        axes_height = (deepest + top_units + bottom_units) * level_points / 72
        title_measure = _TextWidth(title_size)
        margin, bar_room = 0.25, (1.1 if colorbar else 0.0)
        width = max(axes_width + 2 * margin + bar_room, 4.0)
        title = "\n".join(_wrap([title], 72 * (width - 2 * margin), title_measure, 10))
        title_height = (title.count("\n") + 1) * 1.25 * title_size / 72 + 0.25
        height = axes_height + title_height + 2 * margin
        fig = plt.figure(figsize=(width, height))
        ax = fig.add_axes(
            [margin / width, margin / height, axes_width / width, axes_height / height]
        )
        colorbar_axes = (
            fig.add_axes(
                [
                    (margin + axes_width + 0.2) / width,
                    (margin + 0.2 * axes_height) / height,
                    0.15 / width,
                    0.6 * axes_height / height,
                ]
            )
            if colorbar
            else None
        )
    else:
        colorbar_axes = None

    positions = np.column_stack([x[nodes], -depth[nodes].astype(float)])
    parents = [node for node in nodes if not is_leaf[node] and not collapsed[node]]
    ax.scatter(
        positions[:, 0],
        positions[:, 1],
        s=sizes[nodes],
        c=rate_colors(rates[nodes], center),
        edgecolors="#4d4d4d",
        linewidths=0.8,
        zorder=2,
    )
    segments = [
        [(x[node], -depth[node]), (x[child], -depth[child])]
        for node in parents
        for child in (structure.children_left[node], structure.children_right[node])
    ]
    if segments:  # drawn after the nodes (the first collection), below them
        ax.add_collection(
            LineCollection(segments, colors="#9a9a9a", linewidths=1.0, zorder=1)
        )
    for node in nodes:
        if node in name_text:
            ax.annotate(
                name_text[node],
                (x[node], -depth[node]),
                xytext=(0, radius[node]),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=fontsize + 0.5,
                fontweight="bold",
                color="#1a1a1a",
                zorder=4,
            )
        if node in box_lines:
            ax.annotate(
                "\n".join(box_lines[node]),
                (x[node], -depth[node]),
                xytext=(0, -radius[node]),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=fontsize,
                color="#333333",
                linespacing=1.1,
                zorder=4,
                bbox={
                    "boxstyle": f"round,pad={pad / fontsize:.2f}",
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
        if colorbar_axes is not None:
            bar = ax.figure.colorbar(mappable, cax=colorbar_axes)
        else:
            bar = ax.figure.colorbar(mappable, ax=ax, shrink=0.6, pad=0.01)
        bar.set_label("positive rate", fontsize=fontsize + 1)
        bar.ax.tick_params(labelsize=fontsize)
    ax.set_title(title, fontsize=title_size)
    ax.set_xlim(-0.6, n_slots - 0.4)
    ax.set_ylim(-float(deepest) - bottom_units, top_units)
    ax.set_axis_off()
    return ax
