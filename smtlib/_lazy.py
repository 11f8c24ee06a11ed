"""Package re-exports imported on first use (PEP 562), so that importing one light module of a
package (``smtlib.tuners.registry``, ``smtlib.bleu.stats``) does not import numba, scipy and pandas
through the package's ``__init__``: ``smtlib --help`` and ``smtlib tune --list`` stay fast."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` resolving ``name`` from ``exports[name]`` (a module path) on first use."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
