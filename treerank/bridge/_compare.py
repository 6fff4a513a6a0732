"""Compare rankers: metric means, paired tests, Holm correction, report tables.

:func:`compare` takes the scores of several models on the same data and
answers "is model A significantly better than model B on these queries?" for
every metric and every pair of models. With ``qid`` the queries are the
paired units: every metric is computed per query (the bridge's metric
names, :mod:`treerank.bridge._metric_names`) and the per-query differences
between two models are tested. Without ``qid`` the sample is one ranking and
the paired units are the rows: the paired bootstrap redraws rows, and for
``"auc"`` DeLong's test uses the per-sample decomposition of the AUC.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math
import numbers

import numpy as np
from scipy import stats
from sklearn.utils import check_random_state

from treerank.bridge._evaluate import _check_labels
from treerank.bridge._metric_names import resolve_metrics
from treerank.metrics import roc_auc_score
from treerank.metrics._grouping import check_qid, group_qid
from treerank.utils.validation import check_scores

__all__ = ["ComparisonResult", "compare", "holm_correction"]

_TESTS = ("paired_bootstrap", "permutation", "student")
_CORRECTIONS = ("holm", None)
_COLUMNS = (
    "metric",
    "model_a",
    "model_b",
    "mean_a",
    "mean_b",
    "difference",
    "ci_low",
    "ci_high",
    "statistic",
    "pvalue",
    "pvalue_adjusted",
    "significant",
)


def holm_correction(pvalues):
    """Holm's step-down adjustment of p-values for multiple comparisons.

    With the ``m`` p-values sorted increasingly, ``p_(1) <= ... <= p_(m)``,
    the adjusted ``p_(i)`` is ``max_{j <= i} min(1, (m - j + 1) p_(j))``.
    Rejecting the hypotheses whose adjusted p-value is at most ``alpha``
    controls the family-wise error rate at ``alpha``, under any dependence.

    Parameters
    ----------
    pvalues : array-like of shape (n_tests,)
        p-values in [0, 1].

    Returns
    -------
    adjusted : ndarray of shape (n_tests,)
        Adjusted p-values, in the input order.

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test
       procedure", Scandinavian Journal of Statistics 6(2), 1979.

    Examples
    --------
    >>> from treerank.bridge import holm_correction
    >>> holm_correction([0.01, 0.04, 0.03])
    array([0.03, 0.06, 0.06])
    """
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    if p.shape[0] and (not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1))):
        raise ValueError(f"pvalues must lie in [0, 1]; got {p!r}.")
    order = np.argsort(p, kind="stable")
    m = p.shape[0]
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


class ComparisonResult:
    """Result of :func:`compare`: metric means and paired comparisons.

    Attributes
    ----------
    models : list of str
        Model names, in the order given.
    metrics : list of str
        Metric names.
    means : dict of str to dict of str to float
        ``means[metric][model]``: the mean over queries (the value on the
        whole sample without ``qid``).
    greater_is_better : dict of str to bool
        Direction of every metric.
    comparisons : list of dict
        One dict per (metric, pair of models) with keys ``metric``,
        ``model_a``, ``model_b``, ``mean_a``, ``mean_b``, ``difference``
        (``mean_a - mean_b``), ``ci_low`` and ``ci_high`` (interval of the
        difference at level ``1 - alpha``; NaN for the permutation test),
        ``statistic`` (t or z statistic; the mean difference for the
        resampling tests), ``pvalue``, ``pvalue_adjusted`` (Holm over the
        pairs of the same metric, or equal to ``pvalue`` without
        correction) and ``significant`` (``pvalue_adjusted <= alpha``).
    test : str
        The test: ``"paired_bootstrap"``, ``"permutation"``, ``"student"``
        (paired t-test) or ``"delong"`` (``"student"`` without ``qid``).
    correction : str or None
    alpha : float
    n_units : int
        Number of queries (number of samples without ``qid``).
    n_resamples : int or None
        Resamples of the bootstrap or permutation test.

    Examples
    --------
    >>> from treerank.bridge import compare
    >>> result = compare(
    ...     {"a": [0.9, 0.1, 0.8, 0.3], "b": [0.2, 0.9, 0.7, 0.4]},
    ...     [1, 0, 1, 0], qid=[1, 1, 2, 2], metrics=["auc"], test="student",
    ... )
    >>> result.means["auc"]
    {'a': 1.0, 'b': 0.5}
    >>> print(result.to_markdown())  # doctest: +NORMALIZE_WHITESPACE
    | model | auc |
    |---|---|
    | a | **1.0000** |
    | b | 0.5000 |
    <BLANKLINE>
    | metric | A | B | mean A | mean B | A - B | 95 % CI | p | p (holm) |
    |---|---|---|---|---|---|---|---|---|
    | auc | a | b | 1.0000 | 0.5000 | +0.5000 | [-5.8531, +6.8531] | 0.5 | 0.5 |
    """

    def __init__(
        self,
        *,
        models,
        metrics,
        means,
        greater_is_better,
        comparisons,
        test,
        correction,
        alpha,
        n_units,
        n_resamples,
    ):
        self.models = models
        self.metrics = metrics
        self.means = means
        self.greater_is_better = greater_is_better
        self.comparisons = comparisons
        self.test = test
        self.correction = correction
        self.alpha = alpha
        self.n_units = n_units
        self.n_resamples = n_resamples

    def __repr__(self):
        n_significant = sum(row["significant"] for row in self.comparisons)
        return (
            f"ComparisonResult({len(self.models)} models, {len(self.metrics)} "
            f"metrics, test={self.test!r}: {n_significant} of "
            f"{len(self.comparisons)} differences significant at {self.alpha})"
        )

    def to_frame(self):
        """The comparisons as a pandas DataFrame (one row per metric and pair).

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``metric, model_a, model_b, mean_a, mean_b, difference,
            ci_low, ci_high, statistic, pvalue, pvalue_adjusted,
            significant``.
        """
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is a test dependency
            raise ImportError(
                "to_frame needs pandas (pip install pandas); to_markdown and "
                "to_latex work without it."
            ) from None
        return pd.DataFrame(self.comparisons, columns=list(_COLUMNS))

    def _best(self, metric):
        values = [self.means[metric][m] for m in self.models]
        finite = [v for v in values if np.isfinite(v)]
        if not finite:
            return None
        return max(finite) if self.greater_is_better[metric] else min(finite)

    def _rows(self, digits, bold, fmt_p):
        means_rows = []
        for model in self.models:
            cells = [model]
            for metric in self.metrics:
                value = self.means[metric][model]
                text = f"{value:.{digits}f}"
                cells.append(bold(text) if value == self._best(metric) else text)
            means_rows.append(cells)
        pair_rows = []
        for row in self.comparisons:
            ci = (
                "n/a"
                if np.isnan(row["ci_low"])
                else f"[{row['ci_low']:+.{digits}f}, {row['ci_high']:+.{digits}f}]"
            )
            adjusted = fmt_p(row["pvalue_adjusted"])
            pair_rows.append(
                [
                    row["metric"],
                    row["model_a"],
                    row["model_b"],
                    f"{row['mean_a']:.{digits}f}",
                    f"{row['mean_b']:.{digits}f}",
                    f"{row['difference']:+.{digits}f}",
                    ci,
                    fmt_p(row["pvalue"]),
                    bold(adjusted) if row["significant"] else adjusted,
                ]
            )
        return means_rows, pair_rows

    def _pair_header(self):
        level = f"{100 * (1 - self.alpha):g} %"
        adjusted = f"p ({self.correction})" if self.correction else "p (uncorrected)"
        return [
            "metric",
            "A",
            "B",
            "mean A",
            "mean B",
            "A - B",
            f"{level} CI",
            "p",
            adjusted,
        ]

    def to_markdown(self, *, digits=4):
        """Markdown tables: the means (best in bold) and the paired differences.

        Significant differences (adjusted p-value at most ``alpha``) have
        their adjusted p-value in bold.

        Parameters
        ----------
        digits : int, default=4
            Decimals of the means and differences.

        Returns
        -------
        text : str
        """
        means_rows, pair_rows = self._rows(digits, lambda t: f"**{t}**", _format_p)
        return "\n".join(
            [
                _markdown_table(["model", *self.metrics], means_rows),
                "",
                _markdown_table(self._pair_header(), pair_rows),
            ]
        )

    def to_latex(self, *, digits=4):
        """LaTeX tables (``tabular``): the means and the paired differences.

        Parameters
        ----------
        digits : int, default=4
            Decimals of the means and differences.

        Returns
        -------
        text : str
            Two ``tabular`` environments; needs no LaTeX package.
        """
        means_rows, pair_rows = self._rows(
            digits, lambda t: "\\textbf{" + t + "}", _format_p
        )
        header = self._pair_header()
        return "\n".join(
            [
                _latex_table(["model", *self.metrics], means_rows),
                "",
                _latex_table(header, pair_rows),
            ]
        )


def _format_p(p):
    if p == 0:
        return "0"
    return f"{p:.3g}" if p >= 1e-3 else f"{p:.1e}"


def _markdown_table(header, rows):
    def cell(text):
        return str(text).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |"]
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


_LATEX_SPECIAL = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
}


def _latex_escape(text):
    return "".join(_LATEX_SPECIAL.get(char, char) for char in str(text))


def _latex_table(header, rows):
    def cell(text):
        # keep the \textbf{} added for emphasis, escape everything else
        if text.startswith("\\textbf{") and text.endswith("}"):
            return "\\textbf{" + _latex_escape(text[8:-1]) + "}"
        return _latex_escape(text)

    lines = [
        "\\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        "\\hline",
        " & ".join(_latex_escape(h) for h in header) + " \\\\",
        "\\hline",
    ]
    lines += [" & ".join(cell(str(v)) for v in row) + " \\\\" for row in rows]
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# paired tests on per-unit differences
# ---------------------------------------------------------------------------


def _student(d, alpha):
    """Paired t-test on differences: (t, two-sided p, interval)."""
    n = d.shape[0]
    mean = float(d.mean())
    if n < 2:
        return np.nan, np.nan, (np.nan, np.nan)
    sd = float(d.std(ddof=1))
    if sd == 0:
        p = 1.0 if mean == 0 else 0.0
        return (0.0 if mean == 0 else math.copysign(np.inf, mean)), p, (mean, mean)
    se = sd / math.sqrt(n)
    t = mean / se
    p = float(2 * stats.t.sf(abs(t), n - 1))
    half = float(stats.t.ppf(1 - alpha / 2, n - 1)) * se
    return t, min(1.0, p), (mean - half, mean + half)


def _sign_flip(d, n_resamples, rng):
    """Two-sided sign-flip permutation test of the mean difference."""
    n = d.shape[0]
    observed = abs(float(d.mean()))
    tolerance = 1e-12 * max(1.0, observed)
    if 2**n <= n_resamples:  # every sign vector: the exact p-value
        signs = np.array(list(itertools.product([1.0, -1.0], repeat=n)))
        means = np.abs(signs @ d) / n
        return float(np.mean(means >= observed - tolerance))
    hits = 0
    step = max(1, (1 << 22) // max(1, n))
    for start in range(0, n_resamples, step):
        count = min(step, n_resamples - start)
        signs = rng.randint(0, 2, size=(count, n)) * 2.0 - 1.0
        hits += int(np.sum(np.abs(signs @ d) / n >= observed - tolerance))
    return (1 + hits) / (1 + n_resamples)


def _bootstrap_means(d, n_resamples, seed):
    """Means of ``n_resamples`` bootstrap resamples of ``d``, drawn in chunks."""
    rng = np.random.RandomState(seed)
    n = d.shape[0]
    out = np.empty(n_resamples)
    step = max(1, (1 << 22) // n)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        out[start:stop] = d[rng.randint(0, n, size=(stop - start, n))].mean(axis=1)
    return out


def _bootstrap_pvalue(observed, replicates):
    """Two-sided p-value of the centred bootstrap distribution, and interval."""
    tolerance = 1e-12 * max(1.0, abs(observed))
    hits = int(np.sum(np.abs(replicates - observed) >= abs(observed) - tolerance))
    return (1 + hits) / (1 + replicates.shape[0])


def _rank_auc(is_positive, score):
    """ROC AUC (ties one half) from midranks: the bootstrap's fast path."""
    n_pos = int(is_positive.sum())
    n_neg = is_positive.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        return np.nan
    ranks = stats.rankdata(score)
    return (ranks[is_positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _delong(y01, score_a, score_b, alpha):
    """DeLong's paired test of two AUCs on the same sample: (z, p, interval)."""
    pos, neg = y01 == 1, y01 == 0
    n_pos, n_neg = int(pos.sum()), int(neg.sum())
    components = []
    for s in (score_a, score_b):
        rank_all = stats.rankdata(s)
        # negatives below each positive (ties one half), positives above each
        # negative, from midranks in the pooled and in the own sample
        v10 = (rank_all[pos] - stats.rankdata(s[pos])) / n_neg
        v01 = 1 - (rank_all[neg] - stats.rankdata(s[neg])) / n_pos
        components.append((v10, v01))
    d10 = components[0][0] - components[1][0]
    d01 = components[0][1] - components[1][1]
    diff = float(d10.mean())
    var = (d10.var(ddof=1) if n_pos > 1 else 0.0) / n_pos + (
        d01.var(ddof=1) if n_neg > 1 else 0.0
    ) / n_neg
    if var <= 0:
        p = 1.0 if abs(diff) < 1e-15 else 0.0
        return (0.0 if p == 1.0 else math.copysign(np.inf, diff)), p, (diff, diff)
    se = math.sqrt(var)
    z = diff / se
    half = float(stats.norm.ppf(1 - alpha / 2)) * se
    return z, float(min(1.0, 2 * stats.norm.sf(abs(z)))), (diff - half, diff + half)


# ---------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------


def _check_models(scores_by_model, n_samples):
    if hasattr(scores_by_model, "items"):
        items = list(scores_by_model.items())
    else:
        raise ValueError(
            "scores_by_model must be a dict {model name: scores} (or a pandas "
            f"DataFrame with one column per model); got {type(scores_by_model)}."
        )
    if len(items) < 2:
        raise ValueError(
            f"scores_by_model must hold at least two models to compare; got "
            f"{len(items)}."
        )
    names = [str(name) for name, _ in items]
    if len(set(names)) != len(names):
        raise ValueError(f"model names must be distinct; got {names}.")
    scores = {
        str(name): check_scores(
            np.asarray(values), n_samples, input_name=f"scores of model {name!r}"
        )
        for name, values in items
    }
    return names, scores


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


def _pairs(names, baseline):
    if baseline is None:
        return list(itertools.combinations(names, 2))
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the models {names}.")
    return [(baseline, name) for name in names if name != baseline]


def compare(
    scores_by_model,
    y,
    qid=None,
    *,
    metrics=None,
    test="paired_bootstrap",
    baseline=None,
    correction="holm",
    alpha=0.05,
    n_resamples=9999,
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
    random_state=None,
):
    """Compare rankers on the same data: means, paired tests, Holm correction.

    For every metric and every pair of models ``(A, B)``, reports the mean of
    each model, the difference ``mean_A - mean_B``, an interval for it, and
    the p-value of a two-sided paired test of "no difference", adjusted for
    the multiple pairs by Holm's method.

    Read more in the :ref:`User Guide <compare_rankers>`.

    Parameters
    ----------
    scores_by_model : dict of str to array-like of shape (n_samples,)
        The scores of every model on the same rows (a pandas DataFrame with
        one column per model works too). At least two models.
    y : array-like of shape (n_samples,)
        Relevance labels: binary, or grades ``0..max_grade``.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. With ``qid``, the queries are the paired
        units: every metric is computed per query (as in
        :func:`evaluate_from_scores`) and the tests compare the per-query
        values of two models. None: the sample is one ranking (see
        ``test``).
    metrics : str, callable, list or dict, default=None
        Metric names or callables, as in :func:`evaluate`; None means
        ``["ndcg@10", "map", "mrr"]`` with ``qid`` and ``"auc"`` without.
    test : {"paired_bootstrap", "permutation", "student"}, \
default="paired_bootstrap"
        The paired test. With ``qid``, on the per-query differences
        ``d_q = m_A(q) - m_B(q)``:

        - ``"paired_bootstrap"``: ``n_resamples`` resamples of the queries;
          p-value ``(1 + #{|mean(d*) - mean(d)| >= |mean(d)|}) / (1 + B)``
          (the bootstrap distribution centred on the null), percentile
          interval of ``mean(d*)``;
        - ``"permutation"``: the sign-flip (randomization) test, which swaps
          the two models' values within random queries: exact over all
          ``2^n`` sign vectors when ``2^n <= n_resamples``, else
          ``n_resamples`` random ones; no interval;
        - ``"student"``: the paired t-test (:func:`scipy.stats.ttest_rel`)
          with its t interval.

        Without ``qid``: ``"paired_bootstrap"`` redraws the rows
        ``n_resamples`` times, stratified by label (the same draws for every
        model and metric) and recomputes the metrics, with the same p-value
        and interval on the replicate differences; ``"student"`` is DeLong's
        test of two correlated AUCs (normal, on the per-sample
        decomposition of the AUC), for the metric ``"auc"`` only;
        ``"permutation"`` needs ``qid``.
    baseline : str, default=None
        Compare every other model with this one; None compares all pairs.
    correction : {"holm", None}, default="holm"
        Adjustment of the p-values of the pairs of each metric (the family
        is one metric's comparisons).
    alpha : float, default=0.05
        Level of the ``significant`` flags, and ``1 - alpha`` the level of
        the intervals.
    n_resamples : int, default=9999
        Bootstrap resamples, or random sign vectors of the permutation test.
    max_grade, threshold, ties, empty, gain
        Options of the metrics, as in :func:`evaluate`.
    random_state : int, RandomState instance or None, default=None
        Seed of the resampling tests.

    Returns
    -------
    result : ComparisonResult
        ``means``, ``comparisons``; ``to_frame()`` (pandas),
        ``to_markdown()`` and ``to_latex()`` render the report.

    See Also
    --------
    evaluate_from_scores : Metrics of one model, with bootstrap intervals.
    holm_correction : The adjustment of the p-values.

    Notes
    -----
    A query on which a metric is undefined counts as ``empty`` (0 by
    default); with ``empty="skip"`` it is left out of that metric's
    comparisons (a pair uses the queries where both values exist).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.bridge import compare
    >>> rng = np.random.RandomState(0)
    >>> qid = np.repeat(np.arange(30), 10)
    >>> y = rng.randint(0, 3, 300)
    >>> scores = {"good": y + rng.normal(size=300), "noise": rng.normal(size=300)}
    >>> result = compare(scores, y, qid, metrics=["ndcg@5"], test="student")
    >>> row = result.comparisons[0]
    >>> row["model_a"], row["model_b"], bool(row["difference"] > 0)
    ('good', 'noise', True)
    >>> bool(row["pvalue_adjusted"] < 0.001), row["significant"]
    (True, True)
    """
    if test not in _TESTS:
        raise ValueError(f"test must be one of {_TESTS}; got {test!r}.")
    if correction not in _CORRECTIONS:
        raise ValueError(f"correction must be 'holm' or None; got {correction!r}.")
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, numbers.Real)
        or not 0 < alpha < 1
    ):
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}.")
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    y_arr = np.asarray(y)
    y_arr = _check_labels(y_arr, None)
    names, scores = _check_models(scores_by_model, y_arr.shape[0])
    pairs = _pairs(names, baseline)
    if metrics is None:
        metrics = ("auc",) if qid is None else ("ndcg@10", "map", "mrr")
    resolved = resolve_metrics(
        metrics,
        max_grade=max_grade,
        threshold=threshold,
        ties=ties,
        empty=empty,
        gain=gain,
    )
    rng = check_random_state(random_state)
    if qid is None:
        compared, means, used_test, n_units = _compare_whole_sample(
            resolved, names, scores, y_arr, pairs, test, n_resamples, alpha, rng
        )
    else:
        qid = check_qid(qid, y_arr.shape[0])
        groups = group_qid(qid)
        compared, means, used_test, n_units = _compare_queries(
            resolved,
            names,
            scores,
            y_arr,
            qid,
            groups,
            pairs,
            test,
            n_resamples,
            alpha,
            rng,
        )
    for metric in resolved:
        rows = [row for row in compared if row["metric"] == metric.name]
        p = np.array([row["pvalue"] for row in rows])
        finite = np.isfinite(p)
        adjusted = p.copy()
        if correction == "holm" and finite.any():
            adjusted[finite] = holm_correction(p[finite])
        for row, value in zip(rows, adjusted):
            row["pvalue_adjusted"] = float(value)
            row["significant"] = bool(value <= alpha)
    return ComparisonResult(
        models=names,
        metrics=[m.name for m in resolved],
        means=means,
        greater_is_better={m.name: m.greater_is_better for m in resolved},
        comparisons=compared,
        test=used_test,
        correction=correction,
        alpha=float(alpha),
        n_units=n_units,
        n_resamples=None if used_test in ("student", "delong") else n_resamples,
    )


def _row(metric, a, b, mean_a, mean_b, difference, interval, statistic, pvalue):
    return {
        "metric": metric,
        "model_a": a,
        "model_b": b,
        "mean_a": float(mean_a),
        "mean_b": float(mean_b),
        "difference": float(difference),
        "ci_low": float(interval[0]),
        "ci_high": float(interval[1]),
        "statistic": float(statistic),
        "pvalue": float(pvalue),
    }


def _compare_queries(
    resolved, names, scores, y, qid, groups, pairs, test, n_resamples, alpha, rng
):
    n_queries = groups.n_groups
    per_query = {
        metric.name: {
            model: metric.compute(y, scores[model], qid, groups=groups)[1]
            for model in names
        }
        for metric in resolved
    }
    # the same query resamples for every metric and pair (paired bootstrap):
    # every pair regenerates them from one seed, chunk by chunk
    bootstrap_seed = rng.randint(np.iinfo(np.int32).max)
    means, rows = {}, []
    for metric in resolved:
        values = per_query[metric.name]
        means[metric.name] = {
            model: float(np.nanmean(values[model]))
            if np.isfinite(values[model]).any()
            else np.nan
            for model in names
        }
        for a, b in pairs:
            both = np.isfinite(values[a]) & np.isfinite(values[b])
            d = values[a][both] - values[b][both]
            mean_a, mean_b = values[a][both].mean(), values[b][both].mean()
            if d.shape[0] == 0:
                rows.append(
                    _row(
                        metric.name,
                        a,
                        b,
                        np.nan,
                        np.nan,
                        np.nan,
                        (np.nan,) * 2,
                        np.nan,
                        np.nan,
                    )
                )
                continue
            observed = float(d.mean())
            if test == "student":
                t, p, interval = _student(d, alpha)
                rows.append(
                    _row(metric.name, a, b, mean_a, mean_b, observed, interval, t, p)
                )
            elif test == "permutation":
                p = _sign_flip(d, n_resamples, rng)
                rows.append(
                    _row(
                        metric.name,
                        a,
                        b,
                        mean_a,
                        mean_b,
                        observed,
                        (np.nan,) * 2,
                        observed,
                        p,
                    )
                )
            else:
                replicates = _bootstrap_means(d, n_resamples, bootstrap_seed)
                p = _bootstrap_pvalue(observed, replicates)
                interval = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
                rows.append(
                    _row(
                        metric.name,
                        a,
                        b,
                        mean_a,
                        mean_b,
                        observed,
                        interval,
                        observed,
                        p,
                    )
                )
    return rows, means, test, n_queries


def _compare_whole_sample(
    resolved, names, scores, y, pairs, test, n_resamples, alpha, rng
):
    values = {
        metric.name: {
            model: metric.compute(y, scores[model], None)[0] for model in names
        }
        for metric in resolved
    }
    means = {name: dict(per_model) for name, per_model in values.items()}
    rows = []
    if test == "permutation":
        raise ValueError(
            "test='permutation' needs paired units to permute: give qid (the "
            "queries), or use test='paired_bootstrap' (any metric) or "
            "test='student' (DeLong's test of 'auc') without qid."
        )
    if test == "student":
        for metric in resolved:
            if metric.bipartite is None or metric.name.lower() != "auc":
                raise ValueError(
                    f"test='student' without qid is DeLong's test of two AUCs: it "
                    f"applies to the metric 'auc' only, not {metric.name!r}. Give "
                    "qid for a paired t-test over queries, or use "
                    "test='paired_bootstrap'."
                )
        for metric in resolved:
            y01 = metric.labels(y)
            if np.unique(y01).shape[0] != 2:
                raise ValueError(
                    "DeLong's test needs both classes in y (after the relevance "
                    "threshold)."
                )
            for a, b in pairs:
                z, p, interval = _delong(y01, scores[a], scores[b], alpha)
                va, vb = values[metric.name][a], values[metric.name][b]
                rows.append(_row(metric.name, a, b, va, vb, va - vb, interval, z, p))
        return rows, means, "delong", y.shape[0]
    # paired bootstrap over rows, stratified by label, shared by all models
    strata = [np.flatnonzero(y == value) for value in np.unique(y)]
    replicates = {
        metric.name: {model: np.empty(n_resamples) for model in names}
        for metric in resolved
    }
    fast_auc = {
        metric.name: metric.labels(y) == 1
        for metric in resolved
        if metric.bipartite is roc_auc_score
    }
    for r in range(n_resamples):
        rows_r = np.concatenate(
            [s[rng.randint(0, s.shape[0], s.shape[0])] for s in strata]
        )
        for metric in resolved:
            for model in names:
                if metric.name in fast_auc:
                    value = _rank_auc(
                        fast_auc[metric.name][rows_r], scores[model][rows_r]
                    )
                else:
                    value = metric.compute(y[rows_r], scores[model][rows_r], None)[0]
                replicates[metric.name][model][r] = value
    for metric in resolved:
        for a, b in pairs:
            va, vb = values[metric.name][a], values[metric.name][b]
            diff = replicates[metric.name][a] - replicates[metric.name][b]
            observed = va - vb
            p = _bootstrap_pvalue(observed, diff)
            interval = np.quantile(diff, [alpha / 2, 1 - alpha / 2])
            rows.append(
                _row(metric.name, a, b, va, vb, observed, interval, observed, p)
            )
    return rows, means, "paired_bootstrap", y.shape[0]
