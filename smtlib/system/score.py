"""Phrase-pair scores: relative frequencies and lexical weights (Koehn, Och & Marcu 2003, §3.1, §3.3).

For a pair (f, e) with joint count c(f, e) and most frequent inner alignment a:

* p(e|f) = c(f, e) / c(f) and p(f|e) = c(f, e) / c(e)  (relative frequencies, eq. 3);
* lex(e|f, a) = prod_j [ 1/|{i: (i, j) in a}| * sum_{(i, j) in a} w(e_j|f_i) ], with w(e_j|NULL)
  for an unaligned e_j (eq. 4), and lex(f|e, a) symmetrically;
* the word translation table comes from the same symmetrized corpus alignment:
  w(e|f) = c(f, e) / c(f) over alignment links, an unaligned target word counting as a link to NULL
  and an unaligned source word as a link to a NULL target (Moses's ``lex.e2f`` / ``lex.f2e``).

Moses's ``score`` uses the most frequent alignment of a pair for the lexical weights; ties here go
to the alignment whose bit mask is smallest (Moses keeps the first one it reads, which depends on its
sort). The table limit keeps, for each source phrase, the ``limit`` pairs with the highest p(e|f)
(ties: higher p(f|e), then smaller target id = earlier first appearance), as Moses's
``ttable-limit`` does with the direct probability.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from smtlib.system.align import Links
from smtlib.system.extract import PhrasePairs, TokenizedCorpus


@dataclasses.dataclass
class LexicalTable:
    """Word translation probabilities as sorted keys ``f * (V_e + 1) + e`` (NULL = the last id).

    ``w_e_given_f[k]`` and ``w_f_given_e[k]`` belong to ``keys[k]``.
    """

    keys: np.ndarray
    w_e_given_f: np.ndarray
    w_f_given_e: np.ndarray
    n_src: int  # source vocabulary size; NULL source = n_src
    n_tgt: int  # target vocabulary size; NULL target = n_tgt


@numba.njit(cache=True)
def _link_words(src, src_off, tgt, tgt_off, l_off, l_src, l_tgt, null_f, null_e):
    n = len(src_off) - 1
    total = len(l_src) + len(src) + len(tgt)
    out_f = np.empty(total, np.int64)
    out_e = np.empty(total, np.int64)
    k = 0
    for s in range(n):
        nf = src_off[s + 1] - src_off[s]
        ne = tgt_off[s + 1] - tgt_off[s]
        f_al = np.zeros(nf, np.bool_)
        e_al = np.zeros(ne, np.bool_)
        for q in range(l_off[s], l_off[s + 1]):
            i = l_src[q]
            j = l_tgt[q]
            f_al[i] = True
            e_al[j] = True
            out_f[k] = src[src_off[s] + i]
            out_e[k] = tgt[tgt_off[s] + j]
            k += 1
        for i in range(nf):
            if not f_al[i]:
                out_f[k] = src[src_off[s] + i]
                out_e[k] = null_e
                k += 1
        for j in range(ne):
            if not e_al[j]:
                out_f[k] = null_f
                out_e[k] = tgt[tgt_off[s] + j]
                k += 1
    return out_f[:k], out_e[:k]


def lexical_table(corpus: TokenizedCorpus, links: Links) -> LexicalTable:
    """Word translation probabilities w(e|f) and w(f|e) from a symmetrized alignment."""
    n_src, n_tgt = len(corpus.src_vocab), len(corpus.tgt_vocab)
    f, e = _link_words(
        corpus.src, corpus.src_off, corpus.tgt, corpus.tgt_off, links.offsets, links.src, links.tgt, n_src, n_tgt
    )
    keys, counts = np.unique(f * (n_tgt + 1) + e, return_counts=True)
    kf, ke = keys // (n_tgt + 1), keys % (n_tgt + 1)
    c_f = np.bincount(f, minlength=n_src + 1)
    c_e = np.bincount(e, minlength=n_tgt + 1)
    return LexicalTable(keys, counts / c_f[kf], counts / c_e[ke], n_src, n_tgt)


@numba.njit(cache=True)
def _lookup(keys, values, key):
    k = np.searchsorted(keys, key)
    if k < len(keys) and keys[k] == key:
        return values[k]
    return 0.0


@numba.njit(cache=True)
def _lex_kernel(src, src_off, tgt, tgt_off, sent, fs, fl, es, el, masks, keys, w_ef, w_fe, n_src, n_tgt):
    n = len(sent)
    lex_ef = np.empty(n)
    lex_fe = np.empty(n)
    stride = n_tgt + 1
    for p in range(n):
        f0 = src_off[sent[p]] + fs[p]
        e0 = tgt_off[sent[p]] + es[p]
        mask = masks[p]
        prod = 1.0
        for j in range(el[p]):
            e = tgt[e0 + j]
            total = 0.0
            links = 0
            for i in range(fl[p]):
                if (mask >> np.uint64(8 * i + j)) & np.uint64(1):
                    total += _lookup(keys, w_ef, src[f0 + i] * stride + e)
                    links += 1
            if links == 0:
                prod *= _lookup(keys, w_ef, n_src * stride + e)
            else:
                prod *= total / links
        lex_ef[p] = prod
        prod = 1.0
        for i in range(fl[p]):
            f = src[f0 + i]
            total = 0.0
            links = 0
            for j in range(el[p]):
                if (mask >> np.uint64(8 * i + j)) & np.uint64(1):
                    total += _lookup(keys, w_fe, f * stride + tgt[e0 + j])
                    links += 1
            if links == 0:
                prod *= _lookup(keys, w_fe, f * stride + n_tgt)
            else:
                prod *= total / links
        lex_fe[p] = prod
    return lex_ef, lex_fe


@dataclasses.dataclass
class PhraseScores:
    """The four Moses scores of each pair, in Moses's column order."""

    p_f_given_e: np.ndarray
    lex_f_given_e: np.ndarray
    p_e_given_f: np.ndarray
    lex_e_given_f: np.ndarray

    def matrix(self) -> np.ndarray:
        return np.column_stack([self.p_f_given_e, self.lex_f_given_e, self.p_e_given_f, self.lex_e_given_f])


def score_pairs(corpus: TokenizedCorpus, pairs: PhrasePairs, lex: LexicalTable) -> PhraseScores:
    """p(f|e), lex(f|e), p(e|f), lex(e|f) of every pair (see the module docstring)."""
    lex_ef, lex_fe = _lex_kernel(
        corpus.src,
        corpus.src_off,
        corpus.tgt,
        corpus.tgt_off,
        pairs.rep_sent,
        pairs.rep_f_start,
        pairs.rep_f_len,
        pairs.rep_e_start,
        pairs.rep_e_len,
        pairs.mask,
        lex.keys,
        lex.w_e_given_f,
        lex.w_f_given_e,
        lex.n_src,
        lex.n_tgt,
    )
    joint = pairs.joint.astype(np.float64)
    return PhraseScores(joint / pairs.tgt_count, lex_fe, joint / pairs.src_count, lex_ef)


def table_limit(pairs: PhrasePairs, scores: PhraseScores, limit: int) -> np.ndarray:
    """Indices of the pairs kept when each source phrase keeps its ``limit`` best (0 = keep all),
    ordered by source id and then rank."""
    order = np.lexsort((pairs.tgt_id, -scores.p_f_given_e, -scores.p_e_given_f, pairs.src_id))
    if limit <= 0:
        return order
    src_sorted = pairs.src_id[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = src_sorted[1:] != src_sorted[:-1]
    group_start = np.maximum.accumulate(np.where(start, np.arange(len(order)), 0))
    rank = np.arange(len(order)) - group_start
    return order[rank < limit]
