"""Loading a model directory for decoding, the feature layout, and per-sentence translation options.

What the decoder reads is described in :mod:`smtlib.system.modeldir`. Choices made here (each is
also noted where it is implemented):

* **Phrase scores** are the natural logs of the four probabilities, floored at -100 as Moses's
  ``FloorScore`` does for a zero probability.
* **Several phrase tables** are merged by phrase pair: a pair present in some tables gets, for each
  table that lacks it, log probability ``ln(1e-7)`` (:data:`MISSING_LOGPROB`) for all four scores.
  Moses's ``PhraseDictionaryGroup`` does the same with a floor of -100; a milder floor keeps pairs
  of one table usable when the other (e.g. a forced-alignment table, Wuebker et al. 2010) lacks
  them, and the tuned weights decide how much the missing score costs.
* **Table limit** (Moses ``ttable-limit``, default 20): for each source phrase, the options with the
  best ``w . static features + w_LM . LM estimate`` are kept, after merging the tables (Moses applies
  it per table before merging).
* **Unknown words**: a source position whose one-word span has no option gets a pass-through option
  (the source word as its translation) with all phrase-table features 0, as in Moses; the LM scores
  the word as itself if the LM knows it, else as ``<unk>``. Moses's ``UnknownWordPenalty0`` (-100 per
  unknown word) is not part of the feature sets, so no penalty is added: for a word that no source
  phrase of the tables contains, every complete hypothesis holds it exactly once and a penalty would
  be the same constant on all of them.
* **Weights**: a dense weight name ``NAME_k`` must name a value of the model's dense features and a
  sparse one may appear only for a ``big`` model and must contain ``_`` (Moses's rule for sparse
  names; a sparse feature absent from the phrase pairs of the input simply never fires); anything
  else is an :class:`InputError`. A
  dense weight missing from the file is an error too, naming the features, unless ``allow_missing``
  (then it is 0, as ``CONTRACT.md`` says for missing features in general).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from typing import TYPE_CHECKING

import numba
import numpy as np

from smtlib.decoder.lm import NGramLM, check_order, lm_score_word, read_arpa
from smtlib.decoder.lm_restrict import keep_mask, restrict
from smtlib.decoder.numba_startup import load_numba_implementations
from smtlib.decoder.phrases import (FLOOR_LOGPROB, MISSING_LOGPROB, Ragged, SourceIndex, SparseRows,  # noqa: F401
                                    read_phrase_tables, read_reordering, source_phrases)
from smtlib.errors import InputError
from smtlib.system.modeldir import ModelSpec, component_path, read_model_spec

if TYPE_CHECKING:
    from smtlib.decoder.compiled import CompiledModel

DEFAULT_TABLE_LIMIT = 20
_DENSE_NAME = re.compile(r"^(?P<group>.+)_(?P<k>\d+)$")
_KNOWN = re.compile(r"^(TranslationModel\d+|LM\d+|WordPenalty0|Distortion0|LexicalReordering0)$")


@dataclasses.dataclass
class Layout:
    """Where each dense feature sits in the dense vector (the k-best order of ``spec.dense_features``).

    Attributes
    ----------
    names
        ``NAME_k`` of every dense value, in order.
    groups
        ``[(NAME, count), ...]`` as in ``model.yaml``.
    tm_cols
        Column of the first of the four values of each ``TranslationModelK``.
    lm_cols
        Column of each ``LMk``.
    wp_col, dist_col, lr_col
        Columns of ``WordPenalty0``, ``Distortion0`` and the first of ``LexicalReordering0``'s six
        values (-1 when absent).
    """

    names: list[str]
    groups: list[tuple[str, int]]
    tm_cols: list[int]
    lm_cols: list[int]
    wp_col: int
    dist_col: int
    lr_col: int

    @classmethod
    def from_spec(cls, spec: ModelSpec, path: str | os.PathLike) -> Layout:
        expected = {
            **{c.name: 4 for c in spec.phrase_tables},
            **{c.name: 1 for c in spec.language_models},
            **{c.name: 6 for c in spec.reordering},
            "WordPenalty0": 1,
            "Distortion0": 1,
        }
        col = 0
        cols: dict[str, int] = {}
        for name, count in spec.dense_features:
            if not _KNOWN.match(name) or name not in expected:
                raise InputError(f"dense feature {name!r} has no model component this decoder knows", path)
            if count != expected[name]:
                raise InputError(f"dense feature {name!r} has {count} values, expected {expected[name]}", path)
            cols[name] = col
            col += count
        for name in expected:
            if name not in cols:
                raise InputError(f"model component {name!r} is missing from dense_features", path)
        if len(spec.reordering) > 1:
            raise InputError("at most one lexicalized reordering table is supported", path)
        return cls(
            names=spec.dense_weight_names(),
            groups=list(spec.dense_features),
            tm_cols=[cols[c.name] for c in spec.phrase_tables],
            lm_cols=[cols[c.name] for c in spec.language_models],
            wp_col=cols["WordPenalty0"],
            dist_col=cols["Distortion0"],
            lr_col=cols[spec.reordering[0].name] if spec.reordering else -1,
        )

    @property
    def size(self) -> int:
        return len(self.names)


@dataclasses.dataclass
class Weights:
    """A weight vector split into the dense part (aligned with :class:`Layout`) and sparse weights."""

    dense: np.ndarray
    sparse: dict[str, float]

    def sparse_vector(self, sparse_names: list[str]) -> np.ndarray:
        return np.array([self.sparse.get(n, 0.0) for n in sparse_names], dtype=np.float64)


@numba.njit(cache=True)
def _lm_estimate_nb(lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs):
    n_lm = lm_order.shape[0]
    n_phr = offs.shape[0] - 1
    out = np.zeros((n_phr, n_lm))
    maxo = 1
    for k in range(n_lm):
        maxo = max(maxo, lm_order[k])
    ctx_a = np.zeros(maxo, dtype=np.int64)
    bo_a = np.zeros(maxo, dtype=np.float32)
    ctx_b = np.zeros(maxo, dtype=np.int64)
    bo_b = np.zeros(maxo, dtype=np.float32)
    scratch = np.zeros(maxo + 1, dtype=np.bool_)
    for p in range(n_phr):
        for k in range(n_lm):
            length = 0
            total = 0.0
            for i in range(offs[p], offs[p + 1]):
                wid = lm_map[k, words[i]]
                lp, length = lm_score_word(lm_tab, lm_tabf, lm_off[k], lm_mask[k], lm_order[k], 0,
                                           ctx_a, bo_a, length, wid, ctx_b, bo_b, scratch)
                total += lp
                ctx_a, ctx_b = ctx_b, ctx_a
                bo_a, bo_b = bo_b, bo_a
            out[p, k] = total
    return out


@dataclasses.dataclass
class PhraseModel:
    """A model directory loaded for decoding (filtered to the sentences it will translate).

    Attributes
    ----------
    spec, layout
        The description and the dense feature layout.
    vocab, words
        Target vocabulary of the decoder (word -> id and back): the target sides of the loaded
        options (of every pair, from a compiled model) and the source words (for pass-through).
    index
        Source phrase -> the range of its entries (phrase pairs); see
        :class:`~smtlib.decoder.phrases.SourceIndex`.
    entry_tgt
        Target word ids of each entry (``entry_tgt[e]`` is a tuple; see
        :class:`~smtlib.decoder.phrases.Ragged`).
    entry_tm
        ``(n_entries, 4 * n_tables)`` natural-log phrase scores.
    entry_lr
        ``(n_entries, 6)`` natural-log reordering probabilities, NaN when the pair has none.
    entry_sparse
        Per entry, ``(feature ids, values)`` of its sparse features (``entry_sparse[e]``).
    sparse_names
        Sparse feature names (ids index this list).
    lms
        The language models; ``lm_*`` arrays hold their tables concatenated for the compiled code.
    lm_map
        ``(n_lms, len(words))``: decoder word id -> each LM's word id.
    lm_ub
        ``(n_lms, len(words))``: each LM's ``max_word_prob`` of each decoder word.
    lm_known
        For a compiled model loaded for some sentences: per LM, a mask of the LM word ids the text
        loader would have kept (other words are ``<unk>`` to it); None otherwise.
    compiled
        Whether the arrays come from the compiled form (:mod:`smtlib.decoder.compiled`).
    """

    spec: ModelSpec
    layout: Layout
    model_dir: str
    vocab: dict[str, int]
    words: list[str]
    index: SourceIndex
    entry_tgt: Ragged
    entry_tm: np.ndarray
    entry_lr: np.ndarray
    entry_sparse: SparseRows
    sparse_names: list[str]
    lms: list[NGramLM]
    lm_tab: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_tabf: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_off: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_mask: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_order: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_map: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_ub: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_known: list[np.ndarray] | None = dataclasses.field(repr=False, default=None)
    compiled: bool = False

    @property
    def n_tables(self) -> int:
        return len(self.spec.phrase_tables)

    @property
    def has_reordering(self) -> bool:
        return self.layout.lr_col >= 0

    def prepare_source(self, line: str) -> list[str]:
        """Tokens of an input line as the model expects them (see :func:`prepare_tokens`)."""
        return prepare_tokens(self.spec, line)

    def word_id(self, word: str) -> int:
        return self.vocab[word]

    def _set_lm_tables(self, tab: np.ndarray, sizes: list[int]) -> None:
        self.lm_tab = tab
        self.lm_tabf = tab.view(np.float32)
        self.lm_off = np.array([0, *np.cumsum(sizes)[:-1]], dtype=np.int64)
        self.lm_mask = np.array([s - 1 for s in sizes], dtype=np.uint64)
        self.lm_order = np.array([lm.order for lm in self.lms], dtype=np.int64)

    def _finish_lms(self) -> None:
        """Concatenate the LM tables and map the decoder's vocabulary into each LM's ids."""
        self._set_lm_tables(np.ascontiguousarray(np.concatenate([lm.tab for lm in self.lms])),
                            [lm.tab.shape[0] for lm in self.lms])
        self.refresh_lm_map()

    def _lm_ids(self, word: str) -> list[int]:
        """Each LM's id of ``word`` (0, ``<unk>``, for a word the LM does not know or would not keep)."""
        ids = [lm.word_id(word) for lm in self.lms]
        if self.lm_known is not None:
            ids = [i if known[i] else 0 for i, known in zip(ids, self.lm_known, strict=True)]
        return ids

    def refresh_lm_map(self) -> None:
        """(Re)build ``lm_map`` and ``lm_ub`` after the vocabulary grew."""
        self.lm_map = np.array([self._lm_ids(w) for w in self.words], dtype=np.int64).reshape(
            len(self.words), len(self.lms)).T.copy()
        self._refresh_lm_ub()

    def _refresh_lm_ub(self) -> None:
        self.lm_ub = np.array([lm.max_word_prob[self.lm_map[k]] for k, lm in enumerate(self.lms)]).reshape(
            len(self.lms), len(self.words))

    def add_word(self, word: str) -> int:
        """Id of ``word``, adding it to the vocabulary (for pass-through of unseen source words)."""
        wid = self.vocab.get(word)
        if wid is None:
            wid = self.vocab[word] = len(self.words)
            self.words.append(word)
            ids = self._lm_ids(word)
            self.lm_map = np.concatenate([self.lm_map, np.array(ids, dtype=np.int64).reshape(-1, 1)], axis=1)
            self.lm_ub = np.concatenate(
                [self.lm_ub, np.array([lm.max_word_prob[i] for lm, i in zip(self.lms, ids, strict=True)]).reshape(-1, 1)],
                axis=1)
        return wid

    # ------------------------------------------------------------------ weights
    def read_weights(self, weights: dict[str, float], *, path: str | os.PathLike = "weights",
                     allow_missing: bool = False) -> Weights:
        """Check a ``{name: value}`` weight map against the model and split it (see the module doc).

        Raises
        ------
        InputError
            On a weight for a feature the model does not have, or (unless ``allow_missing``) a dense
            feature without a weight.
        """
        dense_names = set(self.layout.names)
        sparse: dict[str, float] = {}
        for name, value in weights.items():
            if name in dense_names:
                continue
            m = _DENSE_NAME.match(name)
            if m and _KNOWN.match(m["group"]) or name in {"d_0", "w_0", "lm_0", "tm_0"}:
                raise InputError(f"weight {name!r} names a dense feature value this model does not have", path)
            if self.spec.feature_set != "big" or "_" not in name:
                raise InputError(f"weight {name!r} names a feature this {self.spec.feature_set} model does not have",
                                 path)
            sparse[name] = value
        missing = [n for n in self.layout.names if n not in weights]
        if missing and not allow_missing:
            raise InputError(f"no weight for dense feature(s) {', '.join(missing)} (use --allow-missing for 0)", path)
        dense = np.array([weights.get(n, 0.0) for n in self.layout.names], dtype=np.float64)
        return Weights(dense, sparse)

    # ------------------------------------------------------------------ options
    def entry_static(self, weights: Weights, entries: np.ndarray, sparse_w: np.ndarray | None = None) -> np.ndarray:
        """``w . (phrase scores, word penalty, sparse features)`` of the given entries.

        ``sparse_w`` is ``weights.sparse_vector(self.sparse_names)`` if the caller has it already.
        """
        lay = self.layout
        wtm = np.concatenate([weights.dense[c : c + 4] for c in lay.tm_cols])
        out = self.entry_tm[entries] @ wtm
        out -= weights.dense[lay.wp_col] * self.entry_tgt.lengths(entries).astype(np.float64)
        if weights.sparse and self.sparse_names:
            sw = weights.sparse_vector(self.sparse_names) if sparse_w is None else sparse_w
            sparse = self.entry_sparse
            has = np.flatnonzero(sparse.offsets[entries + 1] > sparse.offsets[entries])
            for i in has.tolist():
                ids, vals = sparse[entries[i]]
                out[i] += float(sw[ids] @ vals)
        return out


def prepare_tokens(spec: ModelSpec, line: str) -> list[str]:
    """An input line as the model's training source text was: tokenized (when the model says its
    input is raw, with the model directory's own ``prepare_input``) and lowercased if the model is."""
    if getattr(spec, "tokenizer", ""):
        from smtlib.system import modeldir

        return modeldir.prepare_input(spec, line).split()
    return (line.lower() if spec.lowercase else line).split()




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
        from smtlib.decoder.compiled import open_compiled

        binary, note = open_compiled(model_dir, spec)
        if note:
            print(f"smtlib: note: {note}", file=sys.stderr)
        if binary is not None:
            return _load_compiled(binary, spec, layout, model_dir, sentences, needed)
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
    model._finish_lms()
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
    model._set_lm_tables(c.arrays["lm_tab"], [info["table_rows"] for info in c.header["lms"]])
    extra = np.array([[lm.vocab.get(w, 0) for lm in lms] for w in words[n_target:]], dtype=np.int64)
    model.lm_map = np.concatenate([c.arrays["lm_map"], extra.reshape(-1, len(lms)).T], axis=1)
    if needed is not None:
        kept = np.union1d(tgt.values, np.array(source_ids, dtype=np.int64)).astype(np.int64)
        _restrict_lms(model, c, kept)
    model._refresh_lm_ub()
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


