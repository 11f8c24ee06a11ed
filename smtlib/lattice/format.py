"""Translation lattices: the decoder's search graph with a feature vector on every edge.

File format (``smtlib-lattice/1``), UTF-8 text, plain or gzip (by the ``.gz`` name)::

    #smtlib-lattice/1
    #features TranslationModel0_0 TranslationModel0_1 ... LexicalReordering0_5
    SENTENCE 0 NODES 5 EDGES 7
    0 1 ||| a man ||| -1.2 -0.7 -2.3 -0.9 -8.04 -2 0 ||| cbin_3=1
    0 2 ||| man ||| ...
    ...
    SENTENCE 1 NODES 2 EDGES 1
    0 1 ||| ||| 0 0 0 0 -1.9 0 0 |||

* The ``#features`` line names the dense values, in the order of every edge's third field (the
  model's ``dense_features`` order, as in k-best lines).
* One block per input sentence, with the 0-based sentence id, the number of nodes and of edges.
  Node 0 is the start (nothing translated), node ``NODES-1`` the goal (everything translated,
  end-of-sentence scored). Nodes are numbered topologically: every edge has ``tail < head``.
* An edge line is ``tail head ||| target words ||| dense values ||| sparse`` where the target words
  are the phrase the edge appends (empty only for the single edge of an empty sentence), the dense
  values are the edge's *increment* of every dense feature (phrase scores, the LM scores of the new
  words in their context and, on edges into the goal, of ``</s>``, word penalty, distortion,
  lexicalized reordering), and ``sparse`` is ``name=value`` pairs of the edge's sparse features
  (possibly empty). Edges are sorted by head, then by tail.
* A path from 0 to the goal is one derivation of a translation: its words are the concatenation of
  its edges' words, its feature vector the sum of its edges' vectors, and its model score ``w . h``
  the sum of the edges' scores. Every hypothesis the decoder kept after recombination and pruning is
  a path; recombined hypotheses (Moses's arcs) are extra incoming edges of the same node.

With a lattice beam (``smtlib decode --lattice-beam B``, default 10; 0 = the whole graph) only
the edges whose best path scores within ``B`` of the 1-best (under the decoding weights) are written, together with every edge of
the k-best paths, so the 1-best and the k-best list are still paths
(:func:`smtlib.lattice.paths.beam_prune_nb`).

Here: the :class:`Lattice` and the file format, both ways: :func:`read_lattices` /
:func:`iter_lattices` (a checking reader; the tuners read whole files with the compiled
:func:`smtlib.lattice.reader.read_lattice_set`), and :func:`write_lattice` / :func:`lattice_block`
(the writer the decoder uses). The values are written as :func:`_fmt` gives them (``0`` for zeros,
else 9 significant digits, ``format(v, ".9g")``), by a compiled kernel that gives exactly those
bytes. Paths through a lattice (Viterbi, k-best, beam pruning, the upper envelope):
:mod:`smtlib.lattice.paths`.

**The compiled writer** (:func:`lattice_block`). Unpruned lattices have millions of edges
(Multi30k dev, Medium: ~8,000 per sentence, 18 dense values each), and formatting their values one
by one in Python made most of a lattice decode. The kernels give exactly the bytes of the Python
formatter they replace, per edge::

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
  by index. A lattice whose ``words`` / ``sparse`` are :class:`IndexedValues` (the decoder builds
  them so) carries those indices; for plain lists they are found here.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Generic, TypeVar

import numba
import numpy as np

from smtlib.errors import InputError
from smtlib.io import open_text
from smtlib.values import parse_number
from smtlib._dot import matvec

FORMAT = "#smtlib-lattice/1"

T = TypeVar("T")


class IndexedValues(Sequence, Generic[T]):
    """A read-only sequence stored as its distinct values and, per item, the index of its value.

    A :class:`Lattice`'s ``words`` and ``sparse`` repeat across edges (one phrase per translation
    option, one sparse dict per phrase-table entry); the decoder gives them in this form, so that
    it makes one tuple and one dict per option and entry rather than per edge, and the writer
    (:func:`lattice_block`) formats each distinct value once. It behaves as the list
    ``[values[i] for i in ids]`` (indexing, iteration, ``len``, ``==`` with any sequence); the items
    are shared, so treat them as read-only.
    """

    __slots__ = ("ids", "values")

    def __init__(self, ids: np.ndarray, values: list[T]):
        self.ids = np.asarray(ids, dtype=np.int64)
        self.values = values

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.values[j] for j in self.ids[i].tolist()]
        return self.values[self.ids[i]]

    def __iter__(self):
        values = self.values
        return (values[j] for j in self.ids.tolist())

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IndexedValues({list(self)!r})"


@dataclasses.dataclass
class Lattice:
    """One sentence's lattice (see the module docstring).

    Attributes
    ----------
    sent_id, n_nodes
        Sentence id and number of nodes (0 = start, ``n_nodes-1`` = goal).
    tails, heads
        Edge end points, ``tails < heads``.
    words
        Target words of each edge (a tuple of strings): a list, or an :class:`IndexedValues` (as
        the decoder builds lattices).
    dense
        ``(n_edges, n_dense)`` feature increments.
    sparse
        Per edge, ``{name: value}``: a list, or an :class:`IndexedValues`.
    feature_names
        Names of the dense columns.
    """

    sent_id: int
    n_nodes: int
    tails: np.ndarray
    heads: np.ndarray
    words: Sequence[tuple[str, ...]]
    dense: np.ndarray
    sparse: Sequence[dict[str, float]]
    feature_names: list[str]

    @property
    def n_edges(self) -> int:
        return len(self.tails)

    def edge_scores(self, weights: Mapping[str, float] | np.ndarray) -> np.ndarray:
        """``w . h_e`` of every edge; ``weights`` is a name->value map or a dense vector."""
        if isinstance(weights, np.ndarray):
            return matvec(self.dense, weights)
        w = np.array([weights.get(n, 0.0) for n in self.feature_names], dtype=np.float64)
        out = matvec(self.dense, w)
        for e, sp in enumerate(self.sparse):
            for name, v in sp.items():
                out[e] += weights.get(name, 0.0) * v
        return out

    def path_features(self, edges: list[int] | np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
        """Summed dense and sparse features of a path."""
        dense = self.dense[np.asarray(edges, dtype=np.int64)].sum(axis=0) if len(edges) else np.zeros(
            self.dense.shape[1])
        sparse: dict[str, float] = {}
        for e in edges:
            for name, v in self.sparse[e].items():
                sparse[name] = sparse.get(name, 0.0) + v
        return dense, sparse

    def path_words(self, edges: list[int] | np.ndarray) -> list[str]:
        return [w for e in edges for w in self.words[e]]

    def _word_ids(self) -> tuple[np.ndarray, np.ndarray]:
        vocab: dict[str, int] = {}
        ids = [vocab.setdefault(w, len(vocab)) for ws in self.words for w in ws]
        offs = np.zeros(self.n_edges + 1, dtype=np.int64)
        offs[1:] = np.cumsum([len(ws) for ws in self.words])
        return offs, np.array(ids, dtype=np.int64)


# ---------------------------------------------------------------------------------------- I/O
def _fmt(v: float) -> str:
    """A value as the lattice format writes it: ``0`` for zeros (``-0.0`` too), else ``.9g``."""
    if v == 0.0:
        return "0"
    return f"{v:.9g}"


def write_lattice(out: IO[str], lat: Lattice) -> None:
    """Write one sentence block to a text stream (the header line is written by the caller, see
    :func:`lattice_header`).

    The block is made by :func:`lattice_block` (compiled, byte-identical
    to formatting every value with :func:`_fmt`); binary streams take that function's bytes directly.
    """
    out.write(lattice_block(lat).decode("utf-8"))


def lattice_header(feature_names: list[str]) -> str:
    return f"{FORMAT}\n#features {' '.join(feature_names)}\n"


def _count(text: str, what: str, path, lineno: int) -> int:
    if not text.isascii() or not text.isdigit():
        raise InputError(f"{what} {text!r} is not a non-negative integer", path, lineno)
    return int(text)


def _edge_line(line: str, names: list[str], n_nodes: int, path, lineno: int):
    """(tail, head, words, dense values, sparse) of one edge line; an InputError names the line."""
    if not line.endswith("\n"):
        what = "the file ends inside a block (truncated?)" if not line else "the last line has no line end (truncated?)"
        raise InputError(what, path, lineno)
    if "||||" in line:
        raise InputError("'||||' is ambiguous: which three '|' are the separator?", path, lineno)
    fields = line[:-1].split("|||")
    if len(fields) != 4:
        raise InputError(f"edge line must have 4 '|||'-separated fields, found {len(fields)}", path, lineno)
    ends = fields[0].split()
    if len(ends) != 2:
        raise InputError(f"expected 'tail head' before the first '|||', got {fields[0].strip()!r}", path, lineno)
    tail, head = (_count(x, "node", path, lineno) for x in ends)
    if not 0 <= tail < head < n_nodes:
        raise InputError(f"edge {tail} -> {head} does not satisfy 0 <= tail < head < NODES ({n_nodes})", path, lineno)
    values = [parse_number(v, "dense value", path, lineno) for v in fields[2].split()]
    sparse: dict[str, float] = {}
    for item in fields[3].split():
        name, sep, value = item.partition("=")
        if not sep or not name or "=" in value:
            raise InputError(f"sparse feature {item!r} is not 'name=value' (sparse names never hold '=')", path, lineno)
        if name in sparse:
            raise InputError(f"sparse feature {name!r} appears twice", path, lineno)
        sparse[name] = parse_number(value, f"value of sparse feature {name!r}:", path, lineno)
    return tail, head, tuple(fields[1].split()), values, sparse


def check_format_line(first: str, path) -> None:
    """Line 1 of a lattice file must be :data:`FORMAT`; a file with Windows line ends is told so."""
    line = first.rstrip("\n")
    if line == FORMAT:
        return
    if line == FORMAT + "\r":
        raise InputError("Windows line ends (CRLF): the lines of a lattice file end in \\n only", path, 1)
    raise InputError(f"not a lattice file (first line should be {FORMAT!r})", path, 1)


def iter_lattices(path: str | os.PathLike) -> Iterator[Lattice]:
    """Read a lattice file block by block.

    Every line is checked, so that a damaged file is an error at its real line rather than another
    lattice: numbers follow :mod:`smtlib.values` (finite), sentence ids are 0, 1, 2 ... (one block
    per input sentence, as ``smtlib decode --lattice`` writes them), every edge has as many dense
    values as the ``#features`` line names (when the first two edges of the file agree with each
    other but not with it, the ``#features`` line is the one reported), edges are sorted by head
    then tail, a sparse feature appears once per edge, and the file ends with a line end.

    Raises
    ------
    InputError
        On a malformed file, naming the file and the 1-based line.
    """
    with open_text(path, what="lattice file") as fh:
        check_format_line(fh.readline(), path)
        second = fh.readline()
        parts = second.split()
        if not parts or parts[0] != "#features" or not second.endswith("\n"):
            raise InputError("missing '#features' line", path, 2)
        names = parts[1:]
        if not names:
            raise InputError("the '#features' line names no feature", path, 2)
        if len(set(names)) != len(names):
            raise InputError("the '#features' line names a feature twice", path, 2)
        lineno = 2
        edges_seen = 0
        expected_id = 0
        while True:
            header = fh.readline()
            lineno += 1
            if not header:
                return
            parts = header.split()
            if len(parts) != 6 or parts[0] != "SENTENCE" or parts[2] != "NODES" or parts[4] != "EDGES" or not header.endswith("\n"):
                raise InputError(f"expected 'SENTENCE id NODES n EDGES m', got {header.strip()!r}", path, lineno)
            sent_id, n_nodes, n_edges = (_count(parts[k], parts[k - 1].lower() if k > 1 else "sentence id", path, lineno)
                                         for k in (1, 3, 5))
            if sent_id != expected_id:
                raise InputError(f"sentence id {sent_id} where {expected_id} is expected (blocks are 0, 1, 2 ...)", path, lineno)
            expected_id += 1
            if n_nodes < 2 or n_edges < 1:
                raise InputError("a lattice has 2 nodes and 1 edge at least", path, lineno)
            tails = np.zeros(n_edges, dtype=np.int64)
            heads = np.zeros(n_edges, dtype=np.int64)
            dense = np.zeros((n_edges, len(names)))
            words: list[tuple[str, ...]] = []
            sparse: list[dict[str, float]] = []
            for e in range(n_edges):
                line = fh.readline()
                lineno += 1
                tail, head, phrase, vals, sp = _edge_line(line, names, n_nodes, path, lineno)
                if len(vals) != len(names):
                    if edges_seen == 0:
                        ahead = fh.readline().split("|||")
                        if len(ahead) == 4 and len(ahead[2].split()) == len(vals):
                            raise InputError(f"the '#features' line names {len(names)} features but the edges have "
                                             f"{len(vals)} values", path, 2)
                    raise InputError(f"edge has {len(vals)} dense values, expected {len(names)}", path, lineno)
                if e and (head, tail) < (heads[e - 1], tails[e - 1]):
                    raise InputError(f"edge {tail} -> {head} after {tails[e - 1]} -> {heads[e - 1]}: edges must be sorted "
                                     "by head, then tail", path, lineno)
                tails[e], heads[e] = tail, head
                dense[e] = vals
                words.append(phrase)
                sparse.append(sp)
                edges_seen += 1
            yield Lattice(sent_id, n_nodes, tails, heads, words, dense, sparse, names)


def read_lattices(path: str | os.PathLike) -> list[Lattice]:
    """All lattices of a file."""
    return list(iter_lattices(path))


# ------------------------------------------------------------------------ the compiled writer
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
    """The kernel's text of every value (:func:`_fmt`'s); for tests and checks."""
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

    Byte-identical to formatting every value with :func:`_fmt` (the module
    docstring says how).
    """
    phrase_ids, phrases = _indexed(lat.words)
    sparse_ids, sparses = _indexed(lat.sparse)
    head = f"SENTENCE {lat.sent_id} NODES {lat.n_nodes} EDGES {lat.n_edges}\n".encode()
    dense = np.asarray(lat.dense, dtype=np.float64)
    return head + _block_bytes(lat.tails, lat.heads, dense, phrase_ids, [" ".join(p) for p in phrases], sparse_ids,
                               [" ".join(f"{k}={_fmt(v)}" for k, v in sp.items()) for sp in sparses])
