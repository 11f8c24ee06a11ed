"""Writing lattice blocks (:mod:`smtlib.decoder.lattice`'s text format) with a compiled kernel.

Unpruned lattices have millions of edges (Multi30k dev, Medium: ~8,000 per sentence, 18 dense
values each), and formatting their values one by one in Python made most of a lattice decode.
:func:`lattice_block` gives exactly the bytes of the Python formatter it replaces, per edge::

    f"{tail} {head} ||| {' '.join(words)} ||| {' '.join(_fmt(v) for v in dense)} ||| {sparse}\\n"

with ``_fmt(v) = "0" if v == 0.0 else format(v, ".9g")`` (so ``-0.0`` is ``0``) and ``sparse`` the
``name=_fmt(value)`` pairs in the dict's order:

* the dense values: a sentence's values repeat (the phrase scores of an option on every edge that
  uses it, small integers; on Multi30k dev ~5% are distinct), so :func:`_distinct_nb` finds the
  distinct ones, :func:`_g9_digits_nb` and :func:`_value_texts_nb` format each once, and
  :func:`_block_nb` copies their text into the lines. ``format(v, ".9g")`` is ``v`` correctly
  rounded (half to even, on the exact binary value) to 9 significant digits ``d``
  (``10^8 <= d < 10^9``) times ``10^(x-8)``, printed in fixed notation when ``-4 <= x < 9`` and as
  ``d.ddddddddde±XX`` otherwise, trailing zeros dropped. The kernel scales ``|v|`` by an exactly
  representable power of ten (``10^p``, ``|p| <= 22``: one correctly rounded multiplication or
  division, as in Clinger's fast path), so the scaled value is within half an ulp (< 1.2e-7 below
  10^9) of the exact one, and rounds it to the nearest integer. That is ``d`` unless a half-integer
  lies within that error, so values whose scaled fraction is within 1e-6 of .5 (true ties among
  them), and values needing ``|p| > 22`` (``|v|`` above ~1e30 or below ~1e-14), are marked and
  formatted by Python's ``format`` instead: 39 of the 28.7M values of the unpruned lattices of 200
  Multi30k dev sentences (Medium).
* the words and sparse fields repeat across edges (one phrase per translation option, one sparse
  dict per phrase-table entry): each distinct one is formatted once in Python, and edges refer to it
  by index. A lattice whose ``words`` / ``sparse`` are :class:`~smtlib.decoder.lattice.IndexedValues`
  (the decoder builds them so) carries those indices; for plain lists they are found here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numba
import numpy as np

from smtlib.decoder.lattice import IndexedValues, _fmt

if TYPE_CHECKING:
    from smtlib.decoder.lattice import Lattice

#: 10^0 .. 10^22, every one exactly representable (10^22 < 2^53 * 2^22 and 5^22 < 2^53)
_POW10 = np.array([float(10**i) for i in range(23)], dtype=np.float64)
#: a scaled value whose fraction is within this of .5 may round either way: formatted by Python
_TIE_MARGIN = 1e-6
_LOG10_2 = math.log10(2.0)
_ZERO = 0  #: ``digits`` of a value written ``0``
_FALLBACK = -1  #: ``digits`` of a value formatted by Python


@numba.njit(cache=True)
def _scaled(a, x, pow10):
    """``a * 10^(8-x)`` in one correctly rounded operation, or -1.0 if ``|8-x| > 22``."""
    p = 8 - x
    if 0 <= p <= 22:
        return a * pow10[p]
    if -22 <= p < 0:
        return a / pow10[-p]
    return -1.0


@numba.njit(cache=True)
def _g9_digits_nb(values, pow10, margin):
    """9 significant digits and decimal exponent of every value (``digits[i] * 10^(exps[i]-8)``).

    ``digits`` is 0 for a zero (``-0.0`` too) and -1 where the kernel cannot be sure of the correct
    rounding (see the module docstring): those values are left to Python.
    """
    n = values.shape[0]
    digits = np.empty(n, dtype=np.int64)
    exps = np.zeros(n, dtype=np.int64)
    for i in range(n):
        v = values[i]
        if v == 0.0:
            digits[i] = 0
            continue
        a = abs(v)
        # x = floor(log10(a)), from the binary exponent (a guess, corrected below when off by one)
        x = int(np.floor((math.frexp(a)[1] - 1) * _LOG10_2))
        s = _scaled(a, x, pow10)
        if 0.0 <= s < 1e8:  # (not reached with the binary-exponent guess, which is at most 1 too low)
            x -= 1
            s = _scaled(a, x, pow10)
        elif s >= 1e9:
            x += 1
            s = _scaled(a, x, pow10)
        if not 1e8 <= s < 1e9:
            digits[i] = -1
            continue
        d = np.floor(s)
        frac = s - d  # exact: s and d are multiples of s's ulp
        if abs(frac - 0.5) < margin:
            digits[i] = -1
            continue
        di = np.int64(d) + (1 if frac > 0.5 else 0)
        if di == 1000000000:
            di = 100000000
            x += 1
        digits[i] = di
        exps[i] = x
    return digits, exps


@numba.njit(cache=True)
def _put_digits(buf, pos, n, count):
    """Write the last ``count`` decimal digits of ``n >= 0`` at ``buf[pos:]``; the new position."""
    for j in range(count - 1, -1, -1):
        buf[pos + j] = 48 + n % 10
        n //= 10
    return pos + count


@numba.njit(cache=True)
def _put_int(buf, pos, n):
    """Write the non-negative integer ``n`` at ``buf[pos:]``; the new position."""
    count = 1
    m = n // 10
    while m > 0:
        count += 1
        m //= 10
    return _put_digits(buf, pos, n, count)


@numba.njit(cache=True)
def _put_g9(buf, pos, neg, d, x):
    """Write ``format(v, ".9g")`` of ``v = ±d * 10^(x-8)`` (``d`` 9 digits, already rounded)."""
    nd = 9  # significant digits once trailing zeros are dropped
    while d % 10 == 0:
        d //= 10
        nd -= 1
    if neg:
        buf[pos] = 45  # '-'
        pos += 1
    if 0 <= x < 9:  # ddd or ddd.ddd
        if nd <= x + 1:
            pos = _put_digits(buf, pos, d, nd)
            for _ in range(x + 1 - nd):
                buf[pos] = 48
                pos += 1
            return pos
        frac = nd - x - 1
        _put_digits(buf, pos + x + 2, d, frac)
        _put_digits(buf, pos, d // _ipow10(frac), x + 1)
        buf[pos + x + 1] = 46  # '.'
        return pos + nd + 1
    if -4 <= x < 0:  # 0.000ddd
        buf[pos] = 48
        buf[pos + 1] = 46
        pos += 2
        for _ in range(-x - 1):
            buf[pos] = 48
            pos += 1
        return _put_digits(buf, pos, d, nd)
    if nd > 1:  # d.ddde+XX
        _put_digits(buf, pos + 2, d, nd - 1)
        buf[pos] = 48 + d // _ipow10(nd - 1)
        buf[pos + 1] = 46
        pos += nd + 1
    else:
        buf[pos] = 48 + d
        pos += 1
    buf[pos] = 101  # 'e'
    buf[pos + 1] = 45 if x < 0 else 43  # '-' / '+'
    ax = -x if x < 0 else x
    return _put_digits(buf, pos + 2, ax, 2 if ax < 100 else 3)


@numba.njit(cache=True)
def _ipow10(k):
    p = 1
    for _ in range(k):
        p *= 10
    return p


@numba.njit(cache=True)
def _put_bytes(buf, pos, table, off, i):
    """Write entry ``i`` of a byte table (``table[off[i]:off[i+1]]``)."""
    for j in range(off[i], off[i + 1]):
        buf[pos] = table[j]
        pos += 1
    return pos


@numba.njit(cache=True)
def _distinct_nb(values):
    """The distinct values of ``values`` (by bit pattern), in order of first occurrence, and per
    value the index of its distinct value (an open-addressing hash table)."""
    n = values.shape[0]
    bits = values.view(np.int64)
    cap = 16
    while cap < 2 * n:
        cap *= 2
    mask = cap - 1
    table = np.full(cap, -1, dtype=np.int64)
    ids = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        b = bits[i]
        h = np.uint64(b) * np.uint64(0x9E3779B97F4A7C15)
        slot = np.int64(h ^ (h >> np.uint64(29))) & mask
        while True:
            t = table[slot]
            if t < 0:
                table[slot] = m
                first[m] = i
                ids[i] = m
                m += 1
                break
            if bits[first[t]] == b:
                ids[i] = t
                break
            slot = (slot + 1) & mask
    return ids, values[first[:m]]


@numba.njit(cache=True)
def _value_texts_nb(values, digits, exps, fallback):
    """The text of every value, as ``(n, 16)`` bytes (zero padded: the longest ``.9g`` text,
    ``-d.dddddddde-308``, has 16) and lengths, from
    :func:`_g9_digits_nb`'s result; ``fallback`` holds the Python-formatted ones (``digits < 0``),
    in order, as a ``(bytes, offsets)`` table."""
    fb, fb_off = fallback
    n = values.shape[0]
    texts = np.zeros((n, 16), dtype=np.uint8)
    lengths = np.empty(n, dtype=np.int64)
    next_fb = 0
    for i in range(n):
        d = digits[i]
        if d == 0:
            texts[i, 0] = 48
            lengths[i] = 1
        elif d < 0:
            lengths[i] = _put_bytes(texts[i], 0, fb, fb_off, next_fb)
            next_fb += 1
        else:
            lengths[i] = _put_g9(texts[i], 0, values[i] < 0.0, d, exps[i])
    return texts, lengths


@numba.njit(cache=True)
def _block_nb(tails, heads, value_ids, texts, phrase_ids, phrases, sparse_ids, sparse):
    """The edge lines of one block as bytes (see the module docstring).

    ``texts`` is :func:`_value_texts_nb`'s table of the distinct values (each copied as 16 bytes, the
    position then advanced by its length: one fixed-size move per value), ``phrases`` and ``sparse``
    are ``(bytes, offsets)`` tables of the distinct word and sparse fields; ``value_ids`` (the dense
    matrix row by row, ``n_edges * n_dense``), ``phrase_ids`` and ``sparse_ids`` index them.
    """
    tx, tx_len = texts
    ph, ph_off = phrases
    sp, sp_off = sparse
    n_edges = tails.shape[0]
    n_dense = value_ids.shape[0] // n_edges if n_edges else 0
    size = 16  # room for the last value's 16-byte move
    for e in range(n_edges):  # an upper bound: two 19-digit ints, 16 bytes per value, the fields
        size += 2 * 20 + 15 + n_dense * 17
        size += ph_off[phrase_ids[e] + 1] - ph_off[phrase_ids[e]] + sp_off[sparse_ids[e] + 1] - sp_off[sparse_ids[e]]
    buf = np.empty(size, dtype=np.uint8)
    pos = 0
    k = 0
    for e in range(n_edges):
        pos = _put_int(buf, pos, tails[e])
        buf[pos] = 32
        pos = _put_int(buf, pos + 1, heads[e])
        for c in (32, 124, 124, 124, 32):  # ' ||| '
            buf[pos] = c
            pos += 1
        pos = _put_bytes(buf, pos, ph, ph_off, phrase_ids[e])
        for c in (32, 124, 124, 124, 32):
            buf[pos] = c
            pos += 1
        for j in range(n_dense):
            if j:
                buf[pos] = 32
                pos += 1
            v = value_ids[k]
            for q in range(16):
                buf[pos + q] = tx[v, q]
            pos += tx_len[v]
            k += 1
        for c in (32, 124, 124, 124, 32):
            buf[pos] = c
            pos += 1
        pos = _put_bytes(buf, pos, sp, sp_off, sparse_ids[e])
        buf[pos] = 10
        pos += 1
    return buf[:pos]


def _table(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 byte array and offsets."""
    encoded = [t.encode("utf-8") for t in texts]
    off = np.zeros(len(encoded) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(b) for b in encoded])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), off


def _indexed(seq) -> tuple[np.ndarray, list]:
    """Per item the index of its distinct value, and the distinct values (an IndexedValues as is)."""
    if isinstance(seq, IndexedValues):
        return np.asarray(seq.ids, dtype=np.int64), list(seq.values)
    index: dict = {}
    values: list = []
    ids = np.empty(len(seq), dtype=np.int64)
    for e, item in enumerate(seq):
        key = tuple(item.items()) if isinstance(item, dict) else tuple(item)
        i = index.get(key)
        if i is None:
            i = index[key] = len(values)
            values.append(item)
        ids[e] = i
    return ids, values


def format_dense(values: np.ndarray) -> list[str]:
    """The kernel's text of every value (:func:`smtlib.decoder.lattice._fmt`'s); for tests and checks."""
    values = np.asarray(values, dtype=np.float64).reshape(1, -1)
    zero = np.zeros(1, np.int64)
    line = _block_bytes(zero, zero + 1, values, zero, [""], zero, [""])
    return line.split(b" ||| ")[2].decode("ascii").split(" ")


def _block_bytes(tails, heads, dense, phrase_ids, phrase_texts, sparse_ids, sparse_texts) -> bytes:
    """The edge lines: each distinct dense value formatted once (compiled; the unsure ones by
    Python), then the lines assembled from the tables."""
    flat = np.ascontiguousarray(dense, dtype=np.float64).reshape(-1)
    value_ids, distinct = _distinct_nb(flat)
    digits, exps = _g9_digits_nb(distinct, _POW10, _TIE_MARGIN)
    fallback = [format(v, ".9g") for v in distinct[digits < 0].tolist()]
    texts = _value_texts_nb(distinct, digits, exps, _table(fallback))
    out = _block_nb(np.asarray(tails, dtype=np.int64), np.asarray(heads, dtype=np.int64), value_ids, texts,
                    np.asarray(phrase_ids, dtype=np.int64), _table(phrase_texts),
                    np.asarray(sparse_ids, dtype=np.int64), _table(sparse_texts))
    return out.tobytes()


def lattice_block(lat: Lattice) -> bytes:
    """One sentence block (``SENTENCE ...`` line and edge lines) as UTF-8 bytes.

    Byte-identical to formatting every value with :func:`smtlib.decoder.lattice._fmt` (the module
    docstring says how).
    """
    phrase_ids, phrases = _indexed(lat.words)
    sparse_ids, sparses = _indexed(lat.sparse)
    head = f"SENTENCE {lat.sent_id} NODES {lat.n_nodes} EDGES {lat.n_edges}\n".encode()
    dense = np.asarray(lat.dense, dtype=np.float64)
    return head + _block_bytes(lat.tails, lat.heads, dense, phrase_ids, [" ".join(p) for p in phrases], sparse_ids,
                               [" ".join(f"{k}={_fmt(v)}" for k, v in sp.items()) for sp in sparses])
