"""Loading a model directory for decoding, the feature layout, and per-sentence translation options.

What the decoder reads is described in :mod:`smtlib.system.modeldir`.
:func:`smtlib.decoder.loader.load_model` uses the directory's compiled form (``compiled.bin``, :mod:`smtlib.decoder.compiled`) when it is there and up
to date, and otherwise reads the text tables (:mod:`smtlib.decoder.phrases`) and ARPA files
(:mod:`smtlib.decoder.lm`), keeping only what the input can use; both give the same
:class:`PhraseModel` values and byte-identical decoding output. Choices made here (each is also
noted where it is implemented):

* **Phrase scores** are the natural logs of the four probabilities, floored at -100 as Moses's
  ``FloorScore`` does for a zero probability.
* **Several phrase tables** are merged by phrase pair: a pair present in some tables gets, for each
  table that lacks it, log probability ``ln(1e-7)`` (:data:`smtlib.system.modeldir.MISSING_LOGPROB`) for all four scores.
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
* **Weights** are checked by the one rule every command applies
  (:func:`smtlib.weights.check_weight_names`, ``CONTRACT.md``): a dense weight ``NAME_k`` must name
  a value of the model's dense features, any other name must be a valid sparse name of a model
  with sparse features (a sparse feature absent from the phrase pairs of the input simply never
  fires) that is not a misspelt dense name, and a dense feature missing from the file has weight 0.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Mapping

import numba
import numpy as np

from smtlib._dot import matvec
from smtlib.decoder.borrowed import borrowed
from smtlib.decoder.lm import NGramLM, lm_score_word
from smtlib.decoder.phrases import Ragged, SourceIndex, SparseRows, ragged_take
from smtlib.errors import InputError
from smtlib.system.modeldir import ModelSpec
from smtlib.weights import check_weight_names

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

    def sparse_vector(self, sparse_index: Mapping[str, int]) -> np.ndarray:
        """The sparse weights as a vector aligned with a model's sparse names (``sparse_index``: name ->
        position; :attr:`PhraseModel.sparse_index`), 0 where a name has no weight."""
        out = np.zeros(len(sparse_index), dtype=np.float64)
        for name, value in self.sparse.items():
            pos = sparse_index.get(name)
            if pos is not None:
                out[pos] = value
        return out


@numba.njit(cache=True)
def lm_estimate_nb(lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs):
    n_lm = lm_order.shape[0]
    n_phr = offs.shape[0] - 1
    out = np.zeros((n_phr, n_lm))
    maxo = 1
    for k in range(n_lm):
        maxo = max(maxo, lm_order[k])
    _lm_estimate_into(out, lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs,
                      np.zeros(maxo, dtype=np.int64), np.zeros(maxo, dtype=np.float32),
                      np.zeros(maxo, dtype=np.int64), np.zeros(maxo, dtype=np.float32), np.zeros(maxo + 1, dtype=np.bool_))
    return out


@numba.njit(cache=True)
def _lm_estimate_into(out, lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs, ctx_a, bo_a, ctx_b, bo_b,
                      scratch):
    # the caller holds every array, so none needs reference counting here (smtlib.decoder.borrowed)
    (out, lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs, ctx_a, bo_a, ctx_b, bo_b, scratch) = \
        borrowed((out, lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs, ctx_a, bo_a, ctx_b, bo_b,
                  scratch))
    for p in range(offs.shape[0] - 1):
        for k in range(lm_order.shape[0]):
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
    #: context-free LM scores per entry, computed on first use (:meth:`entry_lm`), and which are
    _entry_lm: np.ndarray | None = dataclasses.field(repr=False, default=None)
    _entry_lm_done: np.ndarray | None = dataclasses.field(repr=False, default=None)

    @property
    def n_tables(self) -> int:
        return len(self.spec.phrase_tables)

    @property
    def has_reordering(self) -> bool:
        return self.layout.lr_col >= 0

    def prepare_source(self, line: str) -> list[str]:
        """Tokens of an input line as the model expects them (see :func:`prepare_tokens`)."""
        return prepare_tokens(self.spec, line)

    @functools.cached_property
    def sparse_index(self) -> dict[str, int]:
        """Sparse feature name -> its position in :attr:`sparse_names` (built once per model: a templated
        model has hundreds of thousands of names, and every decoder and weights check needs them)."""
        return {name: i for i, name in enumerate(self.sparse_names)}

    def entry_lm(self, entries: np.ndarray, offs: np.ndarray, words: np.ndarray) -> np.ndarray:
        """``(len(entries), n_lms)`` context-free LM scores of the entries' target phrases (``offs`` and
        ``words``: their target words, as ``entry_tgt.take(entries)`` gives them; no entry twice).

        Each entry's row is computed once per model and kept: the row depends on the entry and
        the LMs only, and a tuner that builds a decoder per sentence for new weights (``smtlib sgd
        pass``, online MIRA) would otherwise score the same phrases again in every sentence.
        """
        if self._entry_lm is None:
            # untouched rows of a large table cost no memory (the pages are never written)
            self._entry_lm = np.empty((len(self.entry_tm), len(self.lms)), dtype=np.float64)
            self._entry_lm_done = np.zeros(len(self.entry_tm), dtype=bool)
        missing = np.flatnonzero(~self._entry_lm_done[entries])
        if len(missing):
            sub_offs, sub_words = ragged_take(offs, words, missing)
            new = entries[missing]
            self._entry_lm[new] = lm_estimate_nb(self.lm_tab, self.lm_tabf, self.lm_off, self.lm_mask, self.lm_order,
                                                 self.lm_map, sub_words, sub_offs)
            self._entry_lm_done[new] = True
        return self._entry_lm[entries]

    def word_id(self, word: str) -> int:
        return self.vocab[word]

    def set_lm_tables(self, tab: np.ndarray, sizes: list[int]) -> None:
        """Use the concatenated LM hash tables ``tab`` (``sizes`` rows each; the loader's compiled form maps them)."""
        self.lm_tab = tab
        self.lm_tabf = tab.view(np.float32)
        self.lm_off = np.array([0, *np.cumsum(sizes)[:-1]], dtype=np.int64)
        self.lm_mask = np.array([s - 1 for s in sizes], dtype=np.uint64)
        self.lm_order = np.array([lm.order for lm in self.lms], dtype=np.int64)

    def finish_lms(self) -> None:
        """Concatenate the LM tables and map the decoder's vocabulary into each LM's ids."""
        self.set_lm_tables(np.ascontiguousarray(np.concatenate([lm.tab for lm in self.lms])),
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
        self.refresh_lm_ub()

    def refresh_lm_ub(self) -> None:
        """(Re)compute ``lm_ub``, each word's best LM probability under ``lm_map``."""
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
    def read_weights(self, weights: dict[str, float], *, path: str | os.PathLike | None = None) -> Weights:
        """Check a ``{name: value}`` weight map against the model and split it (see the module doc).

        Raises
        ------
        InputError
            On a name the shared rule rejects (:func:`smtlib.weights.check_weight_names`).
        """
        check_weight_names(weights, self.layout.names, sparse_names=self.sparse_index,
                           has_sparse=self.spec.sparse or bool(self.sparse_names),
                           what=f"the {self.spec.feature_set} model", path=path)
        dense_names = set(self.layout.names)
        sparse = {name: value for name, value in weights.items() if name not in dense_names}
        dense = np.array([weights.get(n, 0.0) for n in self.layout.names], dtype=np.float64)
        return Weights(dense, sparse)

    # ------------------------------------------------------------------ options
    def entry_static(self, weights: Weights, entries: np.ndarray, sparse_w: np.ndarray | None = None) -> np.ndarray:
        """``w . (phrase scores, word penalty, sparse features)`` of the given entries.

        ``sparse_w`` is ``weights.sparse_vector(self.sparse_index)`` if the caller has it already.
        """
        lay = self.layout
        wtm = np.concatenate([weights.dense[c : c + 4] for c in lay.tm_cols])
        out = matvec(self.entry_tm[entries], wtm)
        out -= weights.dense[lay.wp_col] * self.entry_tgt.lengths(entries).astype(np.float64)
        if weights.sparse and self.sparse_names:
            sw = weights.sparse_vector(self.sparse_index) if sparse_w is None else sparse_w
            add_sparse_dots(self.entry_sparse, sw, entries, out)
        return out


def add_sparse_dots(rows: SparseRows, weights: np.ndarray, entries: np.ndarray, out: np.ndarray) -> None:
    """``out[i] += dot(weights[ids], values)`` for each entry ``entries[i]`` with sparse features
    (``rows[e]``); entries without any, and ``-1``, leave ``out[i]`` as it is."""
    _add_sparse_dots_nb(rows.offsets, rows.ids, rows.values, np.ascontiguousarray(weights, dtype=np.float64),
                        np.ascontiguousarray(entries, dtype=np.int64), out)


@numba.njit(cache=True)
def _add_sparse_dots_nb(offsets, ids, values, weights, entries, out):  # pragma: no cover - compiled
    # term for term the sum of smtlib._dot.dot (from 0.0, in stored order, float64, no fast-math),
    # so that a score has the same bits as one entry at a time through dot
    for i in range(entries.shape[0]):
        e = entries[i]
        if e < 0 or offsets[e + 1] == offsets[e]:
            continue
        total = 0.0
        for k in range(offsets[e], offsets[e + 1]):
            total += weights[ids[k]] * np.float64(values[k])
        out[i] += total


def prepare_tokens(spec: ModelSpec, line: str) -> list[str]:
    """An input line as the model's training source text was: tokenized (when the model says its
    input is raw, with the model directory's own ``prepare_input``) and lowercased if the model is."""
    if getattr(spec, "tokenizer", ""):
        from smtlib.system import modeldir

        return modeldir.prepare_input(spec, line).split()
    return (line.lower() if spec.lowercase else line).split()

