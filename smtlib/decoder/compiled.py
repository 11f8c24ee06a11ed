"""The compiled (binary) form of a model directory, ``DIR/compiled.bin``, memory-mapped by the decoder.

Reading the gzipped text tables and ARPA files of a model takes 10-25 s per ``smtlib decode`` call.
The compiled form holds the same numbers, ready to use: ``smtlib train assemble`` (hence ``smtlib
train build``) writes it, ``smtlib train compile --model DIR`` writes it for a directory that lacks
it, and ``smtlib sgd templates`` writes a templated model's from its base model's
(:class:`SparseOverlay`). :func:`smtlib.decoder.loader.load_model` maps it into memory (copy-on-write, so forked decoding
processes share it) and touches only what the input needs: the hash entries of the input's source
phrases, their phrase pairs, and the LM rows the search probes.

File layout (little-endian)::

    bytes 0-15     magic  b"smtlib-compiled\\n"
    bytes 16-23    H, the length of the header (uint64)
    bytes 24-      the header: H bytes of UTF-8 JSON
    then           the arrays, C order, each starting at a multiple of 64 bytes from the first
                   64-byte boundary after the header ("data start")

Header keys: ``format`` (:data:`FORMAT`, the version; another version is not read), ``feature_set``,
``sources`` (each text component it was compiled from: ``kind``, ``name``, ``path``, ``size``,
``mtime_ns``, ``sha256``), ``arrays`` (``name -> {dtype, shape, offset}``, offsets from the data
start), ``lms`` (per LM: ``name``, ``order``, ``n_ngrams``, ``table_offset``, ``table_rows``) and
``counts``.

Arrays (``S`` source phrases, ``E`` phrase pairs, ``T`` phrase tables, ``V`` target words)::

    src_hash       (S,) uint64        64-bit BLAKE2b of each source phrase (UTF-8), ascending
    src_text_off   (S+1,) int64       the source phrases' UTF-8 bytes in src_text (uint8): the
    src_text                          collision check of a hash match
    src_entry_off  (S+1,) int64       pairs of source s are rows src_entry_off[s]:src_entry_off[s+1]
    tgt_off        (E+1,) int64       target word ids of each pair: tgt_words[tgt_off[e]:tgt_off[e+1]]
    tgt_words      int32
    tm             (E, 4T) float64    natural-log phrase scores, merged as smtlib.decoder.phrases says
    lr             (E, 6) float64     reordering log-probabilities, NaN where none (reordering only)
    sparse_off     (E+1,) int64       sparse features (CSR): ids into sparse_names, values
    sparse_ids     int32
    sparse_vals    float64
    tgt_vocab      uint8              target words, "\\n"-joined UTF-8 (ids are positions)
    sparse_names   uint8              sparse feature names, likewise
    lm_tab         (R, 2) uint64      the packed hash tables of all LMs, one after the other
                                      (smtlib.decoder.lm; LM k's rows from its table_offset)
    lm_map         (n_lms, V) int64   target word id -> each LM's word id (0 = <unk>)
    lm{k}_vocab    uint8              LM k's words in id order, "\\n"-joined UTF-8
    lm{k}_bound    float64            LM k's unfiltered max_word_prob
    lm{k}_ends_off, ...               LM k's smtlib.decoder.lm_restrict.Restriction

Within a source phrase, pairs keep the text tables' order, so decoding from the compiled form gives
byte-identical output to decoding from the text tables (tested).

Staleness: the file records each text component's size, modification time and SHA-256, and which
components ``model.yaml`` listed. It is used only if ``model.yaml`` still lists the same components
with the same feature set and every file has the recorded size and either the recorded modification
time or (after a copy, say) the recorded SHA-256. Otherwise, or if the file is unreadable, the decoder
says so in one line and reads the text tables.
"""

from __future__ import annotations

import array
import hashlib
import json
import mmap
import os
import pathlib
import time
import weakref
from collections.abc import Iterable

import numpy as np

from smtlib.decoder.arpa import parse_arpa
from smtlib.decoder.lm import NGramLM, build_lm, check_order
from smtlib.decoder.lm_restrict import Restriction, restriction
from smtlib.decoder.phrases import PhraseEntries, ragged_take, read_phrase_tables, read_reordering
from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.system.modeldir import Component, ModelSpec, component_path, read_model_spec

FORMAT = "smtlib-compiled-model/1"
FILENAME = "compiled.bin"
MAGIC = b"smtlib-compiled\n"
_ALIGN = 64


class CompiledFormatError(Exception):
    """The file is not a readable compiled model of this format version."""


# ---------------------------------------------------------------------------------- helpers
def source_hash(text: bytes) -> int:
    """The 64-bit key of a source phrase (BLAKE2b of its UTF-8 bytes, little-endian)."""
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def _joined(words: list[str]) -> np.ndarray:
    return np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)


def _split(blob: np.ndarray, count: int) -> list[str]:
    return blob.tobytes().decode("utf-8").split("\n") if count else []


def components(spec: ModelSpec) -> list[tuple[str, Component]]:
    """The text components a compiled model is made from, in a fixed order."""
    return ([("phrase_table", c) for c in spec.phrase_tables] + [("reordering", c) for c in spec.reordering]
            + [("language_model", c) for c in spec.language_models])


def _sha256(path: pathlib.Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _fingerprints(spec: ModelSpec, model_dir: str | os.PathLike) -> list[dict]:
    out = []
    for kind, comp in components(spec):
        path = component_path(model_dir, comp)
        if not path.is_file():
            raise InputError(f"missing model component {comp.name}", path)
        st = path.stat()
        out.append({"kind": kind, "name": comp.name, "path": comp.path, "size": st.st_size,
                    "mtime_ns": st.st_mtime_ns, "sha256": _sha256(path)})
    return out


# ---------------------------------------------------------------------------------- writing
def _phrase_arrays(entries: PhraseEntries, has_reordering: bool) -> dict[str, np.ndarray]:
    """The phrase-pair arrays, sources sorted by hash (pairs of a source keep their order)."""
    encoded = [s.encode("utf-8") for s in entries.sources]
    hashes = np.fromiter((source_hash(b) for b in encoded), dtype=np.uint64, count=len(encoded))
    order = np.argsort(hashes, kind="stable")
    src_entry_off, perm = ragged_take(entries.src_off, np.arange(entries.n_entries), order)
    lens = np.array([len(encoded[i]) for i in order], dtype=np.int64)
    text_off = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lens, out=text_off[1:])
    tgt_off, tgt_words = ragged_take(entries.tgt_off, entries.tgt_words, perm)
    sparse_off, sparse_index = ragged_take(entries.sparse_off, np.arange(len(entries.sparse_ids)), perm)
    arrays = {
        "src_hash": hashes[order], "src_text_off": text_off,
        "src_text": np.frombuffer(b"".join(encoded[i] for i in order), dtype=np.uint8),
        "src_entry_off": src_entry_off, "tgt_off": tgt_off, "tgt_words": tgt_words.astype(np.int32),
        "tm": entries.tm[perm], "sparse_off": sparse_off,
        "sparse_ids": entries.sparse_ids[sparse_index].astype(np.int32), "sparse_vals": entries.sparse_vals[sparse_index],
        "tgt_vocab": _joined(entries.tgt_vocab), "sparse_names": _joined(entries.sparse_names),
    }
    if has_reordering:
        arrays["lr"] = entries.lr[perm]
    return arrays


def _array_order(header: dict) -> list[str]:
    """The names of a compiled file's arrays in the order :func:`compile_model` writes them (the
    header's offsets alone do not tell it: empty arrays share an offset)."""
    names = ["src_hash", "src_text_off", "src_text", "src_entry_off", "tgt_off", "tgt_words", "tm", "sparse_off",
             "sparse_ids", "sparse_vals", "tgt_vocab", "sparse_names"]
    if "lr" in header["arrays"]:
        names.append("lr")
    for k in range(len(header["lms"])):
        names += [f"lm{k}_vocab", f"lm{k}_bound", *(f"lm{k}_{field}" for field in Restriction.FIELDS)]
    return [*names, "lm_tab", "lm_map"]


def _lm_arrays(spec: ModelSpec, model_dir, tgt_vocab: list[str], arrays: dict[str, np.ndarray]) -> list[dict]:
    """Read every LM unfiltered; add its table, vocabulary, bounds and restriction data to ``arrays``."""
    tables, maps, info = [], [], []
    offset = 0
    for k, comp in enumerate(spec.language_models):
        path = component_path(model_dir, comp)
        grams = parse_arpa(path)
        lm = build_lm(grams)
        check_order(comp.name, comp.order, lm.order, path)
        r = restriction(grams, lm)
        tables.append(lm.tab)
        maps.append(np.array([lm.vocab.get(w, 0) for w in tgt_vocab], dtype=np.int64))
        arrays[f"lm{k}_vocab"] = _joined(list(lm.vocab))
        arrays[f"lm{k}_bound"] = lm.max_word_prob
        for field in Restriction.FIELDS:
            arrays[f"lm{k}_{field}"] = getattr(r, field)
        info.append({"name": comp.name, "order": lm.order, "n_ngrams": lm.n_ngrams, "vocab": len(lm.vocab),
                     "table_offset": offset, "table_rows": len(lm.tab)})
        offset += len(lm.tab)
    arrays["lm_tab"] = np.concatenate(tables)
    arrays["lm_map"] = np.stack(maps) if maps else np.zeros((0, len(tgt_vocab)), dtype=np.int64)
    return info


def _write(path: pathlib.Path, header: dict, arrays: dict[str, np.ndarray]) -> int:
    """Write the container (see the module docstring) atomically; returns its size in bytes."""
    offset = 0
    layout = {}
    for name, a in arrays.items():
        layout[name] = {"dtype": a.dtype.str, "shape": list(a.shape), "offset": offset}
        offset += -(-a.nbytes // _ALIGN) * _ALIGN
    head = json.dumps({**header, "arrays": layout}, sort_keys=True).encode("utf-8")
    start = -(-(24 + len(head)) // _ALIGN) * _ALIGN
    with atomic_output(path, binary=True, compress=False) as out:
        out.write(MAGIC + len(head).to_bytes(8, "little") + head + b"\0" * (start - 24 - len(head)))
        for name, a in arrays.items():
            data = np.ascontiguousarray(a).tobytes()
            out.write(data + b"\0" * (-len(data) % _ALIGN))
    return start + offset


def compile_model(model_dir: str | os.PathLike) -> dict:
    """Write ``DIR/compiled.bin`` from the text components of a model directory.

    Returns
    -------
    dict
        ``path``, ``bytes``, ``cpu_seconds`` and the counts.

    Raises
    ------
    InputError
        On a missing or malformed component, or one that changes while it is read.
    """
    t0 = time.process_time()
    spec = read_model_spec(model_dir)
    sources = _fingerprints(spec, model_dir)
    entries, pair_ids = read_phrase_tables(spec, model_dir)
    read_reordering(spec, model_dir, entries, pair_ids)
    del pair_ids
    arrays = _phrase_arrays(entries, bool(spec.reordering))
    lms = _lm_arrays(spec, model_dir, entries.tgt_vocab, arrays)
    for rec, (_, comp) in zip(sources, components(spec), strict=True):
        st = component_path(model_dir, comp).stat()
        if (st.st_size, st.st_mtime_ns) != (rec["size"], rec["mtime_ns"]):
            raise InputError("changed while it was being compiled", component_path(model_dir, comp))
    counts = {"sources": len(entries.sources), "entries": entries.n_entries, "target_words": len(entries.tgt_vocab),
              "sparse_names": len(entries.sparse_names)}
    header = {"format": FORMAT, "feature_set": spec.feature_set, "sources": sources, "lms": lms, "counts": counts}
    path = pathlib.Path(model_dir) / FILENAME
    size = _write(path, header, arrays)
    return {"path": os.fspath(path), "bytes": size, "cpu_seconds": round(time.process_time() - t0, 3), **counts}


class SparseOverlay:
    """``compiled.bin`` of a model that is a compiled base model plus sparse features on the lines of its
    first phrase table (``smtlib sgd templates``: a fold's Medium system plus Simianer et al.'s rule
    templates), without reading the text tables again.

    :func:`smtlib.system.sparse.rule_template_model` calls :meth:`add` for each line of the first table
    as it writes the new table (source, target, features in the order written), then :meth:`compile`.
    Every array but the sparse ones is the base's (the same pairs in the same order, the same other
    components); the sparse ones are built as :func:`~smtlib.decoder.phrases.read_phrase_tables` would
    build them from the new table, names numbered in reading order. The file is byte-identical to
    :func:`compile_model`'s (tested). When the base has no up-to-date ``compiled.bin``, a pair is not
    found in it, or two of its pairs differ only in spacing, :meth:`compile` reads the text tables
    (:func:`compile_model`).
    """

    def __init__(self, base_dir: str | os.PathLike):
        self.base_dir = pathlib.Path(base_dir)
        self.base, _ = open_compiled(base_dir, read_model_spec(base_dir))
        self._index: dict[str, int] | None = None
        self._failed = self.base is None
        self._entry, self._ids, self._vals = array.array("q"), array.array("q"), array.array("d")
        self._names: dict[str, int] = {}

    def _pair_index(self) -> dict[str, int] | None:
        """``"src ||| tgt" -> compiled entry`` of the base (None if two pairs share a key)."""
        a = self.base.arrays
        vocab = self.base.strings("tgt_vocab")
        text = a["src_text"].tobytes()
        text_off, entry_off = a["src_text_off"].tolist(), a["src_entry_off"].tolist()
        tgt_off, words = a["tgt_off"].tolist(), a["tgt_words"].tolist()
        index: dict[str, int] = {}
        for s in range(len(entry_off) - 1):
            prefix = text[text_off[s] : text_off[s + 1]].decode("utf-8") + " ||| "
            for e in range(entry_off[s], entry_off[s + 1]):
                index[prefix + " ".join([vocab[w] for w in words[tgt_off[e] : tgt_off[e + 1]]])] = e
        return index if len(index) == len(tgt_off) - 1 else None

    def add(self, src: str, tgt: str, features: dict[str, float]) -> None:
        """The next line of the first phrase table: its pair and its sparse features, in order."""
        if self._failed or not features:
            return
        if self._index is None:
            self._index = self._pair_index()
            if self._index is None:
                self._failed = True
                return
        e = self._index.get(src + " ||| " + " ".join(tgt.split()))
        if e is None:
            self._failed = True
            return
        for name, value in features.items():
            self._entry.append(e)
            self._ids.append(self._names.setdefault(name, len(self._names)))
            self._vals.append(float(value))

    def compile(self, model_dir: str | os.PathLike) -> dict:
        """Write ``model_dir/compiled.bin`` (the model of the added lines); returns what
        :func:`compile_model` returns."""
        if self._failed:
            return compile_model(model_dir)
        t0 = time.process_time()
        spec = read_model_spec(model_dir)
        sources = _fingerprints(spec, model_dir)
        base = self.base
        names = _array_order(base.header)
        if sorted(names) != sorted(base.header["arrays"]):
            return compile_model(model_dir)
        arrays = {name: base.arrays[name] for name in names}
        n_entries = len(arrays["tgt_off"]) - 1
        entry = np.frombuffer(self._entry, dtype=np.int64)
        order = np.argsort(entry, kind="stable")
        sparse_off = np.zeros(n_entries + 1, dtype=np.int64)
        np.cumsum(np.bincount(entry, minlength=n_entries), out=sparse_off[1:])
        arrays["sparse_off"] = sparse_off
        arrays["sparse_ids"] = np.frombuffer(self._ids, dtype=np.int64)[order].astype(np.int32)
        arrays["sparse_vals"] = np.frombuffer(self._vals, dtype=np.float64)[order]
        arrays["sparse_names"] = _joined(list(self._names))
        counts = {**base.header["counts"], "sparse_names": len(self._names)}
        header = {"format": FORMAT, "feature_set": spec.feature_set, "sources": sources, "lms": base.header["lms"],
                  "counts": counts}
        path = pathlib.Path(model_dir) / FILENAME
        size = _write(path, header, arrays)
        return {"path": os.fspath(path), "bytes": size, "cpu_seconds": round(time.process_time() - t0, 3), **counts}


# ---------------------------------------------------------------------------------- reading
class CompiledModel:
    """An opened ``compiled.bin``: the header and the arrays (views of a private memory map)."""

    def __init__(self, path: str | os.PathLike):
        self.path = pathlib.Path(path)
        try:
            self._fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise CompiledFormatError(f"cannot be opened ({exc.strerror})") from None
        weakref.finalize(self, os.close, self._fd)
        try:
            self._mm = mmap.mmap(self._fd, 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError) as exc:
            raise CompiledFormatError(f"cannot be mapped ({exc})") from None
        mm = self._mm
        if len(mm) < 24 or mm[:16] != MAGIC:
            raise CompiledFormatError("not a compiled model file")
        size = int.from_bytes(mm[16:24], "little")
        try:
            self.header = json.loads(mm[24 : 24 + size].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise CompiledFormatError("unreadable header") from None
        if self.header.get("format") != FORMAT:
            raise CompiledFormatError(f"format {self.header.get('format')!r}, this version reads {FORMAT!r}")
        self._start = -(-(24 + size) // _ALIGN) * _ALIGN
        self.arrays = self._map(self._start)

    def _map(self, start: int) -> dict[str, np.ndarray]:
        arrays = {}
        for name, a in self.header["arrays"].items():
            dtype, shape = np.dtype(a["dtype"]), tuple(a["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            begin = start + a["offset"]
            if begin + count * dtype.itemsize > len(self._mm):
                raise CompiledFormatError(f"truncated (array {name})")
            if count == 0:
                arrays[name] = np.zeros(shape, dtype=dtype)
            else:
                arrays[name] = np.frombuffer(self._mm, dtype=dtype, count=count, offset=begin).reshape(shape)
        return arrays

    def stale_reason(self, spec: ModelSpec, model_dir: str | os.PathLike) -> str | None:
        """Why this file does not match the model directory's text components, or None if it does."""
        if self.header.get("feature_set") != spec.feature_set:
            return f"compiled for feature set {self.header.get('feature_set')!r}, model.yaml says {spec.feature_set!r}"
        recorded = self.header.get("sources", [])
        listed = components(spec)
        if [(r["kind"], r["name"], r["path"]) for r in recorded] != [(k, c.name, c.path) for k, c in listed]:
            return "model.yaml lists other components than the ones it was compiled from"
        for rec, (_, comp) in zip(recorded, listed, strict=True):
            path = component_path(model_dir, comp)
            try:
                st = path.stat()
            except OSError:
                return f"{comp.path} is missing"
            if st.st_size != rec["size"] or (st.st_mtime_ns != rec["mtime_ns"] and _sha256(path) != rec["sha256"]):
                return f"{comp.path} has changed since it was compiled"
        return None

    def strings(self, name: str) -> list[str]:
        """A ``"\\n"``-joined word list (``tgt_vocab``, ``sparse_names``, ``lm{k}_vocab``)."""
        counts = {"tgt_vocab": "target_words", "sparse_names": "sparse_names"}
        if name in counts:
            n = self.header["counts"][counts[name]]
        else:
            n = self.header["lms"][int(name[2 : name.index("_")])]["vocab"]
        return _split(self.arrays[name], n)

    # -------------------------------------------------------------- phrase lookups
    def find_many(self, phrases: Iterable[str]) -> dict[str, tuple[int, int]]:
        """Entry ranges of the given source phrases that the tables have.

        The hashes are searched in the mapped ``src_hash``; every match is checked against the
        stored phrase (read with ``pread``, see :meth:`read_rows`), so a hash collision never
        returns another phrase's pairs.
        """
        phrases = list(phrases)
        encoded = [p.encode("utf-8") for p in phrases]
        keys = np.fromiter((source_hash(b) for b in encoded), dtype=np.uint64, count=len(encoded))
        table = self.arrays["src_hash"]
        cand_phrase, cand_pos = [], []  # (phrase index, position) of every stored phrase with its hash
        for i, p in zip(range(len(keys)), np.searchsorted(table, keys).tolist(), strict=True):
            while p < len(table) and table[p] == keys[i]:
                cand_phrase.append(i)
                cand_pos.append(p)
                p += 1
        pos = np.array(cand_pos, dtype=np.int64)
        pairs = np.stack([pos, pos + 2], axis=1)
        text_off = self.read_rows("src_text_off", pairs).reshape(-1, 2)
        texts = self.read_rows("src_text", text_off).tobytes()
        entry_off = self.read_rows("src_entry_off", pairs).reshape(-1, 2).tolist()
        lens = (text_off[:, 1] - text_off[:, 0]).tolist()
        found = {}
        start = 0
        for i, n, span in zip(cand_phrase, lens, entry_off, strict=True):
            if texts[start : start + n] == encoded[i]:
                found[phrases[i]] = (span[0], span[1])
            start += n
        return found

    def find(self, phrase: str) -> tuple[int, int] | None:
        """The entry range of one source phrase, or None."""
        return self.find_many([phrase]).get(phrase)

    # -------------------------------------------------------------- reading entries
    def read_rows(self, name: str, ranges: np.ndarray) -> np.ndarray:
        """Rows ``lo:hi`` of array ``name`` for each ``(lo, hi)`` row of ``ranges``, concatenated.

        The rows are read with ``pread`` into a new array instead of through the memory map: the
        kernel maps 16 pages around every touched page of a mapping, so touching scattered phrase
        pairs through it would make most of the file resident.
        """
        info = self.header["arrays"][name]
        dtype, shape = np.dtype(info["dtype"]), info["shape"]
        row_bytes = dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64))
        lo, hi = ranges[:, 0], ranges[:, 1]
        out = np.empty((int((hi - lo).sum()), *shape[1:]), dtype=dtype)
        buf = memoryview(out.reshape(-1).view(np.uint8)) if out.size else None
        base = self._start + info["offset"]
        fd = self._fd
        pos = 0
        for a, n in zip((base + lo * row_bytes).tolist(), ((hi - lo) * row_bytes).tolist(), strict=True):
            if n and os.preadv(fd, [buf[pos : pos + n]], a) != n:
                raise CompiledFormatError(f"truncated (array {name})")
            pos += n
        return out

    def read_ragged(self, off_name: str, val_names: list[str], ranges: np.ndarray
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The given entry ranges of a ragged array (offsets ``off_name``, values ``val_names``):
        the new offsets and values, as if the entries were numbered from 0 in range order."""
        lens = ranges[:, 1] - ranges[:, 0] + 1
        offs = self.read_rows(off_name, ranges + np.array([0, 1]))
        seg_end = np.cumsum(lens)
        spans = np.stack([offs[seg_end - lens], offs[seg_end - 1]], axis=1) if len(lens) else np.zeros((0, 2), np.int64)
        values = [self.read_rows(name, spans) for name in val_names]
        new_off = np.zeros(len(offs) - len(lens) + 1, dtype=np.int64)
        np.cumsum(np.delete(np.diff(offs), seg_end[:-1] - 1), out=new_off[1:])
        return new_off, values

    # -------------------------------------------------------------- language models
    def language_models(self) -> list[NGramLM]:
        """The LMs, unfiltered (their tables are views of ``lm_tab``)."""
        lms = []
        tab = self.arrays["lm_tab"]
        for k, info in enumerate(self.header["lms"]):
            part = tab[info["table_offset"] : info["table_offset"] + info["table_rows"]]
            words = self.strings(f"lm{k}_vocab")
            lms.append(NGramLM(info["order"], dict(zip(words, range(len(words)))), part, part.view(np.float32),
                               self.arrays[f"lm{k}_bound"], list(info["n_ngrams"])))
        return lms

    def restriction(self, k: int) -> Restriction:
        return Restriction(*(self.arrays[f"lm{k}_{field}"] for field in Restriction.FIELDS))


def open_compiled(model_dir: str | os.PathLike, spec: ModelSpec) -> tuple[CompiledModel | None, str | None]:
    """The model directory's compiled form if it is present and up to date.

    Returns
    -------
    (model, note)
        ``(CompiledModel, None)`` when it can be used; ``(None, None)`` when there is none;
        ``(None, one line saying why it is not used)`` when it is stale or unreadable.
    """
    path = pathlib.Path(model_dir) / FILENAME
    if not path.exists():
        return None, None
    try:
        compiled = CompiledModel(path)
        reason = compiled.stale_reason(spec, model_dir)
    except (CompiledFormatError, KeyError, TypeError, ValueError, OSError) as exc:
        reason = f"unreadable: {exc}"
        compiled = None
    if reason is None:
        return compiled, None
    return None, not_used(path, reason, model_dir)


def not_used(path, reason: str, model_dir) -> str:
    """The one line saying why a compiled model is not used."""
    return (f"{path}: not used ({reason}); reading the text tables instead "
            f"(run 'smtlib train compile --model {model_dir}' to update it)")
