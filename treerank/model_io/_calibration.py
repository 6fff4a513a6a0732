"""The calibrations of a model file: score -> probability, monotone.

- A RankingForest of two classes: its isotonic calibration
  (:class:`~treerank.calibration.MonotoneCalibration`) as a step function, only the
  levels around its steps (which predict identically), with the decision
  threshold it implies.
- A RankingForest of ``K > 2`` grades: ``P(Y >= g_k | score)`` per
  threshold (:class:`~treerank.calibration.GradedCalibration`), one row per
  threshold, non-decreasing along each row and non-increasing down each
  column; its decision offset is zero.
- A TreeRank: its out-of-fold quantile calibration, knots in [0, 1] and
  non-decreasing probabilities.

Each comes as a pack/unpack pair; reading checks what the calibration
classes rely on.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.calibration import GradedCalibration, MonotoneCalibration, decision_offset
from treerank.model_io._arrays import (
    ROUNDING,
    check_array,
    check_declared,
    check_declared_pair,
    narrow,
)
from treerank.model_io._params import json_number

__all__ = [
    "compact_calibration",
    "pack_graded_calibration",
    "pack_monotone_calibration",
    "pack_quantile_calibration",
    "unpack_graded_calibration",
    "unpack_monotone_calibration",
    "unpack_quantile_calibration",
]


def pack_monotone_calibration(calibration, arrays):
    """The arrays of a two-class forest's calibration (its steps only)."""
    levels, proba = compact_calibration(calibration)
    arrays["calibration_levels"] = narrow(levels)
    arrays["calibration_proba"] = narrow(proba)


def unpack_monotone_calibration(model, description, arrays):
    """The calibration of a two-class forest (:class:`MonotoneCalibration`)."""
    levels, proba = _step_function(arrays, "calibration_levels", "calibration_proba")
    threshold = json_number(
        description["calibration_threshold"], "calibration_threshold"
    )
    model._calibration = MonotoneCalibration.from_arrays(levels, proba, threshold)
    if model.aggregation == "median":
        scores = model._raw_scores(model.cells_)
        if not np.all(np.isin(levels, scores)):
            raise ValueError("a calibration level is not the score of a cell")
    elif np.any(levels < -ROUNDING) or np.any(levels > 1 + ROUNDING):
        raise ValueError("the calibration levels must be in [0, 1]")
    if threshold != decision_offset(levels, proba):
        raise ValueError("calibration_threshold does not match the calibration")


def compact_calibration(calibration):
    """The levels around the steps of the isotonic calibration (and the ends).

    ``MonotoneCalibration`` maps a score to the probability of the nearest
    level (midpoints between consecutive levels). Keeping both levels around
    each change of probability, and the first and last levels, keeps every
    midpoint where the probability changes, computed from the same two
    numbers, and the decision threshold: predictions are bit-identical.
    """
    levels, proba = calibration.levels_, calibration.proba_
    keep = np.zeros(levels.shape[0], dtype=bool)
    keep[[0, -1]] = True
    steps = np.flatnonzero(proba[1:] != proba[:-1])
    keep[steps] = True
    keep[steps + 1] = True
    return levels[keep], proba[keep]


def pack_graded_calibration(calibration, arrays):
    """The arrays of a graded forest's calibration: one row per threshold."""
    arrays["calibration_levels"] = np.asarray(calibration.levels_)
    arrays["calibration_proba"] = np.asarray(calibration.proba_)


def unpack_graded_calibration(model, description, arrays):
    """The calibration of a forest of ``K > 2`` grades (:class:`GradedCalibration`)."""
    n_grades = model.classes_.shape[0]
    if float(description["calibration_threshold"]) != 0.0:
        raise ValueError("a multipartite forest has a zero decision offset")
    (n_levels,) = check_declared(arrays, "calibration_levels", kinds="iuf")
    check_declared(
        arrays,
        "calibration_proba",
        kinds="iuf",
        ndim=2,
        shape=(n_grades - 1, n_levels),
    )
    levels = check_array(
        arrays, "calibration_levels", kinds="iuf", finite=True, dtype=np.float64
    )
    proba = check_array(
        arrays,
        "calibration_proba",
        kinds="iuf",
        ndim=2,
        shape=(n_grades - 1, levels.shape[0]),
        bounds=(0, 1),
        dtype=np.float64,
    )
    model._calibration = GradedCalibration.from_arrays(levels, proba)


def pack_quantile_calibration(calibration, arrays):
    """The arrays of a TreeRank's out-of-fold calibration (None: nothing)."""
    if calibration is not None:
        arrays["calibration_knots"], arrays["calibration_knot_proba"] = calibration


def unpack_quantile_calibration(arrays):
    """The out-of-fold calibration of a TreeRank (None if the file has none)."""
    if "calibration_knots" not in arrays:
        return None
    knots, proba = _step_function(arrays, "calibration_knots", "calibration_knot_proba")
    if (
        knots.shape[0] == 0
        or np.any(np.diff(knots) <= 0)
        or np.any(np.diff(proba) < 0)
        or np.any((knots < -ROUNDING) | (knots > 1 + ROUNDING))
    ):
        raise ValueError(
            "the calibration knots must increase in [0, 1] with non-decreasing "
            "probabilities"
        )
    return knots, proba


def _step_function(arrays, x_name, proba_name):
    """Finite points and their probabilities in [0, 1], of one length (float64).

    Both arrays are checked as declared before either is read.
    """
    check_declared_pair(arrays, x_name, proba_name)
    x = check_array(arrays, x_name, kinds="iuf", finite=True, dtype=np.float64)
    proba = check_array(
        arrays,
        proba_name,
        kinds="iuf",
        shape=x.shape,
        bounds=(0, 1),
        dtype=np.float64,
    )
    return x, proba
