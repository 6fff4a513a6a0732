"""Model files: save and load treerank models without pickle.

A model file is a zip archive of JSON metadata and numpy arrays with SHA-256
digests (see ``treerank/model_io/_archive.py`` for the layout). Loading it
never unpickles or imports anything, and a corrupted or edited file is refused
with :class:`~treerank.exceptions.ModelFileError`. ``pickle`` and ``joblib``
keep working for those who prefer them.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.model_io._api import load_model, save_model

__all__ = ["load_model", "save_model"]
