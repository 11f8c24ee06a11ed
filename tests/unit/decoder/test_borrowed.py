"""``smtlib.decoder.borrowed``: the same arrays, without reference counting."""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from smtlib.decoder.borrowed import borrowed
from tests.support.refcount_probe import probe, probe_loop

Pair = namedtuple("Pair", "a n inner")


@numba.njit
def _borrowing(tab, acc, add, n):
    tab, acc, add = borrowed((tab, acc, add))
    t = 0.0
    for i in range(n):
        t += probe(tab, acc, add, i)
    return t


@numba.njit
def _write_through(p):
    q = borrowed(p)
    q.a[1] = 7.5
    q.inner[1][0] = q.n
    return q.a.sum() + q.inner[0]


def _increfs(fn) -> int:
    ir = fn.inspect_llvm(fn.signatures[0])
    return sum(body.count("call void @NRT_incref") for body in ir.split("\ndefine")
               if fn.__name__ in body.split("(")[0])


def test_borrowed_arrays_compute_the_same_without_reference_counts():
    tab = np.arange(8)
    results = []
    for fn in (probe_loop, _borrowing):
        acc, add = np.zeros(1), np.arange(8, dtype=np.float64) + 0.5
        results.append((fn(tab, acc, add, 20), acc[0]))
    assert results[0] == results[1]
    assert _increfs(probe_loop) > 0  # otherwise this test shows nothing
    assert _increfs(_borrowing) == 0


def test_borrowed_tuples_keep_values_and_write_through():
    inner_arr = np.zeros(2, dtype=np.int64)
    p = Pair(np.ones(3), 4, (2.0, inner_arr))
    assert _write_through(p) == 1.0 + 7.5 + 1.0 + 2.0
    assert p.a[1] == 7.5
    assert inner_arr[0] == 4
