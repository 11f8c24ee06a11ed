"""k-best lists in Moses n-best format, and the in-memory pool the tuners work on."""

from smtlib._lazy import lazy_exports

_EXPORTS = {
    "FeatureGroup": "smtlib.kbest.format",
    "parse_line": "smtlib.kbest.format",
    "KBestPool": "smtlib.kbest.pool",
    "read_pool": "smtlib.kbest.pool",
    "write_pool": "smtlib.kbest.pool",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
