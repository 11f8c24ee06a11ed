"""Moses text phrase tables and a reordering table, merged into flat arrays.

:func:`read_phrase_tables` reads the phrase tables of a model directory (optionally only the pairs
whose source phrase an input contains) and :func:`read_reordering` adds the reordering table;
both the text loading of :func:`smtlib.decoder.loader.load_model` and the compiled form
(:mod:`smtlib.decoder.compiled`) are built with them, so the two hold the same numbers.

Merging (each choice is also described in :mod:`smtlib.decoder.model`):

* a phrase pair is identified by its source field as written and its stripped target field;
* **scores** are the natural logs of the four probabilities, floored at -100 (Moses's
  ``FloorScore``); a pair missing from table ``t`` gets ``ln(1e-7)`` for table ``t``'s four scores;
  a pair listed twice in one table keeps the scores of its last line;
* **sparse features** (sixth field, ``big`` models only) of all lines of a pair are concatenated in
  table and line order;
* **reordering** scores are looked up by pair (the last line wins); pairs without a line get NaN,
  and lines of pairs that no phrase table has are skipped unread.

Entries are grouped by source phrase; within a source they keep the order in which the tables list
them (table 0's pairs in file order, then pairs that only later tables have), which is the order the
decoder sees on ties.
"""

from __future__ import annotations

import array
import dataclasses
import math
import os
from collections.abc import Callable, Iterable

import numpy as np

from smtlib.errors import InputError
from smtlib.io import open_text
from smtlib.system.modeldir import MISSING_LOGPROB, ModelSpec, component_path

FLOOR_LOGPROB = -100.0
_SEP = " ||| "


def natural_logs(probs: np.ndarray) -> np.ndarray:
    """``max(ln p, -100)`` elementwise (a zero probability gets the floor)."""
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(probs), FLOOR_LOGPROB)


def _scores(text: str, expected: int, what: str, path, lineno: int) -> list[float]:
    """The numbers of a score field; InputError unless there are ``expected`` of them."""
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        raise InputError(f"non-numeric score in {text!r}", path, lineno) from None
    if len(values) != expected:
        raise InputError(f"expected {expected} {what}, got {len(values)}", path, lineno)
    return values


def _check_probabilities(values: list[float], path, lineno: int) -> None:
    if not all(0.0 <= v < math.inf for v in values):
        raise InputError(f"phrase score is not a probability: {values}", path, lineno)


def ragged_take(offsets: np.ndarray, values: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``rows`` of a ragged array (row ``r`` is ``values[offsets[r]:offsets[r + 1]]``), concatenated.

    Returns the new offsets (``len(rows) + 1``) and values.
    """
    rows = np.asarray(rows, dtype=np.int64)
    starts = offsets[rows]
    lens = offsets[rows + 1] - starts
    new_off = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lens, out=new_off[1:])
    index = np.repeat(starts - new_off[:-1], lens) + np.arange(new_off[-1], dtype=np.int64)
    return new_off, values[index]


class Ragged:
    """Per entry, a tuple of ints (target word ids): ``r[e]``; ``r.take(entries)`` for many at once."""

    def __init__(self, offsets: np.ndarray, values: np.ndarray):
        self.offsets = offsets
        self.values = values

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, e: int) -> tuple[int, ...]:
        return tuple(self.values[self.offsets[e] : self.offsets[e + 1]].tolist())

    def lengths(self, entries: np.ndarray) -> np.ndarray:
        return self.offsets[entries + 1] - self.offsets[entries]

    def take(self, entries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, values)`` of the given entries, values as int64."""
        off, vals = ragged_take(self.offsets, self.values, entries)
        return off, vals.astype(np.int64, copy=False)


class SparseRows:
    """Per entry, its sparse features as ``(feature ids, values)`` arrays: ``s[e]``."""

    def __init__(self, offsets: np.ndarray, ids: np.ndarray, values: np.ndarray):
        self.offsets = offsets
        self.ids = ids
        self.values = values

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, e: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.offsets[e], self.offsets[e + 1]
        return self.ids[a:b].astype(np.int64), self.values[a:b].astype(np.float64)


class SourceIndex:
    """Source phrase -> the range of its entries; ``src in index``, ``index.span(src)``.

    ``spans`` holds the known phrases; ``lookup`` (if given) finds the others, e.g. in a compiled
    model. ``index[src]`` is the list of entry ids (as the text loader's dict used to give).
    """

    def __init__(self, spans: dict[str, tuple[int, int]], lookup: Callable[[str], tuple[int, int] | None] | None = None):
        self.spans = spans
        self.lookup = lookup
        self._absent: set[str] = set()

    def span(self, src: str) -> tuple[int, int] | None:
        found = self.spans.get(src)
        if found is None and self.lookup is not None and src not in self._absent:
            found = self.lookup(src)
            if found is None:
                self._absent.add(src)
            else:
                self.spans[src] = found
        return found

    def __contains__(self, src: str) -> bool:
        return self.span(src) is not None

    def __getitem__(self, src: str) -> list[int]:
        found = self.span(src)
        if found is None:
            raise KeyError(src)
        return list(range(*found))


@dataclasses.dataclass
class PhraseEntries:
    """Phrase pairs merged over the tables, grouped by source phrase.

    Attributes
    ----------
    sources
        The source phrases, in order of first appearance; entries of ``sources[s]`` are
        ``src_off[s]:src_off[s + 1]``.
    tgt_vocab
        Target words; ids in order of first appearance (table order, then line order).
    tgt_off, tgt_words
        Target word ids of each entry (ragged).
    tm
        ``(n_entries, 4 * n_tables)`` natural-log scores.
    lr
        ``(n_entries, 6)`` natural-log reordering scores (NaN where a pair has none).
    sparse_off, sparse_ids, sparse_vals, sparse_names
        Sparse features of each entry (ragged; ids index ``sparse_names``).
    """

    sources: list[str]
    src_off: np.ndarray
    tgt_vocab: list[str]
    tgt_off: np.ndarray
    tgt_words: np.ndarray
    tm: np.ndarray
    lr: np.ndarray
    sparse_off: np.ndarray
    sparse_ids: np.ndarray
    sparse_vals: np.ndarray
    sparse_names: list[str]

    @property
    def n_entries(self) -> int:
        return len(self.tgt_off) - 1


class _Merger:
    """Collects the lines of the phrase tables (see :func:`read_phrase_tables`)."""

    def __init__(self, n_tables: int, big: bool, needed: set[str] | None):
        self.big = big
        self.needed = needed
        self.pair_ids: dict[str, int] = {}
        self.src_ids: dict[str, int] = {}
        self.entry_src = array.array("q")
        self.entry_tgt: list[str] = []
        self.score_entry = [array.array("q") for _ in range(n_tables)]
        self.score_probs = [array.array("d") for _ in range(n_tables)]
        # every sparse feature occurrence, in reading order: its entry, feature id and value
        self.sparse_entry, self.sparse_id, self.sparse_val = array.array("q"), array.array("q"), array.array("d")
        self.sparse_ids: dict[str, int] = {}

    def read(self, t: int, path) -> None:
        with open_text(path, what="phrase table") as fh:
            for lineno, line in enumerate(fh, 1):
                self._line(t, line, path, lineno)

    def _line(self, t: int, line: str, path, lineno: int) -> None:
        cut = line.find(_SEP)
        if cut < 0:
            if line.strip():
                raise InputError("not a Moses phrase-table line (no ' ||| ')", path, lineno)
            return
        src = line[:cut]
        if self.needed is not None and src not in self.needed:
            return
        fields = line.rstrip("\n").split(_SEP)
        if len(fields) < 3:
            raise InputError("phrase-table line has fewer than 3 fields", path, lineno)
        tgt = fields[1].strip()
        probs = _scores(fields[2], 4, "phrase scores", path, lineno)
        if not tgt:
            raise InputError("empty target phrase", path, lineno)
        _check_probabilities(probs, path, lineno)
        e = self._entry(src, tgt)
        self.score_entry[t].append(e)
        self.score_probs[t].extend(probs)
        if self.big and len(fields) >= 6 and fields[5].strip():
            self._sparse(e, fields[5], path, lineno)

    def _entry(self, src: str, tgt: str) -> int:
        key = src + _SEP + tgt
        e = self.pair_ids.get(key)
        if e is None:
            e = self.pair_ids[key] = len(self.entry_tgt)
            self.entry_tgt.append(tgt)
            self.entry_src.append(self.src_ids.setdefault(src, len(self.src_ids)))
        return e

    def _sparse(self, e: int, field: str, path, lineno: int) -> None:
        parts = field.split()
        if len(parts) % 2:
            raise InputError("sparse field is not 'name value' pairs", path, lineno)
        for name, value in zip(parts[::2], parts[1::2], strict=True):
            try:
                v = float(value)
            except ValueError:
                raise InputError(f"non-numeric sparse value {value!r}", path, lineno) from None
            self.sparse_entry.append(e)
            self.sparse_id.append(self.sparse_ids.setdefault(name, len(self.sparse_ids)))
            self.sparse_val.append(v)

    def scores(self) -> np.ndarray:
        """``(n_entries, 4 * n_tables)`` natural-log scores (the last line of a pair in a table wins)."""
        n = len(self.entry_tgt)
        tm = np.full((n, 4 * len(self.score_entry)), MISSING_LOGPROB)
        for t, (ents, probs) in enumerate(zip(self.score_entry, self.score_probs, strict=True)):
            ents = np.frombuffer(ents, dtype=np.int64)
            logs = natural_logs(np.frombuffer(probs, dtype=np.float64).reshape(-1, 4))
            last = len(ents) - 1 - np.unique(ents[::-1], return_index=True)[1]
            tm[ents[last], 4 * t : 4 * t + 4] = logs[last]
        return tm

    def targets(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The target vocabulary and each entry's word ids (ragged), in entry order."""
        vocab: dict[str, int] = {}
        lens = array.array("q")
        flat = array.array("q")
        for tgt in self.entry_tgt:
            ids = [vocab.setdefault(w, len(vocab)) for w in tgt.split()]
            lens.append(len(ids))
            flat.extend(ids)
        off = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(lens, dtype=np.int64), out=off[1:])
        return list(vocab), off, np.frombuffer(flat, dtype=np.int64)

    def sparse_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each entry's sparse features (ragged), its lines' features concatenated in reading order."""
        entry = np.frombuffer(self.sparse_entry, dtype=np.int64)
        order = np.argsort(entry, kind="stable")
        off = np.zeros(len(self.entry_tgt) + 1, dtype=np.int64)
        np.cumsum(np.bincount(entry, minlength=len(self.entry_tgt)), out=off[1:])
        return (off, np.frombuffer(self.sparse_id, dtype=np.int64)[order],
                np.frombuffer(self.sparse_val, dtype=np.float64)[order])


def read_phrase_tables(spec: ModelSpec, model_dir: str | os.PathLike, needed: set[str] | None = None
                       ) -> tuple[PhraseEntries, dict[str, int]]:
    """Read and merge the phrase tables of a model directory.

    Parameters
    ----------
    spec, model_dir
        The model (see :mod:`smtlib.system.modeldir`).
    needed
        If given, only pairs whose source phrase is in this set are read.

    Returns
    -------
    (entries, pair_ids)
        The merged entries (``lr`` all NaN; see :func:`read_reordering`) and, for the reordering
        table, ``"src ||| tgt" -> entry id``.

    Raises
    ------
    InputError
        On a missing file or a malformed line.
    """
    merger = _Merger(len(spec.phrase_tables), spec.sparse, needed)
    for t, comp in enumerate(spec.phrase_tables):
        merger.read(t, component_path(model_dir, comp))
    # group by source phrase, keeping the reading order within a source
    entry_src = np.frombuffer(merger.entry_src, dtype=np.int64)
    order = np.argsort(entry_src, kind="stable")
    src_off = np.zeros(len(merger.src_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(entry_src, minlength=len(merger.src_ids)), out=src_off[1:])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    vocab, tgt_off, tgt_words = merger.targets()
    tgt_off, tgt_words = ragged_take(tgt_off, tgt_words, order)
    sp_off, sp_ids, sp_vals = merger.sparse_rows()
    sp_off, sp_index = ragged_take(sp_off, np.arange(len(sp_ids)), order)
    entries = PhraseEntries(
        sources=list(merger.src_ids), src_off=src_off, tgt_vocab=vocab, tgt_off=tgt_off, tgt_words=tgt_words,
        tm=merger.scores()[order], lr=np.full((len(order), 6), np.nan), sparse_off=sp_off,
        sparse_ids=sp_ids[sp_index], sparse_vals=sp_vals[sp_index], sparse_names=list(merger.sparse_ids),
    )
    pair_ids = merger.pair_ids
    for key, e in pair_ids.items():
        pair_ids[key] = int(rank[e])
    return entries, pair_ids


def read_reordering(spec: ModelSpec, model_dir: str | os.PathLike, entries: PhraseEntries,
                    pair_ids: dict[str, int], needed: set[str] | None = None) -> None:
    """Fill ``entries.lr`` from the model's reordering table (msd-bidirectional-fe, 6 scores)."""
    for comp in spec.reordering:
        path = component_path(model_dir, comp)
        rows, probs = array.array("q"), array.array("d")
        with open_text(path, what="reordering table") as fh:
            for lineno, line in enumerate(fh, 1):
                e = _reordering_line(line, path, lineno, pair_ids, needed, probs)
                if e is not None:
                    rows.append(e)
        rows_np = np.frombuffer(rows, dtype=np.int64)
        logs = natural_logs(np.frombuffer(probs, dtype=np.float64).reshape(-1, 6))
        last = len(rows_np) - 1 - np.unique(rows_np[::-1], return_index=True)[1]
        entries.lr[rows_np[last]] = logs[last]


def _reordering_line(line: str, path, lineno: int, pair_ids: dict[str, int], needed: set[str] | None,
                     probs: array.array) -> int | None:
    """The entry of one reordering-table line (its six probabilities appended to ``probs``), or None."""
    cut = line.find(_SEP)
    if cut < 0:
        if line.strip():
            raise InputError("not a Moses reordering-table line", path, lineno)
        return None
    if needed is not None and line[:cut] not in needed:
        return None
    fields = line.rstrip("\n").split(_SEP)
    if len(fields) < 3:
        raise InputError("reordering-table line has fewer than 3 fields", path, lineno)
    e = pair_ids.get(fields[0] + _SEP + fields[1].strip())
    if e is None:
        return None
    values = _scores(fields[2], 6, "msd-bidirectional-fe scores", path, lineno)
    _check_probabilities(values, path, lineno)
    probs.extend(values)
    return e


def source_phrases(sentences: Iterable[list[str]], max_len: int) -> set[str]:
    """Every source n-gram (n <= ``max_len``) of the sentences: what filtering keeps."""
    needed: set[str] = set()
    for toks in sentences:
        for i in range(len(toks)):
            for j in range(i + 1, min(len(toks), i + max_len) + 1):
                needed.add(" ".join(toks[i:j]))
    return needed
