"""Shapley values of a ranker's score: which algorithm for which model."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from treerank.inspection._enumeration import (
    MAX_ENUMERATED_FEATURES,
    enumerated_values,
)
from treerank.inspection._explanation import Explanation
from treerank.inspection._interventional import (
    cube_weights,
    interventional_values,
    longest_path,
    next_nodes,
    per_tree_interventional_values,
    slot_next_nodes,
)
from treerank.inspection._path_dependent import (
    decision_masses,
    gauss_legendre_table,
    path_dependent_values,
)
from treerank.inspection._permutation import permutation_values
from treerank.inspection._scale import proxy_map, score_scale
from treerank.inspection._tree_sum import (
    check_explainable,
    encoded_decision_function,
    engine_trees,
    explained_model,
    is_additive,
    tree_sum,
)
from treerank.utils._categorical import category_labels
from treerank.utils._sparse import is_sparse

__all__ = [
    "WALKS_PER_ROW",
    "chosen_algorithm",
    "draw_tree_rows",
    "rows_per_tree",
    "shapley_values",
]

_PERTURBATIONS = ("interventional", "tree_path_dependent")
_ALGORITHMS = ("auto", "tree", "mean_proxy", "permutation", "exact")
_CHUNK_ROWS = 256  # rows per task of the compiled algorithms
WALKS_PER_ROW = 200
"""Walks per explained row that ``background_per_tree="auto"`` aims at.

Each tree is compared with ``max(2, ceil(WALKS_PER_ROW / n_trees))`` rows: a
TreeRank with 200, a forest of 100 trees with 2 per tree. Measured by
``benchmarks/bench_explain.py`` on a default forest of 100 trees: a relative
RMS error of 0.25 against the values with 1,000 background rows shared by
every tree, where 50 rows shared by every tree (25 times the walks) give 0.32.
"""
_SLOT_BLOCK_ENTRIES = 1 << 23  # next-node entries of shared background rows at a time


def _dense(X):
    return np.ascontiguousarray(X.toarray() if is_sparse(X) else X, dtype=np.float64)


def feature_names_of(estimator):
    """The estimator's feature names, or ``x0, x1, ...``."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(name) for name in names]
    return [f"x{i}" for i in range(estimator.n_features_in_)]


def used_features(estimator):
    """Indices of the features the explained model's score may depend on.

    For engine trees, the features some decision tests (any other feature is
    a dummy: its Shapley value is 0 in every game); for other splitters,
    every feature.
    """
    model = explained_model(estimator)
    if not engine_trees(model):
        return np.arange(model.n_features_in_)
    trees = model.estimators_ if hasattr(model, "estimators_") else [model]
    tested = [tree.tree_.graph()[1] for tree in trees]
    return np.unique(np.concatenate([np.zeros(0, np.int32), *tested])).astype(np.intp)


def _check_params(
    feature_perturbation, algorithm, max_background, background_per_tree, n_permutations
):
    if feature_perturbation not in _PERTURBATIONS:
        raise ValueError(
            f"feature_perturbation must be one of {_PERTURBATIONS}; got "
            f"{feature_perturbation!r}."
        )
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"algorithm must be one of {_ALGORITHMS}; got {algorithm!r}.")
    if max_background is not None and (
        isinstance(max_background, bool)
        or not isinstance(max_background, Integral)
        or max_background < 1
    ):
        raise ValueError(
            "max_background must be a positive integer or None; got "
            f"{max_background!r}."
        )
    if background_per_tree not in ("auto", "all") and (
        isinstance(background_per_tree, bool)
        or not isinstance(background_per_tree, Integral)
        or background_per_tree < 2
    ):
        raise ValueError(
            "background_per_tree must be 'auto', 'all' or an integer >= 2 (the "
            f"spread over a tree's rows needs two); got {background_per_tree!r}."
        )
    if (
        isinstance(n_permutations, bool)
        or not isinstance(n_permutations, Integral)
        or n_permutations < 2
    ):
        raise ValueError(
            f"n_permutations must be an integer >= 2 (standard errors need two "
            f"samples); got {n_permutations!r}."
        )


def _prepare_background(estimator, background, max_background, rng):
    if background is None:
        raise ValueError(
            "the interventional form needs a background sample, and this model "
            "keeps no training rows (a model keeps 1,000 of them in memory when "
            "it is fitted, not when it is loaded from a file or unpickled): pass "
            "background=X_train (or any rows that represent the population the "
            "scores are compared with; at most 1,000 rows are kept, see "
            "max_background)."
        )
    n_rows = background.shape[0] if hasattr(background, "shape") else len(background)
    if n_rows == 0:
        raise ValueError("background has no rows; the interventional form needs some.")
    Z = _dense(estimator._validate_X_predict(background))
    if max_background is not None and Z.shape[0] > max_background:
        Z = Z[np.sort(rng.choice(Z.shape[0], max_background, replace=False))]
    return Z


def _background(estimator, background, max_background, rng):
    """The background rows as the trees read them.

    Without ``background``, the training rows the model kept at fit
    (:func:`~treerank.base.keep_background`), if it has them.
    """
    kept = getattr(estimator, "_background", None)
    if background is not None or kept is None:
        return _prepare_background(estimator, background, max_background, rng)
    Z = _dense(kept)
    if max_background is not None and Z.shape[0] > max_background:
        Z = Z[np.sort(rng.choice(Z.shape[0], max_background, replace=False))]
    return Z


def _explained_sum(estimator, chosen, mapping):
    """The sum of trees explained, and whether it is the reported score itself.

    A TreeRank's reported score is a function of its leaf: its tree with
    those leaf values is explained exactly. A forest's additive score (or
    the mean proxy of a median) is explained in its own units, then put on
    the reported scale by :func:`_onto_scale`.
    """
    if chosen == "mean_proxy":
        return tree_sum(estimator, proxy=True), False
    if mapping.is_identity:
        return tree_sum(estimator), True
    if not hasattr(explained_model(estimator), "estimators_"):  # one tree
        return tree_sum(estimator, leaf_map=mapping), True
    return tree_sum(estimator), False


def _onto_scale(estimator, chosen, mapping, on_scale, model, X, values, base, common):
    """Values of a sum of trees in the units of the reported score.

    The sum ``A`` (a forest's own score, or the mean proxy of a median) is
    mapped onto the reported scale by a non-decreasing ``onto`` (the scale of
    the score; for the proxy, first onto the median's score of the same
    training quantile, :func:`~treerank.inspection._scale.proxy_map`). Each
    row's values are multiplied by one factor, the slope of ``onto`` between
    the base value and the row: ``(onto(A(x)) - onto(base)) / (A(x) -
    base)``, so that they keep their signs and proportions and add up to
    ``onto(A(x)) - onto(base)``; the base value becomes ``onto(base)``. What
    is left of the reported score, for the proxy, is its own term
    (``proxy_difference``): the median's score minus the proxy's, on the
    reported scale.

    Returns
    -------
    values : ndarray of shape (n_samples, n_features)
    base : float
    difference : ndarray of shape (n_samples,) or None
    factor : ndarray of shape (n_samples,)
    """
    n_rows = values.shape[0]
    if on_scale:
        return values, base, None, np.ones(n_rows)
    additive = model.scores(X)
    if chosen == "mean_proxy":
        common["proxy_scores"] = additive
        to_decision = proxy_map(explained_model(estimator))

        def onto(scores):
            return mapping(to_decision(scores))

        target = onto(additive)
    else:
        onto = mapping
        target = common["scores"]
    total = values.sum(axis=1)  # additive - base, as the algorithm computed it
    new_base = float(onto(np.array([base]))[0])
    spread = float(np.ptp(additive)) if additive.shape[0] > 1 else 0.0
    step = max(1e-6 * max(spread, abs(base), 1e-12), 1e-12)
    slope = float(onto(np.array([base + step]))[0] - onto(np.array([base - step]))[0])
    slope /= 2 * step
    tiny = 1e-12 * max(1.0, abs(base))
    far = np.abs(total) > tiny
    factor = np.full(n_rows, slope)
    factor[far] = (target[far] - new_base) / total[far]
    values = values * factor[:, None]
    difference = None
    if chosen == "mean_proxy":
        difference = common["scores"] - new_base - values.sum(axis=1)
        # rounding where the median and its proxy agree: an exact 0
        noise = 1e-12 * max(1.0, float(np.max(np.abs(common["scores"]), initial=0)))
        difference[np.abs(difference) < noise] = 0.0
    return values, new_base, difference, factor


def _row_chunks(n_rows, n_jobs):
    n_chunks = max(1, min(effective_n_jobs(n_jobs) * 4, -(-n_rows // _CHUNK_ROWS)))
    return [c for c in np.array_split(np.arange(n_rows), n_chunks) if c.shape[0]]


def rows_per_tree(background_per_tree, n_background, n_trees):
    """How many background rows each tree is compared with; None: all of them.

    Parameters
    ----------
    background_per_tree : {"auto", "all"} or int
    n_background : int
        Rows of the background sample.
    n_trees : int

    Returns
    -------
    rows : int or None
        None when every tree is compared with every background row (asked,
        or the background has no more rows than a tree would draw).
    """
    if background_per_tree == "all":
        return None
    if background_per_tree == "auto":
        wanted = max(2, -(-WALKS_PER_ROW // max(1, n_trees)))
    else:
        wanted = int(background_per_tree)
    return None if wanted >= n_background else wanted


def draw_tree_rows(rng, n_background, per_tree, n_trees):
    """The background rows of each tree: ``per_tree`` distinct rows per tree.

    Drawn independently for each tree (a row may serve several trees).

    Parameters
    ----------
    rng : RandomState
    n_background : int
        Rows of the background sample.
    per_tree : int
        Rows per tree, at most ``n_background``.
    n_trees : int

    Returns
    -------
    rows : ndarray of shape (n_trees, per_tree)
        Sorted row indices of each tree.
    """
    return np.stack(
        [
            np.sort(rng.choice(n_background, per_tree, replace=False))
            for _ in range(n_trees)
        ]
    ).astype(np.intp)


def _run_in_chunks(kernel, X, outputs, n_jobs):
    """``kernel(rows_of_X, *output_slices)`` on row chunks, in threads."""

    def run(rows):
        kernel(X[rows], *(out[rows[0] : rows[-1] + 1] for out in outputs))

    Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(run)(rows) for rows in _row_chunks(X.shape[0], n_jobs)
    )


def _interventional_tree(model, X, Z, per_tree, rng, n_jobs):
    """Interventional values of an additive model (compiled walks).

    Parameters
    ----------
    model : TreeSum
    X, Z : ndarray of float64
        The rows to explain, the background.
    per_tree : int or None
        Background rows drawn for each tree (independently), or None: every
        tree is compared with every row of Z (the exact values).
    rng : RandomState
        Draws the rows of each tree.
    n_jobs : int or None

    Returns
    -------
    values, background_std_errors : ndarray of shape (n_samples, n_features)
    base_value : float
        The mean score of the background: of Z, or with rows drawn per tree,
        the sum over the trees of the mean leaf value of their rows (so that
        the values add up to the score minus it).
    """
    router = model.router
    n_decisions = router.nodes.shape[0]
    # a walk fixes at most one feature per decision of its path
    depth = longest_path(router.nodes)
    from_x, from_z = cube_weights(X.shape[1] if depth < 0 else min(X.shape[1], depth))
    common = (
        router.entries,
        router.nodes,
        router.tests,
        router.category_sets,
        model.values,
        model.value_offset,
        from_x,
        from_z,
    )
    if per_tree is not None:
        rows = draw_tree_rows(rng, Z.shape[0], per_tree, model.n_trees)
        slot_next = np.empty((per_tree, n_decisions), dtype=np.int32)
        slot_next_nodes(
            Z,
            rows,
            model.decision_start,
            router.nodes,
            router.tests,
            router.category_sets,
            slot_next,
        )
        values = np.empty(X.shape)
        variance = np.empty(X.shape)

        def kernel(X_rows, out, out_var):
            per_tree_interventional_values(X_rows, slot_next, *common, out, out_var)

        _run_in_chunks(kernel, X, (values, variance), n_jobs)
        leaf_values = model.leaf_values(Z)  # (n_background, n_trees)
        drawn = np.take_along_axis(leaf_values, rows.T, axis=0)  # (per_tree, n_trees)
        base = model.constant + float(drawn.mean(axis=0).sum())
        return values, np.sqrt(variance), base
    # every tree with every background row: in blocks of rows (memory)
    n_background = Z.shape[0]
    block = max(1, _SLOT_BLOCK_ENTRIES // max(1, n_decisions))
    total = np.zeros(X.shape)
    total_squares = np.zeros(X.shape)
    for first in range(0, n_background, block):
        Z_block = Z[first : first + block]
        Z_next = np.empty((Z_block.shape[0], n_decisions), dtype=np.int32)
        next_nodes(Z_block, router.nodes, router.tests, router.category_sets, Z_next)
        means = np.empty(X.shape)
        mean_squares = np.empty(X.shape)

        def kernel(X_rows, out, out_sq, Z_next=Z_next):
            interventional_values(X_rows, Z_next, *common, out, out_sq)

        _run_in_chunks(kernel, X, (means, mean_squares), n_jobs)
        total += means * Z_block.shape[0]
        total_squares += mean_squares * Z_block.shape[0]
    values = total / n_background
    if n_background > 1:
        variance = np.maximum(total_squares / n_background - values**2, 0.0) * (
            n_background / (n_background - 1)
        )
        spread = np.sqrt(variance / n_background)
    else:
        spread = np.full(X.shape, np.inf)
    return values, spread, float(model.scores(Z).mean())


def _kendall_tau(a, b):
    """Kendall's tau-b between two scorings of the same rows (None if undefined)."""
    if a.shape[0] < 2:
        return None
    from scipy.stats import kendalltau

    with np.errstate(invalid="ignore", divide="ignore"):
        tau = float(kendalltau(a, b).statistic)
    return tau if np.isfinite(tau) else None


def _tree_shaped(model):
    """Masses of the decisions of an additive model's graphs, or an error."""
    masses = []
    depth = 0
    for b, graph in enumerate(model.graphs):
        tree_masses, tree_depth = decision_masses(graph, model.leaf_masses[b])
        if tree_masses is None:
            raise ValueError(
                "feature_perturbation='tree_path_dependent' needs trees whose "
                f"decision graphs are trees; tree {b} is not: its LeafRank rules "
                "have several inner leaves on one side, which lead to the same "
                "child, and the model keeps no training mass for the decisions "
                "inside a rule. Use the interventional form (the default, with a "
                "background sample), or rules of a single split "
                "(leafrank=LeafRank(max_depth=1))."
            )
        masses.append(tree_masses)
        depth = max(depth, tree_depth)
    return np.concatenate([np.zeros(0), *masses]), depth


def _path_dependent_tree(model, X, n_jobs):
    """Exact path-dependent values and base value of an additive model."""
    masses, depth = _tree_shaped(model)
    router = model.router
    leaf_masses = np.concatenate(model.leaf_masses)
    sizes = np.array([m.shape[0] for m in model.leaf_masses], dtype=np.int64)
    mass_offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    gl_nodes, gl_weights = gauss_legendre_table(max(1, (depth + 1) // 2))
    values = np.empty(X.shape)

    def run(rows):
        path_dependent_values(
            X[rows],
            router.entries,
            router.nodes,
            router.tests,
            router.category_sets,
            masses,
            leaf_masses,
            mass_offset,
            model.values,
            model.value_offset,
            gl_nodes,
            gl_weights,
            max(depth, 1),
            values[rows[0] : rows[-1] + 1],
        )

    Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(run)(rows) for rows in _row_chunks(X.shape[0], n_jobs)
    )
    base = model.constant
    for b in range(model.n_trees):
        tree_values = model.values[model.value_offset[b] :][: sizes[b]]
        weights = model.leaf_masses[b] / model.leaf_masses[b].sum()
        base += float(tree_values @ weights)
    return values, base


def _choose_algorithm(estimator, algorithm, feature_perturbation):
    exact_tree = engine_trees(estimator) and is_additive(estimator)
    if feature_perturbation == "tree_path_dependent":
        if algorithm not in ("auto", "tree"):
            raise ValueError(
                "feature_perturbation='tree_path_dependent' is computed by the "
                f"tree algorithm only; got algorithm={algorithm!r}."
            )
        if not exact_tree:
            raise ValueError(_not_additive_message(estimator, "tree_path_dependent"))
        return "tree"
    median_of_engine_trees = engine_trees(estimator) and not exact_tree
    if algorithm == "auto":
        if exact_tree:
            return "tree"
        return "mean_proxy" if median_of_engine_trees else "permutation"
    if algorithm == "tree" and not exact_tree:
        raise ValueError(_not_additive_message(estimator, "algorithm='tree'"))
    if algorithm == "mean_proxy" and not median_of_engine_trees:
        if exact_tree:
            raise ValueError(
                "algorithm='mean_proxy' stands in for a Kendall median; this "
                "model's score is a sum over its trees, explained exactly by "
                "algorithm='tree'."
            )
        raise ValueError(_not_additive_message(estimator, "algorithm='mean_proxy'"))
    return algorithm


def chosen_algorithm(
    estimator, algorithm="auto", feature_perturbation="interventional"
):
    """The algorithm :func:`shapley_values` uses for a model.

    Parameters
    ----------
    estimator : TreeRank or RankingForest
    algorithm : str, default="auto"
    feature_perturbation : str, default="interventional"

    Returns
    -------
    algorithm : {"tree", "mean_proxy", "permutation", "exact"}
    """
    check_explainable(estimator)
    return _choose_algorithm(estimator, algorithm, feature_perturbation)


def _not_additive_message(estimator, what):
    model = explained_model(estimator)
    if not engine_trees(model):
        why = (
            "its trees' rules are not axis-aligned splits grown by the engine "
            "(LinearLeafRank, MixedLeafRank or ClassifierLeafRank), so they "
            "compile to no decision graph"
        )
    elif model is not estimator:
        why = (
            "a TreeRank fitted on more than two grades scores with the Kendall "
            "median of its threshold trees, which is not a sum over trees"
        )
    else:
        why = (
            f"a forest aggregated by {model.aggregation!r} does not score with a "
            "sum over its trees"
        )
    proxy = (
        " or algorithm='mean_proxy' (the exact values of the mean of the same trees)"
        if engine_trees(model)
        else ""
    )
    return (
        f"{what} needs a score that is a sum over decision trees; {why}. Use the "
        "interventional form with algorithm='permutation' (an estimate with "
        f"standard errors), algorithm='exact' (few features){proxy}."
    )


def shapley_values(
    estimator,
    X,
    *,
    background=None,
    feature_perturbation="interventional",
    algorithm="auto",
    max_background=1000,
    background_per_tree="auto",
    n_permutations=32,
    scale="calibrated",
    random_state=None,
    n_jobs=None,
):
    """Contribution of each feature to each row's ranking score (Shapley values).

    For each row x of X and each feature j, the Shapley value ``phi_j(x)`` of
    a game whose players are the features and whose value for a coalition S
    is the score when only the features of S are known; so that

        base_value + sum_j phi_j(x) = score(x)    (efficiency),

    a feature the model never reads gets 0 (dummy), two features that play
    the same role get the same value (symmetry), and the values of a sum of
    scores are the sums of their values (linearity). The score explained is
    the calibrated score (``scale="calibrated"``, the default:
    :func:`calibrated_score`, the model's ranking read as a calibrated
    positive rate, the score ``treerank score`` writes) or
    ``decision_function`` (``scale="decision"``): a value says how much of
    the row's departure from the base value, in the units of that score, a
    feature accounts for (see :ref:`inspection`). For a Kendall median
    explained by its mean proxy, a last term, ``proxy_difference``, holds
    what separates the median's score from its proxy's, so that
    ``base_value + sum_j phi_j(x) + proxy_difference(x) = score(x)``.

    Read more in the :ref:`User Guide <inspection>`.

    Parameters
    ----------
    estimator : TreeRank or RankingForest
        A fitted ranker.
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        The rows to explain, as given to ``decision_function`` (missing
        values, categorical columns and sparse matrices as the model takes
        them).
    background : {array-like, sparse matrix, DataFrame} or None, default=None
        For the interventional form: rows that represent the population the
        scores are compared with, usually (a sample of) the training data.
        The base value is their mean score. None: the training rows the model
        kept when it was fitted (1,000 rows of positive weight drawn at
        random, or all of them when there are fewer; kept in memory only: a
        model unpickled or loaded from a model file has none, and then a
        background is required).
    feature_perturbation : {"interventional", "tree_path_dependent"}, \
default="interventional"
        The game:

        - "interventional": ``v(S)`` is the mean score of the points that
          take the features of S from x and the others from a background
          row. The values are those of the model as a function, whatever
          the dependence between the features.
        - "tree_path_dependent": the features outside S are filled in by the
          tree itself, each decision on them sending the point both ways in
          proportion to the training masses of its children (Lundberg et al.,
          2020). Only for trees whose LeafRank rules are single splits (the
          model keeps no training mass for the decisions inside a deeper
          rule); no background.
    algorithm : {"auto", "tree", "mean_proxy", "permutation", "exact"}, \
default="auto"
        How the values are computed:

        - "tree": exact, in polynomial time, on the trees as compiled for
          prediction; for scores that are a sum over trees: a TreeRank on two
          classes, a forest with ``aggregation="mean"`` or ``"borda"``, grown
          with the engine (the default LeafRank). Cost: one walk of the
          hybrid paths of a pair of rows in a tree per row, tree and
          background row compared with (``background_per_tree``).
        - "mean_proxy": for the Kendall median (a forest's default
          aggregation, a TreeRank on more than two grades) of engine trees:
          the exact values, as for "tree", of the mean of the same trees'
          leaf scores (``leaf_values_``), the score the median breaks its
          ties with and whose order is close to the median's (their Kendall
          tau over the explained rows is ``proxy_rank_agreement``), put on
          the median's scale: a proxy score is mapped to the median's score
          of the same quantile over the training rows (the cells and their
          masses). What is left of each row's score, the median's minus its
          proxy's, is the term ``proxy_difference`` of the result.
        - "permutation": an estimate for any score, from
          ``n_permutations`` random orders of the features (each with its
          reverse) and background rows per row, with ``std_errors`` and
          exact efficiency; interventional form only. Cost
          ``2 * n_permutations * (n_features - 1)`` scores per row.
        - "exact": the definition, over all coalitions of the features the
          model reads (at most 16); interventional form only. Cost
          ``2^n_features * n_background`` scores per row.
        - "auto": "tree" when the score is a sum over engine trees,
          "mean_proxy" for the Kendall median of engine trees, and
          "permutation" for trees of other splitters.
    max_background : int or None, default=1000
        A background of more rows is replaced by this many of its rows drawn
        at random (``random_state``); None uses every row. The time of the
        "exact" algorithm is proportional to it, that of the others hardly
        depends on it.
    background_per_tree : "auto", "all" or int, default="auto"
        For "tree" and "mean_proxy": how many background rows each tree is
        compared with, drawn at random for each tree independently of the
        others (the values are then the exact Shapley values of the game in
        which each tree is averaged over its own rows: an unbiased estimate
        of those with the whole background, whose standard error is
        ``background_std_errors``). "all": every tree with every background
        row (the values with the whole background, exactly; the time is
        proportional to its size). "auto": ``max(2, ceil(200 / n_trees))``
        rows (2 per tree for 100 trees, 200 for a TreeRank), or all of them
        when the background has no more. The time is proportional to it.
        Measured on a default forest of 100 trees (20 features,
        ``benchmarks/bench_explain.py``): "auto" (2 rows per tree, 200 walks
        per row) is 0.235 off the exact values with 1,000 background rows
        ("all": every tree with every row, 500 times the walks) in relative
        RMS, 5 rows per tree 0.162; the first reason is the same for 94% and
        96% of the rows. Use
        "all" (with ``max_background``) when the values themselves matter,
        "auto" to rank a row's reasons.
    n_permutations : int, default=32
        Samples per row of the permutation algorithm.
    scale : {"calibrated", "decision"}, default="calibrated"
        The score explained:

        - "calibrated": the calibrated score (:func:`calibrated_score`): the
          calibrated positive rate (for ``K > 2`` grades, the calibrated
          expected grade) as a continuous, strictly increasing function of
          ``decision_function``. A TreeRank's is a value per leaf, explained
          exactly; the values of a forest's own sum of trees ("tree", a mean
          or Borda forest) or of its mean proxy ("mean_proxy") are computed
          in its units, then each row's values are multiplied by one
          non-negative factor, the slope of the calibrated score between the
          base value and the row (so that they keep their signs and
          proportions, hence the reason codes, and add up to the calibrated
          score); the base value is then the calibrated score at the
          background's mean score. The estimates ("permutation", "exact")
          explain the calibrated score directly, and their base value is the
          background's mean calibrated score.
        - "decision": ``decision_function``, in the model's own units (a leaf
          rank, minus twice a position in the median's order, a mean leaf
          score).
    random_state : int, RandomState instance or None, default=None
        Draws the background rows kept and the permutations. Each row's
        permutations are drawn from a seed and the row's values, so with an
        int the estimate of a row is the same wherever the row is in X.
    n_jobs : int or None, default=None
        Threads (row chunks in parallel; a row's values do not depend on its
        chunk).

    Returns
    -------
    explanation : Explanation
        ``values`` of shape (n_samples, n_features), ``base_value``,
        ``scores`` (the score explained: the calibrated score, or
        ``decision_function(X)``), ``proxy_difference`` (for "mean_proxy"),
        the rows and feature names, and the standard errors of the
        estimates.

    See Also
    --------
    reason_codes : The features that pull each row's score down (or up), with
        the rule each one met.
    treerank.plotting.plot_waterfall : One row's values.
    treerank.plotting.plot_contributions : The values over many rows.

    Notes
    -----
    A ranking tree with its LeafRank rules is one decision graph (each
    rule's inner leaves lead to the first decision of the master child they
    send their rows to), the graph the model routes its rows through. The
    tree algorithm walks it: for one row x, one background row z and one
    tree, it follows the paths of the hybrid points, branching where x and z
    part, and each leaf it reaches adds, for the features the path fixed to
    x (set A) and to z (set B), ``value * (|A| - 1)! |B|! / (|A| + |B|)!`` to
    those of A and minus ``value * |A|! (|B| - 1)! / (|A| + |B|)!`` to those
    of B. The graph is never unfolded into a tree (it would have about a
    million leaves for a tree of a default forest).

    The walks of different background rows share little, so the cost is one
    walk per row, tree and background row. A forest's values are a mean
    over its trees, and each tree can be compared with rows of its own:
    what all the trees' values have in common (a background row that is
    atypical moves every tree's values the same way) then averages out over
    the trees as well as over the rows. On a default forest of 100 trees, 2
    rows per tree give smaller errors than 50 rows shared by all the trees,
    with 25 times fewer walks. ``background_std_errors`` says how much the
    values depend on the rows drawn.

    The Kendall median (the forest's default aggregation) ranks the cells of
    the trees' common subpartition jointly: it is not a sum over trees. By
    default it is explained by its mean proxy (exact values of the mean of
    the same trees, on the median's scale, and the difference between the
    two scores as its own term); its own values are estimated by
    permutations, with standard errors (``algorithm="permutation"``), or
    computed by enumeration for few features (``algorithm="exact"``).

    References
    ----------
    .. [1] L. S. Shapley, "A value for n-person games", 1953.
    .. [2] S. M. Lundberg et al., "From local explanations to global
       understanding with explainable AI for trees", Nature Machine
       Intelligence 2, 2020.
    .. [3] J. Castro, D. Gomez and J. Tejada, "Polynomial calculation of the
       Shapley value based on sampling", Computers & Operations Research 36,
       2009.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.inspection import calibrated_score, shapley_values
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> tree = TreeRank(random_state=0).fit(X, y)
    >>> explanation = shapley_values(tree, X[:3], background=X[:50])
    >>> explanation.values.shape
    (3, 2)
    >>> bool(np.allclose(explanation.base_value + explanation.values.sum(axis=1),
    ...                  calibrated_score(tree, X[:3])))
    True
    """
    _check_params(
        feature_perturbation,
        algorithm,
        max_background,
        background_per_tree,
        n_permutations,
    )
    check_explainable(estimator)
    mapping = score_scale(estimator, scale)
    rng = check_random_state(random_state)
    X_read = _dense(estimator._validate_X_predict(X))
    chosen = _choose_algorithm(estimator, algorithm, feature_perturbation)
    decision = encoded_decision_function(estimator, X_read)
    common = {
        "scores": mapping(decision),
        "data": X_read,
        "feature_names": feature_names_of(estimator),
        "feature_perturbation": feature_perturbation,
        "algorithm": chosen,
        "category_labels": category_labels(estimator),
        "scale": mapping.name,
    }
    if feature_perturbation == "tree_path_dependent":
        if background is not None:
            raise ValueError(
                "feature_perturbation='tree_path_dependent' fills the features in "
                "from the trees' training masses; it takes no background."
            )
        model, on_scale = _explained_sum(estimator, chosen, mapping)
        values, base = _path_dependent_tree(model, X_read, n_jobs)
        values, base, difference, _ = _onto_scale(
            estimator, chosen, mapping, on_scale, model, X_read, values, base, common
        )
        return Explanation(values, base, proxy_difference=difference, **common)
    Z = _background(estimator, background, max_background, rng)
    if chosen in ("tree", "mean_proxy"):
        model, on_scale = _explained_sum(estimator, chosen, mapping)
        per_tree = rows_per_tree(background_per_tree, Z.shape[0], model.n_trees)
        values, spread, base = _interventional_tree(
            model, X_read, Z, per_tree, rng, n_jobs
        )
        values, base, difference, factor = _onto_scale(
            estimator, chosen, mapping, on_scale, model, X_read, values, base, common
        )
        if chosen == "mean_proxy":
            common["proxy_rank_agreement"] = _kendall_tau(
                decision, common["proxy_scores"]
            )
        return Explanation(
            values,
            base,
            background_std_errors=spread * np.abs(factor)[:, None],
            n_background=Z.shape[0],
            background_per_tree=Z.shape[0] if per_tree is None else per_tree,
            proxy_difference=difference,
            **common,
        )
    z_scores = mapping(encoded_decision_function(estimator, Z))
    base = float(z_scores.mean())
    active = used_features(estimator)

    def score(H):
        return mapping(encoded_decision_function(estimator, H))

    if chosen == "exact":
        if active.shape[0] > MAX_ENUMERATED_FEATURES:
            raise ValueError(
                f"algorithm='exact' enumerates the coalitions of the {active.shape[0]} "
                f"features the model reads; at most {MAX_ENUMERATED_FEATURES} are "
                "allowed. Use algorithm='permutation'."
            )
        values = enumerated_values(score, X_read, Z, active=active)
        return Explanation(values, base, n_background=Z.shape[0], **common)
    seed = rng.randint(np.iinfo(np.int32).max)
    chunks = _row_chunks(X_read.shape[0], n_jobs)
    parts = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(permutation_values)(
            score,
            X_read[rows],
            Z,
            active=active,
            z_scores=z_scores,
            z_mean=base,
            n_permutations=n_permutations,
            seed=seed,
        )
        for rows in chunks
    )
    values = np.concatenate([part[0] for part in parts])
    errors = np.concatenate([part[1] for part in parts])
    return Explanation(
        values, base, std_errors=errors, n_background=Z.shape[0], **common
    )
