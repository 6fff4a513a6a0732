"""Lazy public names of a package (PEP 562): imported on first access.

A package lists where each public name lives; its submodules are imported
when one of their names is first looked up, so that importing the package (or
one of its private submodules, e.g. ``treerank.utils._io`` from the command
line) does not import scikit-learn, scipy or numba before they are needed.
``from package import name``, ``package.name``, ``dir(package)`` and
``__all__`` behave as with eager imports.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib

__all__ = ["lazy_module_attributes"]


def lazy_module_attributes(package, locations, submodules=()):
    """``__getattr__`` and ``__dir__`` for a package with lazy public names.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    locations : dict of str to str
        Public name -> module (absolute name) that defines it.
    submodules : sequence of str, default=()
        Public submodules, imported on first access as attributes.

    Returns
    -------
    getattr, dir : callable
        To assign to the package's ``__getattr__`` and ``__dir__``.

    Examples
    --------
    >>> from treerank._lazy import lazy_module_attributes
    >>> getattr_, dir_ = lazy_module_attributes("pkg", {"sqrt": "math"})
    >>> getattr_("sqrt")(4.0)
    2.0
    >>> dir_()
    ['sqrt']
    """

    def __getattr__(name):
        module = locations.get(name)
        if module is not None:
            return getattr(importlib.import_module(module), name)
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted({*locations, *submodules})

    return __getattr__, __dir__
