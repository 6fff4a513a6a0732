"""
=================================================
Reading a ranking tree: partition, graph and text
=================================================

A ranking tree is read from left to right: its leaves, in that order, are the
ranking, best first. On two-dimensional data its leaves are regions of the
plane, so the ranking can be drawn. We fit a small tree on the nested squares,
draw its partition and the tree itself, and export it as text, as a networkx
graph and as Graphviz DOT.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# A small ranking tree
# --------------------
import matplotlib.pyplot as plt
import networkx as nx

from treerank import TreeRank
from treerank.datasets import make_nested_squares
from treerank.export import export_graphviz, export_text, to_networkx
from treerank.plotting import plot_partition, plot_tree

X, y = make_nested_squares(2000, random_state=0)
tree = TreeRank(max_depth=3, random_state=0).fit(X, y)
print(f"{tree.n_leaves_} leaves, training AUC {tree.tree_.auc():.4f}")

# %%
# The partition and the tree
# --------------------------
# Each region of the plane is coloured by the rank of its leaf (green = ranked
# first); the positives are the black crosses. The true regression function is
# constant on concentric square rings, most positive at the centre: the tree
# finds the rings with unions of axis-parallel boxes.
fig, ax = plt.subplots(figsize=(5.5, 4.8))
plot_partition(tree, X[:600], y[:600], feature_names=["u", "v"], ax=ax)
ax.set_title("Ranking regions (green = best)")

# %%
# The tree itself: leaves in rank order (``leaf 0`` is ranked first), internal
# nodes by id (``n3``), each internal node with the rule that sends points to
# its better (left) child, each node with its numbers of positives and
# negatives, coloured by its fraction of positives and sized by its number of
# training points. Without ``ax``, the figure is sized for the tree.
plot_tree(tree, feature_names=["u", "v"])

# %%
# Text
# ----
# One line per node, the better (left) child first, with the weighted class
# counts, the positive rate, the AUC gain of each split and the rule of each
# LeafRank (the points it sends to the better child).
print(export_text(tree, feature_names=["u", "v"], max_depth=2))

# %%
# A networkx graph
# ----------------
# The graph is an arborescence whose depth-first traversal meets the leaves in
# rank order; its nodes carry counts, ROC segments, split gains and rules.
graph = to_networkx(tree, feature_names=["u", "v"])
leaves = [n for n in nx.dfs_preorder_nodes(graph, 0) if graph.nodes[n]["is_leaf"]]
print("arborescence:", nx.is_arborescence(graph))
print("leaf ranks in depth-first order:", [graph.nodes[n]["leaf_rank"] for n in leaves])
print(
    "split gains add up to the AUC:",
    round(0.5 + sum(nx.get_node_attributes(graph, "dauc").values()), 4),
)

# %%
# Graphviz DOT
# ------------
# ``export_graphviz`` returns DOT text (or writes it to a file); render it with
# ``dot -Tpng tree.dot -o tree.png`` where Graphviz is installed.
dot = export_graphviz(tree, feature_names=["u", "v"])
print("\n".join(dot.splitlines()[:6]))
plt.show()
