"""Loading a model directory into a :class:`~smtlib.decoder.model.PhraseModel`: from its compiled form
(``compiled.bin``, :mod:`smtlib.decoder.compiled`) when that is present and up to date, else from the
text tables (:mod:`smtlib.decoder.phrases`) and ARPA files (:mod:`smtlib.decoder.lm`).

Both keep only what the input sentences can use (the pairs of their source n-grams; LMs as if filtered
to the words those pairs and the source words can produce, :mod:`smtlib.decoder.lm_restrict`) and give
equal model values, hence byte-identical decoding output. Without sentences everything is loaded (a
compiled model then looks source phrases up when the decoder first asks for them).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from smtlib.decoder.compiled import CompiledFormatError, CompiledModel, not_used, open_compiled
from smtlib.decoder.lm import check_order, read_arpa
from smtlib.decoder.lm_restrict import keep_mask, restrict
from smtlib.decoder.model import Layout, PhraseModel
from smtlib.numba_startup import load_numba_implementations
from smtlib.decoder.phrases import (Ragged, SourceIndex, SparseRows, read_phrase_tables, read_reordering,
                                    source_phrases)
from smtlib.errors import InputError
from smtlib.system.modeldir import ModelSpec, component_path, read_model_spec


def load_model(model_dir: str | os.PathLike, sentences: list[list[str]] | None = None, *,
               compiled: bool = True) -> PhraseModel:
    """Load a model directory, keeping only what ``sentences`` (tokenized) can use.

    Parameters
    ----------
    model_dir
        The directory (see :mod:`smtlib.system.modeldir`).
    sentences
        The tokenized input (already lowercased if the model is). ``None`` loads every entry.
    compiled
        Use the compiled form (:mod:`smtlib.decoder.compiled`) when it is present and up to date
        (a stale one is reported in one line on stderr and the text tables are read). Decoding
        gives the same output either way.

    Raises
    ------
    InputError
        On a missing or malformed component.
    """
    load_numba_implementations()
    spec = read_model_spec(model_dir)
    spec_path = os.path.join(os.fspath(model_dir), "model.yaml")
    layout = Layout.from_spec(spec, spec_path)
    if not spec.phrase_tables:
        raise InputError("model has no phrase table", spec_path)
    if not spec.language_models:
        raise InputError("model has no language model", spec_path)
    needed = None if sentences is None else source_phrases(sentences, spec.max_phrase_length)
    if compiled:
        binary, note = open_compiled(model_dir, spec)
        if binary is not None:
            try:
                return _load_compiled(binary, spec, layout, model_dir, sentences, needed)
            except (CompiledFormatError, KeyError, IndexError, ValueError) as exc:
                note = not_used(binary.path, f"unreadable: {exc}", model_dir)
        if note:
            print(f"smtlib: note: {note}", file=sys.stderr)
    return _load_text(spec, layout, model_dir, sentences, needed)


def _add_source_words(vocab: dict[str, int], words: list[str], sentences: list[list[str]] | None) -> list[int]:
    """Source words can pass through untranslated: add them to the decoder vocabulary; their ids."""
    ids = []
    for toks in sentences or []:
        for w in toks:
            i = vocab.get(w)
            if i is None:
                i = vocab[w] = len(words)
                words.append(w)
            ids.append(i)
    return ids


def _load_text(spec: ModelSpec, layout: Layout, model_dir, sentences, needed: set[str] | None) -> PhraseModel:
    """Read the text tables (only the pairs of ``needed`` source phrases) and the filtered LMs."""
    entries, pair_ids = read_phrase_tables(spec, model_dir, needed)
    read_reordering(spec, model_dir, entries, pair_ids, needed)
    words = entries.tgt_vocab
    vocab = {w: i for i, w in enumerate(words)}
    _add_source_words(vocab, words, sentences)
    keep = set(words) if sentences is not None else None
    lms = []
    for comp in spec.language_models:
        path = component_path(model_dir, comp)
        lms.append(read_arpa(path, keep_words=keep))
    for comp, lm in zip(spec.language_models, lms, strict=True):
        check_order(comp.name, comp.order, lm.order, component_path(model_dir, comp))
    off = entries.src_off.tolist()
    index = SourceIndex({src: (off[s], off[s + 1]) for s, src in enumerate(entries.sources)})
    model = PhraseModel(
        spec=spec, layout=layout, model_dir=os.fspath(model_dir), vocab=vocab, words=words, index=index,
        entry_tgt=Ragged(entries.tgt_off, entries.tgt_words), entry_tm=entries.tm, entry_lr=entries.lr,
        entry_sparse=SparseRows(entries.sparse_off, entries.sparse_ids, entries.sparse_vals),
        sparse_names=entries.sparse_names, lms=lms,
    )
    model.finish_lms()
    return model


def _load_compiled(c: CompiledModel, spec: ModelSpec, layout: Layout, model_dir, sentences,
                   needed: set[str] | None) -> PhraseModel:
    """The compiled form; with ``sentences``, the pairs of their source phrases are read now and the
    LMs get the bounds and flags of the text loader's filtered LMs (:mod:`smtlib.decoder.lm_restrict`)."""
    words = c.strings("tgt_vocab")
    vocab = dict(zip(words, range(len(words))))
    n_target = len(words)
    index, tgt, tm, lr, sparse = _mapped_entries(c) if needed is None else _read_entries(c, needed)
    source_ids = _add_source_words(vocab, words, sentences)
    lms = c.language_models()
    for comp, lm in zip(spec.language_models, lms, strict=True):
        check_order(comp.name, comp.order, lm.order, component_path(model_dir, comp))
    model = PhraseModel(
        spec=spec, layout=layout, model_dir=os.fspath(model_dir), vocab=vocab, words=words, index=index,
        entry_tgt=tgt, entry_tm=tm, entry_lr=lr, entry_sparse=sparse, sparse_names=c.strings("sparse_names"),
        lms=lms, compiled=True,
    )
    model.set_lm_tables(c.arrays["lm_tab"], [info["table_rows"] for info in c.header["lms"]])
    extra = np.array([[lm.vocab.get(w, 0) for lm in lms] for w in words[n_target:]], dtype=np.int64)
    model.lm_map = np.concatenate([c.arrays["lm_map"], extra.reshape(-1, len(lms)).T], axis=1)
    if needed is not None:
        kept = np.union1d(tgt.values, np.array(source_ids, dtype=np.int64)).astype(np.int64)
        _restrict_lms(model, c, kept)
    model.refresh_lm_ub()
    return model


def _mapped_entries(c: CompiledModel) -> tuple:
    """Every pair, as views of the memory map; source phrases are looked up when first asked for."""
    a = c.arrays
    n = len(a["tgt_off"]) - 1
    lr = a["lr"] if "lr" in a else np.broadcast_to(np.nan, (n, 6))
    return (SourceIndex({}, c.find), Ragged(a["tgt_off"], a["tgt_words"]), a["tm"], lr,
            SparseRows(a["sparse_off"], a["sparse_ids"], a["sparse_vals"]))


def _read_entries(c: CompiledModel, needed: set[str]) -> tuple:
    """The pairs of the ``needed`` source phrases, read into memory and numbered from 0."""
    found = c.find_many(needed)
    srcs = sorted(found, key=found.__getitem__)
    ranges = np.array([found[s] for s in srcs], dtype=np.int64).reshape(-1, 2)
    bounds = np.zeros(len(srcs) + 1, dtype=np.int64)
    np.cumsum(ranges[:, 1] - ranges[:, 0], out=bounds[1:])
    b = bounds.tolist()
    index = SourceIndex({s: (b[i], b[i + 1]) for i, s in enumerate(srcs)})
    tgt_off, (tgt_words,) = c.read_ragged("tgt_off", ["tgt_words"], ranges)
    sp_off, (sp_ids, sp_vals) = c.read_ragged("sparse_off", ["sparse_ids", "sparse_vals"], ranges)
    lr = c.read_rows("lr", ranges) if "lr" in c.arrays else np.full((b[-1], 6), np.nan)
    return index, Ragged(tgt_off, tgt_words), c.read_rows("tm", ranges), lr, SparseRows(sp_off, sp_ids, sp_vals)


def _restrict_lms(model: PhraseModel, c: CompiledModel, kept: np.ndarray) -> None:
    """Make the unfiltered LMs behave as the text loader's LMs filtered to the ``kept`` decoder words."""
    dropped = np.ones(len(model.words), dtype=np.bool_)
    dropped[kept] = False
    model.lm_known = []
    for k, lm in enumerate(model.lms):
        known = keep_mask(lm, model.lm_map[k, kept])
        lm.max_word_prob = restrict(lm, c.restriction(k), known, model.lm_tab, int(model.lm_off[k]),
                                    lambda field, ranges, k=k: c.read_rows(f"lm{k}_{field}", ranges))
        model.lm_map[k, dropped] = 0
        model.lm_known.append(known)


