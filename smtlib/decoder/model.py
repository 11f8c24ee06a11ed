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
import math
import os
import re

import numba
import numpy as np

from smtlib.decoder.lm import NGramLM, lm_score_word, read_arpa
from smtlib.errors import InputError
from smtlib.io import open_text
from smtlib.system.modeldir import ModelSpec, component_path, read_model_spec

MISSING_LOGPROB = math.log(1e-7)
FLOOR_LOGPROB = -100.0
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


def _lm_estimate_batch(lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs):
    """Context-free LM score of each phrase (per LM) and its upper bound; see :func:`_lm_estimate_nb`."""
    return _lm_estimate_nb(lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, words, offs)


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
        options and the source words (for pass-through).
    index
        Source phrase -> ids of its entries (phrase pairs).
    entry_tgt
        Target word ids of each entry.
    entry_tm
        ``(n_entries, 4 * n_tables)`` natural-log phrase scores.
    entry_lr
        ``(n_entries, 6)`` natural-log reordering probabilities, NaN when the pair has none.
    entry_sparse
        Per entry, ``(feature ids, values)`` of its sparse features.
    sparse_names
        Sparse feature names (ids index this list).
    lms
        The language models; ``lm_*`` arrays hold their tables concatenated for the compiled code.
    lm_map
        ``(n_lms, len(words))``: decoder word id -> each LM's word id.
    """

    spec: ModelSpec
    layout: Layout
    model_dir: str
    vocab: dict[str, int]
    words: list[str]
    index: dict[str, list[int]]
    entry_tgt: list[tuple[int, ...]]
    entry_tm: np.ndarray
    entry_lr: np.ndarray
    entry_sparse: list[tuple[np.ndarray, np.ndarray]]
    sparse_names: list[str]
    lms: list[NGramLM]
    lm_tab: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_tabf: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_off: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_mask: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_order: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_map: np.ndarray = dataclasses.field(repr=False, default=None)
    lm_ub: np.ndarray = dataclasses.field(repr=False, default=None)

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

    def _finish_lms(self) -> None:
        """Concatenate the LM tables and map the decoder's vocabulary into each LM's ids."""
        self.lm_tab = np.ascontiguousarray(np.concatenate([lm.tab for lm in self.lms]))
        self.lm_tabf = self.lm_tab.view(np.float32)
        sizes = [lm.tab.shape[0] for lm in self.lms]
        self.lm_off = np.array([0, *np.cumsum(sizes)[:-1]], dtype=np.int64)
        self.lm_mask = np.array([s - 1 for s in sizes], dtype=np.uint64)
        self.lm_order = np.array([lm.order for lm in self.lms], dtype=np.int64)
        self.refresh_lm_map()

    def refresh_lm_map(self) -> None:
        """(Re)build ``lm_map`` and ``lm_ub`` after the vocabulary grew."""
        self.lm_map = np.array([[lm.word_id(w) for w in self.words] for lm in self.lms], dtype=np.int64).reshape(
            len(self.lms), len(self.words))
        self.lm_ub = np.array([lm.max_word_prob[self.lm_map[k]] for k, lm in enumerate(self.lms)]).reshape(
            len(self.lms), len(self.words))

    def add_word(self, word: str) -> int:
        """Id of ``word``, adding it to the vocabulary (for pass-through of unseen source words)."""
        wid = self.vocab.get(word)
        if wid is None:
            wid = self.vocab[word] = len(self.words)
            self.words.append(word)
            self.lm_map = np.concatenate(
                [self.lm_map, np.array([[lm.word_id(word)] for lm in self.lms], dtype=np.int64).reshape(-1, 1)], axis=1)
            self.lm_ub = np.concatenate(
                [self.lm_ub, np.array([[lm.max_word_prob[lm.word_id(word)]] for lm in self.lms]).reshape(-1, 1)],
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
    def entry_static(self, weights: Weights, entries: np.ndarray) -> np.ndarray:
        """``w . (phrase scores, word penalty, sparse features)`` of the given entries."""
        lay = self.layout
        wtm = np.concatenate([weights.dense[c : c + 4] for c in lay.tm_cols])
        out = self.entry_tm[entries] @ wtm
        out -= weights.dense[lay.wp_col] * np.array([len(self.entry_tgt[e]) for e in entries], dtype=np.float64)
        if weights.sparse and self.sparse_names:
            sw = weights.sparse_vector(self.sparse_names)
            for i, e in enumerate(entries):
                ids, vals = self.entry_sparse[e]
                if len(ids):
                    out[i] += float(sw[ids] @ vals)
        return out


def prepare_tokens(spec: ModelSpec, line: str) -> list[str]:
    """An input line as the model's training source text was: tokenized (when the model says its
    input is raw, with the model directory's own ``prepare_input``) and lowercased if the model is."""
    if getattr(spec, "tokenizer", ""):
        from smtlib.system import modeldir

        return modeldir.prepare_input(spec, line).split()
    return (line.lower() if spec.lowercase else line).split()


def _parse_scores(text: str, path, lineno: int) -> np.ndarray:
    try:
        values = np.array([float(v) for v in text.split()], dtype=np.float64)
    except ValueError:
        raise InputError(f"non-numeric score in {text!r}", path, lineno) from None
    return values


def _logs(values: np.ndarray, path, lineno: int) -> np.ndarray:
    if np.any(values < 0) or np.any(~np.isfinite(values)):
        raise InputError(f"phrase score is not a probability: {values.tolist()}", path, lineno)
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(values), FLOOR_LOGPROB)


def source_phrases(sentences: list[list[str]], max_len: int) -> set[str]:
    """Every source n-gram (n <= ``max_len``) of the sentences: what filtering keeps."""
    needed: set[str] = set()
    for toks in sentences:
        for i in range(len(toks)):
            for j in range(i + 1, min(len(toks), i + max_len) + 1):
                needed.add(" ".join(toks[i:j]))
    return needed


def load_model(model_dir: str | os.PathLike, sentences: list[list[str]] | None = None) -> PhraseModel:
    """Load a model directory, keeping only what ``sentences`` (tokenized) can use.

    Parameters
    ----------
    model_dir
        The directory (see :mod:`smtlib.system.modeldir`).
    sentences
        The tokenized input (already lowercased if the model is). ``None`` loads every entry.

    Raises
    ------
    InputError
        On a missing or malformed component.
    """
    spec = read_model_spec(model_dir)
    spec_path = os.path.join(os.fspath(model_dir), "model.yaml")
    layout = Layout.from_spec(spec, spec_path)
    if not spec.phrase_tables:
        raise InputError("model has no phrase table", spec_path)
    if not spec.language_models:
        raise InputError("model has no language model", spec_path)
    needed = None if sentences is None else source_phrases(sentences, spec.max_phrase_length)
    n_tables = len(spec.phrase_tables)
    big = spec.feature_set == "big"  # a medium model built from a big table ignores the sparse field
    vocab: dict[str, int] = {}
    words: list[str] = []
    pair_ids: dict[tuple[str, str], int] = {}
    index: dict[str, list[int]] = {}
    entry_tgt: list[tuple[int, ...]] = []
    tm_rows: list[np.ndarray] = []
    entry_sparse: list[tuple[np.ndarray, np.ndarray]] = []
    sparse_ids: dict[str, int] = {}
    empty_sparse = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))

    def wid(w: str) -> int:
        i = vocab.get(w)
        if i is None:
            i = vocab[w] = len(words)
            words.append(w)
        return i

    for t, comp in enumerate(spec.phrase_tables):
        path = component_path(model_dir, comp)
        with open_text(path, what="phrase table") as fh:
            for lineno, line in enumerate(fh, 1):
                cut = line.find(" ||| ")
                if cut < 0:
                    if not line.strip():
                        continue
                    raise InputError("not a Moses phrase-table line (no ' ||| ')", path, lineno)
                src = line[:cut]
                if needed is not None and src not in needed:
                    continue
                fields = line.rstrip("\n").split(" ||| ")
                if len(fields) < 3:
                    raise InputError("phrase-table line has fewer than 3 fields", path, lineno)
                tgt = fields[1].strip()
                scores = _parse_scores(fields[2], path, lineno)
                if len(scores) != 4:
                    raise InputError(f"expected 4 phrase scores, got {len(scores)}", path, lineno)
                if not tgt:
                    raise InputError("empty target phrase", path, lineno)
                key = (src, tgt)
                e = pair_ids.get(key)
                if e is None:
                    e = pair_ids[key] = len(entry_tgt)
                    entry_tgt.append(tuple(wid(w) for w in tgt.split()))
                    row = np.full(4 * n_tables, MISSING_LOGPROB)
                    tm_rows.append(row)
                    entry_sparse.append(empty_sparse)
                    index.setdefault(src, []).append(e)
                tm_rows[e][4 * t : 4 * t + 4] = _logs(scores, path, lineno)
                if big and len(fields) >= 6 and fields[5].strip():
                    parts = fields[5].split()
                    if len(parts) % 2:
                        raise InputError("sparse field is not 'name value' pairs", path, lineno)
                    ids, vals = list(entry_sparse[e][0]), list(entry_sparse[e][1])
                    for name, value in zip(parts[::2], parts[1::2], strict=True):
                        try:
                            v = float(value)
                        except ValueError:
                            raise InputError(f"non-numeric sparse value {value!r}", path, lineno) from None
                        ids.append(sparse_ids.setdefault(name, len(sparse_ids)))
                        vals.append(v)
                    entry_sparse[e] = (np.array(ids, dtype=np.int64), np.array(vals, dtype=np.float64))
    n_entries = len(entry_tgt)
    entry_tm = np.array(tm_rows, dtype=np.float64).reshape(n_entries, 4 * n_tables)
    entry_lr = np.full((n_entries, 6), np.nan)
    for comp in spec.reordering:
        path = component_path(model_dir, comp)
        with open_text(path, what="reordering table") as fh:
            for lineno, line in enumerate(fh, 1):
                cut = line.find(" ||| ")
                if cut < 0:
                    if not line.strip():
                        continue
                    raise InputError("not a Moses reordering-table line", path, lineno)
                if needed is not None and line[:cut] not in needed:
                    continue
                fields = line.rstrip("\n").split(" ||| ")
                if len(fields) < 3:
                    raise InputError("reordering-table line has fewer than 3 fields", path, lineno)
                e = pair_ids.get((fields[0], fields[1].strip()))
                if e is None:
                    continue
                scores = _parse_scores(fields[2], path, lineno)
                if len(scores) != 6:
                    raise InputError(f"expected 6 msd-bidirectional-fe scores, got {len(scores)}", path, lineno)
                entry_lr[e] = _logs(scores, path, lineno)
    # source words can pass through untranslated: the LMs must know them too
    for toks in sentences or []:
        for w in toks:
            wid(w)
    keep = set(words) if sentences is not None else None
    lms = [read_arpa(component_path(model_dir, comp), keep_words=keep) for comp in spec.language_models]
    for comp, lm in zip(spec.language_models, lms, strict=True):
        if comp.order is not None and comp.order != lm.order:
            raise InputError(f"{comp.name}: model.yaml says order {comp.order}, the ARPA file has {lm.order}",
                             component_path(model_dir, comp))
    model = PhraseModel(
        spec=spec, layout=layout, model_dir=os.fspath(model_dir), vocab=vocab, words=words, index=index,
        entry_tgt=entry_tgt, entry_tm=entry_tm, entry_lr=entry_lr, entry_sparse=entry_sparse,
        sparse_names=list(sparse_ids), lms=lms,
    )
    model._finish_lms()
    return model
