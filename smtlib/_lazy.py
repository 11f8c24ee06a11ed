"""Package re-exports imported on first use (PEP 562), so that importing one light module of a
package (``smtlib.tuners.registry``, ``smtlib.bleu.stats``) does not import numba, scipy and pandas
through the package's ``__init__``: ``smtlib --help`` and ``smtlib tune --list`` stay fast."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, modules: dict[str, tuple[str, ...]]) -> tuple[Callable[[str], object], list[str]]:
    """A module ``__getattr__`` and ``__all__`` for ``package``'s re-exports.

    ``modules`` maps each submodule, relative to ``package`` (``".stats"``), to the names it exports;
    a name is imported from its submodule the first time it is looked up.
    """
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__, sorted(where)
