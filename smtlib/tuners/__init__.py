"""Tuners: one module per optimizer, each a :class:`~smtlib.tuners.base.Tuner` in the registry."""

from smtlib._lazy import lazy_exports

_EXPORTS = {
    "TuneResult": "smtlib.tuners.base",
    "Tuner": "smtlib.tuners.base",
    "TUNERS": "smtlib.tuners.registry",
    "get_tuner_class": "smtlib.tuners.registry",
    "list_tuners": "smtlib.tuners.registry",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
