"""The README's Python examples run as written, each block on its own."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_opens_with_the_two_commands():
    lines = README.read_text().splitlines()
    start = lines.index("```") + 1
    assert lines[start].startswith("pip install . && treerank demo")
    assert lines[start + 1].startswith('pip install ".[test]" && pytest')


def test_readme_installs_from_source():
    text = README.read_text()
    assert "no release on PyPI yet" in text
    assert "pip install scikit-treerank" not in text


def test_readme_has_three_python_blocks():
    assert len(_python_blocks()) == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    ("index", "expected", "written"),
    [
        (0, ["test AUC", "5-fold AUC"], None),
        (1, ["forest test AUC", "ndcg@10"], "forest.trk"),
        (2, ["5-fold AUC"], "penguins.trk"),
    ],
)
def test_readme_block_runs_on_its_own(
    tmp_path, monkeypatch, capsys, index, expected, written
):
    """Every block in a fresh namespace and folder: none relies on another."""
    monkeypatch.chdir(tmp_path)
    block = _python_blocks()[index]
    exec(compile(block, f"{README}[block {index + 1}]", "exec"), {})
    printed = capsys.readouterr().out
    for text in expected:
        assert text in printed
    if written is not None:
        assert (tmp_path / written).exists()


# ----------------------------------------------------------------------
# the README's claims against the code: commands, options, accepted inputs
# ----------------------------------------------------------------------
def _parser():
    from treerank.cli import _build_parser

    return _build_parser()


def _subcommands(parser):
    import argparse

    (action,) = [
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
    ]
    return action.choices


def _fenced_blocks():
    """(language, text) of the README's fenced code blocks."""
    blocks, language, lines = [], None, None
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            if lines is None:
                language, lines = line[3:].strip(), []
            else:
                blocks.append((language, "\n".join(lines)))
                lines = None
        elif lines is not None:
            lines.append(line)
    return blocks


def _console_lines():
    """The ``treerank ...`` commands of the README's shell blocks."""
    lines = []
    for language, block in _fenced_blocks():
        if language:
            continue
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.split("#")[0].strip()
                if part.startswith("treerank"):
                    lines.append(part)
    return lines


def _prose_and_commands():
    """The README without its code, plus its ``treerank`` commands and spans."""
    text = README.read_text()
    prose = re.sub(r"```.*?```", " ", text, flags=re.S)
    spans = re.findall(r"`([^`]*)`", prose)
    prose = re.sub(r"`[^`]*`", " ", prose)
    kept = [s for s in spans if s.startswith(("treerank", "--"))]
    return "\n".join([prose, *kept, *_console_lines()])


def test_readme_lists_the_commands_of_treerank_help():
    text = README.read_text()
    (listed,) = re.findall(r"The `treerank` command: (.*?)\n\n", text + "\n\n", re.S)
    named = set(re.findall(r"`(\w+)`", listed))
    assert named == set(_subcommands(_parser())), (
        "the README's command list differs from `treerank --help`"
    )


def test_readme_command_lines_are_valid_invocations():
    import shlex

    lines = _console_lines()
    assert len(lines) >= 6
    parser = _parser()
    for line in lines:
        words = shlex.split(line)[1:]
        # redirections are the shell's
        words = [
            w
            for i, w in enumerate(words)
            if w not in ("<", ">") and (i == 0 or words[i - 1] not in ("<", ">"))
        ]
        try:
            parser.parse_args(words)
        except SystemExit as exit_:
            pytest.fail(f"README: `{line}` is refused by the parser ({exit_.code})")


def test_readme_options_exist():
    """Every ``--option`` the README names is an option of some command."""
    parser = _parser()
    options = {
        option
        for command in _subcommands(parser).values()
        for action in command._actions
        for option in action.option_strings
    }
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", _prose_and_commands()))
    assert named, "the README names no option"
    assert named <= options, f"not options of treerank: {sorted(named - options)}"


def test_readme_exit_statuses_are_the_commands():
    text = README.read_text()
    claim = "exit status 0 ok, 1 bad data or file, 2 bad usage"
    assert claim in text
    assert claim.replace("exit status", "Exit status:") in _parser().epilog


_ESTIMATOR_NAMES = ("TreeRank", "RankingForest")


def _estimators():
    import treerank

    return [getattr(treerank, name)(random_state=0) for name in _ESTIMATOR_NAMES]


def _accepts_missing_values():
    import numpy as np

    X = np.random.default_rng(0).normal(size=(80, 2))
    X[::7, 0] = np.nan
    y = (np.arange(80) % 2).astype(int)
    for estimator in _estimators():
        assert estimator.__sklearn_tags__().input_tags.allow_nan
        estimator.set_params(max_depth=2).fit(X, y)
    return True


def _accepts_categorical_columns():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"site": rng.choice(["a", "b", "c"], 90), "x": rng.normal(size=90)}
    )
    y = (frame["site"] == "a").astype(int)
    for estimator in _estimators():
        assert "categorical_features" in estimator.get_params()
        scores = (
            estimator.set_params(max_depth=2).fit(frame, y).decision_function(frame)
        )
        assert scores[y == 1].min() > scores[y == 0].max()
    return True


def _accepts_sparse_matrices():
    return all(e.__sklearn_tags__().input_tags.sparse for e in _estimators())


def _has_monotone_constraints():
    return all("monotonic_cst" in e.get_params() for e in _estimators())


_INPUT_CLAIMS = {
    "missing values": _accepts_missing_values,
    "categorical columns": _accepts_categorical_columns,
    "sparse matrices": _accepts_sparse_matrices,
    "monotone constraints": _has_monotone_constraints,
}


def test_readme_claims_about_accepted_inputs_hold():
    text = " ".join(README.read_text().split())
    (claim,) = re.findall(r"takes tabular data as it comes: ([^.]*)\.", text)
    items = [item.strip() for item in claim.split(",")]
    unknown = [item for item in items if item not in _INPUT_CLAIMS]
    assert not unknown, f"no check for the README's claims {unknown}: add one"
    for item in items:
        assert _INPUT_CLAIMS[item](), item


@pytest.mark.parametrize(
    "denial",
    [
        r"does not accept (NaN|missing|text|categor)",
        r"not accept NaN or text",
        r"reads? numbers only",
        r"numeric (columns|data) only",
    ],
)
def test_readme_and_pandas_guide_do_not_deny_what_the_code_does(denial):
    guide = pathlib.Path(__file__).parents[1] / "docs" / "user_guide" / "pandas.rst"
    for path in (README, guide):
        text = " ".join(path.read_text().split())
        assert not re.search(denial, text, flags=re.I), (path.name, denial)


def test_readme_cli_claims_hold(tmp_path, capsys):
    """Text columns, decimal commas and empty cells, as the README says."""
    from treerank.cli import main
    from treerank.model_io import load_model

    text = README.read_text()
    assert "text columns are categorical features" in text
    assert "decimal comma are detected" in text
    rows = [
        f"P{i};{20 + i % 50};{['Lyon', 'Oslo', ''][i % 3]};{i % 7},5;{int(i % 3 == 0)}"
        for i in range(120)
    ]
    path = tmp_path / "patients.csv"
    path.write_text("patient_id;age;site;bmi;label\n" + "\n".join(rows) + "\n")
    out = tmp_path / "model.trk"
    status = main(
        ["fit", str(path), "--target", "label", "--id", "patient_id", "--out", str(out)]
    )
    assert status == 0, capsys.readouterr().err
    model, metadata = load_model(out, with_metadata=True)
    assert metadata["categorical"] == {"site": "text"} and metadata["decimal"] == ","
    assert list(model.feature_names_in_) == ["age", "site", "bmi"]
