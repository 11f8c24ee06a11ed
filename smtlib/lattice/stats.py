"""Exact BLEU statistics of lattice paths, and the per-sentence reference tables they are counted with.

**Statistics of a path** (:func:`path_stats`, :func:`path_stats_into`): the sentence's references
become a table of their n-grams (orders 1-4, packed 16 bits per token, the maximum count over the
references; :func:`prepare_references`); a path's words are looked up in it and clipped as in
:mod:`smtlib.bleu.stats`, giving the same ``[hyp_len, ref_len, m1..m4, t1..t4]`` row (the tests
check this against :func:`smtlib.bleu.stats.compute_stats`). Words are numbered per sentence from
the references' own words (a word that occurs in no reference of the sentence is 0 and can never
match), so 16 bits suffice for references of up to 65,534 distinct words; a sentence with more (or
whose context automaton, below, would exceed :data:`MAX_CONTEXT_ENTRIES`) is an error naming it.

Whole-path edges (hypotheses from a k-best pool or aggregated from earlier iterations, see
:mod:`smtlib.lattice.lattice_set`) carry their statistics row (:func:`fill_whole_path_stats` counts
it once from their words when it is missing); a set whose paths all carry their rows needs no
reference tables (:func:`empty_references`).

The same :class:`LatticeReferences` also holds, per sentence, a *context automaton* over the
reference n-grams (which n-gram orders a word completes after a given context): the tables the
tuners' hope/fear oracle walks to score a linear BLEU along lattice paths
(:mod:`smtlib.tuners.hope_fear`), built here with the n-gram tables they share.

Multiple references: clipping and reference lengths follow :mod:`smtlib.bleu.stats`; ``r_linear``
is the average reference length (exact with one reference, as on Multi30k).

The kernels are numba-compiled and take :meth:`LatticeReferences.as_tuple` (a tuple of arrays, so
that the oracle's and lb-mira's compiled passes call them without leaving compiled code).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numba
import numpy as np

from smtlib.bleu.stats import BleuSettings, preprocess
from smtlib.errors import InputError
from smtlib.lattice.lattice_set import LatticeSet

_RULE = {"closest": 0, "shortest": 1, "average": 2}
#: the largest context automaton of one sentence (states x (reference words + 1); two int64 tables, 1 GiB at this size)
MAX_CONTEXT_ENTRIES = 1 << 26


@dataclasses.dataclass
class LatticeReferences:
    """The references of a :class:`LatticeSet`, per sentence, for path statistics and oracle decoding.

    Attributes
    ----------
    local_words
        (W,) per lattice word token (``LatticeSet.words``), its id among the sentence's reference
        words (1-based), 0 if no reference of the sentence has it.
    n_local
        (S,) number of distinct reference words per sentence.
    ng_off, ng_keys, ng_max
        Per sentence, the sorted packed keys of the references' n-grams (orders 1-4) and each one's
        maximum count over the references.
    ref_lens
        (S, n_refs) reference lengths; ``rule`` the reference-length rule code.
    r_linear
        (S,) reference length used in the linear BLEU (the average).
    tr_off, n_ctx, tr_next, tr_mask
        Per sentence, the context automaton: ``n_ctx`` states (0 = no context; the others the
        reference n-grams of orders 1-3), and for state ``q`` and word ``w`` (0..n_local) at
        ``tr_off[s] + q * (n_local + 1) + w`` the next state and a bit mask of the n-gram orders
        (bit n-1 for order n) whose n-gram ending in ``w`` is a reference n-gram.
    """

    local_words: np.ndarray
    n_local: np.ndarray
    ng_off: np.ndarray
    ng_keys: np.ndarray
    ng_max: np.ndarray
    ref_lens: np.ndarray
    rule: int
    r_linear: np.ndarray
    tr_off: np.ndarray
    n_ctx: np.ndarray
    tr_next: np.ndarray
    tr_mask: np.ndarray

    def as_tuple(self) -> tuple:
        """The arrays the compiled kernels take (in this order)."""
        return (self.local_words, self.n_local, self.ng_off, self.ng_keys, self.ng_max, self.ref_lens, self.rule,
                self.r_linear, self.tr_off, self.n_ctx, self.tr_next, self.tr_mask)


def _pack(gram: Sequence[int]) -> int:
    key = 0
    for t in gram:
        key = (key << 16) | t
    return key


def prepare_references(ls: LatticeSet, references: Sequence[Sequence[str]],
                       settings: BleuSettings = BleuSettings()) -> LatticeReferences:
    """Reference tables for every sentence of ``ls`` (see :class:`LatticeReferences`).

    Sentences without a lattice or path get no tables (no score covers them).

    Raises
    ------
    InputError
        If the BLEU settings tokenize (edge words must be the BLEU tokens, so only ``tokenize=none``
        keeps BLEU decomposable over edges), the references do not cover the lattices, a sentence's
        references have 65,535 distinct words or more or a context automaton of more than
        :data:`MAX_CONTEXT_ENTRIES` entries (naming the sentence), or the n-gram order is not 4.
    """
    if settings.tokenize != "none":
        raise InputError(f"lattice tuners need --tokenize none (BLEU tokens must be the lattice words), got {settings.tokenize!r}")
    if settings.max_ngram_order != 4:
        raise InputError(f"lattice BLEU statistics are of 4-grams, not {settings.max_ngram_order}-grams")
    if not references:
        raise InputError("no references given")
    S = ls.n_sentences
    n_refs = len(references)
    for r, ref in enumerate(references):
        if len(ref) != S:
            raise InputError(f"reference set {r + 1} has {len(ref)} segments, the lattices need {S}")
    refs = [preprocess(list(ref), settings) for ref in references]
    vocab = [w.lower() for w in ls.vocab] if settings.lowercase else list(ls.vocab)
    ref_lens = np.zeros((S, n_refs), dtype=np.int64)
    n_local = np.zeros(S, dtype=np.int64)
    ng_off = np.zeros(S + 1, dtype=np.int64)
    tr_off = np.zeros(S + 1, dtype=np.int64)
    n_ctx = np.zeros(S, dtype=np.int64)
    keys_parts, max_parts, next_parts, mask_parts = [], [], [], []
    local_words = np.zeros(len(ls.words), dtype=np.int64)
    r_linear = np.zeros(S)
    for s in range(S):
        toks = [refs[r][s].split() for r in range(n_refs)]
        if ls.edge_off[s] == ls.edge_off[s + 1]:  # no lattice or path: a sentence no score covers
            ref_lens[s] = [len(t) for t in toks]
            r_linear[s] = ref_lens[s].mean()
            ng_off[s + 1], tr_off[s + 1] = ng_off[s], tr_off[s]
            continue
        local: dict[str, int] = {}
        for t in toks:
            for w in t:
                local.setdefault(w, len(local) + 1)
        if len(local) >= 65535:
            raise InputError(f"sentence {s} (reference line {s + 1}): its references have {len(local)} distinct words; "
                             "the lattice tuners number a sentence's reference words in 16 bits (at most 65,534)")
        n_local[s] = len(local)
        ids = [[local[w] for w in t] for t in toks]
        counts: dict[int, int] = {}
        grams: list[set] = [set() for _ in range(5)]
        for r, t in enumerate(ids):
            ref_lens[s, r] = len(t)
            mine: dict[int, int] = {}
            for n in range(1, 5):
                for i in range(len(t) - n + 1):
                    g = tuple(t[i : i + n])
                    grams[n].add(g)
                    k = _pack(g)
                    mine[k] = mine.get(k, 0) + 1
            for k, c in mine.items():
                counts[k] = max(counts.get(k, 0), c)
        keys = np.array(sorted(counts), dtype=np.int64)
        keys_parts.append(keys)
        max_parts.append(np.array([counts[k] for k in keys.tolist()], dtype=np.int64))
        ng_off[s + 1] = ng_off[s] + len(keys)
        r_linear[s] = ref_lens[s].mean()
        # context automaton over the reference n-grams of orders 1..3
        states: list[tuple] = [()] + sorted(grams[1] | grams[2] | grams[3], key=lambda g: (len(g), g))
        index = {g: q for q, g in enumerate(states)}
        width = len(local) + 1
        if len(states) * width > MAX_CONTEXT_ENTRIES:
            raise InputError(f"sentence {s} (reference line {s + 1}): its references' {len(local)} distinct words and "
                             f"{len(states) - 1} n-grams make a context table of {len(states) * width:,} entries, more "
                             f"than the lattice tuners' {MAX_CONTEXT_ENTRIES:,}")
        nxt = np.zeros(len(states) * width, dtype=np.int64)
        msk = np.zeros(len(states) * width, dtype=np.int64)
        for q, ctx in enumerate(states):
            for w in range(1, width):
                t = ctx + (w,)
                m = 0
                for n in range(1, min(len(t), 4) + 1):
                    if t[-n:] in grams[n]:
                        m |= 1 << (n - 1)
                target = 0
                for length in range(min(len(t), 3), 0, -1):
                    q2 = index.get(t[-length:])
                    if q2 is not None:
                        target = q2
                        break
                nxt[q * width + w] = target
                msk[q * width + w] = m
        next_parts.append(nxt)
        mask_parts.append(msk)
        n_ctx[s] = len(states)
        tr_off[s + 1] = tr_off[s] + len(nxt)
        lo, hi = ls.word_off[ls.edge_off[s]], ls.word_off[ls.edge_off[s + 1]]
        if hi > lo:
            local_words[lo:hi] = [local.get(vocab[w], 0) for w in ls.words[lo:hi].tolist()]
    cat = (lambda xs: np.concatenate(xs).astype(np.int64) if xs else np.zeros(0, np.int64))
    return LatticeReferences(local_words, n_local, ng_off, cat(keys_parts), cat(max_parts), ref_lens,
                             _RULE[settings.ref_length], r_linear, tr_off, n_ctx, cat(next_parts), cat(mask_parts))


def empty_references(n_sentences: int) -> LatticeReferences:
    """References for a lattice set whose paths all carry their own statistics (a k-best pool)."""
    z = np.zeros(0, np.int64)
    return LatticeReferences(z, np.zeros(n_sentences, np.int64), np.zeros(n_sentences + 1, np.int64), z, z,
                             np.zeros((n_sentences, 1), np.int64), 0, np.zeros(n_sentences),
                             np.zeros(n_sentences + 1, np.int64), np.ones(n_sentences, np.int64), z, z)


# ------------------------------------------------------------------------------------ statistics
@numba.njit(cache=True)
def _stats_of_tokens(toks, ng_keys, ng_max, lo, hi, ref_lens, rule, out):
    """Write the statistics row of the local-id tokens ``toks`` (0 = no reference word) to ``out``."""
    n = toks.shape[0]
    for k in range(10):
        out[k] = 0.0
    out[0] = n
    if rule == 0:
        best = ref_lens[0]
        for r in range(1, ref_lens.shape[0]):
            d_new = abs(n - ref_lens[r])
            d_old = abs(n - best)
            if d_new < d_old or (d_new == d_old and ref_lens[r] < best):
                best = ref_lens[r]
        out[1] = best
    elif rule == 1:
        out[1] = ref_lens.min()
    else:
        out[1] = ref_lens.sum() / ref_lens.shape[0]
    keys = np.empty(max(n, 1), dtype=np.int64)
    for order in range(1, 5):
        total = n - order + 1
        if total <= 0:
            continue
        out[5 + order] = total
        m = 0
        for i in range(total):
            key = np.int64(0)
            zero = False
            for j in range(order):
                t = toks[i + j]
                if t == 0:
                    zero = True
                key = (key << np.int64(16)) | t
            keys[m] = -1 if zero else key
            m += 1
        ks = np.sort(keys[:m])
        matched = 0
        i = 0
        while i < m:
            j = i
            while j < m and ks[j] == ks[i]:
                j += 1
            if ks[i] >= 0:
                pos = np.searchsorted(ng_keys[lo:hi], ks[i])
                if pos < hi - lo and ng_keys[lo + pos] == ks[i]:
                    matched += min(j - i, ng_max[lo + pos])
            i = j
        out[1 + order] = matched


@numba.njit(cache=True, nogil=True)
def paths_stats_kernel(path_sent, path_off, path_edges, word_off, path_row, path_stats, refs):
    """Statistics rows of paths (global edge ids), whole-path edges taken from ``path_stats``."""
    n_paths = path_sent.shape[0]
    out = np.zeros((n_paths, 10))
    buf = np.empty(256, dtype=np.int64)
    for p in range(n_paths):
        a, b = path_off[p], path_off[p + 1]
        buf = path_stats_into(path_sent[p], path_edges[a:b], b - a, word_off, path_row, path_stats, refs, buf, out[p])
    return out


@numba.njit(cache=True)
def path_stats_into(s, path, n, word_off, path_row, path_stats, refs, tok_buf, out):
    """Statistics of a path (global edges ``path[:n]``) of sentence ``s`` into ``out``."""
    if n == 1 and path_row[path[0]] >= 0 and not np.isnan(path_stats[path_row[path[0]], 0]):
        out[:] = path_stats[path_row[path[0]]]
        return tok_buf
    local_words, ng_off, ng_keys, ng_max, ref_lens, rule = refs[0], refs[2], refs[3], refs[4], refs[5], refs[6]
    need = 0
    for k in range(n):
        need += word_off[path[k] + 1] - word_off[path[k]]
    if need > tok_buf.shape[0]:
        tok_buf = np.empty(2 * need, dtype=np.int64)
    m = 0
    for k in range(n):
        for q in range(word_off[path[k]], word_off[path[k] + 1]):
            tok_buf[m] = local_words[q]
            m += 1
    _stats_of_tokens(tok_buf[:m], ng_keys, ng_max, ng_off[s], ng_off[s + 1], ref_lens[s], rule, out)
    return tok_buf


def path_stats(ls: LatticeSet, refs: LatticeReferences, path_sent: np.ndarray, path_off: np.ndarray,
               path_edges: np.ndarray) -> np.ndarray:
    """(P, 10) BLEU statistics of the paths ``path_edges[path_off[p]:path_off[p+1]]`` of sentences ``path_sent``."""
    return paths_stats_kernel(np.asarray(path_sent, np.int64), np.asarray(path_off, np.int64),
                              np.asarray(path_edges, np.int64), ls.word_off, ls.path_row, ls.path_stats, refs.as_tuple())


def fill_whole_path_stats(ls: LatticeSet, refs: LatticeReferences) -> None:
    """Compute (in place) the statistics of whole-path edges that have none yet (NaN rows), from their words."""
    missing = np.flatnonzero(np.isnan(ls.path_stats[:, 0])) if len(ls.path_stats) else np.zeros(0, np.int64)
    if not len(missing):
        return
    edges = np.flatnonzero(ls.path_row >= 0)
    edges = edges[np.isin(ls.path_row[edges], missing)]
    sent = np.searchsorted(ls.edge_off, edges, side="right") - 1
    rows = ls.path_row[edges]
    # compute from words: a temporary row of NaN makes paths_stats_kernel count the words
    stats = paths_stats_kernel(sent.astype(np.int64), np.arange(len(edges) + 1, dtype=np.int64), edges.astype(np.int64),
                               ls.word_off, ls.path_row, ls.path_stats, refs.as_tuple())
    ls.path_stats[rows] = stats
