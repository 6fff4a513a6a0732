"""bridge.compare: paired tests between rankers, Holm correction, report tables."""

import itertools

import numpy as np
import pytest
from scipy import stats

from treerank.bridge import compare, evaluate_from_scores, holm_correction
from treerank.metrics import roc_auc_score


def _data(n_queries=40, size=8, seed=0):
    rng = np.random.RandomState(seed)
    qid = np.repeat(np.arange(n_queries), size)
    y = rng.randint(0, 3, qid.shape[0])
    scores = {
        "strong": y + rng.normal(scale=1.0, size=y.shape[0]),
        "weak": y + rng.normal(scale=2.5, size=y.shape[0]),
        "noise": rng.normal(size=y.shape[0]),
    }
    return scores, y, qid


def _per_query(scores, y, qid, metric, empty=0.0):
    result = evaluate_from_scores(
        y, scores, qid, metrics=[metric], n_bootstrap=0, empty=empty
    )
    return result.per_query[metric]


@pytest.mark.parametrize("metric", ["ndcg@5", "map", "auc"])
def test_student_matches_scipy_ttest_rel(metric):
    scores, y, qid = _data()
    result = compare(scores, y, qid, metrics=[metric], test="student", correction=None)
    assert result.test == "student" and result.n_units == 40
    for row in result.comparisons:
        a = _per_query(scores[row["model_a"]], y, qid, metric)
        b = _per_query(scores[row["model_b"]], y, qid, metric)
        expected = stats.ttest_rel(a, b)
        assert row["statistic"] == pytest.approx(expected.statistic)
        assert row["pvalue"] == pytest.approx(expected.pvalue)
        assert row["pvalue_adjusted"] == row["pvalue"]
        interval = expected.confidence_interval(0.95)
        assert row["ci_low"] == pytest.approx(interval.low)
        assert row["ci_high"] == pytest.approx(interval.high)
        assert row["difference"] == pytest.approx(a.mean() - b.mean())
        assert result.means[metric][row["model_a"]] == pytest.approx(a.mean())


def _mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def test_exact_permutation_matches_scipy_permutation_test():
    scores, y, qid = _data(n_queries=9)  # 2^9 = 512 sign vectors: exact
    result = compare(
        scores,
        y,
        qid,
        metrics=["ndcg"],
        test="permutation",
        n_resamples=1000,
        correction=None,
    )
    for row in result.comparisons:
        a = _per_query(scores[row["model_a"]], y, qid, "ndcg")
        b = _per_query(scores[row["model_b"]], y, qid, "ndcg")
        expected = stats.permutation_test(
            (a, b),
            _mean_difference,
            permutation_type="samples",
            vectorized=True,
            n_resamples=np.inf,
            alternative="two-sided",
        )
        assert row["pvalue"] == pytest.approx(expected.pvalue, abs=1e-12)


def test_random_permutation_agrees_with_scipy_up_to_monte_carlo_error():
    scores, y, qid = _data(n_queries=30, seed=1)
    scores = {"a": scores["strong"], "b": scores["weak"]}
    result = compare(
        scores,
        y,
        qid,
        metrics=["ndcg@5"],
        test="permutation",
        n_resamples=20000,
        random_state=0,
    )
    a = _per_query(scores["a"], y, qid, "ndcg@5")
    b = _per_query(scores["b"], y, qid, "ndcg@5")
    expected = stats.permutation_test(
        (a, b),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=20000,
        alternative="two-sided",
        random_state=1,
    ).pvalue
    p = result.comparisons[0]["pvalue"]
    assert p == pytest.approx(expected, abs=5 * np.sqrt(expected / 20000) + 2e-4)
    assert np.isnan(result.comparisons[0]["ci_low"])


def test_paired_bootstrap_agrees_with_the_t_test_on_many_queries():
    rng = np.random.RandomState(2)
    n = 400
    qid = np.repeat(np.arange(n), 6)
    y = rng.randint(0, 2, qid.shape[0])
    y[::6] = 1
    y[1::6] = 0
    base = y + rng.normal(scale=1.5, size=y.shape[0])
    scores = {"a": base + 0.15 * y, "b": base}
    boot = compare(scores, y, qid, metrics=["auc"], n_resamples=4000, random_state=0)
    student = compare(scores, y, qid, metrics=["auc"], test="student")
    rb, rs = boot.comparisons[0], student.comparisons[0]
    assert rb["difference"] == pytest.approx(rs["difference"])
    assert rb["pvalue"] == pytest.approx(rs["pvalue"], abs=0.03)
    assert rb["ci_low"] == pytest.approx(rs["ci_low"], abs=0.004)
    assert rb["ci_high"] == pytest.approx(rs["ci_high"], abs=0.004)
    again = compare(scores, y, qid, metrics=["auc"], n_resamples=4000, random_state=0)
    assert again.comparisons[0]["pvalue"] == rb["pvalue"]


def _holm_direct(p, alpha):
    """Holm's sequential rejection, as written in the paper."""
    order = np.argsort(p)
    m = len(p)
    rejected = np.zeros(m, dtype=bool)
    for k, i in enumerate(order):
        if p[i] <= alpha / (m - k):
            rejected[i] = True
        else:
            break
    return rejected


def test_holm_correction_matches_the_sequential_procedure():
    rng = np.random.RandomState(3)
    for _ in range(300):
        m = int(rng.randint(1, 12))
        p = rng.uniform(0, 0.2, m) ** rng.choice([1, 2])
        if rng.rand() < 0.3:
            p[: m // 2] = p[0]  # ties
        adjusted = holm_correction(p)
        assert np.all(adjusted >= p - 1e-15) and np.all(adjusted <= 1)
        for alpha in [0.01, 0.05, 0.1]:
            np.testing.assert_array_equal(adjusted <= alpha, _holm_direct(p, alpha))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm_correction([0.5, 1.5])


def test_holm_is_applied_per_metric():
    scores, y, qid = _data()
    result = compare(scores, y, qid, metrics=["ndcg", "mrr"], test="student")
    for metric in ["ndcg", "mrr"]:
        rows = [r for r in result.comparisons if r["metric"] == metric]
        assert len(rows) == 3
        np.testing.assert_allclose(
            [r["pvalue_adjusted"] for r in rows],
            holm_correction([r["pvalue"] for r in rows]),
        )
        for r in rows:
            assert r["significant"] == (r["pvalue_adjusted"] <= 0.05)


def _delong_direct(y, a, b):
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)

    def psi(s):
        diff = s[pos][:, None] - s[neg][None, :]
        return (diff > 0) + 0.5 * (diff == 0)

    ka, kb = psi(a), psi(b)
    v10 = ka.mean(axis=1) - kb.mean(axis=1)
    v01 = ka.mean(axis=0) - kb.mean(axis=0)
    var = v10.var(ddof=1) / pos.shape[0] + v01.var(ddof=1) / neg.shape[0]
    z = (ka.mean() - kb.mean()) / np.sqrt(var)
    return z, 2 * stats.norm.sf(abs(z))


def test_delong_without_qid_matches_a_direct_implementation():
    rng = np.random.RandomState(4)
    y = rng.randint(0, 2, 150)
    a = np.round(y + rng.normal(size=150), 1)  # ties
    b = np.round(y + rng.normal(scale=2, size=150), 1)
    result = compare({"a": a, "b": b}, y, metrics="auc", test="student")
    row = result.comparisons[0]
    z, p = _delong_direct(y, a, b)
    assert result.test == "delong" and result.n_units == 150
    assert row["statistic"] == pytest.approx(z)
    assert row["pvalue"] == pytest.approx(p)
    assert row["mean_a"] == pytest.approx(roc_auc_score(y, a))
    same = compare({"a": a, "b": a.copy()}, y, test="student")
    assert same.comparisons[0]["pvalue"] == 1.0


def test_paired_bootstrap_without_qid():
    rng = np.random.RandomState(5)
    y = rng.randint(0, 2, 300)
    scores = {"good": y + rng.normal(size=300), "bad": rng.normal(size=300)}
    result = compare(
        scores, y, metrics=["auc", "pauc@0.2"], n_resamples=100, random_state=0
    )
    assert result.test == "paired_bootstrap" and result.n_resamples == 100
    for row in result.comparisons:
        assert row["pvalue"] == pytest.approx(1 / 101)
        assert row["ci_low"] < row["difference"] < row["ci_high"]
    null = compare(
        {"a": scores["bad"], "b": -scores["bad"][::-1]},
        y,
        n_resamples=300,
        random_state=0,
    )
    assert null.comparisons[0]["pvalue"] > 0.05


def test_baseline_dataframe_and_tables():
    pd = pytest.importorskip("pandas")
    scores, y, qid = _data()
    frame = pd.DataFrame(
        {"model_1": scores["strong"], "b&w": scores["weak"], "noise": scores["noise"]}
    )
    result = compare(
        frame, y, qid, metrics=["ndcg@5", "map"], test="student", baseline="model_1"
    )
    assert [(r["model_a"], r["model_b"]) for r in result.comparisons] == [
        ("model_1", "b&w"),
        ("model_1", "noise"),
    ] * 2
    table = result.to_frame()
    assert list(table.columns[:3]) == ["metric", "model_a", "model_b"]
    assert table.shape == (4, 12)
    markdown = result.to_markdown()
    lines = markdown.splitlines()
    assert lines[0] == "| model | ndcg@5 | map |"
    assert sum(line.startswith("| ndcg@5 |") for line in lines) == 2
    assert "**" in markdown  # the best means in bold
    latex = result.to_latex()
    assert latex.count("\\begin{tabular}") == 2
    assert "model\\_1" in latex and "b\\&w" in latex and "95 \\% CI" in latex
    assert "ComparisonResult(3 models, 2 metrics" in repr(result)


def test_markdown_renders_as_rest_tables():
    docutils_core = pytest.importorskip("docutils.core")
    import pathlib
    import sys

    ext = pathlib.Path(__file__).resolve().parents[1] / "docs" / "_ext"
    sys.path.insert(0, str(ext))
    try:
        from mdtables import markdown_to_rst
    finally:
        sys.path.remove(str(ext))
    scores, y, qid = _data()
    text = compare(scores, y, qid, test="student").to_markdown()
    tree = docutils_core.publish_doctree(
        "Page\n====\n\n" + markdown_to_rst(text, top_level=1),
        settings_overrides={"report_level": 5},
    )
    assert len(list(tree.findall(lambda n: n.tagname == "table"))) == 2


def test_skipped_queries_are_left_out_of_the_pairs():
    y = np.array([1, 0, 0, 0, 1, 0, 1, 0])
    qid = np.array([1, 1, 2, 2, 3, 3, 4, 4])  # query 2 has no relevant document
    a = np.array([0.9, 0.1, 0.5, 0.4, 0.8, 0.2, 0.3, 0.7])
    b = a[::-1].copy()
    result = compare(
        {"a": a, "b": b}, y, qid, metrics=["map"], empty="skip", test="student"
    )
    per_a = _per_query(a, y, qid, "map", empty="skip")
    per_b = _per_query(b, y, qid, "map", empty="skip")
    assert np.isnan(per_a[1])
    assert result.means["map"]["a"] == pytest.approx(np.nanmean(per_a))
    kept = ~np.isnan(per_a)
    expected = stats.ttest_rel(per_a[kept], per_b[kept])
    assert result.comparisons[0]["pvalue"] == pytest.approx(expected.pvalue)


@pytest.mark.parametrize(
    ("kwargs", "qid", "match"),
    [
        ({"test": "wilcoxon"}, True, "test must be one of"),
        ({"test": "permutation"}, False, "needs paired units"),
        ({"test": "student", "metrics": ["map"]}, False, "DeLong"),
        ({"baseline": "zzz"}, True, "baseline 'zzz'"),
        ({"correction": "bonferroni"}, True, "correction"),
        ({"alpha": 1.5}, True, "alpha"),
        ({"n_resamples": 0}, True, "n_resamples"),
    ],
)
def test_errors(kwargs, qid, match):
    scores, y, q = _data(n_queries=5)
    with pytest.raises(ValueError, match=match):
        compare(scores, y, q if qid else None, **kwargs)


def test_input_errors():
    scores, y, qid = _data(n_queries=5)
    with pytest.raises(ValueError, match="at least two models"):
        compare({"a": scores["strong"]}, y, qid)
    with pytest.raises(ValueError, match="dict"):
        compare([scores["strong"], scores["weak"]], y, qid)
    with pytest.raises(ValueError, match="model 'b'"):
        compare({"a": scores["strong"], "b": scores["weak"][:-1]}, y, qid)


def test_exact_sign_flip_enumeration_is_the_definition():
    d = np.array([0.3, -0.1, 0.2, 0.05, 0.0])
    from treerank.bridge._compare import _sign_flip

    means = [
        abs(np.mean(np.array(s) * d)) for s in itertools.product([1, -1], repeat=5)
    ]
    expected = np.mean(np.array(means) >= abs(d.mean()) - 1e-12)
    assert _sign_flip(d, 100, np.random.RandomState(0)) == pytest.approx(expected)
