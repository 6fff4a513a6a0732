"""``save_model`` and ``load_model``: treerank models as files, without pickle.

What a file holds (``model.json`` and arrays, see
:mod:`treerank.model_io._archive` for the container):

- the estimator's hyper-parameters, except the runtime settings ``n_jobs`` and
  ``verbose`` (the loaded model takes ``n_jobs`` from :func:`load_model`;
  :mod:`treerank.model_io._params`);
- the classes, the number and names of the features
  (:mod:`treerank.model_io._common`);
- the fully grown master trees (:mod:`treerank.model_io._structures`); a tree
  pruned at ``ccp_alpha_`` is pruned again at load (pruning is a deterministic
  function of the master tree), a tree pruned by the structural penalty stores
  the nodes it collapsed (:mod:`treerank.model_io._treerank`);
- for a forest (:mod:`treerank.model_io._forest`), what prediction needs: the
  cells of the common subpartition, their consensus positions and masses
  (``aggregation="median"``; a cell is stored as a point inside it, a code per
  feature, when its forest has those points, see
  :mod:`treerank._engine._cell_corners`, else as its leaves), the leaf
  mid-ranks (``"borda"``; :mod:`treerank.model_io._forest_aggregation`), and
  the isotonic calibration as a step function (only the levels around its
  steps, which predict identically; :mod:`treerank.model_io._calibration`).
  The per-training-row arrays (``estimators_samples_``,
  ``oob_decision_function_``) are stored only with
  ``include_training_data=True``;
- a scikit-learn pipeline of those and of trusted transformers
  (:mod:`treerank.model_io._pipelines`).

Loading validates everything against the estimator's own parameter
constraints and the structure of its fitted trees; an inconsistent file is a
:class:`~treerank.exceptions.ModelFileError` naming the problem. Writing
validates the same way, so every file :func:`save_model` writes loads.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import json
import numbers

import numpy as np

from treerank.ensemble._forest import RankingForest
from treerank.exceptions import ModelFileError
from treerank.model_io._archive import DEFAULT_MAX_BYTES, open_archive, write_archive
from treerank.model_io._forest import decode_forest, encode_forest
from treerank.model_io._treerank import decode_treerank, encode_treerank
from treerank.tree._classes import TreeRank

__all__ = ["decode_estimator", "encode_estimator", "load_model", "save_model"]


_DECODERS = {"TreeRank": decode_treerank, "RankingForest": decode_forest}


def _encode(model, include_training_data=False, corners=True):
    """``(description, arrays)`` of a fitted TreeRank or RankingForest.

    A median forest's cells are stored as the corner codes of their points
    when it has them (``corners=True``), else as leaf tuples.
    """
    if isinstance(model, TreeRank):
        return encode_treerank(model)
    return encode_forest(model, include_training_data, corners)


def encode_estimator(model):
    """``(description, arrays)`` of a fitted TreeRank or RankingForest (for the
    steps of a pipeline, :mod:`treerank.model_io._pipelines`)."""
    return _encode(model)


def decode_estimator(description, arrays):
    """The TreeRank or RankingForest of :func:`encode_estimator`'s output."""
    description = {**description, "metadata": None}
    return _decode(description, arrays, {})[0]


def _decode(description, arrays, runtime):
    name = description.get("estimator")
    decoder = _DECODERS.get(name) if isinstance(name, str) else None
    if decoder is None:
        raise ValueError(f"unknown estimator {str(name)[:40]!r}")
    metadata = description.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ValueError("metadata must be a JSON object")
    return decoder(description, arrays, runtime), metadata


def save_model(
    model, path, *, metadata=None, overwrite=True, include_training_data=False
):
    """Save a fitted TreeRank or RankingForest to a file that loads without pickle.

    The file is a zip archive of JSON metadata and numpy arrays (see
    :mod:`treerank.model_io`), written atomically. It holds what prediction
    needs: the parameters, the master trees and, for a forest, the
    aggregation and its calibration (the cells of the common subpartition
    with ``aggregation="median"``: one per distinct leaf tuple of the
    training rows). Splitting rules are stored as numbers, so only
    :class:`~treerank.LeafRank`, :class:`~treerank.tree.LinearLeafRank`,
    binary linear classifiers inside :class:`~treerank.ClassifierLeafRank`
    and :class:`~treerank.tree.MixedLeafRank` choosing among those are
    supported; for anything else use ``joblib.dump``. Parameters that are
    not plain JSON values (a ``RandomState`` instance, a cross-validation
    splitter) are listed under ``params_not_saved`` in the file and take
    their default values when loaded: predictions do not depend on them. The
    runtime settings ``n_jobs`` and ``verbose`` are not saved.

    Before writing, the model is checked exactly as :func:`load_model`
    checks a file, so every file written loads.

    Parameters
    ----------
    model : TreeRank, RankingForest, Pipeline or ColumnTransformer
        A fitted model. A scikit-learn :class:`~sklearn.pipeline.Pipeline` or
        :class:`~sklearn.compose.ColumnTransformer` is saved whole when every
        step is a TreeRank, a RankingForest or a supported scikit-learn
        transformer (``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``,
        ``RobustScaler``, ``SimpleImputer``, ``OneHotEncoder``,
        ``OrdinalEncoder``; column lists, ``"passthrough"`` and ``"drop"``);
        any other step is refused by name.
    path : str or path-like
        Destination (conventionally ``*.trk``); its directory must exist.
    metadata : dict or None, default=None
        Extra JSON-serializable information stored with the model (for
        example the data columns it was trained on); read it back with
        ``load_model(path, with_metadata=True)``.
    overwrite : bool, default=True
        If False, refuse to replace an existing file (``FileExistsError``).
    include_training_data : bool, default=False
        Also store a forest's per-training-row arrays,
        ``estimators_samples_`` (which rows each tree saw: it reveals who was
        in the training set) and ``oob_decision_function_``, for out-of-bag
        analysis. Without them the file does not grow with the number of
        training rows beyond the cells of a median forest, and the loaded
        forest has ``estimators_samples_ = None`` and
        ``oob_decision_function_ = None`` (``oob_score_`` is kept); it
        predicts identically. Ignored for a TreeRank, which stores no
        per-row array.

    Raises
    ------
    ValueError
        If the model is not a fitted TreeRank or RankingForest, cannot be
        stored without pickle, or its parameters no longer describe its
        fitted state (changed with ``set_params`` after ``fit``).

    Examples
    --------
    >>> import os, tempfile
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.model_io import load_model, save_model
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> tree = TreeRank(random_state=0).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "tree.trk")
    >>> save_model(tree, path)
    >>> bool((load_model(path).decision_function(X) == tree.decision_function(X)).all())
    True
    """
    from treerank.model_io import _pipelines

    name = type(model).__name__
    if type(model) not in (TreeRank, RankingForest) and not _pipelines.is_composite(
        model
    ):
        raise ValueError(
            "save_model supports treerank's TreeRank and RankingForest and "
            f"scikit-learn Pipelines and ColumnTransformers of them; got {name}."
        )
    if not _pipelines.is_composite(model) and not hasattr(model, "classes_"):
        raise ValueError(f"This {name} is not fitted yet: fit it before saving.")
    if not isinstance(include_training_data, bool):
        raise ValueError(
            f"include_training_data must be a bool; got {include_training_data!r}."
        )
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise ValueError(f"metadata must be a dict; got {type(metadata).__name__}.")
        try:
            json.dumps(metadata, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata must be JSON-serializable: {exc}") from None
    if _pipelines.is_composite(model):  # hook: whole scikit-learn pipelines
        description, arrays = _pipelines.encode_composite(model, encode_estimator)
        description["metadata"] = metadata
        try:  # the file must load: the checks of load_model, before writing
            _pipelines.decode_composite(
                json.loads(json.dumps(description)), arrays, decode_estimator
            )
        except ValueError as exc:
            raise ValueError(f"This {name} cannot be saved: {exc}") from None
        write_archive(path, description, arrays, overwrite=overwrite)
        return
    description, arrays = _encode(model, include_training_data)
    description["metadata"] = metadata
    try:
        # the file must load: the same checks as load_model, before writing
        decoded = _decode(json.loads(json.dumps(description)), arrays, {})[0]
        if "cell_corners" in arrays and not np.array_equal(
            decoded.cells_, model.cells_
        ):  # never expected: the corners must route to the cells
            description, arrays = _encode(model, include_training_data, corners=False)
            description["metadata"] = metadata
    except ValueError as exc:
        raise ValueError(
            f"This {name} cannot be saved: its fitted state is inconsistent with "
            f"its parameters ({exc}). Refit it, or restore the parameters it was "
            "fitted with."
        ) from None
    write_archive(path, description, arrays, overwrite=overwrite)


def load_model(path, *, with_metadata=False, n_jobs=None, max_bytes=DEFAULT_MAX_BYTES):
    """Load a model saved by :func:`save_model` (no code is executed).

    The file is treated as hostile: its size is bounded, its digests are
    verified, and the model it describes is checked completely (its
    parameters by the estimator's own constraints, its trees, rules, counts,
    classes and aggregation arrays for consistency) before it is returned.

    Parameters
    ----------
    path : str or path-like
    with_metadata : bool, default=False
        Also return the ``metadata`` given to :func:`save_model`.
    n_jobs : int or None, default=None
        ``n_jobs`` of a loaded RankingForest (never read from the file). A
        TreeRank has no such parameter.
    max_bytes : int, default=1 GiB
        Largest total decompressed size of the file's members.

    Returns
    -------
    model : TreeRank or RankingForest
        A fitted model predicting exactly as the saved one. Its splitting
        rules are frozen (the engine's rule arrays, or per node a
        :class:`~treerank.tree.FrozenLinearLeafRank` or, for a
        MixedLeafRank's box rules, a :class:`~treerank.tree.FrozenTreeLeafRank`);
        ``fit`` works as usual.
        A forest saved without ``include_training_data`` has
        ``estimators_samples_ = None`` and ``oob_decision_function_ = None``.
    metadata : dict or None
        Only if ``with_metadata`` is True.

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like object.
    treerank.exceptions.ModelFileError
        If the file is not a treerank model, is corrupted or was edited, or
        describes an inconsistent model; the message names the problem.
    """
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
    ):
        raise ValueError(f"n_jobs must be an int or None; got {n_jobs!r}.")
    from treerank.model_io import _pipelines

    # the arrays are read when the decoders first use them, after their
    # declared dtypes and shapes were checked (open_archive)
    with open_archive(path, max_bytes=max_bytes) as (description, arrays):
        try:
            if description.get("estimator") == _pipelines.COMPOSITE:  # pipelines
                model = _pipelines.decode_composite(
                    description, arrays, decode_estimator, source=str(path)
                )
                metadata = description.get("metadata")
                if metadata is not None and not isinstance(metadata, dict):
                    raise ValueError("metadata must be a JSON object")
            else:
                model, metadata = _decode(description, arrays, {"n_jobs": n_jobs})
        except ModelFileError:
            raise  # an array refused by the archive layer, or an untrusted type
        except Exception as exc:  # hostile content: every failure is the file's
            detail = (
                str(exc)
                if isinstance(exc, ValueError)
                else f"{type(exc).__name__}: {exc}"
            )
            raise ModelFileError(
                f"{path} describes an inconsistent model: {detail[:500].rstrip('.')}."
            ) from None
    return (model, metadata) if with_metadata else model
