"""What the exporters and ``plot_tree`` say about each node, written once.

Every exporter (networkx, Graphviz DOT, text) and the matplotlib tree plot read
the same per-node facts from here: the fitted tree behind the argument, the
feature names each node's LeafRank saw (feature randomization FR1 fits a node's
LeafRank on a subset of the columns), the rule text of a split, the score of a
leaf, the positive rate of a node and the colour that encodes it.

The colour scale is diverging and centred on the overall positive rate ``p``
of the training data (the root's rate): a node as rich in positives as the
whole sample is pale yellow, a richer one green (pure positives: dark green),
a poorer one red (no positive: dark red). Centring on ``p`` keeps the colours
informative when the classes are unbalanced.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "RATE_PALETTE",
    "check_feature_names",
    "format_count",
    "format_score",
    "leaf_scores",
    "node_feature_names",
    "positive_rate",
    "rate_colors",
    "rate_to_unit",
    "resolve_tree",
    "rule_boxes",
    "rule_lines",
    "rule_text",
    "to_hex",
]

# Red (no positive) -> pale yellow (overall rate) -> green (only positives).
RATE_PALETTE = ((0.843, 0.188, 0.153), (1.0, 1.0, 0.749), (0.102, 0.596, 0.314))


def resolve_tree(tree, *, input_name="tree"):
    """The flat structure behind ``tree``, and the estimator if one was given.

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted ranking tree or its ``tree_``.
    input_name : str, default="tree"
        Name of the argument, for error messages.

    Returns
    -------
    structure : RankingTreeStructure
    estimator : TreeRank or None
    """
    from treerank.tree._structure import RankingTreeStructure

    if isinstance(tree, RankingTreeStructure):
        return tree, None
    if hasattr(tree, "n_estimators"):
        raise ValueError(
            f"{input_name} is an ensemble ({type(tree).__name__}); export one of "
            f"its trees, e.g. {input_name}.estimators_[0]."
        )
    if not hasattr(tree, "fit") or not hasattr(tree, "decision_function"):
        raise ValueError(
            f"{input_name} must be a fitted TreeRank or a RankingTreeStructure; "
            f"got {type(tree).__name__}."
        )
    check_is_fitted(tree)
    structure = getattr(tree, "tree_", None)
    if not isinstance(structure, RankingTreeStructure):
        raise ValueError(
            f"{input_name} must be a fitted TreeRank or a RankingTreeStructure; "
            f"{type(tree).__name__} has no ranking tree (tree_)."
        )
    return structure, tree


def _known_n_features(structure, estimator):
    """Number of input features if it can be told, else None."""
    if estimator is not None and hasattr(estimator, "n_features_in_"):
        return int(estimator.n_features_in_)
    for node in np.flatnonzero(~structure.is_leaf):
        if structure.features[node] is None:
            n_features = getattr(structure.leafranks[node], "n_features_in_", None)
            if n_features is not None:
                return int(n_features)
    return None


def check_feature_names(feature_names, structure, estimator):
    """Validated feature names (a list of str) or None for ``x[i]``.

    Defaults to the estimator's ``feature_names_in_`` when it was fitted on a
    DataFrame.
    """
    if feature_names is None:
        names = getattr(estimator, "feature_names_in_", None)
        return None if names is None else [str(name) for name in names]
    if isinstance(feature_names, str):
        raise ValueError(
            "feature_names must be a sequence of str, one per feature; got a "
            f"single string {feature_names!r}."
        )
    names = [str(name) for name in feature_names]
    n_features = _known_n_features(structure, estimator)
    if n_features is not None:
        if len(names) != n_features:
            raise ValueError(
                f"feature_names must contain {n_features} elements, one per "
                f"feature; got {len(names)}."
            )
    else:
        used = [f for f in structure.features if f is not None]
        needed = int(max(np.max(f) for f in used)) + 1 if used else 0
        if len(names) < needed:
            raise ValueError(
                f"feature_names must contain at least {needed} elements (the "
                f"tree uses feature {needed - 1}); got {len(names)}."
            )
    return names


def node_feature_names(structure, node, feature_names):
    """Names of the columns a node's LeafRank was fitted on (FR1 mapped).

    Returns None when the LeafRank saw every feature and no names were given:
    LeafRanks then write ``x[i]``, which is already the global index.
    """
    features = structure.features[node]
    if features is None:
        return feature_names
    if feature_names is None:
        return [f"x[{int(j)}]" for j in features]
    return [feature_names[int(j)] for j in features]


_OPPOSITE = {"<=": ">", ">": "<=", "in": "not in", "not in": "in"}


def rule_boxes(structure, node):
    """The left side of a CART-like split as a simplified union of boxes.

    Reads the LeafRank's ``left_rules`` (one box per kept inner-tree leaf, a
    conjunction of conditions), then simplifies without changing the region:
    two boxes that differ only by opposite last conditions (``f <= t`` versus
    ``f > t``, ``f in S`` versus ``f not in S``) merge into their common part
    (repeatedly), and the conditions of a box on one feature collapse into one
    constraint.

    Returns
    -------
    boxes : list of dict or None
        One dict per box mapping a global feature index to its constraint, a
        dict with ``lo``, ``hi`` (an interval ``lo < x <= hi``, ``-inf``/``inf``
        when open), ``in`` (the allowed categories, or None for any),
        ``out`` (excluded categories) and ``missing`` (whether missing values
        are in the box, where the splits saw missing values), in order of
        first use; None if the LeafRank has no ``left_rules``.
    """
    leafrank = structure.leafranks[node]
    left_rules = getattr(leafrank, "left_rules", None)
    if left_rules is None:
        return None
    features = structure.features[node]
    n_local = getattr(leafrank, "n_features_in_", None)
    if features is not None:
        tokens = [str(int(j)) for j in features]
    elif n_local is not None:
        tokens = [str(j) for j in range(int(n_local))]
    else:
        return None
    paths = [
        tuple((int(f), op, value, bool(missing)) for f, op, value, missing in rule)
        for rule in left_rules(tokens)
    ]
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(paths):
            if not a:
                continue
            f, op, value, _ = a[-1]
            for b in paths[i + 1 :]:
                if b[:-1] == a[:-1] and b[-1][:3] == (f, _OPPOSITE[op], value):
                    paths = [p for p in paths if p is not a and p is not b]
                    paths.append(a[:-1])
                    merged = True
                    break
            if merged:
                break
    boxes = []
    for conditions in paths:
        box = {}
        for f, op, value, missing in conditions:
            c = box.setdefault(
                f,
                {
                    "lo": -np.inf,
                    "hi": np.inf,
                    "in": None,
                    "out": set(),
                    "missing": True,
                },
            )
            if op == "<=":
                c["hi"] = min(c["hi"], value)
            elif op == ">":
                c["lo"] = max(c["lo"], value)
            elif op == "in":
                c["in"] = set(value) if c["in"] is None else c["in"] & set(value)
            else:
                c["out"] |= set(value)
            c["missing"] = c["missing"] and missing
        boxes.append(box)
    return boxes


def _format_constraint(name, c):
    if c["in"] is not None or c["out"]:
        if c["in"] is not None:
            op, labels = "in", c["in"] - c["out"]
        else:
            op, labels = "not in", c["out"]
        text = f"{name} {op} {{{', '.join(sorted(map(str, labels)))}}}"
    elif np.isfinite(c["lo"]) and np.isfinite(c["hi"]):
        text = f"{c['lo']:.6g} < {name} <= {c['hi']:.6g}"
    elif np.isfinite(c["hi"]):
        text = f"{name} <= {c['hi']:.6g}"
    else:
        text = f"{name} > {c['lo']:.6g}"
    return f"{text} or missing" if c["missing"] else text


def _format_box(box, feature_names):
    if not box:
        return "everything"
    parts = []
    for f, c in box.items():
        name = f"x[{f}]" if feature_names is None else feature_names[f]
        text = _format_constraint(name, c)
        parts.append(f"({text})" if c["missing"] and len(box) > 1 else text)
    return " and ".join(parts)


def rule_lines(structure, node, feature_names):
    """The split rule in display lines: one box of the union per line.

    For a LeafRank exposing ``left_rules`` (the CART LeafRank), the
    simplified boxes of :func:`rule_boxes`: the first line reads
    ``left if (box 1)`` and each further one ``or (box k)``; otherwise the one
    line of the LeafRank's ``describe``, with FR1-mapped feature names.
    Thresholds have 6 significant digits.
    """
    boxes = rule_boxes(structure, node)
    if boxes is None:
        leafrank = structure.leafranks[node]
        describe = getattr(leafrank, "describe", None)
        if describe is None:
            return [f"left if {type(leafrank).__name__} sends left"]
        return [str(describe(node_feature_names(structure, node, feature_names)))]
    if not boxes:
        return ["no split (left side empty)"]
    return [
        ("left if (" if k == 0 else "or (") + _format_box(box, feature_names) + ")"
        for k, box in enumerate(boxes)
    ]


def rule_text(structure, node, feature_names):
    """The split rule on one line (see :func:`rule_lines`)."""
    return " ".join(rule_lines(structure, node, feature_names))


def positive_rate(structure):
    """Weighted fraction of positives in each node."""
    total = structure.n_pos + structure.n_neg
    return np.divide(structure.n_pos, total, out=np.zeros_like(total), where=total > 0)


def leaf_scores(structure, estimator):
    """Score and calibrated probability of each leaf, in rank order.

    With a fitted TreeRank, the score is the value its ``decision_function``
    gives to the points of the leaf (``n_positive_leaves_ - rank - 1/2``) and
    the probability its ``leaf_proba_``. For a bare structure, the score is
    ``K - rank`` with K leaves and there is no probability (None).
    """
    ranks = np.arange(structure.n_leaves)
    if estimator is None:
        return (structure.n_leaves - ranks).astype(np.float64), None
    scores = estimator.n_positive_leaves_ - ranks - 0.5
    return scores.astype(np.float64), np.asarray(estimator.leaf_proba_, dtype=float)


def rate_to_unit(rate, center):
    """Map positive rates to [0, 1], the overall rate ``center`` to 1/2."""
    rate = np.clip(np.asarray(rate, dtype=np.float64), 0.0, 1.0)
    low = np.divide(rate, 2.0 * center) if center > 0 else np.full_like(rate, 0.5)
    high = (
        0.5 + np.divide(rate - center, 2.0 * (1.0 - center))
        if center < 1
        else np.full_like(rate, 0.5)
    )
    return np.clip(np.where(rate <= center, low, high), 0.0, 1.0)


def rate_colors(rate, center):
    """RGB colours (floats in [0, 1]) of positive rates, shape ``(n, 3)``."""
    unit = np.atleast_1d(rate_to_unit(rate, center))
    palette = np.asarray(RATE_PALETTE)
    lower = unit <= 0.5
    t = np.where(lower, unit * 2.0, unit * 2.0 - 1.0)[:, None]
    rgb = np.where(
        lower[:, None],
        (1 - t) * palette[0] + t * palette[1],
        (1 - t) * palette[1] + t * palette[2],
    )
    return rgb


def to_hex(rgb):
    """``#rrggbb`` strings of RGB rows with values in [0, 1]."""
    values = np.clip(np.rint(np.asarray(rgb) * 255), 0, 255).astype(int)
    return ["#{:02x}{:02x}{:02x}".format(*row) for row in values]


def format_score(value, precision):
    """A score with at most ``precision`` decimals, trailing zeros dropped."""
    text = f"{float(value):.{precision}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def format_count(value, precision):
    """A weighted count: an integer when it is one, else ``precision`` decimals."""
    value = float(value)
    if value == np.round(value) and abs(value) < 1e15:
        return str(int(np.round(value)))
    return f"{value:.{precision}f}"
