"""The evidence protocol shared by the accuracy benchmarks.

Three things every accuracy claim of treerank rests on (see the docs'
benchmark page, ``docs/user_guide/benchmarks.rst``):

1. **A stamp** on every results file: the commit that produced it (and whether
   the working tree had uncommitted changes), the date, the exact command and
   the versions of the libraries compared (:func:`stamp`, :func:`stamp_lines`).
2. **Paired statistics** per data set and across data sets:

   - per data set, a paired test of two models' AUCs on the same splits: the
     corrected resampled t-test over cross-validation folds
     (:func:`corrected_t_test`) or, for a single train/test split, DeLong's
     test of two correlated AUCs on the same test rows (:func:`delong_test`);
     a model *wins* on a data set when its AUC is higher and the test rejects
     equality at 5%, *loses* when lower and rejected, and *ties* otherwise;
   - across data sets (the independent units), the mean of the per-set
     differences with its standard error, the number of sets where each
     model is ahead, and the two-sided Wilcoxon signed-rank test, whose
     p-values over the peers of a table are Holm-corrected (:func:`holm`).
3. **Size bands** of training rows (:func:`size_band`) in which the
   comparisons are reported separately.
"""

import os
import platform
import shlex
import subprocess
import sys
from datetime import datetime, timezone

import numpy as np
from scipy import stats

__all__ = [
    "BANDS",
    "compare_paired",
    "corrected_t_test",
    "delong_test",
    "holm",
    "library_versions",
    "size_band",
    "stamp",
    "stamp_lines",
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BANDS = (
    ("< 5,000", 0, 5_000),
    ("5,000-50,000", 5_000, 50_000),
    ("> 50,000", 50_000, None),
)
"""Size bands of training rows: (label, lowest, highest) with highest excluded."""


def size_band(n_train):
    """The label of the band of :data:`BANDS` holding ``n_train`` training rows."""
    for label, low, high in BANDS:
        if n_train >= low and (high is None or n_train < high):
            return label
    raise ValueError(f"n_train must be >= 0; got {n_train}")


# -- stamps --------------------------------------------------------------------


def _git(*args):
    try:
        out = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def library_versions():
    """Versions of the libraries an accuracy benchmark compares, as text."""
    names = ["numpy", "scikit-learn", "lightgbm", "xgboost", "catboost", "treerank"]
    from importlib import metadata

    parts = [f"Python {platform.python_version()}"]
    for name in names:
        distribution = "scikit-treerank" if name == "treerank" else name
        try:
            parts.append(f"{name} {metadata.version(distribution)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(parts)


def stamp(argv=None):
    """The commit, date, command and environment of this run.

    ``commit`` is the checked-out commit; ``dirty`` tells whether tracked files
    other than the results files (``benchmarks/results/``, the outputs of
    earlier runs) differed from it when the run started (the numbers are then
    not the commit's: a results file meant to be quoted must come from a clean
    tree).
    """
    argv = sys.argv if argv is None else argv
    script = os.path.relpath(os.path.abspath(argv[0]), ROOT) if argv else "?"
    # the results files are the benchmarks' outputs, not code they measure: a
    # run that follows another one in the same checkout is still clean
    status = _git(
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        ".",
        ":(exclude)benchmarks/results",
    )
    return {
        "commit": _git("rev-parse", "HEAD") or "unknown",
        "dirty": bool(status),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": shlex.join(["python", script, *argv[1:]]),
        "environment": library_versions(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }


def stamp_lines(info):
    """The markdown lines a results file opens with (after its title)."""
    commit = info["commit"][:12]
    dirty = " with uncommitted changes" if info["dirty"] else ""
    return [
        f"Produced by commit `{commit}`{dirty} on {info['date']} with",
        "",
        f"    {info['command']}",
        "",
        f"{info['environment']}; {info['machine']}.",
    ]


# -- statistics ----------------------------------------------------------------


def corrected_t_test(differences, n_train, n_test):
    """Two-sided p-value of the corrected resampled t-test.

    Nadeau and Bengio's correction (in the form of Bouckaert and Frank, 2004):
    the folds of (repeated) cross-validation share training rows, so their
    differences are correlated; the variance of the mean of the J fold
    differences is ``(1 / J + n_test / n_train) * s**2`` rather than
    ``s**2 / J``, with J - 1 degrees of freedom.

    Examples
    --------
    >>> round(corrected_t_test([0.01, 0.02, 0.015, 0.01, 0.02], 800, 200), 4)
    0.0111
    """
    d = np.asarray(differences, dtype=float)
    J = d.size
    if J < 2 or np.ptp(d) == 0:  # no variance to test against
        return 1.0 if d.size == 0 or np.all(d == 0) else 0.0
    t = d.mean() / np.sqrt((1 / J + n_test / n_train) * d.var(ddof=1))
    return float(2 * stats.t.sf(abs(t), df=J - 1))


def _placements(values, y):
    """DeLong's structural components: V10 (positives) and V01 (negatives)."""
    pos, neg = values[y == 1], values[y == 0]
    both = np.concatenate([pos, neg])
    rank_all = stats.rankdata(both)
    rank_pos = stats.rankdata(pos)
    rank_neg = stats.rankdata(neg)
    m, n = pos.size, neg.size
    v10 = (rank_all[:m] - rank_pos) / n  # share of negatives below each positive
    v01 = 1.0 - (rank_all[m:] - rank_neg) / m  # share of positives above each negative
    return v10, v01


def delong_test(y, scores_a, scores_b):
    """DeLong's test of two correlated AUCs on the same rows.

    Returns ``(auc_a - auc_b, standard error, two-sided p-value)``. The
    variance of the difference follows from the placement values of each
    score (DeLong, DeLong and Clarke-Pearson, 1988; computed by midranks as
    in Sun and Xu, 2014); ties count one half, as in the AUC.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2000)
    >>> good, bad = y + rng.normal(size=2000), y + 3 * rng.normal(size=2000)
    >>> diff, se, p = delong_test(y, good, bad)
    >>> bool(diff > 0 and p < 1e-6)
    True
    """
    y = np.asarray(y).astype(int)
    a10, a01 = _placements(np.asarray(scores_a, float), y)
    b10, b01 = _placements(np.asarray(scores_b, float), y)
    diff = a10.mean() - b10.mean()
    s10 = np.cov(np.vstack([a10, b10]))
    s01 = np.cov(np.vstack([a01, b01]))
    var = (s10[0, 0] + s10[1, 1] - 2 * s10[0, 1]) / a10.size + (
        s01[0, 0] + s01[1, 1] - 2 * s01[0, 1]
    ) / a01.size
    if var <= 0:
        return float(diff), 0.0, 1.0 if diff == 0 else 0.0
    se = float(np.sqrt(var))
    return float(diff), se, float(2 * stats.norm.sf(abs(diff) / se))


def holm(pvalues):
    """Holm's step-down adjustment of a family of p-values (same order).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty_like(p)
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, (p.size - position) * p[index])
        adjusted[index] = min(1.0, running)
    return [round(float(v), 12) for v in adjusted]


def compare_paired(ours, theirs, per_set_p, alpha=0.05):
    """Across data sets: ``ours - theirs`` summarized.

    Parameters
    ----------
    ours, theirs : array-like of shape (n_sets,)
        Mean AUC of each model on each data set.
    per_set_p : array-like of shape (n_sets,)
        The per-set paired test's p-value (corrected t-test or DeLong).

    Returns
    -------
    dict
        ``mean`` difference, its standard error ``se`` (standard deviation of
        the per-set differences over the square root of their number),
        ``ahead`` (sets where ours is higher), ``n``, ``wins``/``ties``/
        ``losses`` (per-set tests at ``alpha``) and ``wilcoxon_p`` (two-sided
        signed-rank test of the differences; 1.0 when all are zero).
    """
    d = np.asarray(ours, float) - np.asarray(theirs, float)
    p = np.asarray(per_set_p, float)
    significant = p < alpha
    n = d.size
    se = float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    wilcoxon_p = float(stats.wilcoxon(d).pvalue) if np.any(d != 0) and n > 1 else 1.0
    return {
        "mean": float(d.mean()) if n else float("nan"),
        "se": se,
        "ahead": int(np.sum(d > 0)),
        "n": int(n),
        "wins": int(np.sum(significant & (d > 0))),
        "ties": int(np.sum(~significant | (d == 0))),
        "losses": int(np.sum(significant & (d < 0))),
        "wilcoxon_p": wilcoxon_p,
    }
