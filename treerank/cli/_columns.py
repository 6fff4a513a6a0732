"""The feature columns of a saved model: one definition for `score` and `explain`.

A model is given the columns it was fitted on, read from a CSV file:

- a file written by ``treerank fit`` records them in its metadata (names,
  which are categorical and how their categories are written, the decimal
  mark of the training file);
- any other model with ``feature_names_in_`` (fitted in Python on a pandas
  DataFrame and saved with :func:`~treerank.model_io.save_model`, a Pipeline
  included) is given the columns of those names; its categorical features
  and their categories are the model's own;
- a model fitted on an array has no column names: its features are the
  file's columns, in order, the ``--id`` columns left out, and a one-line
  notice says so.

Categorical columns are read as text and given to the model as categories of
the kind it was fitted with: text, or numbers (integer codes). Importing this
module imports no numerical library.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.cli._text import escape, shorten

__all__ = ["ModelColumns", "model_columns"]

CATEGORY_KINDS = ("text", "number")


def _csv_error(message):
    from treerank.cli._csv import CsvError

    return CsvError(message)


def _kind(categories):
    """``"number"`` when every category is a number (codes), else ``"text"``."""
    import numbers

    values = list(categories)
    if values and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values
    ):
        return "number"
    return "text"


def _estimator_categories(model):
    """Per feature, the categories of a treerank estimator (None if numeric)."""
    encoder = getattr(model, "_category_encoder", None)
    if encoder is None:
        return [None] * int(model.n_features_in_)
    return [None if c is None else c.tolist() for c in encoder.categories_]


def _encoder_columns(transformer, columns, found):
    """Categorical columns of a scikit-learn encoder inside a pipeline."""
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

    if isinstance(transformer, (OneHotEncoder, OrdinalEncoder)):
        for name, categories in zip(columns, transformer.categories_):
            found[name] = _kind(categories.tolist())
    elif hasattr(transformer, "steps"):  # a Pipeline: its first step reads the columns
        _composite_categories(transformer.steps[0][1], columns, found)


def _composite_categories(model, columns, found):
    from sklearn.compose import ColumnTransformer

    if isinstance(model, ColumnTransformer):
        for _, transformer, selected in model.transformers_:
            if isinstance(transformer, str):  # "passthrough" or "drop"
                continue
            names = list(model.feature_names_in_)
            if isinstance(selected, str):
                selected = [selected]
            chosen = [
                names[c] if not isinstance(c, str) else c
                for c in (
                    [i for i, keep in enumerate(selected) if keep]
                    if len(selected) and isinstance(selected[0], bool)
                    else selected
                )
            ]
            _encoder_columns(transformer, chosen, found)
    elif hasattr(model, "steps"):
        _composite_categories(model.steps[0][1], columns, found)
    else:
        _encoder_columns(model, columns, found)


def _model_categorical(model, features):
    """``{feature: kind}`` of the categorical features a model reads."""
    from treerank import RankingForest, TreeRank

    if isinstance(model, (TreeRank, RankingForest)):
        return {
            name: _kind(categories)
            for name, categories in zip(features, _estimator_categories(model))
            if categories is not None
        }
    found = {}
    _composite_categories(model, list(features), found)
    return {name: found[name] for name in features if name in found}


def _feature_columns(source, columns, features, categorical, ids, first_line):
    """The features of a chunk; those also read as ids are parsed from their text."""
    import numpy as np

    from treerank.cli._csv import MISSING_MARKERS

    values = {}
    for name in features:
        column = columns[name]
        if name not in ids:
            values[name] = column
            continue
        # the id's text is kept byte for byte; as a feature, it is read as the
        # feature columns are (stripped)
        column = np.array([value.strip() for value in column], dtype=object)
        missing = np.isin(column, MISSING_MARKERS)
        if name in categorical:
            values[name] = np.where(missing, None, column)
            continue
        missing = np.isin(column, MISSING_MARKERS)
        numbers = source.to_numbers(np.where(missing, None, column))
        bad = np.flatnonzero(np.isnan(numbers) & ~missing)
        if bad.shape[0]:
            raise _csv_error(
                f"{source.name}, line {first_line + int(bad[0])}, column "
                f"{shorten(name)}: {source.not_a_number(column[bad[0]])}"
            )
        infinite = np.flatnonzero(np.isinf(numbers))
        if infinite.shape[0]:
            raise _csv_error(
                f"{source.name}, line {first_line + int(infinite[0])}, column "
                f"{shorten(name)}: infinite value {shorten(column[infinite[0]])}."
            )
        values[name] = numbers
    return values


class ModelColumns:
    """How a model's feature columns are read from a CSV file.

    Parameters
    ----------
    features : list of str or None
        The feature columns by name; None for a model fitted on an array (the
        file's columns are then taken by position, see :meth:`bind`).
    categorical : dict of str to str, or list of (int, str)
        The categorical features and the kind of their categories (``"text"``
        or ``"number"``): by name, or by position for a positional model.
    decimal : str
        Decimal mark of the training file (the default of ``--decimal``).
    named : bool
        Whether the model takes a DataFrame with these column names (it has
        ``feature_names_in_``) rather than an array.
    n_features : int
        Number of features of the model.
    origin : str
        Where the columns come from: ``"treerank fit"``, ``"model"`` (its
        ``feature_names_in_``) or ``"position"``.
    """

    def __init__(self, features, categorical, decimal, named, n_features, origin):
        self.features = features
        self.categorical = categorical
        self.decimal = decimal
        self.named = named
        self.n_features = n_features
        self.origin = origin
        self._positions = categorical if features is None else None

    def bind(self, source, ids=()):
        """Fix the feature columns for a file; the notice of a positional model.

        For a model with column names, checks that the file has them. For a
        model fitted on an array, the features are the file's columns in
        order, the ``ids`` left out; their number must be the model's.

        Parameters
        ----------
        source : CsvSource
        ids : sequence of str, default=()

        Returns
        -------
        notice : str or None
            The one-line statement of the columns taken by position.
        """
        if self._positions is None:
            missing = [name for name in self.features if name not in source.header]
            if missing:
                shown = ", ".join(shorten(name) for name in missing[:10])
                raise _csv_error(
                    f"{source.name} lacks the model's feature columns [{shown}"
                    f"{', ...' if len(missing) > 10 else ''}]; its columns are "
                    f"{source.describe_columns()}."
                )
            return None
        columns = [name for name in source.header if name not in set(ids)]
        if len(columns) != self.n_features:
            raise _csv_error(
                f"the model records no column names (it was fitted on an array), "
                f"so its {self.n_features} features are taken by position; "
                f"{source.name} has {len(columns)} columns besides the --id "
                f"columns: {source.describe_columns()}. Give a file with exactly "
                "the model's features, in order (and --id for the others)."
            )
        self.features = columns
        self.categorical = {columns[j]: kind for j, kind in self._positions}
        shown = ", ".join(shorten(name) for name in columns[:8])
        more = f", ... ({len(columns) - 8} more)" if len(columns) > 8 else ""
        return (
            f"the model records no column names: its {self.n_features} features "
            f"are taken by position from {source.name}'s columns {shown}{more}"
        )

    def source(self, path, args):
        """The CSV source of ``path`` with the command's input options."""
        from treerank.cli._csv import CsvSource

        return CsvSource(
            path,
            delimiter=args.delimiter,
            decimal=args.decimal,
            default_decimal=self.decimal,
            max_line_bytes=args.max_line_size,
        )

    def chunks(self, source, ids, chunk_size):
        """Yield ``(first_line, columns, X)``: the text of the ids, the features.

        ``X`` is a DataFrame of the feature columns (float64, or object for
        the categorical ones) for a model with column names, else an array.
        A feature that is also an id column is read once, as text, and parsed
        from it.
        """
        import numpy as np

        from treerank.cli._data import category_values, feature_frame

        categorical = self.categorical
        numeric = [n for n in self.features if n not in categorical and n not in ids]
        for first_line, columns in source.chunks(
            numeric,
            text_columns=ids,
            categorical_columns=[n for n in categorical if n not in ids],
            n_rows=chunk_size,
        ):
            values = _feature_columns(
                source, columns, self.features, categorical, ids, first_line
            )
            for name, kind in categorical.items():
                values[name] = category_values(source, values[name], kind)
            X = feature_frame(values, self.features, categorical)
            if not self.named:
                X = X.to_numpy(dtype=object if categorical else np.float64)
            yield first_line, columns, X


def _fit_metadata_columns(path, metadata, model):
    from treerank.cli._csv import DECIMAL_MARKS

    if "features" not in metadata:
        return None
    features = metadata["features"]
    categorical = metadata.get("categorical") or {}
    decimal = metadata.get("decimal", ".")
    if (
        not isinstance(features, list)
        or not features
        or not all(isinstance(name, str) for name in features)
        or not isinstance(categorical, dict)
        or any(
            name not in features or kind not in CATEGORY_KINDS
            for name, kind in categorical.items()
        )
        or decimal not in DECIMAL_MARKS
    ):
        raise _csv_error(
            f"{escape(path)}: its metadata describes the columns in a way `treerank "
            "fit` does not write (feature names, categorical columns or decimal "
            "mark); score it from Python instead."
        )
    named = hasattr(model, "feature_names_in_")
    return ModelColumns(
        features, categorical, decimal, named, len(features), "treerank fit"
    )


def model_columns(path, model, metadata):
    """The :class:`ModelColumns` of a loaded model.

    Parameters
    ----------
    path : str
        The model file (for messages).
    model : estimator
        The loaded model.
    metadata : dict or None
        Its metadata.

    Returns
    -------
    columns : ModelColumns
    """
    metadata = metadata if isinstance(metadata, dict) else {}
    columns = _fit_metadata_columns(path, metadata, model)
    if columns is not None:
        return columns
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        features = [str(name) for name in names]
        categorical = _model_categorical(model, features)
        return ModelColumns(features, categorical, ".", True, len(features), "model")
    n_features = getattr(model, "n_features_in_", None)
    if n_features is None:
        raise _csv_error(
            f"{escape(path)} records neither its feature columns nor their number; "
            "score it from Python instead."
        )
    from treerank import RankingForest, TreeRank

    positions = []
    if isinstance(model, (TreeRank, RankingForest)):
        positions = [
            (j, _kind(categories))
            for j, categories in enumerate(_estimator_categories(model))
            if categories is not None
        ]
    return ModelColumns(None, positions, ".", False, int(n_features), "position")
