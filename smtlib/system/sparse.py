"""Sparse Boolean phrase-pair features of the ``big`` set (Cherry & Foster 2012, §4.2, Table 3; the
PBMT templates of Hopkins & May 2011, §5.2).

Each template fires Boolean features (value 1) on a phrase pair, from its words and its most
frequent inner alignment:

``tu_`` *tgt-unal* (at most 50)
    ``tu_W`` for each target word W of the pair that is unaligned inside it, when W is one of the 50
    target words seen unaligned most often in the phrase table (counted over the positions of all
    extracted pairs).
``cb_`` *count-bin* (11)
    exactly one of ``cb_le1 cb_le2 cb_le4 cb_le8 cb_le16 cb_le32 cb_le64 cb_le128 cb_le1k cb_le10k
    cb_inf``: the smallest upper bound of {1, 2, 4, ..., 128, 1000, 10000, inf} >= the joint count.
``wp_`` *word-pair* (at most 80 x 80 + 4 x 80 = 6720; Table 3 gives 82^2 = 6724)
    the 80 most frequent words of each side of the training corpus: a 1-1 link (i, j) (i aligned only
    to j and j only to i) fires ``wp_F~E``, where a word outside its side's top 80 becomes ``@other``
    (no feature when both are); a top-80 word that is not in a 1-1 link (unaligned or aligned to
    several words) fires ``wp_F~@non11`` (source) or ``wp_@non11~E`` (target).
``lb_`` *length-bin* (7 + 7 + 49 = 63)
    ``lb_srcN``, ``lb_tgtM`` and ``lb_srcNtgtM`` for the pair's lengths.

**The over-fitting variant** (Cherry & Foster 2012, §5.1, Figure 1: "our Big Fr-En features, with
the count bin template modified to distinguish each joint count observed in the tuning set"):
:func:`exact_count_table` rewrites a Big phrase table so that the count-bin feature of every pair
is ``cb_eqN`` for its joint count N (one feature per distinct count) instead of its bin. Every joint
count gets its feature, not only those of pairs the tuning set can use: the features that the
tuning set never fires are never tuned (weight 0) and so are the same as no feature, on the tuning set
and on the test sets. ``smtlib train assemble --feature-set overfit`` (the ``overfit`` entry of
:mod:`smtlib.system.feature_sets`; ``--feature-set big --count-bins exact`` writes the same tables)
builds such a model.

Names: every name contains ``_`` (Moses's rule that tells sparse from dense features). Words inside
names are escaped so that a name is one whitespace-free token that is safe in n-best lines, weights
files (``#`` starts a comment there) and moses.ini (``=`` ends a name), and never ends in ``_<digits>``
(which reads as a dense ``NAME_k``): letters stay, every other character becomes ``%XX`` per UTF-8
byte (``l'`` -> ``l%27``, ``2`` -> ``%32``).
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
from collections.abc import Callable

import numba
import numpy as np

from smtlib.system.extract import PhrasePairs, TokenizedCorpus

TEMPLATES = ("tgt-unal", "count-bin", "word-pair", "length-bin")
N_TGT_UNAL = 50
N_WORD_PAIR = 80
COUNT_BOUNDS = (1, 2, 4, 8, 16, 32, 64, 128, 1000, 10000)
COUNT_BIN_NAMES = tuple(f"cb_le{b}" if b < 1000 else f"cb_le{b // 1000}k" for b in COUNT_BOUNDS) + ("cb_inf",)
OTHER = "@other"
NON11 = "@non11"


def escape_word(word: str) -> str:
    """A word as it appears inside a feature name (see the module docstring)."""
    if word.isalpha():  # most words: nothing to escape
        return word
    return "".join(ch if ch.isalpha() else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in word)


@functools.lru_cache(maxsize=1 << 20)
def _escaped(word: str) -> str:
    """:func:`escape_word`, remembered: a phrase table repeats its words a million times."""
    return escape_word(word)


def escape_phrase(words: list[str]) -> str:
    """``escape_word(" ".join(words))``, a word at a time (the space is ``%20``)."""
    return "%20".join(_escaped(w) for w in words)


def _top_words(counts: np.ndarray, vocab: np.ndarray, k: int) -> np.ndarray:
    """Ids of the ``k`` most frequent words with a positive count (ties: the smaller word string)."""
    ids = [w for w in range(len(counts)) if counts[w] > 0]
    ids.sort(key=lambda w: (-int(counts[w]), vocab[w]))
    return np.array(ids[:k], dtype=np.int64)


@numba.njit(cache=True)
def _unaligned_targets(tgt, tgt_off, sent, es, el, fl, masks, n_tgt):
    counts = np.zeros(n_tgt, np.int64)
    for p in range(len(sent)):
        e0 = tgt_off[sent[p]] + es[p]
        for j in range(el[p]):
            aligned = False
            for i in range(fl[p]):
                if (masks[p] >> np.uint64(8 * i + j)) & np.uint64(1):
                    aligned = True
                    break
            if not aligned:
                counts[tgt[e0 + j]] += 1
    return counts


@dataclasses.dataclass
class SparseVocabulary:
    """The words the templates name: learned from the corpus and the full pair set."""

    tgt_unal: np.ndarray  # target word ids, the 50 most often unaligned
    src_top: np.ndarray  # source word ids, the 80 most frequent
    tgt_top: np.ndarray  # target word ids, the 80 most frequent
    max_length: int
    n_top: int = N_WORD_PAIR  # words per side of the word-pair template
    names: list[str] = dataclasses.field(default_factory=list)  # feature code -> name

    def code_layout(self) -> tuple[int, int, int]:
        """Offsets of the count-bin, word-pair and length-bin codes (tgt-unal starts at 0)."""
        cb = len(self.tgt_unal)
        wp = cb + len(COUNT_BIN_NAMES)
        lb = wp + (self.n_top + 2) ** 2
        return cb, wp, lb


def learn_vocabulary(
    corpus: TokenizedCorpus,
    pairs: PhrasePairs,
    max_length: int = 7,
    *,
    n_tgt_unal: int = N_TGT_UNAL,
    n_word_pair: int = N_WORD_PAIR,
) -> SparseVocabulary:
    """Pick the template words (Table 3: 50 unaligned target words, 80 words per side) and name
    every feature code."""
    unal = _unaligned_targets(
        corpus.tgt, corpus.tgt_off, pairs.rep_sent, pairs.rep_e_start, pairs.rep_e_len, pairs.rep_f_len, pairs.mask,
        len(corpus.tgt_vocab),
    )
    # "Unaligned in the phrase table": one count per unaligned position of every distinct pair.
    vocab = SparseVocabulary(
        tgt_unal=_top_words(unal, corpus.tgt_vocab, n_tgt_unal),
        src_top=_top_words(np.bincount(corpus.src, minlength=len(corpus.src_vocab)), corpus.src_vocab, n_word_pair),
        tgt_top=_top_words(np.bincount(corpus.tgt, minlength=len(corpus.tgt_vocab)), corpus.tgt_vocab, n_word_pair),
        max_length=max_length,
        n_top=n_word_pair,
    )
    names = [f"tu_{escape_word(corpus.tgt_vocab[w])}" for w in vocab.tgt_unal]
    names += list(COUNT_BIN_NAMES)
    src_names = [escape_word(corpus.src_vocab[w]) for w in vocab.src_top]
    src_names += [OTHER] * (n_word_pair - len(src_names)) + [OTHER, NON11]
    tgt_names = [escape_word(corpus.tgt_vocab[w]) for w in vocab.tgt_top]
    tgt_names += [OTHER] * (n_word_pair - len(tgt_names)) + [OTHER, NON11]
    names += [f"wp_{a}~{b}" for a in src_names for b in tgt_names]
    names += [f"lb_src{n}" for n in range(1, max_length + 1)]
    names += [f"lb_tgt{m}" for m in range(1, max_length + 1)]
    names += [f"lb_src{n}tgt{m}" for n in range(1, max_length + 1) for m in range(1, max_length + 1)]
    vocab.names = names
    return vocab


@numba.njit(cache=True)
def _sparse_kernel(src, src_off, tgt, tgt_off, sent, fs, fl, es, el, masks, joint, tu_index, s_top, t_top,
                   bounds, cb0, wp0, lb0, max_len, n_top):
    n = len(sent)
    out = np.empty(n * 40, np.int64)
    off = np.zeros(n + 1, np.int64)
    k = 0
    side = n_top + 2  # the top words, OTHER (n_top), NON11 (n_top + 1)
    other = n_top
    non11 = n_top + 1
    for p in range(n):
        if k + 200 > len(out):
            grown = np.empty(2 * len(out) + 200, np.int64)
            grown[:k] = out[:k]
            out = grown
        start = k
        f0 = src_off[sent[p]] + fs[p]
        e0 = tgt_off[sent[p]] + es[p]
        nf = fl[p]
        ne = el[p]
        mask = masks[p]
        row = np.zeros(nf, np.int64)
        col = np.zeros(ne, np.int64)
        for i in range(nf):
            for j in range(ne):
                if (mask >> np.uint64(8 * i + j)) & np.uint64(1):
                    row[i] += 1
                    col[j] += 1
        # tgt-unal
        for j in range(ne):
            if col[j] == 0 and tu_index[tgt[e0 + j]] >= 0:
                out[k] = tu_index[tgt[e0 + j]]
                k += 1
        # count-bin
        b = 0
        while b < len(bounds) and joint[p] > bounds[b]:
            b += 1
        out[k] = cb0 + b
        k += 1
        # word-pair
        f_in_11 = np.zeros(nf, np.bool_)
        e_in_11 = np.zeros(ne, np.bool_)
        for i in range(nf):
            for j in range(ne):
                if (mask >> np.uint64(8 * i + j)) & np.uint64(1) and row[i] == 1 and col[j] == 1:
                    f_in_11[i] = True
                    e_in_11[j] = True
                    a = s_top[src[f0 + i]]
                    c = t_top[tgt[e0 + j]]
                    if a < other or c < other:
                        out[k] = wp0 + a * side + c
                        k += 1
        for i in range(nf):
            a = s_top[src[f0 + i]]
            if a < other and not f_in_11[i]:
                out[k] = wp0 + a * side + non11
                k += 1
        for j in range(ne):
            c = t_top[tgt[e0 + j]]
            if c < other and not e_in_11[j]:
                out[k] = wp0 + non11 * side + c
                k += 1
        # length-bin
        out[k] = lb0 + nf - 1
        out[k + 1] = lb0 + max_len + ne - 1
        out[k + 2] = lb0 + 2 * max_len + (nf - 1) * max_len + (ne - 1)
        k += 3
        # Boolean features: sort and drop repeats
        seg = np.sort(out[start:k])
        w = start
        for q in range(len(seg)):
            if q == 0 or seg[q] != seg[q - 1]:
                out[w] = seg[q]
                w += 1
        k = w
        off[p + 1] = k
    return off, out[:k].copy()


def sparse_features(corpus: TokenizedCorpus, pairs: PhrasePairs, vocab: SparseVocabulary) -> tuple[np.ndarray, np.ndarray]:
    """Feature codes of every pair: codes of pair p are ``codes[offsets[p]:offsets[p+1]]`` (sorted;
    ``vocab.names[code]`` is the name; every value is 1)."""
    cb0, wp0, lb0 = vocab.code_layout()
    tu_index = np.full(len(corpus.tgt_vocab), -1, np.int64)
    tu_index[vocab.tgt_unal] = np.arange(len(vocab.tgt_unal))
    s_top = np.full(len(corpus.src_vocab), vocab.n_top, np.int64)
    s_top[vocab.src_top] = np.arange(len(vocab.src_top))
    t_top = np.full(len(corpus.tgt_vocab), vocab.n_top, np.int64)
    t_top[vocab.tgt_top] = np.arange(len(vocab.tgt_top))
    return _sparse_kernel(
        corpus.src, corpus.src_off, corpus.tgt, corpus.tgt_off, pairs.rep_sent, pairs.rep_f_start, pairs.rep_f_len,
        pairs.rep_e_start, pairs.rep_e_len, pairs.mask, pairs.joint, tu_index, s_top, t_top,
        np.array(COUNT_BOUNDS, np.int64), cb0, wp0, lb0, vocab.max_length, vocab.n_top,
    )


EXACT_COUNT_PREFIX = "cb_eq"


def exact_count_name(joint: int) -> str:
    """The over-fitting count feature of a joint count (``cb_eq21``: never ``_<digits>`` at the end)."""
    return f"{EXACT_COUNT_PREFIX}{int(joint)}"


def exact_count_line(line: str) -> tuple[str, int]:
    """A Big phrase-table line with its count-bin feature replaced by the exact joint-count feature.

    The joint count is the third number of the counts field (``target source joint``, the fifth
    field); the sixth field's ``cb_*`` item becomes ``cb_eqN``. Returns the line and the count.
    """
    fields = line.split(" ||| ")
    if len(fields) != 6:
        raise ValueError("a Big phrase-table line has six fields (the sixth: sparse features)")
    joint = int(float(fields[4].split()[2]))
    items = fields[5].split()
    for k in range(0, len(items), 2):
        if items[k] in COUNT_BIN_NAMES:
            items[k] = exact_count_name(joint)
    fields[5] = " ".join(items)
    return " ||| ".join(fields), joint


def exact_count_table(source, dest) -> int:
    """Write ``dest``, the phrase table ``source`` with exact joint-count features; returns the number
    of distinct count features."""
    from smtlib.errors import InputError
    from smtlib.io import atomic_output, open_text

    counts = set()
    with open_text(source, what="phrase table") as fh, atomic_output(dest) as out:
        for lineno, line in enumerate(fh, 1):
            try:
                new, joint = exact_count_line(line.rstrip("\n"))
            except (ValueError, IndexError):
                raise InputError("not a Big phrase-table line (counts and sparse fields)", source, lineno) from None
            counts.add(joint)
            out.write(new + "\n")
    return len(counts)


def render(codes: np.ndarray, offsets: np.ndarray, names: list[str]) -> list[str]:
    """The sixth phrase-table field of each pair: ``name 1 name 1 ...``."""
    with_value = [name + " 1" for name in names]
    flat = [with_value[c] for c in codes.tolist()]
    off = offsets.tolist()
    return [" ".join(flat[off[p] : off[p + 1]]) for p in range(len(off) - 1)]


# -- Simianer, Riezler & Dyer (2012)'s rule templates, read off phrase pairs --------------------------
#: The three templates of Simianer et al. (2012), §3, for a phrase-based model, by the paper's group
#: names (Table 2: "+id", "+ng", "+shape"). A phrase pair is a rule without non-terminals:
#:
#: ``ri_`` *rule identifier* (``id``)
#:     one feature per phrase pair, ``ri_SRC~TGT`` (the escaped phrases; spaces become ``%20``).
#: ``rn_`` *rule n-grams* (``ng``)
#:     the bigrams of consecutive source words inside the phrase, ``rn_W1~W2``, valued by their count
#:     in the phrase (the paper: "bigrams on source-sides of rules"); a one-word phrase has none.
#: ``rs_`` *rule shape* (``shape``)
#:     ``rs_sNtM`` for a pair of N source and M target words. The paper's shapes are the patterns of
#:     terminal runs around non-terminals (NT term* NT ...); a phrase pair is one terminal run on
#:     each side, so its only "gap pattern" is the empty one and the shape reduces to the two run
#:     lengths (49 shapes for phrases of up to 7 words; the paper's Hiero grammar has 51).
RULE_TEMPLATE_GROUPS = {"id": "rule-id", "ng": "rule-bigram", "shape": "rule-shape"}


def rule_features(src: str, tgt: str, groups: tuple[str, ...]) -> dict[str, int]:
    """The rule-template features of the phrase pair ``src`` -> ``tgt`` (space-separated words) for
    the template ``groups`` (keys of :data:`RULE_TEMPLATE_GROUPS`), name -> value, in template order."""
    unknown = [g for g in groups if g not in RULE_TEMPLATE_GROUPS]
    if unknown:
        raise ValueError(f"unknown rule template group(s) {unknown} (known: {list(RULE_TEMPLATE_GROUPS)})")
    src_words, tgt_words = src.split(), tgt.split()
    features: dict[str, int] = {}
    for group in RULE_TEMPLATE_GROUPS:  # a fixed order whatever the order of ``groups``
        if group not in groups:
            continue
        if group == "id":
            features[f"ri_{escape_phrase(src_words)}~{escape_phrase(tgt_words)}"] = 1
        elif group == "ng":
            for a, b in zip(src_words, src_words[1:]):
                name = f"rn_{_escaped(a)}~{_escaped(b)}"
                features[name] = features.get(name, 0) + 1
        else:
            features[f"rs_s{len(src_words)}t{len(tgt_words)}"] = 1
    return features


def rule_feature_table(source, dest, groups: tuple[str, ...],
                       on_line: Callable[[str, str, dict[str, int]], None] | None = None) -> dict[str, int]:
    """Write ``dest``, the phrase table ``source`` whose sixth field holds the rule-template features
    of ``groups`` (any sixth field of ``source`` is replaced). ``on_line``, when given, is called with
    each line's source, target and features as written. Returns the number of distinct features per
    group and the number of lines."""
    from smtlib.errors import InputError
    from smtlib.io import atomic_output, open_text

    prefixes = {"id": "ri_", "ng": "rn_", "shape": "rs_"}
    seen: dict[str, set[str]] = {g: set() for g in groups}
    lines = 0
    with open_text(source, what="phrase table") as fh, atomic_output(dest) as out:
        for lineno, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split(" ||| ")
            if len(fields) not in (5, 6):
                raise InputError("a phrase-table line has five or six ' ||| ' fields", source, lineno)
            try:
                features = rule_features(fields[0], fields[1], groups)
            except ValueError as exc:
                raise InputError(str(exc), source, lineno) from None
            for name in features:
                for g in groups:
                    if name.startswith(prefixes[g]):
                        seen[g].add(name)
            out.write(" ||| ".join(fields[:5] + [" ".join(f"{n} {v}" for n, v in features.items())]) + "\n")
            if on_line is not None:
                on_line(fields[0], fields[1], features)
            lines += 1
    return {**{g: len(names) for g, names in seen.items()}, "lines": lines}


def rule_template_model(model_dir, out, groups: tuple[str, ...],
                        compile_model: Callable[[pathlib.Path], dict] | None = None,
                        on_line: Callable[[str, str, dict[str, int]], None] | None = None) -> dict:
    """Model directory ``out``: the ``medium`` model of ``model_dir`` whose TranslationModel0 table
    carries the rule-template features of ``groups`` (its model.yaml says ``big``, the feature set
    whose phrase tables the decoder reads sparse fields from, with ``sparse_templates`` naming the
    rule templates). The other components are linked; ``compile_model``, when given, writes
    ``compiled.bin`` (``smtlib.decoder.compiled.compile_model``, passed in by the command so that
    this layer does not import the decoder, as :func:`smtlib.system.build.build`); ``on_line`` sees
    each line of the new TranslationModel0 table (:func:`rule_feature_table`; the command passes
    :class:`smtlib.decoder.compiled.SparseOverlay`'s, which compiles the new model from
    ``model_dir``'s compiled form). Returns the figures of :func:`rule_feature_table`."""
    import dataclasses
    import shutil

    from smtlib.errors import InputError
    from smtlib.io import link_or_copy
    from smtlib.system.modeldir import DEFAULT_WEIGHTS, default_weights_file, read_model_spec, write_model_spec

    model_dir, out = pathlib.Path(model_dir), pathlib.Path(out)
    spec = read_model_spec(model_dir)
    if spec.feature_set != "medium":
        raise InputError(f"rule templates are added to a medium model, this one is {spec.feature_set!r}", model_dir)
    if not groups:
        raise InputError("no rule template group given (id, ng, shape)")
    out.mkdir(parents=True, exist_ok=True)
    figures: dict = {}
    for comp in spec.phrase_tables + spec.language_models + spec.reordering:
        source, dest = model_dir / comp.path, out / comp.path
        if comp.name == "TranslationModel0":
            figures = rule_feature_table(source, dest, groups, on_line)
            continue
        link_or_copy(source, dest)
    tables = [
        dataclasses.replace(c, description=c.description + "; sixth field: rule templates "
                            + ", ".join(RULE_TEMPLATE_GROUPS[g] for g in groups) + " (Simianer et al. 2012, §3)")
        if c.name == "TranslationModel0" else c
        for c in spec.phrase_tables
    ]
    new = dataclasses.replace(spec, feature_set="big", phrase_tables=tables,
                              sparse_templates=[RULE_TEMPLATE_GROUPS[g] for g in RULE_TEMPLATE_GROUPS if g in groups])
    if default_weights_file(model_dir).is_file():
        shutil.copyfile(default_weights_file(model_dir), out / DEFAULT_WEIGHTS)
    write_model_spec(out, new)
    if compile_model is not None:
        compile_model(out)
    return figures
