"""k-best lists in Moses n-best format, and the in-memory pool the tuners work on."""

from smtlib.kbest.format import FeatureGroup, parse_line
from smtlib.kbest.pool import KBestPool, read_pool, write_pool

__all__ = ["FeatureGroup", "KBestPool", "parse_line", "read_pool", "write_pool"]
