"""Reason codes and explanation plots (issue 28)."""

import subprocess
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest

from treerank import LinearLeafRank, RankingForest, TreeRank
from treerank.inspection import Explanation, reason_codes, shapley_values
from treerank.inspection._conditions import row_conditions
from treerank.inspection._reason_codes import top_reasons
from treerank.inspection._tree_sum import model_router
from treerank.plotting import plot_contribution_summary, plot_waterfall

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def credit():
    rng = np.random.RandomState(0)
    n = 600
    frame = pd.DataFrame(
        {
            "debt_ratio": rng.rand(n),
            "age": rng.randint(18, 80, n).astype(float),
            "purpose": pd.Categorical(rng.choice(["car", "study", "home", "other"], n)),
            "income": rng.normal(50, 10, n),
        }
    )
    frame.loc[rng.rand(n) < 0.1, "income"] = np.nan
    good = (frame.debt_ratio < 0.5) ^ (rng.rand(n) < 0.2) | (frame.purpose == "home")
    return frame, good.astype(int)


def test_top_reasons_order_and_padding():
    values = np.array([[0.5, -0.2, -0.7, 0.0], [0.1, 0.2, 0.0, 0.3]])
    np.testing.assert_array_equal(top_reasons(values, 3), [[2, 1, -1], [-1, -1, -1]])
    np.testing.assert_array_equal(
        top_reasons(values, 2, direction="up"), [[0, -1], [3, 1]]
    )
    np.testing.assert_array_equal(top_reasons(values, 6)[:, 4:], -1)  # > n_features
    ties = np.array([[-1.0, -1.0, -2.0]])
    np.testing.assert_array_equal(top_reasons(ties, 3), [[2, 0, 1]])
    with pytest.raises(ValueError, match="top must be a positive integer"):
        top_reasons(values, 0)
    with pytest.raises(ValueError, match="direction must be"):
        top_reasons(values, 1, direction="left")


@pytest.mark.parametrize(
    ("aggregation", "algorithm"),
    [(None, "auto"), ("mean", "auto"), ("median", "auto"), ("median", "permutation")],
)
def test_reason_codes_are_the_most_negative_contributions(
    credit, aggregation, algorithm
):
    frame, y = credit
    if aggregation is None:
        model = TreeRank(random_state=0)
    else:
        model = RankingForest(n_estimators=8, aggregation=aggregation, random_state=0)
    model.fit(frame, y)
    rows, background = frame.iloc[10:30], frame.iloc[300:360]
    explanation = shapley_values(
        model, rows, background=background, algorithm=algorithm, random_state=0
    )
    reasons = reason_codes(model, rows, explanation=explanation, top=2)
    assert set(reasons["row"]) <= set(rows.index)
    for position, label in enumerate(rows.index):
        mine = reasons[reasons["row"] == label]
        negative = np.sort(
            explanation.values[position][explanation.values[position] < 0]
        )
        np.testing.assert_allclose(mine["contribution"], negative[:2])
        assert list(mine["reason"]) == list(range(1, len(mine) + 1))
        for _, line in mine.iterrows():
            k = explanation.feature_names.index(line["feature"])
            assert line["value"] == explanation.display_value(position, k)
    if algorithm == "permutation":
        assert "std_error" in reasons.columns
        assert np.all(reasons["std_error"] > 0)
    else:
        assert "std_error" not in reasons.columns
    up = reason_codes(model, rows, explanation=explanation, top=1, direction="up")
    assert np.all(up["contribution"] > 0)


def _satisfies(rule, name, value):
    """Whether a numeric value satisfies a rule text on feature ``name``.

    A rule is an interval, never an equality; an empty rule (the row's paths
    never test the feature) is no condition.
    """
    assert " = " not in rule, rule
    if not rule:
        return True
    if rule.endswith("is missing"):
        return np.isnan(value)
    if " < " in rule and " <= " in rule:
        low, rest = rule.split(" < ")
        high = rest.split(" <= ")[1]
        return float(low) < value <= float(high)
    if " > " in rule:
        return value > float(rule.split(" > ")[1])
    assert " <= " in rule, rule
    return value <= float(rule.split(" <= ")[1])


@pytest.mark.parametrize("aggregation", [None, "mean"])
def test_rules_are_met_and_keep_the_score(credit, aggregation):
    frame, y = credit
    if aggregation is None:
        model = TreeRank(random_state=0)
    else:
        model = RankingForest(n_estimators=8, aggregation=aggregation, random_state=0)
    model.fit(frame, y)
    rows = frame.iloc[:40]
    reasons = reason_codes(model, rows, background=frame.iloc[300:340], top=4)
    explanation = shapley_values(model, rows, background=frame.iloc[300:340])
    conditions = row_conditions(
        model_router(model),
        explanation.data,
        explanation.feature_names,
        explanation.category_labels,
    )
    for _, line in reasons.iterrows():
        row = frame.loc[[line["row"]]]
        name, rule = line["feature"], line["rule"]
        if name == "purpose":
            if rule.startswith("purpose in {"):
                members = rule[len("purpose in {") : -1].split(", ")
            elif rule:
                members = [rule.split(" = ")[1]]
            else:  # never tested on the row's paths
                members = [row[name].iloc[0]]
            assert row[name].iloc[0] in members
            continue
        assert _satisfies(rule, name, float(row[name].iloc[0])), rule
    # the score does not move while a value stays inside its interval
    k = explanation.feature_names.index("debt_ratio")
    for i in range(len(rows)):
        low, high = conditions.lower[i, k], conditions.upper[i, k]
        row = rows.iloc[[i]]
        for inside in (high, np.nextafter(low, np.inf)):
            if np.isfinite(inside):
                moved = row.copy()
                moved["debt_ratio"] = inside
                np.testing.assert_array_equal(
                    model.decision_function(moved), model.decision_function(row)
                )


def test_rules_of_categories_and_missing_values(credit):
    frame, y = credit
    model = TreeRank(random_state=0).fit(frame, y)
    rows = frame[frame.income.isna()].iloc[:30]
    reasons = reason_codes(
        model, rows, background=frame.iloc[:50], top=4, direction="down"
    )
    income = reasons[reasons.feature == "income"]
    # "is missing" where the row's paths test income, no condition elsewhere
    assert income["rule"].isin(["income is missing", ""]).all()
    assert (income["rule"] == "income is missing").any()
    assert (income["value"] == "missing").all()
    up = reason_codes(model, rows, background=frame.iloc[:50], top=4, direction="up")
    purposes = pd.concat([reasons, up])
    purposes = purposes[purposes.feature == "purpose"]
    assert len(purposes) > 0
    assert (purposes["rule"].str.startswith("purpose") | (purposes["rule"] == "")).all()
    assert purposes["rule"].str.startswith("purpose").any()


def test_reason_codes_of_other_splitters_have_no_rule(credit):
    """Oblique rules are no interval on one feature: no condition is written."""
    frame, y = credit
    X = frame[["debt_ratio", "age"]].to_numpy()
    model = TreeRank(leafrank=LinearLeafRank(), max_depth=2, random_state=0)
    model.fit(X, y)
    reasons = reason_codes(model, X[:5], background=X[100:120], random_state=0)
    assert len(reasons) and (reasons["rule"] == "").all()
    assert (reasons["value"] != "").all()


def test_a_feature_the_path_never_tests_has_no_condition(credit):
    """Issue 39 item 8: never ``unemp = 10.6`` for an untested number."""
    frame, y = credit
    model = TreeRank(max_depth=1, random_state=0).fit(frame, y)  # one rule
    rows = frame.iloc[:60]
    explanation = shapley_values(model, rows, background=frame.iloc[300:400])
    conditions = row_conditions(
        model_router(model),
        explanation.data,
        explanation.feature_names,
        explanation.category_labels,
    )
    untested = 0
    for i in range(len(rows)):
        for k in range(len(explanation.feature_names)):
            rule = conditions.rule(i, k)
            numeric = explanation.category_labels is None or (
                explanation.category_labels[k] is None
            )
            if numeric:
                assert " = " not in rule
            tested = (
                np.isfinite(conditions.lower[i, k])
                or np.isfinite(conditions.upper[i, k])
                or conditions.missing[i, k]
            )
            if numeric and not tested:
                assert rule == ""
                untested += 1
    assert untested > 0


def test_reason_codes_errors(credit):
    frame, y = credit
    model = TreeRank(random_state=0).fit(frame, y)
    explanation = shapley_values(model, frame.iloc[:3], background=frame.iloc[:9])
    with pytest.raises(ValueError, match="explanation has 3 rows but X has 4"):
        reason_codes(model, frame.iloc[:4], explanation=explanation)
    with pytest.raises(ValueError, match="top must be"):
        reason_codes(model, frame.iloc[:3], explanation=explanation, top=-1)
    with pytest.raises(TypeError, match="must be a fitted"):
        reason_codes(object(), frame.iloc[:3], explanation=explanation)


# ----------------------------------------------------------------------
# plots
# ----------------------------------------------------------------------
def _explanation(values, base=1.0, names=None):
    values = np.atleast_2d(np.asarray(values, dtype=float))
    names = names or [f"f{k}" for k in range(values.shape[1])]
    data = np.arange(values.size, dtype=float).reshape(values.shape)
    scores = base + values.sum(axis=1)
    return Explanation(values, base, scores, data, names, "interventional", "tree")


def test_waterfall_builds_the_score():
    import matplotlib.pyplot as plt

    explanation = _explanation([[0.5, -0.25, 0.0, 2.0]])
    ax = plot_waterfall(explanation)
    bars = ax.patches
    assert len(bars) == 3  # the zero contribution is left out
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["f3 = 3", "f0 = 0", "f1 = 1"]  # largest first
    ends = [bar.get_x() + bar.get_width() for bar in bars]
    assert ends[-1] == pytest.approx(explanation.scores[0])
    assert bars[0].get_x() == pytest.approx(explanation.base_value)
    plt.close("all")


def test_waterfall_gathers_the_small_contributions():
    import matplotlib.pyplot as plt

    explanation = _explanation([np.arange(1.0, 8.0)])
    ax = plot_waterfall(explanation, max_display=3)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == "5 other features"
    ends = [bar.get_x() + bar.get_width() for bar in ax.patches]
    assert ends[-1] == pytest.approx(explanation.scores[0])
    with pytest.raises(ValueError, match="row must be an integer"):
        plot_waterfall(explanation, row=1)
    with pytest.raises(ValueError, match="max_display must be"):
        plot_waterfall(explanation, max_display=0)
    plt.close("all")


def test_contribution_summary_sorts_features_by_importance(credit):
    import matplotlib.pyplot as plt

    frame, y = credit
    model = RankingForest(n_estimators=5, aggregation="mean", random_state=0)
    model.fit(frame, y)
    explanation = shapley_values(model, frame.iloc[:80], background=frame.iloc[200:230])
    ax = plot_contribution_summary(explanation, max_display=3)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    importance = explanation.mean_abs()
    expected = [explanation.feature_names[k] for k in np.argsort(-importance)[:3]]
    assert labels == expected
    assert len(ax.collections) == 3
    offsets = ax.collections[0].get_offsets()
    np.testing.assert_allclose(
        np.sort(offsets[:, 0]),
        np.sort(explanation.values[:, explanation.feature_names.index(labels[0])]),
    )
    ax = plot_waterfall(explanation, row=5)
    assert ax.get_title()
    plt.close("all")


def test_importing_inspection_does_not_import_matplotlib():
    code = (
        "import sys, treerank.inspection, treerank.plotting; "
        "print('matplotlib' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
