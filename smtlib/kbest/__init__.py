"""k-best lists in Moses n-best format, and the in-memory pool the tuners work on."""

from smtlib._lazy import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    ".format": ("FeatureGroup", "parse_line"),
    ".pool": ("KBestPool", "read_pool", "write_pool"),
})
