"""Byte-level pieces shared by the compiled readers (BLEU's tokenizer, the k-best scanner, the
lattice reader): the FNV-1a hash their vocabularies are keyed by, and comparing two byte ranges."""

from __future__ import annotations

import numba
import numpy as np

FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)


@numba.njit(cache=True, inline="always")
def same_bytes(a, a_start, b, b_start, length):
    """Whether ``a[a_start:a_start + length]`` equals ``b[b_start:b_start + length]``."""
    for k in range(length):
        if a[a_start + k] != b[b_start + k]:
            return False
    return True
