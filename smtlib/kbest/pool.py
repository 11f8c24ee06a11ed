"""The k-best pool: all hypotheses of a dev set, as arrays.

A :class:`KBestPool` holds N hypotheses for S sentences (ids 0 .. S-1), grouped by sentence:
rows ``offsets[s]:offsets[s+1]`` belong to sentence ``s`` (an id with no hypothesis has an empty
range). Features are a dense ``(N, D)`` float64 matrix plus an ``(N, F)`` CSR matrix over a sparse
feature-name index; :meth:`KBestPool.features` joins them with names ``dense_names + sparse_names``.
BLEU statistics (:mod:`smtlib.bleu.stats`) are computed once per pool and cached.

Reading several files merges them: per sentence, a hypothesis whose text and features both equal
those of one seen before is dropped (the later copy), so the pool of iterations 1..i of a tuning run
is the union of their k-best lists. Unlike Moses's ``extractor``, two hypotheses with the same
features but different text are both kept.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from smtlib.bleu.stats import STATS_WIDTH, BleuSettings, compute_stats
from smtlib.errors import InputError
from smtlib.io import atomic_output, open_text
from smtlib.kbest.format import FeatureGroup, parse_line, render_line


@dataclasses.dataclass
class KBestPool:
    """Hypotheses of a k-best pool with their features and (once computed) BLEU statistics."""

    offsets: np.ndarray  #: (S+1,) int64 row ranges per sentence id
    texts: list[str]  #: (N,) hypothesis strings
    dense: np.ndarray  #: (N, D) float64
    groups: tuple[FeatureGroup, ...]  #: dense feature groups; their column names are ``dense_names``
    sparse: sp.csr_matrix  #: (N, F) float64
    sparse_names: list[str]
    totals: np.ndarray  #: (N,) the totals written in the files (NaN where absent)
    extras: list[str | None]  #: (N,) fields after the total, verbatim
    stats: np.ndarray | None = None  #: (N, STATS_WIDTH) BLEU statistics, see :meth:`compute_stats`
    stats_settings: BleuSettings | None = None

    # -- shape ------------------------------------------------------------------------------------
    @property
    def n_sentences(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_hypotheses(self) -> int:
        return len(self.texts)

    @property
    def dense_names(self) -> list[str]:
        return [name for group in self.groups for name in group.column_names()]

    @property
    def feature_names(self) -> list[str]:
        return self.dense_names + list(self.sparse_names)

    @property
    def sentence_index(self) -> np.ndarray:
        """(N,) sentence id of every row."""
        return np.repeat(np.arange(self.n_sentences, dtype=np.int64), np.diff(self.offsets))

    def sizes(self) -> np.ndarray:
        """(S,) number of hypotheses per sentence."""
        return np.diff(self.offsets)

    # -- features ---------------------------------------------------------------------------------
    def features(self) -> sp.csr_matrix:
        """All features as one CSR matrix, columns in :attr:`feature_names` order."""
        return sp.hstack([sp.csr_matrix(self.dense), self.sparse], format="csr", dtype=np.float64)

    def has_sparse(self) -> bool:
        return self.sparse.shape[1] > 0

    def model_scores(self, weights: np.ndarray) -> np.ndarray:
        """(N,) w·h for a weight vector aligned with :attr:`feature_names`."""
        weights = np.asarray(weights, dtype=np.float64)
        d = self.dense.shape[1]
        scores = self.dense @ weights[:d]
        if self.sparse.shape[1]:
            scores = scores + self.sparse @ weights[d:]
        return scores

    def weight_vector(self, weights: dict[str, float]) -> np.ndarray:
        """A weights dict as a vector over :attr:`feature_names` (absent -> 0)."""
        return np.array([weights.get(n, 0.0) for n in self.feature_names], dtype=np.float64)

    def best_indices(self, weights: np.ndarray) -> np.ndarray:
        """(S,) row of the highest-scoring hypothesis per sentence (first on ties; -1 if none)."""
        return argmax_per_sentence(self.model_scores(weights), self.offsets)

    # -- BLEU -------------------------------------------------------------------------------------
    def compute_stats(self, references: Sequence[Sequence[str]], settings: BleuSettings = BleuSettings()) -> np.ndarray:
        """Compute (or return the cached) BLEU statistics against ``references``.

        Raises
        ------
        InputError
            If the pool has sentence ids beyond the references.
        """
        if self.stats is not None and self.stats_settings == settings and len(self.stats) == self.n_hypotheses:
            return self.stats
        n_refs = len(references[0]) if references else 0
        if self.n_sentences > n_refs:
            raise InputError(f"k-best pool has sentence id {self.n_sentences - 1} but the references have {n_refs} segments")
        self.stats = compute_stats(self.texts, self.sentence_index, references, settings)
        self.stats_settings = settings
        return self.stats

    def pad_sentences(self, n_sentences: int) -> None:
        """Extend the id range to ``n_sentences`` (ids without hypotheses get empty ranges)."""
        if n_sentences > self.n_sentences:
            extra = np.full(n_sentences - self.n_sentences, self.offsets[-1], dtype=np.int64)
            self.offsets = np.concatenate([self.offsets, extra])


def argmax_per_sentence(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Row index of the maximum of ``scores`` within each sentence range (-1 for an empty range)."""
    n_sent = len(offsets) - 1
    sizes = np.diff(offsets)
    result = np.full(n_sent, -1, dtype=np.int64)
    nonempty = np.flatnonzero(sizes > 0)
    if len(nonempty) == 0:
        return result
    # reduceat gives the max per range; the first row reaching it is the argmax.
    maxima = np.maximum.reduceat(scores, offsets[nonempty])
    sentence = np.repeat(np.arange(n_sent), sizes)
    is_max = scores == maxima[np.searchsorted(nonempty, sentence)]
    rows = np.flatnonzero(is_max)
    first = np.unique(sentence[rows], return_index=True)
    result[first[0]] = rows[first[1]]
    return result


class _PoolBuilder:
    """Accumulates parsed lines from one or more files, dropping duplicates per sentence."""

    def __init__(self, dedup: bool = True) -> None:
        self.dedup = dedup
        self.ids: list[int] = []
        self.texts: list[str] = []
        self.structures: list[int] = []  # index into self.structure_list per row
        self.structure_index: dict[tuple[FeatureGroup, ...], int] = {}
        self.structure_list: list[tuple[FeatureGroup, ...]] = []
        self.dense_rows: list[tuple[float, ...]] = []
        self.sparse_rows: list[tuple[tuple[str, float], ...]] = []
        self.totals: list[float] = []
        self.extras: list[str | None] = []
        self.seen: set = set()
        self.duplicates = 0

    def add_file(self, path: str | os.PathLike, *, check_order: bool = True) -> int:
        """Parse every line of ``path``; returns the number of lines read."""
        n_lines = 0
        previous = -1
        with open_text(path, what="k-best file") as fh:
            lineno = 0
            try:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        raise InputError("empty line in k-best file", path, lineno)
                    parsed = parse_line(line, path, lineno)
                    if check_order and parsed.sentence_id < previous:
                        raise InputError(
                            f"sentence id {parsed.sentence_id} after {previous}: ids must not decrease within a file",
                            path,
                            lineno,
                        )
                    previous = parsed.sentence_id
                    n_lines += 1
                    self.add(parsed)
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 ({exc.reason})", path, lineno + 1) from None
        if n_lines == 0:
            raise InputError("k-best file is empty", path)
        return n_lines

    def add(self, parsed) -> None:
        if self.dedup:
            key = (parsed.sentence_id, parsed.text, parsed.groups, parsed.dense, tuple(sorted(parsed.sparse)))
            if key in self.seen:
                self.duplicates += 1
                return
            self.seen.add(key)
        index = self.structure_index.get(parsed.groups)
        if index is None:
            index = self.structure_index[parsed.groups] = len(self.structure_list)
            self.structure_list.append(parsed.groups)
        self.ids.append(parsed.sentence_id)
        self.texts.append(parsed.text)
        self.structures.append(index)
        self.dense_rows.append(parsed.dense)
        self.sparse_rows.append(parsed.sparse)
        self.totals.append(np.nan if parsed.total is None else parsed.total)
        self.extras.append(parsed.extra)

    def build(self, n_sentences: int | None = None) -> KBestPool:
        # Dense columns: the union of all groups, in order of first appearance.
        groups: list[FeatureGroup] = []
        label_of: dict[str, FeatureGroup] = {}
        for structure in self.structure_list:
            for group in structure:
                known = label_of.get(group.label)
                if known is None:
                    label_of[group.label] = group
                    groups.append(group)
                elif known != group:
                    raise InputError(
                        f"dense feature {group.label!r} has {group.size} value(s) in one line and {known.size} in another"
                    )
        column_start: dict[str, int] = {}
        pos = 0
        for group in groups:
            column_start[group.label] = pos
            pos += group.size
        n = len(self.ids)
        ids = np.asarray(self.ids, dtype=np.int64)
        dense = np.zeros((n, pos), dtype=np.float64)
        structures = np.asarray(self.structures, dtype=np.int64)
        for index, structure in enumerate(self.structure_list):
            rows = np.flatnonzero(structures == index)
            if len(rows) == 0 or not structure:
                continue
            cols = np.concatenate([np.arange(column_start[g.label], column_start[g.label] + g.size) for g in structure])
            values = np.array([self.dense_rows[r] for r in rows], dtype=np.float64)
            dense[np.ix_(rows, cols)] = values
        # Sparse CSR over a name index in order of first appearance.
        sparse_index: dict[str, int] = {}
        indptr = np.zeros(n + 1, dtype=np.int64)
        indices: list[int] = []
        data: list[float] = []
        for r, pairs in enumerate(self.sparse_rows):
            for name, value in pairs:
                col = sparse_index.setdefault(name, len(sparse_index))
                indices.append(col)
                data.append(value)
            indptr[r + 1] = len(indices)
        sparse = sp.csr_matrix(
            (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), indptr), shape=(n, len(sparse_index))
        )
        # Group rows by sentence id, keeping first-appearance order within a sentence.
        order = np.argsort(ids, kind="stable")
        n_sent = int(ids.max()) + 1 if n else 0
        if n_sentences is not None:
            if n_sent > n_sentences:
                raise InputError(f"sentence id {n_sent - 1} is out of range: there are {n_sentences} sentences")
            n_sent = n_sentences
        offsets = np.zeros(n_sent + 1, dtype=np.int64)
        np.cumsum(np.bincount(ids, minlength=n_sent), out=offsets[1:])
        return KBestPool(
            offsets=offsets,
            texts=[self.texts[i] for i in order],
            dense=dense[order],
            groups=tuple(groups),
            sparse=sparse[order],
            sparse_names=list(sparse_index),
            totals=np.asarray(self.totals, dtype=np.float64)[order],
            extras=[self.extras[i] for i in order],
        )


def read_pool(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    n_sentences: int | None = None,
    dedup: bool = True,
) -> KBestPool:
    """Read and merge k-best files into one pool.

    Parameters
    ----------
    paths
        One path or several (plain or gzip); later files' duplicates are dropped.
    n_sentences
        Number of sentences (e.g. reference lines); ids must be below it. Default: largest id + 1.
    dedup
        Drop hypotheses equal in text and features to an earlier one of the same sentence.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    builder = _PoolBuilder(dedup=dedup)
    paths = list(paths)
    if not paths:
        raise InputError("no k-best file given")
    for path in paths:
        builder.add_file(path)
    pool = builder.build(n_sentences)
    pool.duplicates_dropped = builder.duplicates  # type: ignore[attr-defined]
    return pool


def iter_lines(pool: KBestPool) -> Iterable[str]:
    """The pool as Moses n-best lines, sentence by sentence."""
    sentence = pool.sentence_index
    sparse = pool.sparse
    names = pool.sparse_names
    for r in range(pool.n_hypotheses):
        lo, hi = sparse.indptr[r], sparse.indptr[r + 1]
        pairs = [(names[c], v) for c, v in zip(sparse.indices[lo:hi], sparse.data[lo:hi], strict=True)]
        total = pool.totals[r]
        yield render_line(
            int(sentence[r]), pool.texts[r], pool.groups, pool.dense[r], pairs, None if np.isnan(total) else float(total), pool.extras[r]
        )


def write_pool(pool: KBestPool, path: str | os.PathLike) -> None:
    """Write the pool as a Moses n-best file (gzip if ``path`` ends in ``.gz``), atomically."""
    with atomic_output(path) as out:
        for line in iter_lines(pool):
            out.write(line + "\n")


def empty_stats() -> np.ndarray:
    return np.zeros((0, STATS_WIDTH))
