"""The histogram engine: ranking trees grown and routed in compiled code.

Private: not part of treerank's public API (it may change in any version).
Its interface, below, is documented for contributors.

The tree (:class:`~treerank.TreeRank`), the splitter (:class:`~treerank.LeafRank`)
and the forest (:class:`~treerank.RankingForest`) call this small interface:

1. **Binning, once per fit.** :class:`BinMapper` cuts each feature into at
   most 255 quantile bins (code 255 is reserved for missing values) with real
   thresholds, so that the split "bin <= b" is the rule "x <= threshold" on raw
   values. A forest bins its data once and all its trees share the codes.
2. **Growth.** :func:`grow_ranking_tree` grows a whole ranking tree in one
   compiled call: each node's rows are an index segment of one row array,
   partitioned in place; each node's LeafRank is a class-balanced inner tree
   grown from per-node histograms of positive and negative weight (the
   histogram of one child is the parent's minus its sibling's), whose leaves are
   merged by decreasing beta/alpha. A fitted tree is flat arrays
   (:class:`GrownTree`, :class:`SplitRules`), never per-node Python objects.
   :func:`fit_rule` fits one LeafRank rule alone.
3. **Routing.** :func:`compile_graph` turns a ranking tree and its rules into
   one decision graph; :class:`Router` routes raw X through the graphs of
   several trees in one compiled loop.
4. **Cells as points.** :func:`find_cell_corners` gives every cell of a
   forest's common subpartition a point inside it (a code per feature on the
   grid of the forest's thresholds, :func:`threshold_grids`);
   :func:`corner_values` turns codes back into values that route to the cell.
5. **Identical rows merged.** :func:`merge_identical_rows` groups the rows of
   equal codes and class; a tree grown on one row per group, of summed weight
   and counted with its multiplicity (``multiplicity`` of
   :func:`grow_ranking_tree`), is the tree of the rows themselves, grown in time
   proportional to the distinct rows.
6. **Rule layout.** :func:`rule_children` rebuilds the children of the rules'
   inner nodes from one split flag per node (the order in which the engine
   numbers them), which is all a model file needs to store.

The kernels are compiled by numba (``cache=True``: compiled once per
installation; ``nogil=True``: trees grow in threads). Their growth parameters
are gathered in :class:`GrowthParams`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank._engine._binning import (
    MAX_BINS,
    MISSING_BIN,
    BinMapper,
    bin_representatives,
    bin_thresholds,
)
from treerank._engine._cell_corners import (
    corner_values,
    find_cell_corners,
    threshold_grids,
)
from treerank._engine._grow import GrownTree, GrowthParams, fit_rule, grow_ranking_tree
from treerank._engine._routing import Router, compile_graph, route_binned
from treerank._engine._row_merging import MergedRows, merge_identical_rows
from treerank._engine._rule_layout import rule_children
from treerank._engine._split_rules import (
    SplitRules,
    category_codes,
    category_mask,
    rule_feature_importances,
    rule_improvements_per_feature,
)
from treerank._engine._split_search import CRITERIA, SPLITTERS

__all__ = [
    "CRITERIA",
    "MAX_BINS",
    "MISSING_BIN",
    "SPLITTERS",
    "BinMapper",
    "GrownTree",
    "GrowthParams",
    "MergedRows",
    "Router",
    "SplitRules",
    "bin_representatives",
    "bin_thresholds",
    "category_codes",
    "category_mask",
    "compile_graph",
    "corner_values",
    "find_cell_corners",
    "fit_rule",
    "grow_ranking_tree",
    "merge_identical_rows",
    "route_binned",
    "rule_children",
    "rule_feature_importances",
    "rule_improvements_per_feature",
    "threshold_grids",
]
