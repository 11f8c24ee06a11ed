"""The lattices of a whole dev set as flat arrays, for the lattice tuners (lb-mert, lb-mira, mira).

A :class:`LatticeSet` holds one lattice per sentence id (possibly empty) in the layout of
:mod:`smtlib.decoder.lattice` (node 0 the start, the last node the goal, ``tail < head``, edges
sorted by head then tail), concatenated: sentence ``s`` owns edges ``edge_off[s]:edge_off[s+1]``
with *local* node ids. Edge features are a dense ``(E, D)`` matrix (Fortran order: one column per
feature is contiguous, which is what a coordinate line search reads) and a CSR sparse matrix; edge
words are ids into :attr:`LatticeSet.vocab`.

Some edges are *whole paths*: an edge from the start to the goal that stands for a complete
hypothesis given from outside the lattice (a k-best pool, or the paths aggregated over earlier
tuning iterations, Cherry & Foster 2012 §3.1/§4). Such an edge carries the BLEU statistics row of
its hypothesis (``path_row``), so a pool without words (the tuners' generic tests) is a valid
lattice set too: a k-best pool is the special case where every lattice is a bundle of whole paths.

Reading (:func:`read_lattice_set`) is a compiled byte-level parser over the file in chunks of
sentences (the unpruned lattices of a 1,000-sentence dev set are about a gigabyte of text), with an
optional per-sentence filter (lb-mira's density pruning) applied before a chunk is kept.
:func:`density_prune` is that pruning: the ``max_edges`` edges with the best max-marginal score
(the best path through the edge, Moses's ``Graph::Prune``; ties at the threshold are kept), which
keeps every kept edge on a kept path.
"""

from __future__ import annotations

import dataclasses
import io
import os
import zlib
from collections.abc import Callable, Iterable, Sequence

import numba
import numpy as np
import scipy.sparse as sp

from smtlib.decoder.lattice import FORMAT, Lattice
from smtlib.errors import InputError


def _malloc_trim():
    """glibc's ``malloc_trim`` (None where there is none)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Give the heap's free pages back to the system (glibc ``malloc_trim(0)``; no effect elsewhere).

    The per-sentence arrays of a lattice set being read or built are a few hundred kilobytes to a few
    megabytes each, which glibc serves from its heap once its adaptive mmap threshold has grown;
    freed, they stay in the process's resident memory. Without trimming, the peak RSS of reading and
    building a set is the per-sentence copies *plus* the final arrays (about twice the set); trimming
    while the copies are consumed keeps it near one set.
    """
    if _TRIM is not None:
        _TRIM(0)


@dataclasses.dataclass
class LatticeSet:
    """Lattices of sentence ids ``0 .. n_sentences-1`` (see the module docstring).

    Attributes
    ----------
    n_nodes
        (S,) nodes per sentence (0 = no lattice).
    edge_off
        (S+1,) edge ranges.
    tails, heads
        (E,) local node ids.
    dense
        (E, D) float64, Fortran order; columns named :attr:`feature_names`.
    sparse
        (E, F) CSR; columns named :attr:`sparse_names`.
    word_off, words
        Words of edge ``e`` are ``vocab[words[word_off[e]:word_off[e+1]]]``.
    path_row
        (E,) -1 for a lattice edge, else the row of :attr:`path_stats` of a whole-path edge.
    path_stats
        (P, 10) BLEU statistics of the whole-path edges (NaN rows when unknown: computed from
        words by the caller).
    """

    n_nodes: np.ndarray
    edge_off: np.ndarray
    tails: np.ndarray
    heads: np.ndarray
    dense: np.ndarray
    sparse: sp.csr_matrix
    feature_names: list[str]
    sparse_names: list[str]
    word_off: np.ndarray
    words: np.ndarray
    vocab: list[str]
    path_row: np.ndarray
    path_stats: np.ndarray

    @property
    def n_sentences(self) -> int:
        return len(self.n_nodes)

    @property
    def n_edges(self) -> int:
        return len(self.tails)

    @property
    def all_feature_names(self) -> list[str]:
        return list(self.feature_names) + list(self.sparse_names)

    def edge_scores(self, weights: np.ndarray) -> np.ndarray:
        """(E,) ``w . h_e`` for ``weights`` aligned with :attr:`all_feature_names`."""
        weights = np.asarray(weights, dtype=np.float64)
        d = self.dense.shape[1]
        out = self.dense @ weights[:d]
        if self.sparse.shape[1]:
            out = out + self.sparse @ weights[d:]
        return out

    def weight_vector(self, weights: dict[str, float]) -> np.ndarray:
        return np.array([weights.get(n, 0.0) for n in self.all_feature_names], dtype=np.float64)

    def sentence(self, s: int) -> Lattice:
        """Sentence ``s`` as a :class:`~smtlib.decoder.lattice.Lattice` (for tests and writing)."""
        lo, hi = int(self.edge_off[s]), int(self.edge_off[s + 1])
        words = [tuple(self.vocab[w] for w in self.words[self.word_off[e] : self.word_off[e + 1]]) for e in range(lo, hi)]
        sparse = []
        for e in range(lo, hi):
            a, b = self.sparse.indptr[e], self.sparse.indptr[e + 1]
            sparse.append({self.sparse_names[c]: float(v) for c, v in zip(self.sparse.indices[a:b], self.sparse.data[a:b], strict=True)})
        return Lattice(s, int(self.n_nodes[s]), self.tails[lo:hi].astype(np.int64), self.heads[lo:hi].astype(np.int64),
                       words, np.ascontiguousarray(self.dense[lo:hi]), sparse, list(self.feature_names))

    def path_words(self, edges: Sequence[int]) -> list[str]:
        return [self.vocab[w] for e in edges for w in self.words[self.word_off[e] : self.word_off[e + 1]]]

    def path_features(self, edges: Sequence[int]) -> np.ndarray:
        """Summed features of a path, aligned with :attr:`all_feature_names`."""
        edges = np.asarray(edges, dtype=np.int64)
        dense = self.dense[edges].sum(axis=0) if len(edges) else np.zeros(self.dense.shape[1])
        sparse = np.asarray(self.sparse[edges].sum(axis=0)).ravel() if len(edges) else np.zeros(self.sparse.shape[1])
        return np.concatenate([dense, sparse])


# ---------------------------------------------------------------------------------------- building
class LatticeSetBuilder:
    """Collects per-sentence lattices and whole paths, then :meth:`build` makes a :class:`LatticeSet`.

    Feature names are unified (a dense name unknown to the builder's list is an error; sparse names
    are added as met); words are interned into one vocabulary.
    """

    def __init__(self, n_sentences: int, feature_names: Sequence[str]):
        self.n_sentences = n_sentences
        self.feature_names = list(feature_names)
        self._dense_index = {n: i for i, n in enumerate(self.feature_names)}
        self.sparse_names: list[str] = []
        self._sparse_index: dict[str, int] = {}
        self.vocab: list[str] = []
        self._vocab_index: dict[str, int] = {}
        # per sentence: list of parts (n_nodes, tails, heads, dense, sparse (rows, cols, vals), words
        # (offsets, ids), path rows)
        self._lattice: dict[int, tuple] = {}
        self._paths: dict[int, list[tuple[np.ndarray, dict[str, float], list[str], np.ndarray | None]]] = {}

    # -- names --------------------------------------------------------------------------------
    def word_ids(self, words: Iterable[str]) -> list[int]:
        out = []
        for w in words:
            i = self._vocab_index.get(w)
            if i is None:
                i = self._vocab_index[w] = len(self.vocab)
                self.vocab.append(w)
            out.append(i)
        return out

    def sparse_id(self, name: str) -> int:
        i = self._sparse_index.get(name)
        if i is None:
            i = self._sparse_index[name] = len(self.sparse_names)
            self.sparse_names.append(name)
        return i

    # -- content ------------------------------------------------------------------------------
    def add_lattice(self, lat: Lattice) -> None:
        """Add a lattice (a second lattice of the same sentence is merged: shared start and goal)."""
        if not 0 <= lat.sent_id < self.n_sentences:
            raise InputError(f"lattice of sentence {lat.sent_id}, but there are {self.n_sentences} sentences")
        cols = [self._dense_index.get(n) for n in lat.feature_names]
        if None in cols:
            missing = [n for n, c in zip(lat.feature_names, cols, strict=True) if c is None]
            raise InputError(f"lattice of sentence {lat.sent_id} has dense features {missing} unknown to the first file")
        dense = np.zeros((lat.n_edges, len(self.feature_names)))
        dense[:, cols] = lat.dense
        rows, sp_cols, vals = [], [], []
        for e, feats in enumerate(lat.sparse):
            for name, v in feats.items():
                rows.append(e)
                sp_cols.append(self.sparse_id(name))
                vals.append(v)
        woff = np.zeros(lat.n_edges + 1, dtype=np.int64)
        woff[1:] = np.cumsum([len(w) for w in lat.words])
        wids = np.array(self.word_ids(w for ws in lat.words for w in ws), dtype=np.int64)
        part = (lat.n_nodes, np.asarray(lat.tails, np.int64), np.asarray(lat.heads, np.int64), dense,
                (np.array(rows, np.int64), np.array(sp_cols, np.int64), np.array(vals, np.float64)), woff, wids)
        self.add_arrays(lat.sent_id, part)

    def add_arrays(self, s: int, part: tuple) -> None:
        """Add one lattice given as arrays (see :meth:`add_lattice`); merges with an earlier one."""
        if s in self._lattice:
            part = _merge_parts(self._lattice[s], part)
        self._lattice[s] = part

    def add_path(self, s: int, dense: np.ndarray, sparse: dict[str, float], words: list[str],
                 stats: np.ndarray | None = None) -> None:
        """Add a whole hypothesis of sentence ``s`` as a start-to-goal edge (dense aligned with the
        builder's feature names)."""
        if not 0 <= s < self.n_sentences:
            raise InputError(f"path of sentence {s}, but there are {self.n_sentences} sentences")
        self._paths.setdefault(s, []).append((np.asarray(dense, np.float64), sparse, words, stats))

    def _with_paths(self, s: int) -> tuple | None:
        """Sentence ``s``'s lattice arrays with its whole paths appended as start-goal edges."""
        D = len(self.feature_names)
        lat = self._lattice.pop(s, None)
        paths = self._paths.pop(s, [])
        if lat is None and not paths:
            return None
        if lat is None:
            lat = (2, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, D)),
                   (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)), np.zeros(1, np.int64),
                   np.zeros(0, np.int64))
        nn, tails, heads, dense, (r, c, v), woff, wids = lat
        prow = np.full(len(tails), -1, dtype=np.int64)
        if not paths:
            return nn, tails, heads, dense, (r, c, v), woff, wids, prow, []
        goal = nn - 1
        k = len(paths)
        p_dense = np.stack([p[0] for p in paths])
        p_rows, p_cols, p_vals = [], [], []
        for i, p in enumerate(paths):
            for name, val in p[1].items():
                p_rows.append(len(tails) + i)
                p_cols.append(self.sparse_id(name))
                p_vals.append(val)
        p_words = [self.word_ids(p[2]) for p in paths]
        p_woff = woff[-1] + np.cumsum([0] + [len(w) for w in p_words])
        stats = [np.full(10, np.nan) if p[3] is None else np.asarray(p[3], np.float64) for p in paths]
        tails = np.concatenate([tails, np.zeros(k, np.int64)])
        heads = np.concatenate([heads, np.full(k, goal, np.int64)])
        dense = np.vstack([dense, p_dense])
        r = np.concatenate([r, np.array(p_rows, np.int64)])
        c = np.concatenate([c, np.array(p_cols, np.int64)])
        v = np.concatenate([v, np.array(p_vals, np.float64)])
        woff = np.concatenate([woff, p_woff[1:]])
        wids = np.concatenate([wids, np.array([w for ws in p_words for w in ws], np.int64)])
        prow = np.concatenate([prow, np.arange(k, dtype=np.int64)])  # local; offset in build()
        # keep the edges sorted by head, then tail (stable: paths after the lattice's own edges)
        order = np.lexsort((tails, heads))
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        lens = np.diff(woff)[order]
        starts = woff[:-1][order]
        wids = np.concatenate([wids[a : a + n] for a, n in zip(starts, lens, strict=True)]) if len(order) else wids
        woff = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        return nn, tails[order], heads[order], dense[order], (inverse[r], c, v), woff, wids, prow[order], stats

    def build(self) -> LatticeSet:
        """The :class:`LatticeSet` (the builder's content is consumed, to keep one copy in memory)."""
        S = self.n_sentences
        D = len(self.feature_names)
        parts = {}
        n_edges = n_words = 0
        for s in range(S):
            part = self._with_paths(s)
            if part is not None:
                parts[s] = part
                n_edges += len(part[1])
                n_words += len(part[6])
        n_nodes = np.zeros(S, dtype=np.int64)
        edge_off = np.zeros(S + 1, dtype=np.int64)
        tails = np.empty(n_edges, np.int64)
        heads = np.empty(n_edges, np.int64)
        dense = np.empty((n_edges, D), order="F")
        word_off = np.zeros(n_edges + 1, np.int64)
        words = np.empty(n_words, np.int64)
        path_row = np.empty(n_edges, np.int64)
        sp_rows, sp_cols, sp_vals, path_stats = [], [], [], []
        e0 = w0 = 0
        release_free_memory()
        for s in range(S):
            part = parts.pop(s, None)
            if s % 32 == 31:
                release_free_memory()
            if part is None:
                edge_off[s + 1] = e0
                continue
            nn, t, h, dn, (r, c, v), woff, wids, prow, stats = part
            m = len(t)
            n_nodes[s] = nn
            tails[e0 : e0 + m] = t
            heads[e0 : e0 + m] = h
            dense[e0 : e0 + m] = dn
            word_off[e0 + 1 : e0 + m + 1] = woff[1:] + w0
            words[w0 : w0 + len(wids)] = wids
            path_row[e0 : e0 + m] = np.where(prow >= 0, prow + len(path_stats), -1)
            path_stats.extend(stats)
            sp_rows.append(r + e0)
            sp_cols.append(c)
            sp_vals.append(v)
            e0 += m
            w0 += len(wids)
            edge_off[s + 1] = e0
        cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
        sparse = sp.csr_matrix((cat(sp_vals, np.float64), (cat(sp_rows, np.int64), cat(sp_cols, np.int64))),
                               shape=(n_edges, len(self.sparse_names)))
        sparse.sum_duplicates()
        return LatticeSet(n_nodes, edge_off, tails, heads, dense, sparse, list(self.feature_names),
                          list(self.sparse_names), word_off, words, list(self.vocab), path_row,
                          np.array(path_stats, dtype=np.float64).reshape(-1, 10))


def _merge_parts(a: tuple, b: tuple) -> tuple:
    """Two lattices of one sentence as one: shared start and goal, other nodes disjoint."""
    na, ta, ha, da, (ra, ca, va), wa, ia = a
    nb, tb, hb, db, (rb, cb, vb), wb, ib = b
    # a's inner nodes 1..na-2 -> 1..na-2; b's inner nodes 1..nb-2 -> na-1..; goals -> last
    n = na + nb - 2
    map_a = np.arange(na, dtype=np.int64)
    map_a[na - 1] = n - 1
    map_b = np.concatenate([[0], np.arange(na - 1, na - 1 + nb - 2), [n - 1]]).astype(np.int64)
    tails = np.concatenate([map_a[ta], map_b[tb]])
    heads = np.concatenate([map_a[ha], map_b[hb]])
    dense = np.vstack([da, db])
    lens = np.concatenate([np.diff(wa), np.diff(wb)])
    starts = np.concatenate([wa[:-1], wb[:-1] + len(ia)])
    wids_all = np.concatenate([ia, ib])
    order = np.lexsort((tails, heads))
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    rows = inverse[np.concatenate([ra, rb + len(ta)])]
    wids = np.concatenate([wids_all[s : s + k] for s, k in zip(starts[order], lens[order], strict=True)]) if len(order) else wids_all
    woff = np.concatenate([[0], np.cumsum(lens[order])]).astype(np.int64)
    return (n, tails[order], heads[order], dense[order], (rows, np.concatenate([ca, cb]), np.concatenate([va, vb])),
            woff, wids)


def lattice_set_from_lattices(lattices: Iterable[Lattice], n_sentences: int,
                              feature_names: Sequence[str] | None = None) -> LatticeSet:
    lattices = list(lattices)
    if feature_names is None:
        feature_names = lattices[0].feature_names if lattices else []
    b = LatticeSetBuilder(n_sentences, feature_names)
    for lat in lattices:
        b.add_lattice(lat)
    return b.build()


def lattice_set_from_pool(pool) -> LatticeSet:
    """A k-best pool as a lattice set: every hypothesis a whole-path edge with its BLEU statistics.

    The pool's statistics (``pool.stats``, computed by the caller) are used as they are, so the
    lattice tuners on a pool optimise exactly what the k-best tuners do.
    """
    S = pool.n_sentences
    D = len(pool.dense_names)
    b = LatticeSetBuilder(S, pool.dense_names)
    for name in pool.sparse_names:
        b.sparse_id(name)
    csr = pool.sparse
    for s in range(S):
        for r in range(pool.offsets[s], pool.offsets[s + 1]):
            lo, hi = csr.indptr[r], csr.indptr[r + 1]
            sparse = {pool.sparse_names[c]: float(v) for c, v in zip(csr.indices[lo:hi], csr.data[lo:hi], strict=True)}
            b.add_path(s, pool.dense[r, :D], sparse, pool.texts[r].split(), None if pool.stats is None else pool.stats[r])
    return b.build()


# ---------------------------------------------------------------------------------------- pruning
@numba.njit(cache=True)
def max_marginals(n_nodes, tails, heads, deltas):
    """Score of the best start-goal path through every edge (edges sorted by head)."""
    ne = tails.shape[0]
    fwd = np.full(n_nodes, -np.inf)
    fwd[0] = 0.0
    for e in range(ne):
        c = fwd[tails[e]] + deltas[e]
        if c > fwd[heads[e]]:
            fwd[heads[e]] = c
    bwd = np.full(n_nodes, -np.inf)
    bwd[n_nodes - 1] = 0.0
    for e in range(ne - 1, -1, -1):
        c = bwd[heads[e]] + deltas[e]
        if c > bwd[tails[e]]:
            bwd[tails[e]] = c
    out = np.empty(ne)
    for e in range(ne):
        out[e] = fwd[tails[e]] + deltas[e] + bwd[heads[e]]
    return out


def density_prune_edges(n_nodes: int, tails: np.ndarray, heads: np.ndarray, deltas: np.ndarray,
                        max_edges: int) -> np.ndarray:
    """Edges kept by density pruning to ``max_edges`` (sorted ids; see the module docstring)."""
    mm = max_marginals(n_nodes, tails, heads, deltas)
    finite = np.isfinite(mm)
    if max_edges <= 0 or np.count_nonzero(finite) <= max_edges:
        return np.flatnonzero(finite)
    threshold = np.sort(mm[finite])[::-1][max_edges - 1]
    return np.flatnonzero(finite & (mm >= threshold))


def subgraph(n_nodes: int, tails: np.ndarray, heads: np.ndarray, keep: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Renumber the nodes used by the edges ``keep`` (start and goal always kept): (nodes, tails, heads)."""
    used = np.zeros(n_nodes, dtype=bool)
    used[[0, n_nodes - 1]] = True
    used[tails[keep]] = True
    used[heads[keep]] = True
    new_id = np.cumsum(used) - 1
    return int(used.sum()), new_id[tails[keep]], new_id[heads[keep]]


def prune_part(part: tuple, deltas: np.ndarray, max_edges: int) -> tuple:
    """Density-prune a lattice given as builder arrays (see :meth:`LatticeSetBuilder.add_arrays`)."""
    nn, tails, heads, dense, (r, c, v), woff, wids = part
    keep = density_prune_edges(nn, tails, heads, deltas, max_edges)
    if len(keep) == len(tails):
        return part
    n, t, h = subgraph(nn, tails, heads, keep)
    new_row = np.full(len(tails), -1, dtype=np.int64)
    new_row[keep] = np.arange(len(keep))
    mask = new_row[r] >= 0
    lens = np.diff(woff)[keep]
    starts = woff[:-1][keep]
    new_wids = np.concatenate([wids[a : a + k] for a, k in zip(starts, lens, strict=True)]) if len(keep) else wids[:0]
    return (n, t, h, dense[keep], (new_row[r[mask]], c[mask], v[mask]), np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
            new_wids)


# ---------------------------------------------------------------------------------------- reading
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
                if nfb == fallback.shape[0]:
                    bigger_fb = np.empty((2 * nfb, 3), dtype=np.int64)
                    bigger_fb[:nfb] = fallback[:nfb]
                    fallback = bigger_fb
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


_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


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
        h = _FNV_OFFSET
        for q in range(a, b):
            h = (h ^ np.uint64(data[q])) * _FNV_PRIME
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
            if slots[slot, 0] == hs and slots[slot, 2] == length:
                v = slots[slot, 1]
                same = True
                for q in range(length):
                    if vocab[v + q] != data[a + q]:
                        same = False
                        break
                if same:
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

    def __init__(self, builder: "LatticeSetBuilder"):
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
            for k in first.tolist():
                word = data[spans[k, 0] : spans[k, 1]].tobytes().decode("utf-8")
                self.builder._vocab_index[word] = len(self.builder.vocab)
                self.builder.vocab.append(word)
        return ids


_ERRORS = {
    1: "expected 'SENTENCE id NODES n EDGES m'",
    2: "file ends inside a sentence block",
    3: "edge line must be 'tail head ||| words ||| dense values ||| sparse'",
    4: "edge must satisfy 0 <= tail < head < NODES",
    5: "sparse feature must be name=value",
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
        first = reader.readline().rstrip(b"\n").decode("utf-8", errors="replace")
        if first != FORMAT:
            raise InputError(f"not a lattice file (first line should be {FORMAT!r})", path, 1)
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
        On a malformed file (naming the file and line), a sentence id outside the references, or
        dense feature names that differ between files.
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
            cols = [builder._dense_index.get(n) for n in names]
            if None in cols:
                raise InputError(f"dense features {names} differ from the first file's {builder.feature_names}", path, 2)
        cols = np.array([builder._dense_index[n] for n in names], dtype=np.int64)
        interner = interner or _Interner(builder)
        for data, first_line in chunks:
            arr = np.frombuffer(data, dtype=np.uint8)
            for sid, (nn, tails, heads, dense, woff, words, sp_rows, sp_names, sp_vals) in _parse_chunk(arr, names, path, first_line, interner):
                if not 0 <= sid < n_sentences:
                    raise InputError(f"lattice of sentence {sid}, but the references have {n_sentences} segments", path)
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
