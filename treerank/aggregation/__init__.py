"""Rank aggregation: Kendall distance, Kemeny median, insertion and subpartition.

A ranking of M items is an integer array of bucket indices: a smaller value is a
better bucket (0 is the top one) and equal values are tied. This package
computes

- the Kendall tau distance between two bucket orders, with item masses
  (:func:`kendall_tau_distance`);
- the weighted Kemeny objective of a consensus and a weighted Kemeny median of
  many bucket orders (:func:`kemeny_objective`, :func:`kemeny_median`), exactly
  for small problems and by constructive heuristics and a local search for up to
  about 10^5 items;
- the common subpartition of the leaves of B ranking trees, as cells with
  masses and one bucket order of the cells per tree
  (:func:`common_subpartition`), and a hash index that finds the cell of a new
  row of leaf ranks (:class:`CellIndex`);
- the Kendall-optimal position of a new item in a fitted median, given its
  bucket in each ranking (:class:`ConsensusInserter`).

It is a library of rank aggregation that knows nothing of trees: the forest's
aggregation of its fitted trees (:class:`treerank.ensemble.TreeAggregate`)
builds on it. It imports nothing from :mod:`treerank.tree`,
:mod:`treerank.ensemble`, :mod:`treerank.base` or any estimator.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.aggregation._bucket_order import (
    check_bucket_order,
    check_rankings,
    dense_bucket_order,
)
from treerank.aggregation._cell_index import CellIndex
from treerank.aggregation._distance import kendall_tau_distance
from treerank.aggregation._insertion import ConsensusInserter
from treerank.aggregation._kemeny import MedianResult, kemeny_median, kemeny_objective
from treerank.aggregation._subpartition import CommonSubpartition, common_subpartition

__all__ = [
    "CellIndex",
    "CommonSubpartition",
    "ConsensusInserter",
    "MedianResult",
    "check_bucket_order",
    "check_rankings",
    "common_subpartition",
    "dense_bucket_order",
    "kemeny_median",
    "kemeny_objective",
    "kendall_tau_distance",
]
