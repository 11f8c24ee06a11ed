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

from smtlib._dot import matvec
from smtlib.bleu.stats import BleuSettings, compute_stats
from smtlib.errors import InputError
from smtlib.io import atomic_output, decode_utf8, read_bytes
from smtlib.kbest import scanner
from smtlib.kbest.format import (
    BLANKS,
    EXACT,
    FeatureGroup,
    FileLayout,
    decide_layout,
    describe_groups,
    format_line,
    layout_key,
    parse_line,
)


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
    #: the dense layouts (groups in line order) met while reading, and each row's index into them
    #: (part of what makes two rows duplicates; :mod:`smtlib.kbest.store` keeps them). None: unknown.
    layouts: tuple[tuple[FeatureGroup, ...], ...] | None = None
    row_layouts: np.ndarray | None = None
    #: statistics of the other metrics (chrF, chrF++, TER), by metric (:mod:`smtlib.bleu.metrics`), see :meth:`metric_stats`
    other_stats: dict = dataclasses.field(default_factory=dict, repr=False)

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

    def coverage(self, references: Sequence[Sequence[str]] | int, what: str = "the k-best pool"):
        """The sentences a score of this pool against ``references`` (or their line count) covers: the
        ids with hypotheses (:func:`smtlib.bleu.references.covered_sentences`, the rule every command
        follows); an id beyond the references is an InputError."""
        from smtlib.bleu.references import covered_sentences

        return covered_sentences(np.flatnonzero(self.sizes()), references, what=what)

    def sentences_spanned(self) -> int:
        """The largest sentence id with a hypothesis + 1 (0 for an empty pool).

        Ids without hypotheses in the middle count; empty ids at the end (:meth:`pad_sentences`,
        ``read_pool(n_sentences=...)``) do not.
        """
        return sentences_spanned(self.offsets)

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
        scores = matvec(self.dense, weights[:d])
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

    def metric_stats(self, metric, references: Sequence[Sequence[str]]) -> np.ndarray:
        """Compute (or return the cached) statistics of any metric of :mod:`smtlib.bleu.metrics`
        (a ``Metric``, or a ``Mixture``: its parts' statistics side by side) against ``references``.

        Like :meth:`compute_stats`, each metric's rows are computed once per pool and settings (BLEU's
        are :attr:`stats` when the settings agree) and assume the same references on every call.
        """
        parts = getattr(metric, "parts", None)
        if parts is not None:
            return np.hstack([self.metric_stats(m, references) for m, _ in parts])
        if metric.name == "bleu":
            return self.compute_stats(references, metric.settings)
        cached = self.other_stats.get(metric)
        if cached is not None and len(cached) == self.n_hypotheses:
            return cached
        n_refs = len(references[0]) if references else 0
        if self.n_sentences > n_refs:
            raise InputError(f"k-best pool has sentence id {self.n_sentences - 1} but the references have {n_refs} segments")
        self.other_stats[metric] = metric.stats(self.texts, self.sentence_index, references)
        return self.other_stats[metric]

    def pad_sentences(self, n_sentences: int) -> None:
        """Extend the id range to ``n_sentences`` (ids without hypotheses get empty ranges)."""
        if n_sentences > self.n_sentences:
            extra = np.full(n_sentences - self.n_sentences, self.offsets[-1], dtype=np.int64)
            self.offsets = np.concatenate([self.offsets, extra])

    def cut_sentences(self, n_sentences: int) -> None:
        """Shorten the id range to ``n_sentences``, dropping only empty ids at the end."""
        if n_sentences < self.sentences_spanned():
            raise ValueError(f"cutting a pool of {self.sentences_spanned()} sentences to {n_sentences}")
        if n_sentences < self.n_sentences:
            self.offsets = self.offsets[: n_sentences + 1]


def sentences_spanned(offsets: np.ndarray) -> int:
    """The largest sentence id with a row in ``offsets`` (row ranges per id) + 1; 0 without rows."""
    nonempty = np.flatnonzero(np.diff(offsets))
    return int(nonempty[-1]) + 1 if len(nonempty) else 0


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


@dataclasses.dataclass
class _Chunk:
    """The rows of one file: one row per line, in line order (row r is line r + 1)."""

    path: str
    layout: FileLayout
    ids: np.ndarray
    texts: list[str]
    columns: list[str]  #: names of the columns of ``dense`` (the layout's; Joshua: the file's names)
    dense: np.ndarray
    sparse_rows: np.ndarray
    sparse_names: list[str]
    sparse_values: np.ndarray
    totals: np.ndarray
    extras: list[str | None]


def check_id_order(ids: np.ndarray, path) -> None:
    """Raise at the first line whose sentence id breaks the non-decreasing order of a file.

    When ids decrease between lines i-1 and i, the line reported is the one whose removal
    restores the order: line i-1 if it stands out (``0 0 7 0``), else line i (``1 1 0 1``); when
    either would do, line i, and the message names line i-1 too.
    """
    down = np.flatnonzero(ids[1:] < ids[:-1])
    if not len(down):
        return
    i = int(down[0]) + 1  # 0-based row of the first id below its predecessor
    n = len(ids)
    spike = i < 2 or ids[i - 2] <= ids[i]
    drop = i + 1 >= n or ids[i - 1] <= ids[i + 1]
    if spike and not drop:
        before = f"line {i - 1} has {ids[i - 2]}, " if i >= 2 else ""
        raise InputError(
            f"sentence id {ids[i - 1]} is out of order ({before}line {i + 1} has {ids[i]}): ids must not decrease "
            "within a file", path, i)
    raise InputError(f"sentence id {ids[i]} after {ids[i - 1]} on line {i}: ids must not decrease within a file", path, i + 1)


def _first_lines(text: str, count: int) -> list[str]:
    """The first ``count`` lines of ``text`` (fewer if it has fewer), without copying the rest."""
    lines: list[str] = []
    start = 0
    while len(lines) < count and start < len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        lines.append(text[start:end])
        start = end + 1
    return lines


class _PoolBuilder:
    """Reads files into chunks; :meth:`build` merges them and drops duplicates per sentence.

    Parameters
    ----------
    dedup
        Drop a hypothesis equal in text and features to an earlier one of its sentence.
    fast
        Read Moses and Z-MERT files with the compiled scanner (:mod:`smtlib.kbest.scanner`);
        False reads every line with :func:`~smtlib.kbest.format.parse_line` (the reference).
    dialect
        The dialect of every file; None decides it per file from its first lines.
    """

    def __init__(self, dedup: bool = True, fast: bool = True, dialect: str | None = None) -> None:
        self.dedup = dedup
        self.fast = fast
        self.dialect = dialect
        self.chunks: list[_Chunk] = []
        self.duplicates = 0

    def add_file(self, path: str | os.PathLike) -> int:
        """Read every line of ``path`` (checked against the file's layout); returns the line count.

        Raises
        ------
        InputError
            At the first line (1-based, of the decompressed file) that is malformed, does not fit
            the file's layout, or breaks the order of sentence ids; on an empty file, bytes that
            are not UTF-8, a truncated gzip stream, or a last line without a line end.
        """
        path = os.fspath(path)
        data = read_bytes(path, what="k-best file")
        text = decode_utf8(data, path)
        if "\r" in text:
            data, text = data.replace(b"\r\n", b"\n"), text.replace("\r\n", "\n")
        if not data:
            raise InputError("k-best file is empty", path)
        layout = decide_layout(_first_lines(text, 3), path, self.dialect)
        if self.fast and layout.dialect != "joshua":
            chunk = self._scan(path, data, text, layout)
        else:
            chunk = self._parse_lines(path, text, layout)
        self.chunks.append(chunk)
        return len(chunk.ids)

    # -- the line parser (Joshua, and the reference the scanner is tested against) -----------------
    def _parse_lines(self, path: str, text: str, layout: FileLayout) -> _Chunk:
        lines = text.split("\n")
        complete = lines[-1] == ""
        if complete:
            lines.pop()
        parsed = []
        for lineno, line in enumerate(lines, 1):
            try:
                if not line.strip(BLANKS):
                    raise InputError("empty line in k-best file", path, lineno)
                if lineno == len(lines) and not complete:
                    parse_line(line, path, lineno, layout)
                    raise InputError("the last line has no line end: the file looks truncated", path, lineno)
                parsed.append(parse_line(line, path, lineno, layout))
            except InputError:
                check_id_order(np.array([p.sentence_id for p in parsed], dtype=np.int64), path)
                raise
        ids = np.array([p.sentence_id for p in parsed], dtype=np.int64)
        check_id_order(ids, path)
        if layout.dialect == "joshua":
            columns, dense = self._joshua_columns(path, parsed)
        else:
            columns = [name for g in layout.groups for name in g.column_names()]
            dense = np.array([p.dense for p in parsed], dtype=np.float64).reshape(len(parsed), len(columns))
        return _Chunk(
            path=path,
            layout=layout,
            ids=ids,
            texts=[p.text for p in parsed],
            columns=columns,
            dense=dense,
            sparse_rows=np.array([r for r, p in enumerate(parsed) for _ in p.sparse], dtype=np.int64),
            sparse_names=[name for p in parsed for name, _ in p.sparse],
            sparse_values=np.array([v for p in parsed for _, v in p.sparse], dtype=np.float64),
            totals=np.array([np.nan if p.total is None else p.total for p in parsed], dtype=np.float64),
            extras=[p.extra for p in parsed],
        )

    @staticmethod
    def _joshua_columns(path: str, parsed) -> tuple[list[str], np.ndarray]:
        """Joshua's features as columns (first-appearance order; a missing feature is 0).

        Joshua writes only the features that fired, so a name must occur on two lines at least:
        a name seen on one line of a longer file is reported as a probable typo.
        """
        seen: dict[str, int] = {}
        first_line: dict[str, int] = {}
        for r, p in enumerate(parsed):
            for g in p.groups:
                seen[g.label] = seen.get(g.label, 0) + 1
                first_line.setdefault(g.label, r + 1)
        if len(parsed) > 1:
            once = [name for name, count in seen.items() if count == 1]
            if once:
                name = min(once, key=first_line.__getitem__)
                raise InputError(
                    f"feature {name!r} occurs on this line only (a typo? Joshua's lines may leave out a feature, "
                    "but every name must occur on two lines at least)", path, first_line[name])
        columns = list(seen)
        index = {name: k for k, name in enumerate(columns)}
        dense = np.zeros((len(parsed), len(columns)))
        for r, p in enumerate(parsed):
            for g, value in zip(p.groups, p.dense, strict=True):
                dense[r, index[g.label]] = value
        return columns, dense

    # -- the compiled scanner -------------------------------------------------------------------
    def _scan(self, path: str, data: bytes, text: str, layout: FileLayout) -> _Chunk:
        array = np.frombuffer(data, dtype=np.uint8)
        (status, bad_line, ids, totals, dense, text_buf, text_end, text_flag, hyp_span, extra_start,
         sp_row, sp_value, sp_names, n_sparse, sp_len, slow, n_slow) = scanner.scan_layout(data, layout)
        if status != scanner.OK:
            check_id_order(ids[: bad_line - 1], path)
            self._raise_at(path, text, bad_line, layout, status)
            return self._parse_lines(path, text, layout)  # the line parser accepts what the scanner did not
        check_id_order(ids, path)
        for start, end, row, column in slow[:n_slow]:
            value = float(data[start:end])
            if not np.isfinite(value):
                self._raise_at(path, text, row + 1, layout, scanner.BAD_FEATURES)
            if column >= 0:
                dense[row, column] = value
            elif column == -1:
                totals[row] = value
            else:
                sp_value[-3 - column] = value
        texts = text_buf.tobytes().decode("utf-8").split("\n")
        texts.pop()
        for row in np.flatnonzero(text_flag):
            h0, h1 = hyp_span[row]
            texts[row] = " ".join(data[h0:h1].decode("utf-8").split())
        extras: list[str | None] = [None] * len(ids)
        if layout.n_fields > 4:
            ends = np.flatnonzero(array == 10)
            extras = [data[s:e].decode("utf-8").strip() for s, e in zip(extra_start.tolist(), ends.tolist(), strict=True)]
        names = sp_names[:sp_len].tobytes().decode("utf-8").split("\n")[:-1]
        rows = sp_row[:n_sparse].copy()
        if n_sparse:
            import pandas as pd  # here: a binary pool's readers (a tuning step) never pay its import

            codes, uniques = pd.factorize(np.array(names, dtype=object))
            keys = rows * len(uniques) + codes
            order = np.argsort(keys, kind="stable")
            twice = np.flatnonzero(keys[order][1:] == keys[order][:-1])
            if len(twice):
                self._raise_at(path, text, int(rows[order][twice].min()) + 1, layout, scanner.BAD_FEATURES)
        return _Chunk(
            path=path,
            layout=layout,
            ids=ids,
            texts=texts,
            columns=[name for g in layout.groups for name in g.column_names()],
            dense=dense,
            sparse_rows=rows,
            sparse_names=names,
            sparse_values=sp_value[:n_sparse].copy(),
            totals=totals,
            extras=extras,
        )

    @staticmethod
    def _raise_at(path: str, text: str, lineno: int, layout: FileLayout, status: int) -> None:
        """Raise the line parser's error for line ``lineno``; returns if the line parser accepts it."""
        lines = text.split("\n")
        line = lines[lineno - 1]
        if status == scanner.EMPTY_LINE:
            raise InputError("empty line in k-best file", path, lineno)
        parse_line(line, path, lineno, layout)
        if status == scanner.NO_LINE_END:
            raise InputError("the last line has no line end: the file looks truncated", path, lineno)
        if status == scanner.BAD_FEATURES:
            # what only the whole line shows: a sparse feature given twice
            parsed = parse_line(line, path, lineno, layout)
            names = [name for name, _ in parsed.sparse]
            if len(set(names)) != len(names):
                raise InputError("a sparse feature appears twice", path, lineno)

    # -- merging ---------------------------------------------------------------------------------
    def _columns(self) -> tuple[tuple[FeatureGroup, ...], list[str]]:
        """The pool's dense groups and column names; every file must have the same dense features."""
        first = self.chunks[0]
        joshua = first.layout.dialect == "joshua"
        for chunk in self.chunks[1:]:
            if (chunk.layout.dialect == "joshua") != joshua or (
                set(chunk.columns) != set(first.columns) if joshua else layout_key(chunk.layout.groups) != layout_key(first.layout.groups)
            ):
                mine = ", ".join(chunk.columns) if joshua else describe_groups(chunk.layout.groups)
                theirs = ", ".join(first.columns) if joshua else describe_groups(first.layout.groups)
                raise InputError(
                    f"dense features {mine} differ from those of {first.path} ({theirs}): the files of a pool must have "
                    "the same dense features", chunk.path, chunk.layout.line)
        if joshua:
            return tuple(FeatureGroup(name, 1, "joshua") for name in first.columns), list(first.columns)
        return first.layout.groups, list(first.columns)

    def build(self, n_sentences: int | None = None, references: str | None = None) -> KBestPool:
        """Merge the files read so far into one pool.

        Raises
        ------
        InputError
            If the files' dense features differ (naming both files), or a sentence id is not
            below ``n_sentences`` (naming the file and line; ``references`` names what gave the limit).
        """
        if not self.chunks:
            raise InputError("no k-best file given")
        groups, columns = self._columns()
        dense_parts = []
        for chunk in self.chunks:
            if chunk.columns == columns:
                dense_parts.append(chunk.dense)
            else:  # a Joshua file with the same names in another order
                where = [chunk.columns.index(name) for name in columns]
                dense_parts.append(chunk.dense[:, where])
        dense = np.concatenate(dense_parts) if dense_parts else np.zeros((0, len(columns)))
        ids = np.concatenate([c.ids for c in self.chunks])
        if n_sentences is not None:
            for chunk in self.chunks:
                beyond = np.flatnonzero(chunk.ids >= n_sentences)
                if len(beyond):
                    row = int(beyond[0])
                    source = f" ({references})" if references else ""
                    raise InputError(
                        f"sentence id {chunk.ids[row]} is out of range: the references{source} have {n_sentences} lines "
                        f"(ids 0 to {n_sentences - 1})", chunk.path, row + 1)
        n = len(ids)
        sparse_index: dict[str, int] = {}
        coo_rows, coo_cols, coo_vals = [], [], []
        base = 0
        for chunk in self.chunks:
            if len(chunk.sparse_rows):
                import pandas as pd

                codes, uniques = pd.factorize(np.array(chunk.sparse_names, dtype=object))
                mapping = np.array([sparse_index.setdefault(name, len(sparse_index)) for name in uniques], dtype=np.int64)
                coo_rows.append(base + chunk.sparse_rows)
                coo_cols.append(mapping[codes])
                coo_vals.append(chunk.sparse_values)
            base += len(chunk.ids)
        sparse = sp.coo_matrix(
            (
                np.concatenate(coo_vals) if coo_vals else np.zeros(0),
                (np.concatenate(coo_rows) if coo_rows else np.zeros(0, dtype=np.int64),
                 np.concatenate(coo_cols) if coo_cols else np.zeros(0, dtype=np.int64)),
            ),
            shape=(n, len(sparse_index)),
        ).tocsr()  # fmt: skip
        texts = [t for c in self.chunks for t in c.texts]
        totals = np.concatenate([c.totals for c in self.chunks])
        extras = [e for c in self.chunks for e in c.extras]
        keep = _first_occurrences(ids, texts, dense, sparse) if self.dedup else np.arange(n)
        self.duplicates = n - len(keep)
        # Group rows by sentence id, keeping first-appearance order within a sentence.
        kept_ids = ids[keep]
        order = keep[np.argsort(kept_ids, kind="stable")]
        n_sent = int(kept_ids.max()) + 1 if len(kept_ids) else 0
        if n_sentences is not None:
            n_sent = n_sentences
        offsets = np.zeros(n_sent + 1, dtype=np.int64)
        np.cumsum(np.bincount(kept_ids, minlength=n_sent), out=offsets[1:])
        return KBestPool(
            offsets=offsets,
            texts=[texts[i] for i in order],
            dense=dense[order],
            groups=tuple(groups),
            sparse=sparse[order],
            sparse_names=list(sparse_index),
            totals=totals[order],
            extras=[extras[i] for i in order],
        )


def _first_occurrences(ids, texts, dense, sparse) -> np.ndarray:
    """Rows that are not a repeat (same sentence, text and feature values) of an earlier row.

    Rows are keyed by exact columns (id, text code) and 64-bit hashes of their dense and sparse
    values; every row flagged as a repeat is then compared value by value with the first row of
    its key, so a hash collision can never drop a distinct hypothesis.
    """
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    import pandas as pd

    text_codes, _ = pd.factorize(np.array(texts, dtype=object))
    frame = pd.DataFrame({"id": ids, "text": text_codes})
    frame["dense"] = pd.util.hash_pandas_object(pd.DataFrame(dense), index=False).to_numpy() if dense.shape[1] else 0
    if sparse.nnz:
        # order-independent hash of the (column, value) pairs of each row
        mixed = pd.util.hash_array(sparse.indices.astype(np.int64) * np.int64(1_000_003)) ^ pd.util.hash_array(sparse.data)
        row_hash = np.zeros(n, dtype=np.uint64)
        nonempty = np.diff(sparse.indptr) > 0
        row_hash[nonempty] = np.add.reduceat(mixed, sparse.indptr[:-1][nonempty])
        frame["sparse"] = row_hash
    group = frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy()
    first_of_group = np.full(group.max() + 1, n, dtype=np.int64)
    np.minimum.at(first_of_group, group, np.arange(n))
    first = first_of_group[group]
    repeat = np.flatnonzero(first != np.arange(n))
    if len(repeat):
        same = np.all(dense[repeat] == dense[first[repeat]], axis=1)
        if sparse.nnz:
            for k, (r, f) in enumerate(zip(repeat, first[repeat], strict=True)):
                if same[k]:
                    a, b = sparse[r], sparse[f]
                    same[k] = a.nnz == b.nnz and (a != b).nnz == 0
        repeat = repeat[same]
    mask = np.ones(n, dtype=bool)
    mask[repeat] = False
    return np.flatnonzero(mask)


def read_pool(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    n_sentences: int | None = None,
    dedup: bool = True,
    dialect: str | None = None,
    references: str | None = None,
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
    dialect
        The k-best dialect of every file (:data:`smtlib.kbest.format.DIALECTS`); by default it is
        decided per file from its first lines.
    references
        What ``n_sentences`` comes from (a file name), for the error message.

    Raises
    ------
    InputError
        On a malformed file (see :meth:`_PoolBuilder.add_file`), files whose dense features differ,
        or a sentence id not below ``n_sentences``.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    builder = _PoolBuilder(dedup=dedup, dialect=dialect)
    paths = list(paths)
    if not paths:
        raise InputError("no k-best file given")
    for path in paths:
        builder.add_file(path)
    pool = builder.build(n_sentences, references)
    pool.duplicates_dropped = builder.duplicates  # type: ignore[attr-defined]
    return pool


def iter_lines(pool: KBestPool) -> Iterable[str]:
    """The pool as Moses n-best lines, sentence by sentence.

    Every line gets the same fields, as the reader requires of a file: when only some rows have
    a total (a pool merged from files with and without totals) no line gets one, and when only
    some rows have fields after the total the others get an empty one.
    """
    sentence = pool.sentence_index
    sparse = pool.sparse
    names = pool.sparse_names
    with_totals = not np.isnan(pool.totals).any()
    with_extras = any(e is not None for e in pool.extras)
    for r in range(pool.n_hypotheses):
        lo, hi = sparse.indptr[r], sparse.indptr[r + 1]
        pairs = [(names[c], v) for c, v in zip(sparse.indices[lo:hi], sparse.data[lo:hi], strict=True)]
        total = float(pool.totals[r]) if with_totals else None
        extra = pool.extras[r] if pool.extras[r] is not None or not with_extras else ""
        yield format_line(int(sentence[r]), pool.texts[r], pool.groups, pool.dense[r], pairs, total, EXACT, extra)


def write_pool(pool: KBestPool, path: str | os.PathLike) -> None:
    """Write the pool as a Moses n-best file (gzip if ``path`` ends in ``.gz``), atomically."""
    with atomic_output(path) as out:
        for line in iter_lines(pool):
            out.write(line + "\n")
