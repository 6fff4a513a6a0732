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
# On the left, each region of the plane is coloured by the rank of its leaf
# (green = ranked first); the positives are the black crosses. The true
# regression function is constant on concentric square rings, most positive at
# the centre: the tree finds the rings with unions of axis-parallel boxes.
# On the right, the tree with its leaves in rank order, each node coloured by
# its fraction of positives and sized by its number of training points.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.8))
plot_partition(tree, X[:600], y[:600], feature_names=["u", "v"], ax=left)
left.set_title("Ranking regions (green = best)")
plot_tree(tree, ax=right)
right.set_title("The ranking tree, leaves best first")
fig.tight_layout()

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
