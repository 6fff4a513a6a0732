"""Why is this row ranked here? Per-row explanations of ranking scores.

:func:`shapley_values` gives, for each row and each feature, the feature's
contribution to the row's score (Shapley values: they add up to the score
minus a base value); :func:`reason_codes` turns them into the few features
that pull each row's score down (or up), with the rule each one met. The
algorithms, one module each:

- ``_interventional``: exact interventional values of a sum of trees, by
  walking the hybrid paths of the compiled decision graphs;
- ``_path_dependent``: exact path-dependent values of trees with training
  masses (Lundberg's game, in its integral form);
- ``_permutation``: Monte Carlo values of any score (the Kendall median),
  with standard errors and exact efficiency;
- ``_enumeration``: the definition over all coalitions (few features);
- ``_tree_sum``: a model as decision graphs with leaf values;
- ``_conditions``: the rule each row met on each feature.

The public names are imported on first access (PEP 562), so that
``import treerank.inspection`` loads no numerical library by itself.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank._lazy import lazy_module_attributes

_LOCATIONS = {
    "Explanation": "treerank.inspection._explanation",
    "calibrated_score": "treerank.inspection._scale",
    "reason_codes": "treerank.inspection._reason_codes",
    "shapley_values": "treerank.inspection._shapley",
}

__all__ = sorted(_LOCATIONS)

__getattr__, __dir__ = lazy_module_attributes(__name__, _LOCATIONS)
