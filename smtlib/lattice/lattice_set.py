"""The lattices of a whole dev set as flat arrays, for the lattice tuners (lb-mert, lb-mira, mira).

A :class:`LatticeSet` holds one lattice per sentence id (possibly empty) in the layout of
:mod:`smtlib.lattice.format` (node 0 the start, the last node the goal, ``tail < head``, edges
sorted by head then tail), concatenated: sentence ``s`` owns edges ``edge_off[s]:edge_off[s+1]``
with *local* node ids. Edge features are a dense ``(E, D)`` matrix (Fortran order: one column per
feature is contiguous, which is what a coordinate line search reads) and a CSR sparse matrix; edge
words are ids into :attr:`LatticeSet.vocab`.

Some edges are *whole paths*: an edge from the start to the goal that stands for a complete
hypothesis given from outside the lattice (a k-best pool, or the paths aggregated over earlier
tuning iterations, Cherry & Foster 2012 §3.1/§4). Such an edge carries the BLEU statistics row of
its hypothesis (``path_row``), so a pool without words (the tuners' generic tests) is a valid
lattice set too: a k-best pool is the special case where every lattice is a bundle of whole paths.

Reading lattice files into a set is :mod:`smtlib.lattice.reader`, with an optional
per-sentence filter (lb-mira's density pruning, :func:`prune_part`) applied before a sentence is kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from smtlib.lattice.format import Lattice
from smtlib.lattice.paths import density_prune_edges, subgraph
from smtlib.errors import InputError
from smtlib._dot import matvec


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
        out = matvec(self.dense, weights[:d])
        if self.sparse.shape[1]:
            out = out + self.sparse @ weights[d:]
        return out

    def weight_vector(self, weights: dict[str, float]) -> np.ndarray:
        return np.array([weights.get(n, 0.0) for n in self.all_feature_names], dtype=np.float64)

    def sentence(self, s: int) -> Lattice:
        """Sentence ``s`` as a :class:`~smtlib.lattice.format.Lattice` (for tests and writing)."""
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
class _PathBlock(NamedTuple):
    """Whole paths of one sentence added together (:meth:`LatticeSetBuilder.add_path`, ``add_pool``)."""

    dense: np.ndarray  #: (k, D) aligned with the builder's dense names
    sparse: tuple[np.ndarray, np.ndarray, np.ndarray]  #: entries: row in the block, builder sparse id, value
    #: each path's words, or its text (``add_pool``: split when the set is built, one sentence at a time, so
    #: that a million aggregated paths are not a Python string per word all at once)
    words: Sequence[list[str] | str]
    stats: np.ndarray | None  #: (k, 10) BLEU statistics, or None (NaN rows)


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
        self._paths: dict[int, list[_PathBlock]] = {}

    def sentences_spanned(self) -> int:
        """The largest sentence id with a lattice or a path + 1 (0 when there is none)."""
        return max([*self._lattice, *self._paths], default=-1) + 1

    def cut_sentences(self, n_sentences: int) -> None:
        """Shorten the sentence range to ``n_sentences`` (only ids without lattice or path go)."""
        if n_sentences < self.sentences_spanned():
            raise ValueError(f"cutting a lattice set of {self.sentences_spanned()} sentences to {n_sentences}")
        self.n_sentences = min(self.n_sentences, n_sentences)

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

    def dense_columns(self, names: Sequence[str]) -> list[int | None]:
        """The builder's column of each dense feature name (None for a name it does not know)."""
        return [self._dense_index.get(n) for n in names]

    # -- content ------------------------------------------------------------------------------
    def add_lattice(self, lat: Lattice) -> None:
        """Add a lattice (a second lattice of the same sentence is merged: shared start and goal)."""
        if not 0 <= lat.sent_id < self.n_sentences:
            raise InputError(f"lattice of sentence {lat.sent_id}, but there are {self.n_sentences} sentences")
        cols = self.dense_columns(lat.feature_names)
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
        self._check_path_sentence(s)
        cols = np.array([self.sparse_id(name) for name in sparse], dtype=np.int64)
        entries = (np.zeros(len(cols), np.int64), cols, np.array(list(sparse.values()), dtype=np.float64))
        block = _PathBlock(np.asarray(dense, np.float64).reshape(1, -1), entries, [list(words)],
                           None if stats is None else np.asarray(stats, np.float64).reshape(1, -1))
        self._paths.setdefault(s, []).append(block)

    def add_pool(self, pool, dense_columns: Sequence[int], stats: np.ndarray | None = None) -> int:
        """Add every hypothesis of a k-best pool (:class:`smtlib.kbest.pool.KBestPool`) as a whole-path
        edge of its sentence, and return how many.

        The same as :meth:`add_path` row by row in the pool's order (same edges, sparse ids numbered
        in the same order), in blocks per sentence. An lb-mert step of Table 4 reads up to 1.5 million
        aggregated paths; row by row they took about 40 s of its 54 s load (py-spy); 905k paths added
        and built take 9.0 s CPU instead of 17.8 s.
        ``dense_columns``: the builder's column of each of the pool's dense features; ``stats``: the
        rows' BLEU statistics, or None.
        """
        offsets = np.asarray(pool.offsets)
        n_rows = int(offsets[-1])
        if n_rows == 0:
            return 0
        sentences = np.flatnonzero(np.diff(offsets)).tolist()  # those with rows
        self._check_path_sentence(sentences[-1])  # the last: before anything is added
        cols = list(dense_columns)
        dense = np.zeros((n_rows, len(self.feature_names)))
        dense[:, cols] = pool.dense[:, : len(cols)]
        csr = pool.sparse
        # builder ids for the pool's sparse columns, in the order add_path would meet them (row-major)
        ids = np.full(len(pool.sparse_names), -1, dtype=np.int64)
        used, first = np.unique(csr.indices, return_index=True)
        for c in used[np.argsort(first, kind="stable")].tolist():
            ids[c] = self.sparse_id(pool.sparse_names[c])
        per_row = np.diff(csr.indptr)
        for s in sentences:
            lo, hi = int(offsets[s]), int(offsets[s + 1])
            a, b = int(csr.indptr[lo]), int(csr.indptr[hi])
            entries = (np.repeat(np.arange(hi - lo, dtype=np.int64), per_row[lo:hi]), ids[csr.indices[a:b]],
                       csr.data[a:b].astype(np.float64))
            block = _PathBlock(dense[lo:hi], entries, pool.texts[lo:hi], None if stats is None else np.asarray(stats[lo:hi], np.float64))
            self._paths.setdefault(s, []).append(block)
        return n_rows

    def _check_path_sentence(self, s: int) -> None:
        if not 0 <= s < self.n_sentences:
            raise InputError(f"path of sentence {s}, but there are {self.n_sentences} sentences")

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
            return nn, tails, heads, dense, (r, c, v), woff, wids, prow, np.zeros((0, 10))
        goal = nn - 1
        sizes = [len(block.words) for block in paths]
        k = sum(sizes)
        p_dense = np.vstack([block.dense for block in paths])
        first_row = len(tails) + np.cumsum([0, *sizes[:-1]])
        p_rows = np.concatenate([block.sparse[0] + f for block, f in zip(paths, first_row.tolist(), strict=True)])
        p_cols = np.concatenate([block.sparse[1] for block in paths])
        p_vals = np.concatenate([block.sparse[2] for block in paths])
        p_words = [self.word_ids(words.split() if isinstance(words, str) else words)
                   for block in paths for words in block.words]
        p_woff = woff[-1] + np.cumsum([0] + [len(w) for w in p_words])
        stats = np.vstack([np.full((len(block.words), 10), np.nan) if block.stats is None else block.stats
                           for block in paths])
        tails = np.concatenate([tails, np.zeros(k, np.int64)])
        heads = np.concatenate([heads, np.full(k, goal, np.int64)])
        dense = np.vstack([dense, p_dense])
        r = np.concatenate([r, p_rows])
        c = np.concatenate([c, p_cols])
        v = np.concatenate([v, p_vals])
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
        n_stats = 0
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
            path_row[e0 : e0 + m] = np.where(prow >= 0, prow + n_stats, -1)
            path_stats.append(stats)
            n_stats += len(stats)
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
                          cat(path_stats, np.float64).reshape(-1, 10))


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
    b.add_pool(pool, range(D), pool.stats)
    return b.build()


# ---------------------------------------------------------------------------------------- pruning
def prune_part(part: tuple, deltas: np.ndarray, max_edges: int) -> tuple:
    """Density-prune a lattice given as builder arrays (see :meth:`LatticeSetBuilder.add_arrays`) to
    ``max_edges`` edges (:func:`smtlib.lattice.paths.density_prune_edges`)."""
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
