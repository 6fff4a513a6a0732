"""Export ranking trees: networkx graphs, Graphviz DOT text, indented text.

networkx is a dependency of treerank; Graphviz is not needed to write DOT text
(only to render it).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.export._graphviz import export_graphviz
from treerank.export._networkx import to_networkx
from treerank.export._text import export_text

__all__ = ["export_graphviz", "export_text", "to_networkx"]
