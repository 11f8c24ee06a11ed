"""Pieces shared by the compiled readers (BLEU's tokenizer, the k-best scanner, the lattice reader):
the FNV-1a hash their vocabularies are keyed by, comparing two byte ranges, and growing the record
arrays they fill (the numbers a fast path hands back to Python's ``float``)."""

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


@numba.njit(cache=True)
def room_for_row(rows, n):
    """``rows`` (a 2-D record array holding ``n`` rows) with room for row ``n``: itself, or a copy of
    twice its length."""
    if n < rows.shape[0]:
        return rows
    bigger = np.empty((2 * rows.shape[0] + 16, rows.shape[1]), dtype=rows.dtype)
    bigger[:n] = rows[:n]
    return bigger
