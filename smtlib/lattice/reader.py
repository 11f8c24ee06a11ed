"""Reading lattice files (:data:`smtlib.lattice.format.FORMAT`) into a :class:`LatticeSetBuilder`.

:func:`read_lattice_set` is a compiled byte-level parser over the file in chunks of whole sentence
blocks (the unpruned lattices of a 1,000-sentence dev set are about a gigabyte of text): numba
kernels find the lines and fields of a chunk (:func:`_scan_lattices`), parse the numbers
(:func:`_parse_fields`: correctly rounded; tokens outside its fast path go to Python's ``float``) and
intern the edge words into the builder's vocabulary through a compiled hash table
(:func:`_intern_spans`); a per-sentence ``transform`` (lb-mira's density pruning) may replace each
sentence's arrays before they are kept.
A malformed file is an :class:`~smtlib.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Callable, Sequence

import numba
import numpy as np

from smtlib._bytes import FNV_OFFSET, FNV_PRIME, room_for_row, same_bytes
from smtlib.lattice.format import check_format_line
from smtlib.lattice.lattice_set import LatticeSetBuilder, release_free_memory
from smtlib.errors import InputError


@numba.njit(cache=True)
def _parse_int(data, i, n):
    """Parse a non-negative decimal integer at ``i`` (after skipping spaces): (value, next, ok)."""
    while i < n and data[i] == 32:
        i += 1
    if i >= n or data[i] < 48 or data[i] > 57:
        return 0, i, False
    v = 0
    while i < n and 48 <= data[i] <= 57:
        v = v * 10 + (data[i] - 48)
        i += 1
    return v, i, True


@numba.njit(cache=True)
def _find_sep(data, i, end):
    """Position of the next ``|||`` in ``data[i:end]`` or -1."""
    while i + 2 < end:
        if data[i] == 124 and data[i + 1] == 124 and data[i + 2] == 124:
            return i
        i += 1
    return -1


@numba.njit(cache=True)
def _scan_lattices(data, n_dense):
    """Parse the sentence blocks of ``data`` (bytes after the two header lines).

    Returns (status, bad_offset, sentences (K,3): id/nodes/edges, tails, heads, word spans (start,
    end) with per-edge offsets, dense value field spans, sparse item spans (name start, name end,
    value start, value end) with per-edge offsets). ``status`` is 0 on success, else an error code
    and the byte offset of the bad line.
    """
    n = len(data)
    cap_s = 64
    sents = np.empty((cap_s, 3), dtype=np.int64)
    ns = 0
    cap_e = 1024
    tails = np.empty(cap_e, dtype=np.int64)
    heads = np.empty(cap_e, dtype=np.int64)
    dspan = np.empty((cap_e, 2), dtype=np.int64)
    woff = np.zeros(cap_e + 1, dtype=np.int64)
    soff = np.zeros(cap_e + 1, dtype=np.int64)
    cap_w = 4096
    wspan = np.empty((cap_w, 2), dtype=np.int64)
    cap_p = 1024
    spans = np.empty((cap_p, 4), dtype=np.int64)
    ne = 0
    nw = 0
    nsp = 0
    i = 0
    while i < n:
        line_start = i
        eol = i
        while eol < n and data[eol] != 10:
            eol += 1
        if eol == i:  # blank line: only allowed at the very end
            i = eol + 1
            continue
        # SENTENCE id NODES n EDGES m
        if eol - i < 8 or data[i] != 83:
            return 1, line_start, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]
        j = i + 8
        sid, j, ok1 = _parse_int(data, j, eol)
        while j < eol and data[j] == 32:
            j += 1
        j += 5  # NODES
        nn, j, ok2 = _parse_int(data, j, eol)
        while j < eol and data[j] == 32:
            j += 1
        j += 5  # EDGES
        m, j, ok3 = _parse_int(data, j, eol)
        if not (ok1 and ok2 and ok3):
            return 1, line_start, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]
        if nn < 2 or m < 1:
            return 6, line_start, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]
        if ns == cap_s:
            bigger = np.empty((2 * cap_s, 3), dtype=np.int64)
            bigger[:ns] = sents[:ns]
            sents = bigger
            cap_s *= 2
        sents[ns, 0] = sid
        sents[ns, 1] = nn
        sents[ns, 2] = m
        ns += 1
        i = eol + 1
        if ne + m + 1 > cap_e:
            cap = 2 * (ne + m + 1)
            t2 = np.empty(cap, dtype=np.int64)
            t2[:ne] = tails[:ne]
            tails = t2
            h2 = np.empty(cap, dtype=np.int64)
            h2[:ne] = heads[:ne]
            heads = h2
            d2 = np.empty((cap, 2), dtype=np.int64)
            d2[:ne] = dspan[:ne]
            dspan = d2
            w2 = np.zeros(cap + 1, dtype=np.int64)
            w2[: ne + 1] = woff[: ne + 1]
            woff = w2
            s2 = np.zeros(cap + 1, dtype=np.int64)
            s2[: ne + 1] = soff[: ne + 1]
            soff = s2
            cap_e = cap
        for _ in range(m):
            if i >= n:
                return 2, i, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]
            line_start = i
            eol = i
            while eol < n and data[eol] != 10:
                eol += 1
            t, j, ok1 = _parse_int(data, i, eol)
            h, j, ok2 = _parse_int(data, j, eol)
            s1 = _find_sep(data, j, eol)
            s2 = _find_sep(data, s1 + 3, eol) if s1 >= 0 else -1
            s3 = _find_sep(data, s2 + 3, eol) if s2 >= 0 else -1
            if not (ok1 and ok2) or s3 < 0 or _find_sep(data, s3 + 3, eol) >= 0:
                return 3, line_start, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]
            if not (t < h < nn):
                return 4, line_start, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]
            tails[ne] = t
            heads[ne] = h
            # words
            k = s1 + 3
            while k < s2:
                while k < s2 and data[k] == 32:
                    k += 1
                if k >= s2:
                    break
                a = k
                while k < s2 and data[k] != 32:
                    k += 1
                if nw == cap_w:
                    bigger_w = np.empty((2 * cap_w, 2), dtype=np.int64)
                    bigger_w[:nw] = wspan[:nw]
                    wspan = bigger_w
                    cap_w *= 2
                wspan[nw, 0] = a
                wspan[nw, 1] = k
                nw += 1
            woff[ne + 1] = nw
            dspan[ne, 0] = s2 + 3
            dspan[ne, 1] = s3
            # sparse name=value items
            k = s3 + 3
            while k < eol:
                while k < eol and data[k] == 32:
                    k += 1
                if k >= eol:
                    break
                a = k
                while k < eol and data[k] != 32:
                    k += 1
                eq = -1
                for q in range(k - 1, a - 1, -1):
                    if data[q] == 61:
                        eq = q
                        break
                if eq <= a or eq == k - 1:
                    return 5, line_start, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]
                if nsp == cap_p:
                    bigger_p = np.empty((2 * cap_p, 4), dtype=np.int64)
                    bigger_p[:nsp] = spans[:nsp]
                    spans = bigger_p
                    cap_p *= 2
                spans[nsp, 0] = a
                spans[nsp, 1] = eq
                spans[nsp, 2] = eq + 1
                spans[nsp, 3] = k
                nsp += 1
            soff[ne + 1] = nsp
            ne += 1
            i = eol + 1
    return 0, 0, sents[:ns], tails[:ne], heads[:ne], wspan[:nw], woff[: ne + 1], dspan[:ne], spans[:nsp], soff[: ne + 1]


_POW10 = np.array([10.0**k for k in range(23)])


@numba.njit(cache=True)
def _parse_number(data, a, b):
    """The decimal number ``data[a:b]``, correctly rounded, or ok=False (then parsed by Python).

    Fast path of correctly rounded decimal conversion: with an integer mantissa below 2**53 and a
    power of ten of at most 22 (both exact doubles), one multiplication or division rounds correctly.
    Numbers outside it (more than 15 significant digits, huge exponents, inf, nan) are left to Python.
    """
    i = a
    neg = False
    if i < b and (data[i] == 45 or data[i] == 43):
        neg = data[i] == 45
        i += 1
    mant = 0
    digits = 0
    exp10 = 0
    seen = False
    while i < b and 48 <= data[i] <= 57:
        if mant > 0 or data[i] != 48:
            digits += 1
        mant = mant * 10 + (data[i] - 48) if digits <= 18 else mant
        if digits > 18:
            exp10 += 1
        seen = True
        i += 1
    if i < b and data[i] == 46:
        i += 1
        while i < b and 48 <= data[i] <= 57:
            if mant > 0 or data[i] != 48:
                digits += 1
            if digits <= 18:
                mant = mant * 10 + (data[i] - 48)
                exp10 -= 1
            seen = True
            i += 1
    if not seen:
        return 0.0, False
    if i < b and (data[i] == 101 or data[i] == 69):
        i += 1
        eneg = False
        if i < b and (data[i] == 45 or data[i] == 43):
            eneg = data[i] == 45
            i += 1
        if i >= b:
            return 0.0, False
        e = 0
        while i < b and 48 <= data[i] <= 57:
            e = e * 10 + (data[i] - 48)
            if e > 10000:
                return 0.0, False
            i += 1
        exp10 += -e if eneg else e
    if i != b or digits > 15:
        return 0.0, False
    if mant == 0:
        return -0.0 if neg else 0.0, True
    if exp10 > 22 or exp10 < -22:
        return 0.0, False
    v = float(mant)
    v = v * _POW10[exp10] if exp10 >= 0 else v / _POW10[-exp10]
    return (-v if neg else v), True


@numba.njit(cache=True)
def _parse_fields(data, spans, per_field):
    """Numbers of every field ``data[start:end]`` (whitespace separated).

    Returns (values, counts per field, fallback token spans (k, 3): value index, start, end).
    With ``per_field`` > 0 the values array has ``per_field`` slots per field.
    """
    nf = spans.shape[0]
    cap = max(16, nf * max(per_field, 1))
    values = np.zeros(cap)
    counts = np.zeros(nf, dtype=np.int64)
    fallback = np.empty((16, 3), dtype=np.int64)
    nfb = 0
    nv = 0
    for f in range(nf):
        k = spans[f, 0]
        end = spans[f, 1]
        c = 0
        while k < end:
            while k < end and (data[k] == 32 or data[k] == 9):
                k += 1
            if k >= end:
                break
            a = k
            while k < end and data[k] != 32 and data[k] != 9:
                k += 1
            if per_field > 0 and c >= per_field:
                c += 1
                continue
            slot = f * per_field + c if per_field > 0 else nv
            if slot >= values.shape[0]:
                bigger = np.zeros(2 * values.shape[0] + 16)
                bigger[: values.shape[0]] = values
                values = bigger
            v, ok = _parse_number(data, a, k)
            values[slot] = v
            if not ok:
                fallback = room_for_row(fallback, nfb)
                fallback[nfb, 0] = slot
                fallback[nfb, 1] = a
                fallback[nfb, 2] = k
                nfb += 1
            c += 1
            nv += 1
        counts[f] = c
    n_out = nf * per_field if per_field > 0 else nv
    return values[:n_out], counts, fallback[:nfb]


def _numbers(data: np.ndarray, spans: np.ndarray, per_field: int, path, first_line: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    values, counts, fallback = _parse_fields(data, spans, per_field)
    for slot, a, b in fallback.tolist():
        token = data[a:b].tobytes().decode("utf-8", errors="replace")
        try:
            values[slot] = float(token)
        except ValueError:
            raise InputError(f"{what}: {token!r} is not a number", path, _line_number(data, a, first_line)) from None
    return values, counts


@numba.njit(cache=True)
def _gather(data, spans, sep):
    """The bytes of ``spans`` (start, end) joined by ``sep``."""
    total = 0
    for k in range(spans.shape[0]):
        total += spans[k, 1] - spans[k, 0] + 1
    out = np.empty(total, dtype=np.uint8)
    p = 0
    for k in range(spans.shape[0]):
        for q in range(spans[k, 0], spans[k, 1]):
            out[p] = data[q]
            p += 1
        out[p] = sep
        p += 1
    return out




@numba.njit(cache=True)
def _intern_spans(data, spans, slots, vocab, n_types, vocab_used):
    """Ids (0-based) of the byte strings ``data[start:end]``, extending an open-addressing table.

    ``slots`` rows are (hash, start in ``vocab``, length, id + 1; 0 = empty); ``vocab`` holds each
    type's bytes. Returns (ids, slots, vocab, n_types, vocab_used), the table possibly grown.
    """
    ids = np.empty(spans.shape[0], dtype=np.int64)
    capacity = slots.shape[0]
    for k in range(spans.shape[0]):
        a = spans[k, 0]
        b = spans[k, 1]
        h = FNV_OFFSET
        for q in range(a, b):
            h = (h ^ np.uint64(data[q])) * FNV_PRIME
        hs = np.int64(h)
        length = b - a
        slot = hs & (capacity - 1)
        while True:
            if slots[slot, 3] == 0:
                if vocab_used + length > vocab.shape[0]:
                    bigger = np.empty(2 * (vocab.shape[0] + length), dtype=np.uint8)
                    bigger[:vocab_used] = vocab[:vocab_used]
                    vocab = bigger
                vocab[vocab_used : vocab_used + length] = data[a:b]
                slots[slot, 0] = hs
                slots[slot, 1] = vocab_used
                slots[slot, 2] = length
                slots[slot, 3] = n_types + 1
                vocab_used += length
                ids[k] = n_types
                n_types += 1
                break
            if (slots[slot, 0] == hs and slots[slot, 2] == length
                    and same_bytes(vocab, slots[slot, 1], data, a, length)):
                ids[k] = slots[slot, 3] - 1
                break
            slot = (slot + 1) & (capacity - 1)
        if 2 * n_types > capacity:
            capacity *= 2
            bigger_slots = np.zeros((capacity, 4), dtype=np.int64)
            for old in range(slots.shape[0]):
                if slots[old, 3] != 0:
                    t = slots[old, 0] & (capacity - 1)
                    while bigger_slots[t, 3] != 0:
                        t = (t + 1) & (capacity - 1)
                    bigger_slots[t, :] = slots[old, :]
            slots = bigger_slots
    return ids, slots, vocab, n_types, vocab_used


class _Interner:
    """Word ids for a builder's vocabulary, from byte spans (compiled) or strings (the builder's dict)."""

    def __init__(self, builder: LatticeSetBuilder):
        self.builder = builder
        self.slots = np.zeros((1 << 12, 4), dtype=np.int64)
        self.vocab = np.empty(1 << 16, dtype=np.uint8)
        self.n_types = 0
        self.used = 0

    def _sync(self) -> None:
        """Types the builder learned from strings enter the compiled table too (same ids)."""
        words = self.builder.vocab[self.n_types :]
        if not words:
            return
        raw = [w.encode("utf-8") for w in words]
        data = np.frombuffer(b"".join(raw), dtype=np.uint8)
        ends = np.cumsum([len(r) for r in raw])
        spans = np.column_stack([ends - [len(r) for r in raw], ends]).astype(np.int64)
        _, self.slots, self.vocab, self.n_types, self.used = _intern_spans(
            data, spans, self.slots, self.vocab, self.n_types, self.used)

    def ids(self, data: np.ndarray, spans: np.ndarray) -> np.ndarray:
        self._sync()
        before = self.n_types
        ids, self.slots, self.vocab, self.n_types, self.used = _intern_spans(
            data, spans, self.slots, self.vocab, self.n_types, self.used)
        if self.n_types > before:
            new = np.flatnonzero(ids >= before)
            first = new[np.unique(ids[new], return_index=True)[1]]
            self.builder.word_ids([data[spans[k, 0] : spans[k, 1]].tobytes().decode("utf-8") for k in first.tolist()])
        return ids


_ERRORS = {
    1: "expected 'SENTENCE id NODES n EDGES m'",
    2: "file ends inside a sentence block",
    3: "edge line must be 'tail head ||| words ||| dense values ||| sparse'",
    4: "edge must satisfy 0 <= tail < head < NODES",
    5: "sparse feature must be name=value",
    6: "a lattice has 2 nodes and 1 edge at least",
}


def _line_number(data: np.ndarray, offset: int, first_line: int) -> int:
    return first_line + int(np.count_nonzero(data[:offset] == 10))


def _parse_chunk(data: np.ndarray, names: list[str], path, first_line: int, interner: _Interner):
    """Parse one chunk of whole sentence blocks; yields (sent_id, builder part) per sentence."""
    status, bad, sents, tails, heads, wspan, woff, dspan, spans, soff = _scan_lattices(data, len(names))
    if status:
        raise InputError(_ERRORS[status], path, _line_number(data, bad, first_line))
    D = len(names)
    ne = len(tails)
    values, counts = _numbers(data, dspan, D, path, first_line, "dense value")
    if ne and np.any(counts != D):
        bad_edge = int(np.flatnonzero(counts != D)[0])
        raise InputError(f"edge has {counts[bad_edge]} dense values, expected {D}", path,
                         _line_number(data, int(dspan[bad_edge, 0]), first_line))
    dense = values.reshape(ne, D)
    try:
        word_ids = interner.ids(data, wspan) if len(wspan) else np.zeros(0, np.int64)
    except UnicodeDecodeError:
        raise InputError("edge words are not UTF-8", path) from None
    sp_names = _gather(data, spans[:, :2], 10).tobytes().decode("utf-8").split("\n")[:-1] if len(spans) else []
    sp_vals = _numbers(data, np.ascontiguousarray(spans[:, 2:]), 1, path, first_line, "sparse value")[0] if len(spans) else np.zeros(0)
    e0 = 0
    for sid, nn, m in sents.tolist():
        e1 = e0 + m
        w_lo, w_hi = woff[e0], woff[e1]
        s_lo, s_hi = soff[e0], soff[e1]
        yield sid, (nn, tails[e0:e1], heads[e0:e1], dense[e0:e1], woff[e0 : e1 + 1] - w_lo, word_ids[w_lo:w_hi],
                    np.repeat(np.arange(m), np.diff(soff[e0 : e1 + 1])), sp_names[s_lo:s_hi], sp_vals[s_lo:s_hi])
        e0 = e1


def _chunks(path, chunk_bytes: int):
    """(bytes, first line number) of whole sentence blocks, after the two header lines."""
    raw = open(path, "rb")
    try:
        head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
        stream = raw
        if head == b"\x1f\x8b":
            import gzip

            stream = gzip.GzipFile(fileobj=raw, mode="rb")
        reader = io.BufferedReader(stream, buffer_size=1 << 20)
        check_format_line(reader.readline().decode("utf-8", errors="replace"), path)
        second = reader.readline().rstrip(b"\n").decode("utf-8", errors="replace")
        if not second.startswith("#features"):
            raise InputError("missing '#features' line", path, 2)
        yield second.split()[1:], 0
        line = 3
        rest = b""
        while True:
            try:
                block = reader.read(chunk_bytes)
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"cannot read: {exc}", path) from None
            if not block:
                if rest and not rest.endswith(b"\n"):
                    raise InputError("the last line has no line end: the file looks truncated", path,
                                     line + rest.count(b"\n"))
                if rest:
                    yield rest, line
                return
            buf = rest + block
            cut = buf.rfind(b"\nSENTENCE ")
            if cut < 0:
                rest = buf
                continue
            yield buf[: cut + 1], line
            line += buf.count(b"\n", 0, cut + 1)
            rest = buf[cut + 1 :]
    finally:
        raw.close()


def read_lattice_set(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    n_sentences: int,
    *,
    transform: Callable[[int, tuple, LatticeSetBuilder], tuple] | None = None,
    builder: LatticeSetBuilder | None = None,
    chunk_bytes: int = 16 << 20,
) -> LatticeSetBuilder:
    """Read lattice files into a :class:`LatticeSetBuilder` (call ``.build()``; add paths first if any).

    Several files are merged per sentence (shared start and goal). ``transform(sent_id, part,
    builder)`` may replace each sentence's arrays before they are kept (e.g. density pruning).

    Raises
    ------
    InputError
        On a malformed file (naming the file and line), a sentence id outside the references or twice
        in one file, or dense feature names that differ between files.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    interner = None
    for path in paths:
        chunks = _chunks(path, chunk_bytes)
        names, _ = next(chunks)
        if builder is None:
            builder = LatticeSetBuilder(n_sentences, names)
        elif names != builder.feature_names:
            if None in builder.dense_columns(names):
                raise InputError(f"dense features {names} differ from the first file's {builder.feature_names}", path, 2)
        cols = np.array(builder.dense_columns(names), dtype=np.int64)
        interner = interner or _Interner(builder)
        # a sentence twice in one file is a corrupt file (a decoder's output concatenated twice, say),
        # not more of its lattice: only separate files are merged per sentence
        in_this_file = np.zeros(n_sentences, dtype=bool)
        for data, first_line in chunks:
            arr = np.frombuffer(data, dtype=np.uint8)
            for sid, (nn, tails, heads, dense, woff, words, sp_rows, sp_names, sp_vals) in _parse_chunk(arr, names, path, first_line, interner):
                if not 0 <= sid < n_sentences:
                    raise InputError(f"lattice of sentence {sid}, but the references have {n_sentences} segments", path)
                if in_this_file[sid]:
                    raise InputError(f"sentence {sid} has two lattices in this file (separate files are merged, "
                                     "one file holds each sentence once)", path)
                in_this_file[sid] = True
                if len(heads) > 1 and np.any((np.diff(heads) < 0) | ((np.diff(heads) == 0) & (np.diff(tails) < 0))):
                    raise InputError(f"edges of sentence {sid} are not sorted by head, then tail", path)
                if len(cols) == len(builder.feature_names) and np.array_equal(cols, np.arange(len(cols))):
                    full = dense
                else:
                    full = np.zeros((len(tails), len(builder.feature_names)))
                    full[:, cols] = dense
                part = (nn, tails.copy(), heads.copy(), full,
                        (sp_rows, np.array([builder.sparse_id(x) for x in sp_names], np.int64), sp_vals),
                        woff.copy(), words.copy())
                if transform is not None:
                    part = transform(sid, part, builder)
                builder.add_arrays(sid, part)
            del arr, data
            release_free_memory()  # the chunk's text and parse buffers
    if builder is None:
        raise InputError("no lattice file given")
    return builder
