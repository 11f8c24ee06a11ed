"""Binary k-best pools, grown one k-best list at a time (the tuning loop's pool on disk).

The tuning loop of Cherry & Foster (2012, §4) optimizes, at iteration *it*, on the union of the
k-best lists of iterations 1..it. Re-reading every earlier gzipped list and recomputing every
hypothesis's BLEU statistics at each iteration costs what all earlier lists cost; here the pool of
iteration *it* is the pool of *it-1* plus the new list (:func:`add_kbest`): only the new list is
parsed, only its new hypotheses are de-duplicated against the pool (by stored row hashes, each
match confirmed value by value) and scored, and the tuners read the result directly
(:func:`load_pool`). The pool is exactly what :func:`smtlib.kbest.pool.read_pool` gives over the
same text lists in the same order (rows per sentence in first-appearance order; a later copy with
the same text, dense layout and feature values dropped; dense columns and sparse names in order of
first appearance), with the BLEU statistics :meth:`KBestPool.compute_stats` would compute.

File format ``smtlib-pool/1`` (little-endian):

===========  ===================================================================================
bytes        content
===========  ===================================================================================
0 .. 7       magic ``b"\\x89SMTPOOL"``
8 .. 15      header length H (uint64)
16 .. 16+H   header: UTF-8 JSON object (keys below)
then         the arrays, each starting at a multiple of 64 bytes, at the offsets the header gives
===========  ===================================================================================

Header keys: ``format`` (``"smtlib-pool/1"``), ``n_sentences`` S, ``n_hypotheses`` N, ``groups``
(the dense groups in column order, ``[label, size, style]``), ``layouts`` (every dense layout met,
as lists of indices into ``groups`` in line order), ``sparse_names`` (sparse column names),
``bleu`` (the :class:`~smtlib.bleu.stats.BleuSettings` of the statistics, :meth:`~smtlib.bleu.stats.BleuSettings.to_dict`), ``references``
(``sha256`` of the reference segments, see :func:`references_fingerprint`, with the number of
``sets`` and ``segments``), ``row_hash`` (the row-hash scheme, ``smtlib-rowhash/1``),
``duplicates_dropped``, ``files`` (the k-best files added, in order, with their line counts and
rows kept) and ``arrays``: name -> ``{"dtype", "shape", "offset"}`` for

===================  ==========  ==============================================================
array                dtype       content
===================  ==========  ==============================================================
``offsets``          int64       (S+1,) rows of sentence s are ``offsets[s]:offsets[s+1]``
``dense``            float64     (N, D) dense features, columns in ``groups`` order (0 if absent)
``row_layout``       int32       (N,) each row's index into ``layouts``
``row_hash``         uint64      (N,) :func:`row_hashes` of each row (for de-duplication)
``sparse_indptr``    int64       (N+1,) CSR row pointers of the sparse features
``sparse_indices``   int32       (nnz,) CSR columns (indices into ``sparse_names``), sorted per row
``sparse_data``      float64     (nnz,) CSR values
``text_offsets``     int64       (N+1,) hypothesis i is ``text_bytes[text_offsets[i]:text_offsets[i+1]-1]``
``text_bytes``       uint8       the hypotheses in UTF-8, each followed by a newline
``totals``           float64     (N,) the totals written in the k-best files (NaN where absent)
``extra_present``    bool        (N,) has the line fields after the total
``extra_offsets``    int64       (N+1,) like ``text_offsets``, for those fields (empty when absent)
``extra_bytes``      uint8       like ``text_bytes``
``stats``            float64     (N, 10) BLEU statistics (layout of :mod:`smtlib.bleu.stats`)
``stats:NAME``       float64     (N, W) statistics of metric NAME (only those the header's
                                 ``metrics`` lists)
===================  ==========  ==============================================================

Other metrics. The optional header key ``metrics`` lists ``{"name", "settings"}`` of the
metrics of :mod:`smtlib.bleu.metrics` whose statistics the pool keeps besides BLEU's (``smtlib
kbest add --metric chrf ter``), one array ``stats:NAME`` each, computed against the same references
as BLEU's and kept up to date by every later :func:`add_kbest` (a metric asked for that an earlier
pool lacks is computed for its rows then). A pool without the key is a pool of BLEU statistics
only, as before; tuning toward another metric then computes its statistics in memory.

Files are written atomically (:func:`smtlib.io.atomic_output`); reading one copies each array
into its own numpy array (no memory map), so a pool behaves like one read from text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator, Sequence

import numba
import numpy as np
import scipy.sparse as sp

from smtlib.bleu.stats import STATS_WIDTH, BleuSettings, compute_stats
from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.kbest.format import FeatureGroup, describe_groups, layout_key
from smtlib.kbest.pool import KBestPool, read_pool, sentences_spanned

MAGIC = b"\x89SMTPOOL"
FORMAT = "smtlib-pool/1"
ROW_HASH = "smtlib-rowhash/1"
_ALIGN = 64
#: passes of write_stored's offsets computation before it gives up (two usually suffice; four have been needed)
_HEADER_PASSES = 16

# name -> (dtype, number of trailing dimensions after the first); the first dimension varies
_ARRAYS: dict[str, str] = {
    "offsets": "<i8",
    "dense": "<f8",
    "row_layout": "<i4",
    "row_hash": "<u8",
    "sparse_indptr": "<i8",
    "sparse_indices": "<i4",
    "sparse_data": "<f8",
    "text_offsets": "<i8",
    "text_bytes": "|u1",
    "totals": "<f8",
    "extra_present": "|b1",
    "extra_offsets": "<i8",
    "extra_bytes": "|u1",
    "stats": "<f8",
}


def is_pool_file(path: str | os.PathLike) -> bool:
    """True if ``path`` is an existing file that starts with the pool magic bytes."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return False


def references_fingerprint(references: Sequence[Sequence[str]]) -> dict:
    """SHA-256 of the reference segments (set by set, each segment followed by a newline)."""
    digest = hashlib.sha256(f"{len(references)} {len(references[0]) if references else 0}\n".encode())
    for ref_set in references:
        for segment in ref_set:
            digest.update(segment.encode("utf-8"))
            digest.update(b"\n")
    return {"sha256": digest.hexdigest(), "sets": len(references), "segments": len(references[0]) if references else 0}


# ------------------------------------------------------------------------------ packed strings
class PackedTexts(Sequence[str]):
    """A read-only sequence of strings kept as one UTF-8 buffer (decoded on access).

    Pools hold a million hypotheses; the tuners never look at their text, so it stays packed.
    """

    def __init__(self, data: np.ndarray, offsets: np.ndarray) -> None:
        self.data = data
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("text index out of range")
        return self.data[self.offsets[index] : self.offsets[index + 1] - 1].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        if len(self) == 0:
            return []
        return self.data.tobytes().decode("utf-8").split("\n")[:-1]


def pack_texts(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, offsets) of ``texts``, each followed by a newline (texts must not contain one)."""
    if isinstance(texts, PackedTexts):
        return texts.data, texts.offsets
    if not texts:
        return np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64)
    data = np.frombuffer(("\n".join(texts) + "\n").encode("utf-8"), dtype=np.uint8).copy()
    ends = np.flatnonzero(data == 10) + 1
    if len(ends) != len(texts):
        raise ValueError("a packed text must not contain a newline")
    return data, np.concatenate([np.zeros(1, dtype=np.int64), ends.astype(np.int64)])


# ------------------------------------------------------------------------------ row hashes
@numba.njit(cache=True)
def _row_hashes_nb(sentence, layout, text, text_offsets, dense_bits, layout_ptr, layout_cols, indptr, indices, data_bits):
    prime = np.uint64(0x100000001B3)
    negative_zero = np.uint64(0x8000000000000000)
    n = sentence.shape[0]
    out = np.empty(n, dtype=np.uint64)
    for r in range(n):
        h = np.uint64(0xCBF29CE484222325)
        h = (h ^ np.uint64(sentence[r])) * prime
        h = (h ^ np.uint64(layout[r])) * prime
        for b in range(text_offsets[r], text_offsets[r + 1]):
            h = (h ^ np.uint64(text[b])) * prime
        lay = layout[r]
        for k in range(layout_ptr[lay], layout_ptr[lay + 1]):
            c = layout_cols[k]
            h = (h ^ np.uint64(c)) * prime
            bits = dense_bits[r, c]
            h = (h ^ (np.uint64(0) if bits == negative_zero else bits)) * prime
        for k in range(indptr[r], indptr[r + 1]):
            h = (h ^ np.uint64(indices[k])) * prime
            bits = data_bits[k]
            h = (h ^ (np.uint64(0) if bits == negative_zero else bits)) * prime
        # splitmix64's finalizer spreads the FNV state over all bits
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        out[r] = h ^ (h >> np.uint64(31))
    return out


def row_hashes(sentence, row_layout, text_bytes, text_offsets, dense, layout_columns, indptr, indices, data) -> np.ndarray:
    """64-bit hash of each row's (sentence, layout, text, its layout's dense values, sparse pairs).

    Scheme ``smtlib-rowhash/1``: FNV-1a over the sentence id, the layout index, the text's UTF-8
    bytes (with its newline), the (column, IEEE bits) pairs of the row's layout columns and the
    (column, IEEE bits) sparse pairs in column order, then splitmix64's finalizer; ``-0.0`` is
    hashed as ``0.0``, so that equal values hash equal (as pandas' hashing in
    :func:`smtlib.kbest.pool.read_pool` does). A hash only proposes a duplicate, which is then
    confirmed value by value.
    """
    layout_ptr = np.zeros(len(layout_columns) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in layout_columns], out=layout_ptr[1:])
    cols = np.concatenate([np.asarray(c, dtype=np.int64) for c in layout_columns]) if layout_columns else np.zeros(0, np.int64)
    dense = np.ascontiguousarray(dense, dtype=np.float64)
    if dense.shape[1] == 0:
        dense = np.zeros((dense.shape[0], 1))
    return _row_hashes_nb(
        np.asarray(sentence, dtype=np.int64), np.asarray(row_layout, dtype=np.int64), text_bytes,
        np.asarray(text_offsets, dtype=np.int64), dense.view(np.uint64), layout_ptr, cols,
        np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64),
        np.ascontiguousarray(data, dtype=np.float64).view(np.uint64),
    )


# ------------------------------------------------------------------------------ the stored pool
@dataclasses.dataclass
class StoredPool:
    """A pool in its stored form: the header fields and the arrays of the module docstring."""

    groups: tuple[FeatureGroup, ...]
    layouts: list[tuple[FeatureGroup, ...]]
    sparse_names: list[str]
    settings: BleuSettings
    references: dict
    arrays: dict[str, np.ndarray]
    duplicates_dropped: int = 0
    files: list[dict] = dataclasses.field(default_factory=list)
    #: metrics besides BLEU whose statistics are kept (arrays ``stats:NAME``), see the module docstring
    metrics: tuple = ()

    @property
    def n_sentences(self) -> int:
        return len(self.arrays["offsets"]) - 1

    @property
    def n_hypotheses(self) -> int:
        return len(self.arrays["row_hash"])

    def sentences_spanned(self) -> int:
        """The largest sentence id with a hypothesis + 1 (:meth:`KBestPool.sentences_spanned`)."""
        return sentences_spanned(self.arrays["offsets"])

    def layout_columns(self) -> list[np.ndarray]:
        """Dense columns of each layout, in line order."""
        start, width = {}, 0
        for g in self.groups:
            start[g.label] = width
            width += g.size
        return [np.array([start[g.label] + k for g in lay for k in range(g.size)], dtype=np.int64) for lay in self.layouts]

    def header(self) -> dict:
        index = {g: i for i, g in enumerate(self.groups)}
        return {
            "format": FORMAT,
            "n_sentences": self.n_sentences,
            "n_hypotheses": self.n_hypotheses,
            "groups": [[g.label, g.size, g.style] for g in self.groups],
            "layouts": [[index[g] for g in lay] for lay in self.layouts],
            "sparse_names": list(self.sparse_names),
            "bleu": self.settings.to_dict(),
            "references": self.references,
            "row_hash": ROW_HASH,
            "duplicates_dropped": self.duplicates_dropped,
            "files": self.files,
            **({"metrics": [{"name": m.name, "settings": _settings_dict(m.settings)} for m in self.metrics]}
               if self.metrics else {}),
        }

    def to_kbest_pool(self) -> KBestPool:
        """The in-memory :class:`KBestPool` (texts stay packed), with its BLEU statistics."""
        a = self.arrays
        n = self.n_hypotheses
        sparse = sp.csr_matrix((a["sparse_data"], a["sparse_indices"], a["sparse_indptr"]), shape=(n, len(self.sparse_names)))
        present = a["extra_present"]
        if present.any():
            extra_texts = PackedTexts(a["extra_bytes"], a["extra_offsets"])
            extras: list[str | None] = [None] * n
            for k, row in enumerate(np.flatnonzero(present)):
                extras[row] = extra_texts[k]
        else:
            extras = [None] * n
        pool = KBestPool(
            offsets=a["offsets"],
            texts=PackedTexts(a["text_bytes"], a["text_offsets"]),  # type: ignore[arg-type]
            dense=a["dense"],
            groups=self.groups,
            sparse=sparse,
            sparse_names=list(self.sparse_names),
            totals=a["totals"],
            extras=extras,
            stats=a["stats"],
            stats_settings=self.settings,
            layouts=tuple(self.layouts),
            row_layouts=a["row_layout"].astype(np.int64),
        )
        pool.duplicates_dropped = self.duplicates_dropped  # type: ignore[attr-defined]
        for metric in self.metrics:
            pool.other_stats[metric] = a[metric_array(metric, self.metrics)]
        return pool


def _settings_dict(settings) -> dict:
    """A metric's settings as a header's JSON object (their own ``to_dict`` where they have one)."""
    return settings.to_dict() if hasattr(settings, "to_dict") else dataclasses.asdict(settings)


def metric_array(metric, kept: Sequence) -> str:
    """The array name of a metric's statistics in a stored pool keeping ``kept`` (the header's order):
    ``stats:ter``; a later metric of the same name with other settings (chrF of another order, say)
    ``stats:chrf#2``, so that two of them never share an array."""
    same = [m for m in kept if m.name == metric.name]
    k = same.index(metric) + 1
    return f"stats:{metric.name}" if k == 1 else f"stats:{metric.name}#{k}"


def _metric_from_header(entry: dict, path):
    from smtlib.bleu.metrics import METRICS

    cls = METRICS.get(entry.get("name"))
    if cls is None:
        raise InputError(f"pool header names an unknown metric {entry.get('name')!r}", path)
    return cls(type(cls().settings)(**entry["settings"]))


def _check_same_scoring(stored: StoredPool, references: dict, settings: BleuSettings, path) -> None:
    if stored.settings != settings:
        from smtlib.bleu.signature import BleuSignature

        n_refs = stored.references["sets"]
        raise InputError(f"the pool's BLEU statistics use {BleuSignature(stored.settings, n_refs)}, "
                         f"this call {BleuSignature(settings, n_refs)}", path)
    if stored.references != references:
        raise InputError(
            f"the pool's BLEU statistics were computed against other references ({stored.references['sets']} set(s) of "
            f"{stored.references['segments']} segments, sha256 {stored.references['sha256'][:12]}; these: "
            f"{references['sets']} of {references['segments']}, sha256 {references['sha256'][:12]})", path)


# ------------------------------------------------------------------------------ reading and writing
def write_stored(stored: StoredPool, path: str | os.PathLike) -> None:
    """Write ``stored`` atomically in the ``smtlib-pool/1`` format."""
    header = stored.header()
    arrays = {}
    specs = {}
    names = {**_ARRAYS, **{metric_array(m, stored.metrics): "<f8" for m in stored.metrics}}
    for name, dtype in names.items():
        arr = np.ascontiguousarray(stored.arrays[name], dtype=np.dtype(dtype))
        arrays[name] = arr
        specs[name] = {"dtype": dtype, "shape": list(arr.shape), "offset": 0}
    # offsets depend on the header's length, which depends on the offsets' digits: repeat until the
    # header written is the one whose offsets were computed (they only grow, so this ends; usually the
    # second pass, but a digit gained there, e.g. 9,984 -> 10,048, takes a third and sometimes a fourth)
    for _ in range(_HEADER_PASSES):
        header["arrays"] = specs
        blob = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        pos = _aligned(len(MAGIC) + 8 + len(blob))
        changed = False
        for name, arr in arrays.items():
            if specs[name]["offset"] != pos:
                specs[name] = {**specs[name], "offset": pos}
                changed = True
            pos = _aligned(pos + arr.nbytes)
        if not changed:
            break
    else:
        raise RuntimeError(f"pool header offsets did not settle in {_HEADER_PASSES} passes")
    with atomic_output(path, binary=True, compress=False) as out:
        out.write(MAGIC)
        out.write(len(blob).to_bytes(8, "little"))
        out.write(blob)
        written = len(MAGIC) + 8 + len(blob)
        for name, arr in arrays.items():
            start = specs[name]["offset"]
            out.write(b"\0" * (start - written))
            if arr.nbytes:
                out.write(memoryview(arr).cast("B"))
            written = start + arr.nbytes


#: row-pointer array -> the array whose items it points into (its last entry is that array's length)
_POINTERS = {"offsets": "row_layout", "sparse_indptr": "sparse_indices", "text_offsets": "text_bytes",
             "extra_offsets": "extra_bytes"}


def _check_pointers(arrays: dict[str, np.ndarray], path: str | os.PathLike) -> None:
    """Each row-pointer array starts at 0, never decreases and ends at its values' length: a file whose
    header does not match its arrays (or damaged in them) is refused here, not read as garbage."""
    for name, values in _POINTERS.items():
        ptr = arrays[name]
        if len(ptr) == 0 and name == "extra_offsets":
            continue
        if len(ptr) == 0 or ptr[0] != 0 or ptr[-1] != len(arrays[values]) or bool((np.diff(ptr) < 0).any()):
            raise InputError(f"pool file is damaged (array {name} is not a row pointer into {values})", path)


def _aligned(pos: int) -> int:
    return -(-pos // _ALIGN) * _ALIGN


def read_stored(path: str | os.PathLike) -> StoredPool:
    """Read a ``smtlib-pool/1`` file.

    Raises
    ------
    InputError
        If the file is missing, not a pool, of another format version, or truncated.
    """
    if not os.path.isfile(path):
        raise InputError("pool file not found", path)
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        if fh.read(len(MAGIC)) != MAGIC:
            raise InputError("not a binary k-best pool (smtlib kbest add writes them)", path)
        length = int.from_bytes(fh.read(8), "little")
        try:
            header = json.loads(fh.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise InputError("pool header is damaged", path) from None
        if header.get("format") != FORMAT or header.get("row_hash") != ROW_HASH:
            raise InputError(f"pool format {header.get('format')!r} / {header.get('row_hash')!r}, expected {FORMAT!r}", path)
        arrays = {}
        metrics = tuple(_metric_from_header(entry, path) for entry in header.get("metrics", []))
        for name in [*_ARRAYS, *(metric_array(m, metrics) for m in metrics)]:
            if name not in header["arrays"]:
                raise InputError(f"pool header lists no array {name!r}", path)
            spec = header["arrays"][name]
            arr = np.empty(spec["shape"], dtype=np.dtype(spec["dtype"]))
            if spec["offset"] + arr.nbytes > size:
                raise InputError(f"pool file is truncated (array {name})", path)
            if arr.nbytes:
                fh.seek(spec["offset"])
                if fh.readinto(memoryview(arr).cast("B")) != arr.nbytes:
                    raise InputError(f"pool file is truncated (array {name})", path)
            arrays[name] = arr
    _check_pointers(arrays, path)
    groups = tuple(FeatureGroup(label, size_, style) for label, size_, style in header["groups"])
    return StoredPool(
        groups=groups,
        layouts=[tuple(groups[i] for i in lay) for lay in header["layouts"]],
        sparse_names=header["sparse_names"],
        settings=BleuSettings(**header["bleu"]),
        references=header["references"],
        arrays=arrays,
        duplicates_dropped=header["duplicates_dropped"],
        files=header["files"],
        metrics=metrics,
    )


def load_pool(path: str | os.PathLike, references: Sequence[Sequence[str]] | None = None,
              settings: BleuSettings | None = None) -> KBestPool:
    """A binary pool as a :class:`KBestPool` with its BLEU statistics, ready for a tuner.

    Parameters
    ----------
    references, settings
        When given, they must be those the statistics were computed with (else InputError).
    """
    return checked_pool(read_stored(path), path, references, settings)


def checked_pool(stored: StoredPool, path: str | os.PathLike, references: Sequence[Sequence[str]] | None = None,
                 settings: BleuSettings | None = None) -> KBestPool:
    """:func:`load_pool` of a pool already read (``read_stored(path)``): the caller may look at it
    first, e.g. at :meth:`StoredPool.sentences_spanned` to choose the references."""
    if references is not None:
        _check_same_scoring(stored, references_fingerprint(references), settings or stored.settings, path)
    elif settings is not None and settings != stored.settings:
        _check_same_scoring(stored, stored.references, settings, path)
    return stored.to_kbest_pool()


# ------------------------------------------------------------------------------ adding a k-best list
def add_kbest(previous: str | os.PathLike | None, kbest: str | os.PathLike | Sequence[str | os.PathLike],
              references: Sequence[Sequence[str]], settings: BleuSettings, out: str | os.PathLike, *,
              metrics: Sequence = ()) -> StoredPool:
    """Write the pool ``previous`` (None: empty) + the k-best list(s) ``kbest`` to ``out``.

    Only the new lists are parsed; their rows are de-duplicated within each file and against the
    pool, and BLEU statistics are computed for the rows kept. The result equals ``read_pool`` over
    the text lists of ``previous`` and ``kbest`` in order, with ``compute_stats(references, settings)``.

    ``metrics`` (of :mod:`smtlib.bleu.metrics`, besides BLEU) are kept too, with those ``previous``
    keeps (statistics of rows of ``previous`` that lack a metric asked for are computed here).

    A hypothesis's statistics are against the reference line of its sentence id, so the pool may
    cover any of the references' lines (:func:`smtlib.bleu.references.covered_sentences`).

    Raises
    ------
    InputError
        On a malformed k-best file, a sentence id beyond the references, a dense feature whose size
        differs from the pool's, or references / BLEU settings other than the pool's.
    """
    if settings.width != STATS_WIDTH:
        raise InputError(f"a binary pool keeps 4-gram BLEU statistics, not {settings.max_ngram_order}-gram ones")
    stored = read_stored(previous) if previous is not None else None
    paths = [kbest] if isinstance(kbest, str | os.PathLike) else list(kbest)
    if not paths:
        raise InputError("no k-best file given")
    fingerprint = references_fingerprint(references)
    if stored is not None:
        _check_same_scoring(stored, fingerprint, settings, previous)
        stored = with_metrics(stored, metrics, references)
    for path in paths:
        before = stored.n_hypotheses if stored is not None else 0
        new = read_pool(path, n_sentences=len(references[0]))
        stored = merge(stored, new, references, settings, fingerprint, metrics)
        stored.files.append({"path": os.fspath(path), "lines": int(new.n_hypotheses + new.duplicates_dropped),  # type: ignore[attr-defined]
                             "added": int(stored.n_hypotheses - before)})
    write_stored(stored, out)
    return stored


def with_metrics(stored: StoredPool, metrics: Sequence, references) -> StoredPool:
    """``stored`` keeping also ``metrics``: the statistics of its rows for those it lacks are computed."""
    missing = [m for m in dict.fromkeys(metrics) if m not in stored.metrics]
    if not missing:
        return stored
    texts = PackedTexts(stored.arrays["text_bytes"], stored.arrays["text_offsets"]).tolist()
    sentence = np.repeat(np.arange(stored.n_sentences, dtype=np.int64), np.diff(stored.arrays["offsets"]))
    arrays = dict(stored.arrays)
    kept = stored.metrics + tuple(missing)
    for metric in missing:
        arrays[metric_array(metric, kept)] = (metric.stats(texts, sentence, references) if texts
                                              else np.zeros((0, metric.width)))
    return dataclasses.replace(stored, arrays=arrays, metrics=kept)


def _empty(n_sentences: int, settings: BleuSettings, fingerprint: dict, metrics: Sequence = ()) -> StoredPool:
    arrays = {name: np.zeros(0, dtype=np.dtype(dtype)) for name, dtype in _ARRAYS.items()}
    arrays.update(offsets=np.zeros(n_sentences + 1, dtype=np.int64), dense=np.zeros((0, 0)),
                  sparse_indptr=np.zeros(1, dtype=np.int64), text_offsets=np.zeros(1, dtype=np.int64),
                  extra_offsets=np.zeros(1, dtype=np.int64), stats=np.zeros((0, STATS_WIDTH)))
    for metric in metrics:
        arrays[metric_array(metric, metrics)] = np.zeros((0, metric.width))
    return StoredPool((), [], [], settings, fingerprint, arrays, metrics=tuple(metrics))


def merge(prev: StoredPool | None, new: KBestPool, references, settings: BleuSettings, fingerprint: dict,
          metrics: Sequence = ()) -> StoredPool:
    """``prev`` + the rows of ``new`` (one k-best file read by ``read_pool``) that are not in ``prev``,
    with the statistics of BLEU and of ``prev``'s other metrics (``metrics`` for an empty ``prev``).

    As :func:`~smtlib.kbest.pool.read_pool` requires of the files of one pool, every file added
    must have the pool's dense features (one layout per pool).
    """
    new_layouts = new.layouts if new.layouts is not None else (tuple(new.groups),)
    new_row_layouts = new.row_layouts if new.row_layouts is not None else np.zeros(new.n_hypotheses, dtype=np.int64)
    if prev is not None and prev.layouts and any(layout_key(lay) != layout_key(prev.layouts[0]) for lay in new_layouts):
        raise InputError(f"dense features {describe_groups(new_layouts[0])} differ from those of the pool "
                         f"({describe_groups(prev.layouts[0])}): the files of a pool must have the same dense features")
    prev = prev if prev is not None else _empty(new.n_sentences, settings, fingerprint, tuple(dict.fromkeys(metrics)))
    n_sent = prev.n_sentences
    if new.n_sentences != n_sent:
        raise InputError(f"the pool has {n_sent} sentences, the new k-best list {new.n_sentences}")
    # dense groups: the pool's, then new labels in the order the reader met them
    groups = list(prev.groups)
    known = {g.label: g for g in groups}
    for g in new.groups:
        old = known.get(g.label)
        if old is None:
            known[g.label] = g
            groups.append(g)
        elif old != g:
            raise InputError(f"dense feature {g.label!r} has {g.size} value(s) in one line and {old.size} in another")
    start, width = {}, 0
    for g in groups:
        start[g.label] = width
        width += g.size
    new_cols = np.array([start[g.label] + k for g in new.groups for k in range(g.size)], dtype=np.int64)
    layouts = list(prev.layouts)
    layout_index = {lay: i for i, lay in enumerate(layouts)}
    layout_map = np.zeros(len(new_layouts), dtype=np.int64)
    for i, lay in enumerate(new_layouts):
        if lay not in layout_index:
            layout_index[lay] = len(layouts)
            layouts.append(lay)
        layout_map[i] = layout_index[lay]
    sparse_names = list(prev.sparse_names)
    sparse_index = {name: i for i, name in enumerate(sparse_names)}
    sparse_map = np.array([sparse_index.setdefault(name, len(sparse_index)) for name in new.sparse_names], dtype=np.int64)
    sparse_names = list(sparse_index)
    stored = StoredPool(tuple(groups), layouts, sparse_names, settings, fingerprint, {},
                        prev.duplicates_dropped + int(getattr(new, "duplicates_dropped", 0)), list(prev.files),
                        prev.metrics)
    layout_columns = stored.layout_columns()

    # the new rows in the merged column spaces
    n_new = new.n_hypotheses
    dense = np.zeros((n_new, width))
    if len(new_cols):
        dense[:, new_cols] = new.dense
    csr = new.sparse.tocsr()
    new_sparse = sp.csr_matrix((csr.data, sparse_map[csr.indices] if len(sparse_map) else csr.indices, csr.indptr),
                               shape=(n_new, len(sparse_names)), copy=True)
    new_sparse.sort_indices()
    indptr = new_sparse.indptr.astype(np.int64)
    text_bytes, text_offsets = pack_texts(new.texts)
    sentence = new.sentence_index
    row_layout = layout_map[new_row_layouts]
    hashes = row_hashes(sentence, row_layout, text_bytes, text_offsets, dense, layout_columns, indptr,
                        new_sparse.indices, new_sparse.data)

    # drop the rows already in the pool
    duplicate = _in_previous(prev, hashes, sentence, row_layout, text_bytes, text_offsets, dense, indptr,
                             new_sparse.indices, new_sparse.data)
    keep = np.flatnonzero(~duplicate)
    stored.duplicates_dropped += int(duplicate.sum())
    texts_kept = [new.texts[i] for i in keep]
    stats = compute_stats(texts_kept, sentence[keep], references, settings) if len(keep) else np.zeros((0, STATS_WIDTH))
    extra_present = np.array([e is not None for e in new.extras], dtype=bool)
    extra_bytes, extra_offsets = pack_texts([e for e in new.extras if e is not None])

    # per sentence: the pool's rows, then the new ones (both already grouped by sentence)
    new_offsets = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(np.bincount(sentence[keep], minlength=n_sent), out=new_offsets[1:])
    p = prev.arrays
    rows_new = keep
    a = {}
    a["offsets"] = p["offsets"] + new_offsets
    pd_ = p["dense"]
    if pd_.shape[1] < width:
        pd_ = np.hstack([pd_, np.zeros((len(pd_), width - pd_.shape[1]))])
    a["dense"] = _interleave(pd_, p["offsets"], dense[keep], new_offsets)
    a["row_layout"] = _interleave(p["row_layout"], p["offsets"], row_layout[keep].astype(np.int32), new_offsets)
    a["row_hash"] = _interleave(p["row_hash"], p["offsets"], hashes[keep], new_offsets)
    a["totals"] = _interleave(p["totals"], p["offsets"], new.totals[keep], new_offsets)
    a["stats"] = _interleave(p["stats"].reshape(-1, STATS_WIDTH), p["offsets"], stats, new_offsets)
    for metric in prev.metrics:
        name = metric_array(metric, prev.metrics)
        rows = metric.stats(texts_kept, sentence[keep], references) if len(keep) else np.zeros((0, metric.width))
        a[name] = _interleave(p[name].reshape(-1, metric.width), p["offsets"], rows, new_offsets)
    a["extra_present"] = _interleave(p["extra_present"], p["offsets"], extra_present[keep], new_offsets)
    # ragged arrays: per sentence, the byte / value ranges of its rows
    a["text_bytes"], a["text_offsets"] = _interleave_ragged(
        p["text_bytes"], p["text_offsets"], p["offsets"], *_subset_ragged(text_bytes, text_offsets, rows_new), new_offsets)
    new_indices, new_sp_ptr = _subset_ragged(new_sparse.indices.astype(np.int32), indptr, rows_new)
    new_data, _ = _subset_ragged(new_sparse.data, indptr, rows_new)
    a["sparse_indices"], a["sparse_indptr"] = _interleave_ragged(
        p["sparse_indices"], p["sparse_indptr"], p["offsets"], new_indices, new_sp_ptr, new_offsets)
    a["sparse_data"], _ = _interleave_ragged(p["sparse_data"], p["sparse_indptr"], p["offsets"], new_data, new_sp_ptr,
                                             new_offsets)
    # extras are numbered among the rows that have them
    prev_extra_rows = np.concatenate([[0], np.cumsum(p["extra_present"])]).astype(np.int64)
    new_extra_rows = np.concatenate([[0], np.cumsum(extra_present)]).astype(np.int64)
    kept_extra = np.flatnonzero(extra_present[keep])
    sub_bytes, sub_ptr = _subset_ragged(extra_bytes, extra_offsets, new_extra_rows[keep][kept_extra])
    a["extra_bytes"], a["extra_offsets"] = _interleave_ragged(
        p["extra_bytes"], p["extra_offsets"], prev_extra_rows[p["offsets"]], sub_bytes, sub_ptr,
        np.concatenate([[0], np.cumsum(extra_present[keep])])[new_offsets].astype(np.int64))
    stored.arrays = a
    return stored


def _in_previous(prev: StoredPool, hashes, sentence, row_layout, text_bytes, text_offsets, dense, indptr, indices,
                 data) -> np.ndarray:
    """For each new row: is it equal (sentence, layout, text, features) to a row of ``prev``?

    Rows with the same hash are paired and compared value by value (vectorized over the pairs).
    """
    duplicate = np.zeros(len(hashes), dtype=bool)
    if prev.n_hypotheses == 0 or len(hashes) == 0:
        return duplicate
    p = prev.arrays
    order = np.argsort(p["row_hash"], kind="stable")
    sorted_hashes = p["row_hash"][order]
    lo = np.searchsorted(sorted_hashes, hashes, side="left")
    counts = np.searchsorted(sorted_hashes, hashes, side="right") - lo
    j = np.repeat(np.arange(len(hashes)), counts)
    if len(j) == 0:
        return duplicate
    within = np.arange(len(j)) - np.repeat(np.cumsum(counts) - counts, counts)
    k = order[np.repeat(lo, counts) + within]
    prev_sentence = np.searchsorted(p["offsets"], k, side="right") - 1
    same = (prev_sentence == sentence[j]) & (p["row_layout"][k] == row_layout[j])
    width = p["dense"].shape[1]
    same &= np.all(p["dense"][k] == dense[j, :width], axis=1) & ~np.any(dense[j, width:] != 0, axis=1)
    same &= _ragged_equal(p["text_bytes"], p["text_offsets"], k, text_bytes, text_offsets, j)
    same &= _ragged_equal(p["sparse_indices"], p["sparse_indptr"], k, indices, indptr, j)
    same &= _ragged_equal(p["sparse_data"], p["sparse_indptr"], k, data, indptr, j)
    duplicate[j[same]] = True
    return duplicate


def _ragged_equal(a_values, a_offsets, a_rows, b_values, b_offsets, b_rows) -> np.ndarray:
    """Per pair i: are ragged row ``a_rows[i]`` of a and ``b_rows[i]`` of b equal (``==`` element-wise)?"""
    a_start, b_start = a_offsets[a_rows], b_offsets[b_rows]
    length = a_offsets[a_rows + 1] - a_start
    equal = length == b_offsets[b_rows + 1] - b_start
    rows = np.flatnonzero(equal & (length > 0))
    if len(rows):
        n = length[rows]
        within = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
        differs = a_values[np.repeat(a_start[rows], n) + within] != b_values[np.repeat(b_start[rows], n) + within]
        bad = np.add.reduceat(differs.astype(np.int64), np.cumsum(n) - n) > 0
        equal[rows[bad]] = False
    return equal


def _subset_ragged(values: np.ndarray, offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ragged rows ``rows`` (increasing) of (values, offsets), as new (values, offsets)."""
    lengths = offsets[rows + 1] - offsets[rows]
    out_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out_offsets[1:])
    if len(rows) == len(offsets) - 1:
        return values, out_offsets
    if len(rows) == 0:
        return values[:0], out_offsets
    # runs of consecutive rows are copied as one slice
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [len(rows)]])
    pieces = [values[offsets[rows[s]] : offsets[rows[e - 1] + 1]] for s, e in zip(starts, ends, strict=True)]
    out = np.concatenate(pieces) if pieces else values[:0]
    return out, out_offsets


def _interleave(a: np.ndarray, a_bounds: np.ndarray, b: np.ndarray, b_bounds: np.ndarray) -> np.ndarray:
    """Per sentence s: ``a[a_bounds[s]:a_bounds[s+1]]`` then ``b[b_bounds[s]:b_bounds[s+1]]`` (along axis 0)."""
    if len(b) == 0:
        return a.copy()
    if len(a) == 0:
        return b.copy()
    pieces = []
    for s in range(len(a_bounds) - 1):
        pieces.append(a[a_bounds[s] : a_bounds[s + 1]])
        pieces.append(b[b_bounds[s] : b_bounds[s + 1]])
    return np.concatenate(pieces)


def _interleave_ragged(a_values, a_offsets, a_rows, b_values, b_offsets, b_rows) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_interleave` for ragged rows: values per sentence block, and the merged row offsets."""
    values = _interleave(a_values, a_offsets[a_rows], b_values, b_offsets[b_rows])
    lengths = _interleave(np.diff(a_offsets), a_rows, np.diff(b_offsets), b_rows)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return values, offsets
