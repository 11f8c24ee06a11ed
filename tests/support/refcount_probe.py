"""A compiled loop whose reference-count updates numba's own pruning keeps: an inlined function with
several exits and a loop, called per iteration (for ``smtlib.decoder.borrowed`` and
``benchmarks/refcounts.py``)."""

from __future__ import annotations

import numba


@numba.njit(inline="always")
def probe(tab, acc, add, key):
    slot = key & 7
    while True:
        k = tab[slot]
        if k == key:
            break
        if k == 0:
            return -1.0
        slot = (slot + 1) & 7
    acc[0] += add[slot]
    return acc[0]


@numba.njit
def probe_loop(tab, acc, add, n):
    t = 0.0
    for i in range(n):
        t += probe(tab, acc, add, i)
    return t
