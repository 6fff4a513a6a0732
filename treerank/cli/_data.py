"""Training data and features of the command line, read from CSV sources.

A feature column is numeric when its values are numbers (or missing), and
categorical when they are text, as a pandas DataFrame read by
``pandas.read_csv`` is for the estimators (``categorical_features=
"from_dtype"``). ``--categorical`` makes a column of numbers (integer codes)
categorical, ``--numeric`` refuses text in a column. A column that mixes
numbers and text is an error that names both options: it is most often a
numeric column with a typo, which categories would hide.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.cli._csv import (
    CsvError,
    looks_like_decimal_comma,
    looks_like_decimal_point,
)
from treerank.cli._text import escape, shorten
from treerank.cli._usage import UsageError

__all__ = [
    "CATEGORY_KINDS",
    "MAX_CATEGORIES",
    "TrainingData",
    "UnseenCategories",
    "category_values",
    "feature_frame",
    "read_training_data",
    "select_features",
]

MAX_CATEGORIES = 255
"""Most categories of a categorical feature (the estimators' limit)."""

CATEGORY_KINDS = ("text", "number")
"""How the categories of a column are written: text, or numbers (codes)."""


class TrainingData:
    """Features, labels and bookkeeping read from a training file.

    Attributes
    ----------
    X : pandas.DataFrame of shape (n_samples, n_features)
        Features named by the CSV's columns: float64 for the numeric ones
        (NaN where a cell was empty or a missing-value marker), object for the
        categorical ones (str or numbers; None where missing).
    y : ndarray of shape (n_samples,)
        1 for the positive class, or the grades (integers, higher is better)
        of a target with more than two values.
    features : list of str
    categorical : dict of str to str
        The categorical features and the kind of their categories
        (``"text"`` or ``"number"``), in feature order.
    first_missing : tuple of (int, str) or None
        Line and column of the first missing feature value.
    positive_value : str or None
        The target's value counted as positive (None for grades).
    negative_values : list of str
        The target's values counted as negative (empty for grades).
    notices : list of str
        What was decided without being asked: columns left out (empty,
        constant), columns that look like row identifiers.
    """

    def __init__(self, X, y, features, first_missing, categorical=None):
        self.X, self.y, self.features = X, y, features
        self.first_missing = first_missing
        self.categorical = {} if categorical is None else categorical
        self.positive_value = None
        self.negative_values = []
        self.notices = []


def select_features(source, *, target=None, ids=(), drop=(), features=None):
    """Feature columns of a source: ``features`` if given, else the remaining ones.

    Parameters
    ----------
    source : CsvSource
    target : str or None
        Label column (never a feature).
    ids : sequence of str
        Identifier columns (never features).
    drop : sequence of str
        Columns left out.
    features : sequence of str or None
        Explicit feature columns.

    Returns
    -------
    features : list of str
    """
    for name in ids:
        source.column_index(name, "an --id column")
    for name in drop:
        source.column_index(name, "a --drop column")
    excluded = set(ids) | set(drop) | ({target} if target is not None else set())
    if features is not None:
        for name in features:
            source.column_index(name, "a --features column")
        clash = [name for name in features if name in excluded]
        if clash:
            raise CsvError(
                f"columns {escape(str(clash))} are listed in --features and also as "
                "the target, an --id or a --drop column."
            )
        return list(features)
    chosen = [name for name in source.header if name not in excluded]
    if not chosen:
        raise CsvError(
            f"{source.name} has no feature column left (target "
            f"{shorten(target)}, ids {escape(str(list(ids)))}, dropped "
            f"{escape(str(list(drop)))})."
        )
    return chosen


def _first_missing(frame, lines):
    rows, cols = np.nonzero(frame.isna().to_numpy())
    if rows.shape[0]:
        return int(lines[rows[0]]), str(frame.columns[cols[0]])
    return None


def _present(values):
    import pandas as pd

    return ~pd.isna(pd.Series(values, dtype=object)).to_numpy()


def category_values(source, values, kind):
    """Categories read as text, as the model's categories of that ``kind``.

    ``"number"``: values that are numbers become numbers (an int when
    integral), other text stays text (an unseen category), None stays None.

    Parameters
    ----------
    source : CsvSource
        Gives the decimal mark.
    values : ndarray of object
        Text values (None where missing).
    kind : {"text", "number"}

    Returns
    -------
    values : ndarray of object
    """
    if kind == "text":
        return values
    numbers = source.to_numbers(values)
    out = values.copy()
    for i in np.flatnonzero(np.isfinite(numbers)):
        number = float(numbers[i])
        out[i] = int(number) if number.is_integer() else number
    return out


def _category_count_check(source, name, values):
    import pandas as pd

    distinct = pd.unique(values[_present(values)])
    if distinct.shape[0] > MAX_CATEGORIES:
        raise CsvError(
            f"{source.name}: column {shorten(name)} is categorical with "
            f"{distinct.shape[0]} distinct values, more than the {MAX_CATEGORIES} "
            "categories a feature can have: leave it out with --drop (free text) or "
            "--id (an identifier), or pass --numeric if it holds numbers."
        )


def _resolve_inferred(source, name, parts, lines):
    """A column read with its kind inferred chunk by chunk: numbers or categories.

    ``parts``: (first row, array) per chunk, float64 or object.
    Returns ``(values, kind)`` with kind None for a numeric column.
    """
    texts = [(start, a) for start, a in parts if a.dtype == object]
    if not texts:
        return np.concatenate([a for _, a in parts]), None
    first_text = first_number = None
    for start, values in parts:
        if values.dtype == object:
            present = _present(values)
            numbers = source.to_numbers(values)
            is_number = np.isfinite(numbers)
            text_rows = np.flatnonzero(present & ~is_number)
            number_rows = np.flatnonzero(is_number)
        else:
            text_rows = np.empty(0, dtype=int)
            number_rows = np.flatnonzero(~np.isnan(values))
        if first_text is None and text_rows.shape[0]:
            row = int(text_rows[0])
            first_text = (int(lines[start + row]), values[row])
        if first_number is None and number_rows.shape[0]:
            first_number = int(lines[start + int(number_rows[0])])
    column = shorten(name)
    if first_number is not None:  # numbers and text in one column
        line, value = first_text
        raise CsvError(
            f"{source.name}, line {line}, column {column}: "
            f"{source.not_a_number(value)[:-1]}, but other values of the column "
            f"are (line {first_number}). Correct the value (an empty cell or NA is "
            f"a missing value), or pass --categorical {escape(name)} to read the "
            "column as categories."
        )
    values = np.concatenate(
        [
            a if a.dtype == object else np.full(a.shape[0], None, dtype=object)
            for _, a in parts
        ]
    )
    present = values[_present(values)]
    other = "." if source.decimal == "," else ","
    looks = looks_like_decimal_point if other == "." else looks_like_decimal_comma
    if present.shape[0] and all(looks(v) for v in present):
        line, value = first_text
        mark = "decimal point" if other == "." else "decimal comma"
        raise CsvError(
            f"{source.name}, line {line}, column {column}: {shorten(value)} and the "
            f"other values of the column look like numbers with a {mark}; pass "
            f"--decimal '{other}' (or --categorical {escape(name)} to read them as "
            "categories)."
        )
    return values, "text"


def _resolve_categorical(source, name, parts):
    """A column read as categories: numbers when every value is one."""
    values = np.concatenate([a for _, a in parts])
    present = _present(values)
    numbers = source.to_numbers(values)
    if present.any() and np.all(np.isfinite(numbers[present])):
        return category_values(source, values, "number"), "number"
    return values, "text"


def feature_frame(columns, features, categorical):
    """The features as a DataFrame: float64, or object for categorical ones.

    Parameters
    ----------
    columns : dict of str to ndarray
    features : list of str
    categorical : dict of str to str
        Categorical features (their kind).

    Returns
    -------
    frame : pandas.DataFrame
    """
    import pandas as pd

    numeric = [name for name in features if name not in categorical]
    # the numeric columns as one float64 block: a Series per column costs
    # pandas tens of microseconds, which a file of 100,000 columns feels
    n_rows = len(columns[features[0]]) if features else 0
    block = np.empty((n_rows, len(numeric)), dtype=np.float64)
    for k, name in enumerate(numeric):
        block[:, k] = columns[name]
    frame = pd.DataFrame(block, columns=pd.Index(numeric, dtype=object), copy=False)
    if len(numeric) == len(features):
        return frame
    for name in categorical:
        frame[name] = pd.Series(columns[name], dtype=object)
    return frame[features]


def _value_list(values, limit=10):
    """``'no', 'maybe'`` for a message: escaped, at most ``limit`` values."""
    shown = ", ".join(shorten(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _labels(source, raw, lines, target, positive):
    """The labels of the rows, and the target's values on each side.

    Returns ``(y, positive_value, negative_values)``: the text of the value
    counted as positive and of those counted as negative (None and [] for
    grades).
    """
    missing = np.flatnonzero(np.isin(raw, ("", "NA", "NaN", "nan", "null", "None")))
    if missing.shape[0]:
        row = int(missing[0])
        raise CsvError(
            f"{source.name}, line {lines[row]}, column {shorten(target)}: "
            "missing target value (every row needs its label)."
        )
    if positive is not None:
        y = (raw == positive).astype(int)
        if not y.any():
            values = sorted(set(raw.tolist()))
            close = [v for v in values if v.strip().lower() == positive.strip().lower()]
            hint = f" (did you mean {shorten(close[0])}?)" if close else ""
            raise CsvError(
                f"{source.name}: no row has {escape(target)} == "
                f"{shorten(positive)} (the --positive value){hint}; the values of "
                f"{shorten(target)} are {_value_list(values)}."
            )
        negatives = sorted(set(raw[y == 0].tolist()))
        return y, positive, negatives
    try:
        values = raw.astype(np.float64)
    except ValueError:
        levels = sorted(set(raw.tolist()))
        raise CsvError(
            f"{source.name}: the target column {shorten(target)} is not numeric "
            f"(its values are {_value_list(levels)}); pass --positive LABEL to say "
            "which value is the positive class."
        ) from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.shape[0]:
        row = int(bad[0])
        raise CsvError(
            f"{source.name}, line {lines[row]}, column {shorten(target)}: "
            f"target value {shorten(raw[row])} is not a finite number."
        )
    levels = np.unique(values)
    if levels.shape[0] > 2:
        if np.any(levels != np.round(levels)):
            raise CsvError(
                f"{source.name}: the target column {shorten(target)} has "
                f"{levels.shape[0]} distinct values, not all integers (a continuous "
                "target); ranking needs two classes or ordered integer grades (or "
                "use --positive LABEL)."
            )
        return values.astype(np.int64), None, []  # ordered grades: multipartite
    y = (values == levels[-1]).astype(int)
    positive_text = str(raw[np.argmax(y)]) if y.any() else None
    negatives = [str(raw[np.argmin(y)])] if not y.all() else []
    return y, positive_text, negatives


def _check_kind_options(source, names, categorical, numeric):
    names = set(names)
    both = [name for name in categorical if name in numeric]
    if both:
        raise UsageError(
            f"{shorten(both[0])} is given to both --categorical and --numeric."
        )
    for option, given in (("--categorical", categorical), ("--numeric", numeric)):
        for name in given:
            source.column_index(name, f"a {option} column")
            if name not in names:
                raise CsvError(
                    f"{option} {shorten(name)}: not a feature column (it is the "
                    "target, an --id or a --drop column, or not in --features)."
                )


def read_training_data(
    source,
    target,
    *,
    positive=None,
    ids=(),
    drop=(),
    features=None,
    categorical=(),
    numeric=(),
    n_rows=100_000,
    max_columns=None,
):
    """Read features and labels from a CSV source.

    Parameters
    ----------
    source : CsvSource
    target : str
        Label column. With ``positive`` None it must hold two numbers (the
        larger is positive) or more than two integer grades (multipartite
        ranking, higher grades first).
    positive : str or None, default=None
        The label value of the positive class (any text).
    ids, drop, features :
        See :func:`select_features`.
    categorical : sequence of str, default=()
        Feature columns read as categories whatever their values (integer
        codes); their categories are numbers when every value is one.
    numeric : sequence of str, default=()
        Feature columns that must hold numbers (text is an error).
    n_rows : int, default=100_000
        Rows per chunk.
    max_columns : int or None, default=None
        Most feature columns: more is an error raised before any row is read.
        The time and memory of the reading grow linearly with the cells (and
        the per-column work of pandas and of the fit, tens of microseconds a
        column, with the columns).

    Returns
    -------
    data : TrainingData
    """
    source.column_index(target, "the --target")
    names = select_features(
        source, target=target, ids=ids, drop=drop, features=features
    )
    if max_columns is not None and len(names) > max_columns:
        raise CsvError(
            f"{source.name} has {len(names):,} feature columns, more than the "
            f"{max_columns:,} read at most (--max-columns): choose the features "
            "with --features (or leave columns out with --drop), or raise "
            "--max-columns."
        )
    _check_kind_options(source, names, categorical, numeric)
    categorical, numeric = set(categorical), set(numeric)
    forced = [name for name in names if name in categorical]
    strict = [name for name in names if name in numeric]
    inferred = [
        name for name in names if name not in categorical and name not in numeric
    ]
    parts = {name: [] for name in names}
    labels, lines, n_read = [], [], 0
    for first_line, columns in source.chunks(
        strict,
        text_columns=[target],
        categorical_columns=forced,
        infer_columns=inferred,
        n_rows=n_rows,
    ):
        for name in names:
            parts[name].append((n_read, columns[name]))
        labels.append(columns[target])
        n_rows_chunk = columns[target].shape[0]
        lines.append(first_line + np.arange(n_rows_chunk))
        n_read += n_rows_chunk
    if not labels:
        raise CsvError(f"{source.name} has a header but no data rows.")
    raw = np.array([label.strip() for label in np.concatenate(labels)], dtype=object)
    lines = np.concatenate(lines)
    y, positive_value, negative_values = _labels(source, raw, lines, target, positive)
    if np.unique(y).shape[0] < 2:
        raise CsvError(
            f"{source.name}: the target column {shorten(target)} has a single "
            "class; both classes are needed to learn a ranking."
        )
    values, kinds = {}, {}
    for name in names:
        if name in categorical:
            values[name], kind = _resolve_categorical(source, name, parts[name])
        elif name in numeric:
            values[name], kind = np.concatenate([a for _, a in parts[name]]), None
        else:
            values[name], kind = _resolve_inferred(source, name, parts[name], lines)
        if kind is not None:
            _category_count_check(source, name, values[name])
            kinds[name] = kind
        del parts[name]
    names, notices = _uninformative_columns(source, names, values, kinds)
    notices += _id_like_columns(names, values, kinds)
    X = feature_frame(values, names, kinds)
    data = TrainingData(X, y, names, _first_missing(X, lines), kinds)
    data.positive_value, data.negative_values = positive_value, negative_values
    data.notices = notices
    return data


def _names(columns):
    return ", ".join(shorten(name) for name in columns)


def _uninformative_columns(source, names, values, kinds):
    """Leave out the empty and constant feature columns; a notice of each kind.

    An empty column (every value missing) and a constant one (one value, none
    missing) cannot order the rows. Returns the remaining names and the
    notices.
    """
    import pandas as pd

    empty, constant = [], []
    for name in names:
        column = values[name]
        present = ~pd.isna(pd.Series(column, dtype=object)).to_numpy()
        if not present.any():
            empty.append(name)
        elif present.all() and pd.unique(column).shape[0] == 1:
            constant.append(name)
    notices = []
    if empty:
        notices.append(
            f"left out {len(empty)} empty column{'s' if len(empty) > 1 else ''} "
            f"(no value in any row): {_names(empty)}"
        )
    if constant:
        notices.append(
            f"left out {len(constant)} constant column"
            f"{'s' if len(constant) > 1 else ''} (the same value in every row): "
            f"{_names(constant)}"
        )
    dropped = set(empty) | set(constant)
    kept = [name for name in names if name not in dropped]
    if not kept:
        raise CsvError(
            f"{source.name}: no feature column is left once the empty and constant "
            f"ones are left out ({_names(sorted(dropped))})."
        )
    for name in dropped:
        values.pop(name)
        kinds.pop(name, None)
    return kept, notices


ID_NAMES = ("", "id", "rownames", "unnamed: 0", "index", "rowid", "row_id")
"""Column names (lowercase) that usually hold a row identifier."""


def _id_like_columns(names, values, kinds):
    """Notices of feature columns that look like row identifiers.

    A column named like an index (``rownames``, ``id``, ``Unnamed: 0``, an
    empty name, ...) or holding distinct integers that count the rows (each
    row's value one more than the previous one's, or a permutation of
    consecutive integers) identifies rows: used as a feature, it lets the
    model learn the file's order.
    """
    notices = []
    for name in names:
        why = None
        if name.strip().lower() in ID_NAMES:
            why = "its name is an identifier's"
        elif name not in kinds:
            column = values[name]
            finite = np.isfinite(column)
            if (
                column.shape[0] >= 20
                and finite.all()
                and np.all(column == np.round(column))
                and np.unique(column).shape[0] == column.shape[0]
                and (
                    np.all(np.diff(column) > 0)
                    or column.max() - column.min() + 1 == column.shape[0]
                )
            ):
                why = "distinct integers that number the rows"
        if why is not None:
            shown = escape(name)
            notices.append(
                f"column {shorten(name)} looks like a row identifier ({why}) and "
                f"is used as a feature: pass --id {shown} to carry it to the "
                f"scores instead, or --drop {shown} to leave it out"
            )
    return notices


class UnseenCategories:
    """The values of categorical columns a model never saw, over a whole file.

    The estimators warn (:class:`~treerank.exceptions.UnseenCategoryWarning`)
    chunk by chunk; the command line counts over the whole file instead
    (:meth:`add` for each chunk) and reports each column once
    (:meth:`messages`), past the estimators' share
    (:data:`~treerank.utils._categorical.UNSEEN_CATEGORY_SHARE`).

    Parameters
    ----------
    model : fitted estimator
        Its ``_category_encoder`` (None: no categorical feature) is used.
    features : list of str
        The model's feature columns, in order.
    """

    def __init__(self, model, features):
        self.encoder = getattr(model, "_category_encoder", None)
        self.features = features
        self.counts = {}  # feature -> [present, unseen, first distinct unseen]

    def add(self, X):
        """Count the unseen values of a chunk's features ``X``."""
        import pandas as pd

        if self.encoder is None:
            return
        for j, (n_present, values) in self.encoder.unseen_categories(X).items():
            count = self.counts.setdefault(j, [0, 0, []])
            count[0] += n_present
            count[1] += values.shape[0]
            if values.shape[0] and len(count[2]) < 5:
                for value in pd.unique(values):
                    if value not in count[2] and len(count[2]) < 5:
                        count[2].append(value)

    def messages(self):
        """One warning per column with too many values never seen in fit."""
        from treerank.utils._categorical import UNSEEN_CATEGORY_SHARE

        out = []
        for j, (n_present, n_unseen, examples) in sorted(self.counts.items()):
            if not n_present or n_unseen / n_present <= UNSEEN_CATEGORY_SHARE:
                continue
            known = self.encoder.categories_[j].tolist()
            shown = ", ".join(shorten(v, 40) for v in examples)
            learned = ", ".join(shorten(v, 40) for v in known[:5])
            if len(known) > 5:
                learned += f", ... ({len(known)} in all)"
            out.append(
                f"column {shorten(self.features[j])}: {n_unseen} of {n_present} "
                f"values ({n_unseen / n_present:.0%}) are categories the model never "
                f"saw (such as {shown}); they were scored as missing values. The "
                f"model's categories are {learned}."
            )
        return out
