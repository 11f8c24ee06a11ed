"""The envelope paths a climb of lattice MERT has met, with their BLEU statistics: counted once, looked up after.

Each line search of lattice MERT (:mod:`smtlib.tuners.lbmert`) needs the BLEU statistics of every
path on every sentence's upper envelope, and collects the paths new to its climb for the next
iteration (Cherry & Foster 2012, §4). The same paths come back search after search: on the ja-en
lattices of Table 6, 97 % of the envelope paths whose statistics were counted from their words had
been met earlier in the step, 75 % in the same climb (``benchmarks/results/profile_lbmert.md``).

:class:`PathTable` keeps, per climb, an open-addressing hash table of the paths met so far (two
independent 64-bit hashes of the sentence and the edge ids: FNV-1a, the identity by which the
collected paths are de-duplicated, and a second multiplicative hash that must agree too) and their
statistics rows. :meth:`PathTable.lookup` does in one compiled pass what the line search did in three
steps (hash every path, count every path's statistics from its words, and check each hash against a
Python set): a path met before takes its row from the table; a new one has its row counted (or taken
from the whole-path edge it is, as before) and is stored. The rows are the very numbers
:func:`smtlib.lattice.stats.paths_stats_kernel` counts (the same kernel counts them), so every line
search, the weights and the aggregated paths are bit-identical to counting every path every time.
The table belongs to one climb (one thread), as the paths it collects do.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.lattice.lattice_set import LatticeSet
from smtlib.lattice.stats import LatticeReferences, path_stats_into

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, nogil=True, inline="always")
def _hashes(s, edges, lo, hi):
    """(FNV-1a, a second multiplicative hash) of sentence ``s`` and ``edges[lo:hi]``."""
    h = (_FNV_OFFSET ^ np.uint64(s + 1)) * _FNV_PRIME
    g = (np.uint64(s + 1) * _MIX) ^ np.uint64(hi - lo)
    for k in range(lo, hi):
        e = np.uint64(edges[k] + 1)
        h = (h ^ e) * _FNV_PRIME
        g = (g ^ e) * _MIX
        g ^= g >> np.uint64(29)
    return np.int64(h), np.int64(g)


@numba.njit(cache=True, nogil=True)
def path_hashes(path_sent, path_off, path_edges):
    """The FNV-1a hash of (sentence, edges) of every path (the identity the collected paths are merged by)."""
    out = np.empty(path_sent.shape[0], dtype=np.int64)
    for p in range(path_sent.shape[0]):
        out[p] = _hashes(path_sent[p], path_edges, path_off[p], path_off[p + 1])[0]
    return out


@numba.njit(cache=True, nogil=True)
def _lookup(slot_row, slot_h1, slot_h2, rows, n_rows, path_sent, path_off, path_edges, word_off, path_row,
            whole_stats, refs):
    """Statistics of every path, looked up or counted and stored; which paths are new to the table.

    Returns ``(stats, hashes, new, n_rows)``: ``new[p]`` is True for a path not met before that is not
    a whole-path edge given as input (those are aggregated already and are neither stored nor collected).
    The caller guarantees room for every path (slots at most half full afterwards, ``rows`` large enough).
    """
    n_paths = path_sent.shape[0]
    stats = np.empty((n_paths, 10))
    hashes = np.empty(n_paths, dtype=np.int64)
    new = np.zeros(n_paths, dtype=np.bool_)
    mask = slot_row.shape[0] - 1
    buf = np.empty(256, dtype=np.int64)
    for p in range(n_paths):
        lo, hi = path_off[p], path_off[p + 1]
        s = path_sent[p]
        h1, h2 = _hashes(s, path_edges, lo, hi)
        hashes[p] = h1
        if hi - lo == 1 and path_row[path_edges[lo]] >= 0 and not np.isnan(whole_stats[path_row[path_edges[lo]], 0]):
            stats[p, :] = whole_stats[path_row[path_edges[lo]], :]
            continue
        i = np.int64(np.uint64(h1) & np.uint64(mask))
        while slot_row[i] >= 0 and not (slot_h1[i] == h1 and slot_h2[i] == h2):
            i = (i + 1) & mask
        if slot_row[i] >= 0:
            stats[p, :] = rows[slot_row[i], :]
            continue
        buf = path_stats_into(s, path_edges[lo:hi], hi - lo, word_off, path_row, whole_stats, refs, buf, stats[p])
        rows[n_rows, :] = stats[p, :]
        slot_row[i] = n_rows
        slot_h1[i] = h1
        slot_h2[i] = h2
        n_rows += 1
        new[p] = path_row[path_edges[lo]] < 0 or hi - lo != 1
    return stats, hashes, new, n_rows


class PathTable:
    """The paths one climb has met and their statistics rows (see the module docstring)."""

    def __init__(self, ls: LatticeSet, refs: LatticeReferences, capacity: int = 1 << 12):
        self.ls = ls
        self.refs = refs
        self._slots(capacity)
        self.rows = np.empty((capacity // 2, 10))
        self.n_rows = 0

    def _slots(self, capacity: int) -> None:
        self.slot_row = np.full(capacity, -1, dtype=np.int64)
        self.slot_h1 = np.zeros(capacity, dtype=np.int64)
        self.slot_h2 = np.zeros(capacity, dtype=np.int64)

    def _make_room(self, n_paths: int) -> None:
        need = self.n_rows + n_paths
        if need > len(self.rows):
            rows = np.empty((2 * need, 10))
            rows[: self.n_rows] = self.rows[: self.n_rows]
            self.rows = rows
        if 2 * need > len(self.slot_row):
            capacity = len(self.slot_row)
            while 2 * need > capacity:
                capacity *= 2
            old = (self.slot_row, self.slot_h1, self.slot_h2)
            self._slots(capacity)
            _rehash(*old, self.slot_row, self.slot_h1, self.slot_h2)

    def lookup(self, path_sent: np.ndarray, path_off: np.ndarray, path_edges: np.ndarray):
        """``(stats, hashes, new)`` of the paths (see :func:`_lookup`), the new ones stored."""
        self._make_room(len(path_sent))
        ls = self.ls
        stats, hashes, new, self.n_rows = _lookup(
            self.slot_row, self.slot_h1, self.slot_h2, self.rows, self.n_rows, path_sent, path_off, path_edges,
            ls.word_off, ls.path_row, ls.path_stats, self.refs.as_tuple())
        return stats, hashes, new


@numba.njit(cache=True, nogil=True)
def _rehash(old_row, old_h1, old_h2, slot_row, slot_h1, slot_h2):
    mask = slot_row.shape[0] - 1
    for k in range(old_row.shape[0]):
        if old_row[k] < 0:
            continue
        i = np.int64(np.uint64(old_h1[k]) & np.uint64(mask))
        while slot_row[i] >= 0:
            i = (i + 1) & mask
        slot_row[i] = old_row[k]
        slot_h1[i] = old_h1[k]
        slot_h2[i] = old_h2[k]
