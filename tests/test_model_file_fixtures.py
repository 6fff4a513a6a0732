"""Model files written by an earlier version load and predict identically.

The files of ``tests/data/model_files`` were written by the code of commit
858b3ab, before the model-file modules were split by concept (issue 27), with
the predictions of the fitted models beside them (``generate.py`` there). They
are never regenerated: a later change of the format, or of a decoder, that
loses one of them fails here.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import Pipeline

from treerank import RankingForest, TreeRank
from treerank.model_io import load_model

FIXTURES = Path(__file__).resolve().parent / "data" / "model_files"

KINDS = {
    "treerank": TreeRank,
    "treerank_pruned_cv": TreeRank,
    "treerank_linear": TreeRank,
    "treerank_classifier": TreeRank,
    "treerank_mixed": TreeRank,
    "treerank_graded": TreeRank,
    "forest_median": RankingForest,
    "forest_median_training_data": RankingForest,
    "forest_mean": RankingForest,
    "forest_borda": RankingForest,
    "forest_linear": RankingForest,
    "forest_mixed": RankingForest,
    "forest_categorical": RankingForest,
    "forest_graded_stacked": RankingForest,
    "forest_graded_thresholds": RankingForest,
    "pipeline_scaler_forest": Pipeline,
    "pipeline_columns_treerank": Pipeline,
}


def test_every_fixture_is_tested():
    assert sorted(path.stem for path in FIXTURES.glob("*.trk")) == sorted(KINDS)
    assert sorted(path.stem for path in FIXTURES.glob("*.npz")) == sorted(KINDS)


def _inputs(expected):
    if "X" in expected:
        return expected["X"]
    columns = {
        key[len("X__") :]: expected[key] for key in expected if key.startswith("X__")
    }
    return pd.DataFrame(
        {
            name: values.astype(object) if values.dtype.kind == "U" else values
            for name, values in columns.items()
        }
    )


@pytest.mark.parametrize("name", sorted(KINDS))
def test_an_older_file_loads_and_predicts_identically(name):
    model, metadata = load_model(FIXTURES / f"{name}.trk", with_metadata=True)
    assert type(model) is KINDS[name]
    assert metadata == {"fixture": name}
    with np.load(FIXTURES / f"{name}.npz", allow_pickle=False) as stored:
        expected = dict(stored)
    X = _inputs(expected)
    outputs = ["decision_function", "predict_proba", "predict"]
    if KINDS[name] is not Pipeline:
        outputs.append("apply")
    assert sorted(key for key in expected if not key.startswith("X")) == sorted(outputs)
    for what in outputs:
        np.testing.assert_array_equal(
            getattr(model, what)(X), expected[what], err_msg=f"{name}.{what}"
        )


def test_graded_fixtures_keep_their_grades():
    # the graded files hold four grades: predict_proba has a column per grade
    for name in (
        "treerank_graded",
        "forest_graded_stacked",
        "forest_graded_thresholds",
    ):
        model = load_model(FIXTURES / f"{name}.trk")
        np.testing.assert_array_equal(model.classes_, [0, 1, 2, 3])
        with np.load(FIXTURES / f"{name}.npz", allow_pickle=False) as stored:
            assert stored["predict_proba"].shape == (60, 4)
