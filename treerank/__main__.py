"""``python -m treerank``: the command line."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

from treerank.cli import main

sys.exit(main())
