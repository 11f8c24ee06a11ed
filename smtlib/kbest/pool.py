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
import re
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from smtlib.bleu.stats import STATS_WIDTH, BleuSettings, compute_stats
from smtlib.errors import InputError
from smtlib.io import atomic_output, open_text
from smtlib.kbest.format import SEPARATOR, FeatureGroup, parse_features, parse_line, render_line

# Fast-path helpers: a number token, a label token (``Name=`` / ``name:``), a Joshua ``name=value``.
# (a number token always follows a space in a field split on "|||"; anything the class admits
# that is not a number is caught when np.fromstring parses the group)
_NUMBER_TOKEN = re.compile(r" [-+.\deE]+(?= |$)", re.M)
_LABEL_TOKEN = re.compile(r"(?<!\S)\S+[=:](?!\S)")
_JOSHUA_TOKEN = re.compile(r"=[^\s]")


def _value_layout(field: str) -> tuple[np.ndarray, list[str]]:
    """For each value of a features field in line order: is it a sparse feature's? And their names."""
    is_sparse: list[bool] = []
    names: list[str] = []
    tokens = field.split()
    i = 0
    while i < len(tokens):
        label = tokens[i]
        j = i + 1
        while j < len(tokens) and tokens[j][-1] not in "=:":
            j += 1
        count = j - i - 1
        sparse = count == 1 and label.endswith("=") and "_" in label[:-1]
        is_sparse += [sparse] * count
        if sparse:
            names.append(label[:-1])
        i = j
    return np.asarray(is_sparse, dtype=bool), names


_NUMBER_CHARS = b"0123456789.-+eE"


def _grouped_layouts(features: list[str], joined: str):
    """Values of lines grouped by label signature (files whose lines differ in layout), or None."""
    signatures = _NUMBER_TOKEN.sub("", joined).split("\n")
    by_signature: dict[str, list[int]] = {}
    for row, signature in enumerate(signatures):
        by_signature.setdefault(signature, []).append(row)
    if len(by_signature) > max(64, len(features) // 50):
        return None
    layouts = []
    for rows in by_signature.values():
        parsed = _parse_group([features[r] for r in rows], features[rows[0]])
        if parsed is None:
            return None
        layouts.append((np.asarray(rows), *parsed))
    return layouts


def _parse_group(fields: list[str], first: str):
    """(groups, is_sparse, sparse_names, values) for fields sharing the layout of ``first``, or None."""
    try:
        groups, dense, sparse = parse_features(first)
        is_sparse, sparse_names = _value_layout(first)
    except InputError:
        return None
    if len(is_sparse) != len(dense) + len(sparse):
        return None
    numbers = _LABEL_TOKEN.sub(" ", " ".join(fields))
    values = _numbers(numbers, len(fields), len(is_sparse))
    if values is None:
        return None
    return groups, is_sparse, sparse_names, values


def _numbers(text: str, n_rows: int, n_values: int) -> np.ndarray | None:
    """Parse whitespace-separated numbers into an (n_rows, n_values) array, or None if they aren't."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            values = np.fromstring(text, sep=" ") if text.strip() else np.zeros(0)
        except (ValueError, DeprecationWarning):
            return None
    if values.size != n_rows * n_values or not np.isfinite(values).all():
        return None
    return values.reshape(n_rows, n_values)


def _uniform_layout(features: list[str], joined: str):
    """The common case: every line has the first line's labels, in order, with as many values.

    Checked without a per-line Python loop: deleting number characters from the UTF-8 bytes
    leaves each line's label skeleton (labels and spaces), which must equal the first line's;
    each label must occur once per line; after the labels are removed nothing but numbers may be
    left. Returns ``(rows, groups, is_sparse, sparse_names, values)`` or None.
    """
    first = features[0]
    if "=" not in first and ":" not in first:
        return None
    n = len(features)
    skeleton = joined.encode("utf-8").translate(None, delete=_NUMBER_CHARS)
    first_skeleton = first.encode("utf-8").translate(None, delete=_NUMBER_CHARS)
    if skeleton != b"\n".join([first_skeleton] * n):
        return None
    labels = [t for t in first.split() if t[-1] in "=:"]
    numbers = " " + joined.replace("\n", " \n ") + " "
    for label in labels:
        token = f" {label} "
        if numbers.count(token) != n:
            return None
        numbers = numbers.replace(token, "  ")
    if "=" in numbers or ":" in numbers:
        return None
    try:
        groups, dense, sparse = parse_features(first)
        is_sparse, sparse_names = _value_layout(first)
    except InputError:
        return None
    values = _numbers(numbers, n, len(is_sparse))
    if values is None:
        return None
    return np.arange(n), groups, is_sparse, sparse_names, values


def fh_line_of_error(path, exc: UnicodeDecodeError) -> int:
    """1-based line number of the byte where decoding failed (for the error message)."""
    import gzip

    with open(path, "rb") as raw:
        head = raw.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        data = fh.read()
    # exc.start is relative to the decoder's chunk; find the first undecodable byte instead.
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as full:
        return data.count(b"\n", 0, full.start) + 1
    return 1


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


@dataclasses.dataclass
class _Chunk:
    """Rows parsed from one file: dense values per layout, sparse values as COO triplets."""

    ids: np.ndarray
    texts: list[str]
    structures: np.ndarray  #: per row, index into the builder's structure list
    dense: list[tuple[np.ndarray, np.ndarray]]  #: (rows, values) per layout, columns in the layout's order
    sparse_rows: np.ndarray
    sparse_names: list[str]
    sparse_values: np.ndarray
    totals: np.ndarray
    extras: list[str | None]


class _PoolBuilder:
    """Accumulates files as chunks; :meth:`build` merges them and drops duplicates per sentence."""

    def __init__(self, dedup: bool = True, fast: bool = True) -> None:
        self.dedup = dedup
        self.fast = fast
        self.chunks: list[_Chunk] = []
        self.structure_index: dict[tuple[FeatureGroup, ...], int] = {}
        self.structure_list: list[tuple[FeatureGroup, ...]] = []
        self.duplicates = 0

    def structure_id(self, groups) -> int:
        index = self.structure_index.get(groups)
        if index is None:
            index = self.structure_index[groups] = len(self.structure_list)
            self.structure_list.append(groups)
        return index

    def add_file(self, path: str | os.PathLike, *, check_order: bool = True) -> int:
        """Parse every line of ``path``; returns the number of lines read.

        A batched fast path handles well-formed files whose lines share a few feature layouts;
        anything unusual (a malformed line, Joshua's dialect, many layouts) goes through the
        line-by-line parser, which also produces the error messages with line numbers.
        """
        with open_text(path, what="k-best file") as fh:
            try:
                text = fh.read()
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 ({exc.reason})", path, fh_line_of_error(path, exc)) from None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if not lines:
            raise InputError("k-best file is empty", path)
        chunk = self._parse_fast(lines, check_order) if self.fast else None
        self.chunks.append(chunk if chunk is not None else self._parse_slow(path, lines, check_order))
        return len(lines)

    def _parse_slow(self, path, lines: list[str], check_order: bool) -> _Chunk:
        previous = -1
        parsed_lines = []
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                raise InputError("empty line in k-best file", path, lineno)
            parsed = parse_line(line, path, lineno)
            if check_order and parsed.sentence_id < previous:
                raise InputError(
                    f"sentence id {parsed.sentence_id} after {previous}: ids must not decrease within a file", path, lineno
                )
            previous = parsed.sentence_id
            parsed_lines.append(parsed)
        structures = np.array([self.structure_id(p.groups) for p in parsed_lines], dtype=np.int64)
        dense = []
        for structure in np.unique(structures):
            rows = np.flatnonzero(structures == structure)
            values = np.array([parsed_lines[r].dense for r in rows], dtype=np.float64).reshape(len(rows), -1)
            dense.append((rows, values))
        sparse_rows = [r for r, p in enumerate(parsed_lines) for _ in p.sparse]
        return _Chunk(
            ids=np.array([p.sentence_id for p in parsed_lines], dtype=np.int64),
            texts=[p.text for p in parsed_lines],
            structures=structures,
            dense=dense,
            sparse_rows=np.asarray(sparse_rows, dtype=np.int64),
            sparse_names=[name for p in parsed_lines for name, _ in p.sparse],
            sparse_values=np.array([v for p in parsed_lines for _, v in p.sparse], dtype=np.float64),
            totals=np.array([np.nan if p.total is None else p.total for p in parsed_lines], dtype=np.float64),
            extras=[p.extra for p in parsed_lines],
        )

    def _parse_fast(self, lines: list[str], check_order: bool) -> _Chunk | None:
        """Parse ``lines`` in batches; None if the line-by-line parser must decide."""
        parts = [line.split(SEPARATOR) for line in lines]
        if min(map(len, parts)) < 3:
            return None
        try:
            ids = np.array([int(p[0]) for p in parts], dtype=np.int64)
            totals = np.array([float(p[3]) if len(p) > 3 and p[3].strip() else np.nan for p in parts], dtype=np.float64)
        except ValueError:
            return None
        if ids.min() < 0 or np.isinf(totals).any() or (check_order and np.any(np.diff(ids) < 0)):
            return None
        if any(not p[0].strip().isdigit() for p in parts[:: max(1, len(parts) // 64)]):
            return None  # e.g. "+1" or "1_0": let the strict parser judge
        features = [p[2] for p in parts]
        joined = "\n".join(features)
        uniform = _uniform_layout(features, joined)
        if uniform is not None:
            layouts = [uniform]
        elif _JOSHUA_TOKEN.search(joined):
            return None
        else:
            layouts = _grouped_layouts(features, joined)
            if layouts is None:
                return None
        structures = np.zeros(len(lines), dtype=np.int64)
        dense = []
        sparse_rows, sparse_names, sparse_values = [], [], []
        for rows, groups, is_sparse, names, values in layouts:
            structures[rows] = self.structure_id(groups)
            dense.append((rows, values[:, ~is_sparse]))
            if is_sparse.any():
                sparse_rows.append(np.repeat(rows, len(names)))
                sparse_names += names * len(rows)
                sparse_values.append(values[:, is_sparse].ravel())
        return _Chunk(
            ids=ids,
            texts=[" ".join(p[1].split()) for p in parts],
            structures=structures,
            dense=dense,
            sparse_rows=np.concatenate(sparse_rows) if sparse_rows else np.zeros(0, dtype=np.int64),
            sparse_names=sparse_names,
            sparse_values=np.concatenate(sparse_values) if sparse_values else np.zeros(0),
            totals=totals,
            extras=[SEPARATOR.join(p[4:]).strip() if len(p) > 4 else None for p in parts],
        )

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
        width = 0
        for group in groups:
            column_start[group.label] = width
            width += group.size
        structure_columns = [
            np.concatenate([np.arange(column_start[g.label], column_start[g.label] + g.size) for g in structure])
            if structure
            else np.zeros(0, dtype=np.int64)
            for structure in self.structure_list
        ]
        n = sum(len(c.ids) for c in self.chunks)
        dense = np.zeros((n, width), dtype=np.float64)
        sparse_index: dict[str, int] = {}
        coo_rows, coo_cols, coo_vals = [], [], []
        base = 0
        for chunk in self.chunks:
            for rows, values in chunk.dense:
                if values.size:
                    cols = structure_columns[chunk.structures[rows[0]]]
                    dense[np.ix_(base + rows, cols)] = values
            if len(chunk.sparse_rows):
                coo_rows.append(base + chunk.sparse_rows)
                coo_cols.append(np.array([sparse_index.setdefault(name, len(sparse_index)) for name in chunk.sparse_names], dtype=np.int64))
                coo_vals.append(chunk.sparse_values)
            base += len(chunk.ids)
        sparse = sp.coo_matrix(
            (
                np.concatenate(coo_vals) if coo_vals else np.zeros(0),
                (np.concatenate(coo_rows) if coo_rows else np.zeros(0, dtype=np.int64), np.concatenate(coo_cols) if coo_cols else np.zeros(0, dtype=np.int64)),
            ),
            shape=(n, len(sparse_index)),
        ).tocsr()
        sparse.sum_duplicates()
        ids = np.concatenate([c.ids for c in self.chunks]) if self.chunks else np.zeros(0, dtype=np.int64)
        texts = [t for c in self.chunks for t in c.texts]
        structures = np.concatenate([c.structures for c in self.chunks]) if self.chunks else np.zeros(0, dtype=np.int64)
        totals = np.concatenate([c.totals for c in self.chunks]) if self.chunks else np.zeros(0)
        extras = [e for c in self.chunks for e in c.extras]
        keep = _first_occurrences(ids, texts, structures, dense, sparse) if self.dedup else np.arange(n)
        self.duplicates = n - len(keep)
        # Group rows by sentence id, keeping first-appearance order within a sentence.
        ids = ids[keep]
        order = keep[np.argsort(ids, kind="stable")]
        n_sent = int(ids.max()) + 1 if len(ids) else 0
        if n_sentences is not None:
            if n_sent > n_sentences:
                raise InputError(f"sentence id {n_sent - 1} is out of range: there are {n_sentences} sentences")
            n_sent = n_sentences
        offsets = np.zeros(n_sent + 1, dtype=np.int64)
        np.cumsum(np.bincount(ids, minlength=n_sent), out=offsets[1:])
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


def _first_occurrences(ids, texts, structures, dense, sparse) -> np.ndarray:
    """Rows that are not a repeat (same sentence, text, layout and feature values) of an earlier row.

    Rows are keyed by exact columns (id, text code, layout) and 64-bit hashes of their dense and
    sparse values; every row flagged as a repeat is then compared value by value with the first
    row of its key, so a hash collision can never drop a distinct hypothesis.
    """
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    text_codes, _ = pd.factorize(np.array(texts, dtype=object))
    frame = pd.DataFrame({"id": ids, "text": text_codes, "layout": structures})
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
