"""Cheaper start-up of every command that imports scipy: numpy's f2py and testing load only if used.

On its first import, scipy (1.15 and later) builds an array-API namespace for NumPy
(``scipy._lib.array_api_compat.numpy``). It copies NumPy's namespace: ``from numpy import *``, then
a ``getattr`` of every name that ``dir(numpy)`` lists. NumPy 2 imports its public submodules on first
attribute access, so the copy imports all of them. Two of them no smtlib command uses:

- ``numpy.f2py``, the Fortran wrapper generator, with its parser and charset_normalizer;
- ``numpy.testing``, with unittest.

Together they cost about 0.2 s of CPU per process, a fifth of a short job's fixed cost
(``benchmarks/results/startup.md``).

:func:`defer_unused_numpy_submodules` puts the two in place as lazy modules. It uses the standard
library's :class:`importlib.util.LazyLoader`. The copy takes the module objects without touching
them, and the first real use of either loads it in full, as before. :func:`defer_until_scipy`
arranges this to happen just before scipy's first import, so a command that never imports scipy
does not import numpy for it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

#: numpy's submodules that scipy's namespace copy imports and no command uses
DEFERRED = ("numpy.f2py", "numpy.testing")


def defer_unused_numpy_submodules() -> None:
    """Put :data:`DEFERRED` in ``sys.modules`` (and on ``numpy``) as modules that load on first use.

    Imports numpy. A submodule already imported, or one this numpy does not have, is left as it is.
    """
    for name in DEFERRED:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            continue
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        # as the import system does for a loaded submodule; without the attribute, numpy's
        # `import numpy.testing as testing` would ask numpy.__getattr__ for it again, without end
        parent, _, child = name.rpartition(".")
        setattr(sys.modules[parent], child, module)


class _BeforeScipy(importlib.abc.MetaPathFinder):
    """Runs :func:`defer_unused_numpy_submodules` when ``scipy`` is first imported, then steps aside."""

    def find_spec(self, fullname, path, target=None):
        if fullname == "scipy":
            # a new list, not the old one changed in place: the import system is iterating over that
            sys.meta_path = [f for f in sys.meta_path if f is not self]
            defer_unused_numpy_submodules()
        return None  # the usual finders import scipy itself


def defer_until_scipy() -> None:
    """Arrange :func:`defer_unused_numpy_submodules` to run just before scipy's first import.

    Does nothing once scipy is imported, or if it is arranged already.
    """
    if "scipy" in sys.modules or any(isinstance(f, _BeforeScipy) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _BeforeScipy())
