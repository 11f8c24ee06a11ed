"""Phrase-pair extraction consistent with a word alignment (Koehn, Och & Marcu 2003, §3.1; Och & Ney
2004), with the word-based orientations of the lexicalized reordering model (Koehn et al. 2005;
Moses's ``extract`` with ``--model wbe-msd``).

A phrase pair (f_s..f_e, e_s..e_t) is extracted when it holds at least one alignment point and no
word inside it is aligned to a word outside it; unaligned source words at its edges give further
pairs (Moses's ``extract``: loop over target spans, project to the source, then widen the source span
over unaligned words). Both sides are at most ``max_length`` words (7, as in Cherry & Foster 2012,
§4.2).

Speed: the corpus becomes integer arrays; one numba kernel extracts every occurrence (sentence, the
two spans, the alignment inside the pair as a bit mask, the two orientations). Phrases get exact
integer ids level by level: the id of every corpus substring of length n is the rank of
``(id of its first n-1 words, n-th word)``, so equal word sequences get equal ids without hashing.
Occurrences are grouped into distinct pairs with one ``numpy.unique`` over ``src_id * n_tgt + tgt_id``.

Orientations (Moses ``getOrientWordModel``), for the pair's source span ``[sF, eF]`` and target span
``[sE, eE]``, with ``A(i, j)`` true when source word i and target word j are aligned, and the
virtual points (-1, -1) and (|f|, |e|) always aligned:

* previous: monotone if ``A(sF-1, sE-1)``, swap if ``A(eF+1, sE-1)``, else discontinuous;
* next: monotone if ``A(eF+1, eE+1)``, swap if ``A(sF-1, eE+1)``, else discontinuous.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numba
import numpy as np
import pandas as pd

from smtlib.errors import InputError
from smtlib.system.align import Links

MAX_SUPPORTED_LENGTH = 8  # the alignment inside a pair is a 64-bit mask: 8 x 8 positions
MONO, SWAP, DISC = 0, 1, 2
NULL_WORD = -1


@dataclasses.dataclass
class TokenizedCorpus:
    """Both sides as integer ids: sentence ``s`` of the source is ``src[src_off[s]:src_off[s+1]]``."""

    src: np.ndarray  # int32 token ids
    src_off: np.ndarray  # int64
    tgt: np.ndarray
    tgt_off: np.ndarray
    src_vocab: np.ndarray  # object array of str, id -> word
    tgt_vocab: np.ndarray

    @property
    def n_sentences(self) -> int:
        return len(self.src_off) - 1

    @property
    def src_len(self) -> np.ndarray:
        return np.diff(self.src_off)

    @property
    def tgt_len(self) -> np.ndarray:
        return np.diff(self.tgt_off)


def _encode_side(lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tokens: list[str] = []
    lengths = np.empty(len(lines), dtype=np.int64)
    for k, line in enumerate(lines):
        words = line.split()
        lengths[k] = len(words)
        tokens.extend(words)
    codes, uniques = pd.factorize(pd.Series(tokens, dtype=object), sort=False)
    offsets = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return codes.astype(np.int32), offsets, np.asarray(uniques, dtype=object)


def encode_corpus(src_lines: Sequence[str], tgt_lines: Sequence[str]) -> TokenizedCorpus:
    """Integer-encode a tokenized parallel corpus (ids in order of first appearance)."""
    if len(src_lines) != len(tgt_lines):
        raise InputError(f"source has {len(src_lines)} lines, target {len(tgt_lines)}")
    s, so, sv = _encode_side(src_lines)
    t, to, tv = _encode_side(tgt_lines)
    return TokenizedCorpus(s, so, t, to, sv, tv)


@numba.njit(cache=True)
def _is_aligned(a, fi, ei, nf, ne):
    if fi == -1 and ei == -1:
        return True
    if fi <= -1 or ei <= -1:
        return False
    if fi == nf and ei == ne:
        return True
    if fi >= nf or ei >= ne:
        return False
    return a[fi, ei]


@numba.njit(cache=True)
def _extract_kernel(src_off, tgt_off, l_off, l_src, l_tgt, max_len, fill, o_sent, o_fs, o_fe, o_es, o_ee, o_mask, o_prev, o_next):
    n_sent = len(src_off) - 1
    count = 0
    for s in range(n_sent):
        nf = src_off[s + 1] - src_off[s]
        ne = tgt_off[s + 1] - tgt_off[s]
        a = np.zeros((nf, ne), np.bool_)
        aligned_f = np.zeros(nf, np.int64)
        for k in range(l_off[s], l_off[s + 1]):
            a[l_src[k], l_tgt[k]] = True
            aligned_f[l_src[k]] += 1
        used = np.empty(nf, np.int64)
        for start_e in range(ne):
            for end_e in range(start_e, min(start_e + max_len, ne)):
                min_f = nf
                max_f = -1
                for i in range(nf):
                    used[i] = aligned_f[i]
                for j in range(start_e, end_e + 1):
                    for i in range(nf):
                        if a[i, j]:
                            if i < min_f:
                                min_f = i
                            if i > max_f:
                                max_f = i
                            used[i] -= 1
                if max_f < 0 or max_f - min_f >= max_len:
                    continue
                consistent = True
                for i in range(min_f, max_f + 1):
                    if used[i] > 0:
                        consistent = False
                        break
                if not consistent:
                    continue
                start_f = min_f
                while start_f >= 0 and start_f > max_f - max_len and (start_f == min_f or aligned_f[start_f] == 0):
                    end_f = max_f
                    while end_f < nf and end_f < start_f + max_len and (end_f == max_f or aligned_f[end_f] == 0):
                        if fill:
                            mask = np.uint64(0)
                            for i in range(start_f, end_f + 1):
                                for j in range(start_e, end_e + 1):
                                    if a[i, j]:
                                        mask |= np.uint64(1) << np.uint64((i - start_f) * 8 + (j - start_e))
                            if _is_aligned(a, start_f - 1, start_e - 1, nf, ne):
                                prev = MONO
                            elif _is_aligned(a, end_f + 1, start_e - 1, nf, ne):
                                prev = SWAP
                            else:
                                prev = DISC
                            if _is_aligned(a, end_f + 1, end_e + 1, nf, ne):
                                nxt = MONO
                            elif _is_aligned(a, start_f - 1, end_e + 1, nf, ne):
                                nxt = SWAP
                            else:
                                nxt = DISC
                            o_sent[count] = s
                            o_fs[count] = start_f
                            o_fe[count] = end_f
                            o_es[count] = start_e
                            o_ee[count] = end_e
                            o_mask[count] = mask
                            o_prev[count] = prev
                            o_next[count] = nxt
                        count += 1
                        end_f += 1
                    start_f -= 1
    return count


@dataclasses.dataclass
class Occurrences:
    """Every extracted phrase-pair occurrence (parallel arrays)."""

    sent: np.ndarray
    f_start: np.ndarray
    f_end: np.ndarray  # inclusive
    e_start: np.ndarray
    e_end: np.ndarray
    mask: np.ndarray  # uint64, bit 8*i + j: source word i of the pair aligned to target word j
    prev: np.ndarray  # int8 orientation with respect to the previous phrase
    next: np.ndarray  # int8 orientation with respect to the next phrase

    def __len__(self) -> int:
        return len(self.sent)


def extract_occurrences(corpus: TokenizedCorpus, links: Links, max_length: int = 7) -> Occurrences:
    """All phrase-pair occurrences of a word-aligned corpus (see the module docstring)."""
    if not 1 <= max_length <= MAX_SUPPORTED_LENGTH:
        raise InputError(f"--max-phrase-length must be between 1 and {MAX_SUPPORTED_LENGTH}, got {max_length}")
    if links.n_sentences != corpus.n_sentences:
        raise InputError(f"alignment has {links.n_sentences} sentences, corpus {corpus.n_sentences}")
    args = (corpus.src_off, corpus.tgt_off, links.offsets, links.src, links.tgt, max_length)
    e64, e8, eu = np.empty(0, np.int64), np.empty(0, np.int8), np.empty(0, np.uint64)
    n = _extract_kernel(*args, False, e64, e64, e64, e64, e64, eu, e8, e8)
    out = Occurrences(*(np.empty(n, np.int64) for _ in range(5)), np.empty(n, np.uint64), np.empty(n, np.int8), np.empty(n, np.int8))
    _extract_kernel(*args, True, out.sent, out.f_start, out.f_end, out.e_start, out.e_end, out.mask, out.prev, out.next)
    return out


def substring_ids(tokens: np.ndarray, offsets: np.ndarray, max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact ids of every corpus substring of up to ``max_length`` words.

    Returns
    -------
    ids, base
        ``ids[n-1, p]`` is the id (among phrases of length n) of the n words starting at corpus position
        ``p`` (-1 where they would cross a sentence end); ``base[n-1]`` offsets length-n ids so that
        ``base[n-1] + ids[n-1, p]`` is unique over all lengths.
    """
    total = len(tokens)
    sent_end = np.repeat(offsets[1:], np.diff(offsets))  # end offset of each position's sentence
    ids = np.full((max_length, total), -1, dtype=np.int64)
    base = np.zeros(max_length + 1, dtype=np.int64)
    ids[0] = tokens
    base[1] = int(tokens.max()) + 1 if total else 0
    vocab = base[1]
    for n in range(2, max_length + 1):
        valid = np.nonzero(np.arange(total) + n <= sent_end)[0]
        if len(valid) == 0:
            base[n] = base[n - 1]
            continue
        keys = ids[n - 2, valid] * vocab + tokens[valid + n - 1]
        uniq, inverse = np.unique(keys, return_inverse=True)
        ids[n - 1, valid] = inverse
        base[n] = base[n - 1] + len(uniq)
    return ids, base[:-1]


@dataclasses.dataclass
class PhrasePairs:
    """Distinct phrase pairs with their counts (Moses's ``extract`` + ``score`` statistics).

    ``rep_*`` locate one occurrence of each pair in the corpus (to spell its words).
    """

    src_id: np.ndarray
    tgt_id: np.ndarray
    joint: np.ndarray  # c(f, e): number of occurrences
    src_count: np.ndarray  # c(f): occurrences of any pair with this source phrase
    tgt_count: np.ndarray  # c(e)
    mask: np.ndarray  # most frequent alignment inside the pair (ties: the smallest mask)
    rep_sent: np.ndarray
    rep_f_start: np.ndarray
    rep_f_len: np.ndarray
    rep_e_start: np.ndarray
    rep_e_len: np.ndarray
    orient_prev: np.ndarray  # (n, 3) counts of mono/swap/disc
    orient_next: np.ndarray
    n_occurrences: int = 0

    def __len__(self) -> int:
        return len(self.src_id)

    def select(self, keep: np.ndarray) -> PhrasePairs:
        """The pairs at ``keep`` (indices or a Boolean mask), counts unchanged."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return PhrasePairs(
            **{k: (v[keep] if isinstance(v, np.ndarray) else v) for k, v in fields.items()}
        )


def collect_pairs(corpus: TokenizedCorpus, occ: Occurrences, max_length: int = 7) -> PhrasePairs:
    """Group occurrences into distinct pairs with joint, marginal and orientation counts."""
    s_ids, s_base = substring_ids(corpus.src, corpus.src_off, max_length)
    t_ids, t_base = substring_ids(corpus.tgt, corpus.tgt_off, max_length)
    f_len = occ.f_end - occ.f_start + 1
    e_len = occ.e_end - occ.e_start + 1
    f_pos = corpus.src_off[occ.sent] + occ.f_start
    e_pos = corpus.tgt_off[occ.sent] + occ.e_start
    src_id = s_base[f_len - 1] + s_ids[f_len - 1, f_pos]
    tgt_id = t_base[e_len - 1] + t_ids[e_len - 1, e_pos]
    n_tgt = int(tgt_id.max()) + 1 if len(tgt_id) else 1
    keys = src_id * n_tgt + tgt_id
    # Sorting by (pair, mask) gives both the pair groups and the most frequent mask per pair.
    order = np.lexsort((occ.mask, keys))
    k_sorted = keys[order]
    m_sorted = occ.mask[order]
    new_pair = np.ones(len(order), dtype=bool)
    new_pair[1:] = k_sorted[1:] != k_sorted[:-1]
    pair_start = np.nonzero(new_pair)[0]
    pair_of_sorted = np.cumsum(new_pair) - 1
    n_pairs = len(pair_start)
    joint = np.diff(np.append(pair_start, len(order)))
    new_run = new_pair.copy()
    new_run[1:] |= m_sorted[1:] != m_sorted[:-1]
    run_start = np.nonzero(new_run)[0]
    run_len = np.diff(np.append(run_start, len(order)))
    run_pair = pair_of_sorted[run_start]
    # Highest run per pair; among equal runs the first one (smallest mask) wins.
    best = np.lexsort((run_start, -run_len, run_pair))
    first_of_pair = np.ones(len(best), dtype=bool)
    first_of_pair[1:] = run_pair[best][1:] != run_pair[best][:-1]
    mask = m_sorted[run_start[best[first_of_pair]]]
    rep = order[pair_start]  # the first occurrence (in corpus order) of each pair
    pair_src = src_id[rep]
    pair_tgt = tgt_id[rep]
    _, s_inv = np.unique(pair_src, return_inverse=True)
    src_count = np.bincount(s_inv, weights=joint)[s_inv].astype(np.int64)
    _, t_inv = np.unique(pair_tgt, return_inverse=True)
    tgt_count = np.bincount(t_inv, weights=joint)[t_inv].astype(np.int64)
    pair_of_occ = np.empty(len(order), dtype=np.int64)
    pair_of_occ[order] = pair_of_sorted
    prev = np.bincount(pair_of_occ * 3 + occ.prev, minlength=3 * n_pairs).reshape(n_pairs, 3)
    nxt = np.bincount(pair_of_occ * 3 + occ.next, minlength=3 * n_pairs).reshape(n_pairs, 3)
    return PhrasePairs(
        src_id=pair_src,
        tgt_id=pair_tgt,
        joint=joint.astype(np.int64),
        src_count=src_count,
        tgt_count=tgt_count,
        mask=mask,
        rep_sent=occ.sent[rep],
        rep_f_start=occ.f_start[rep],
        rep_f_len=f_len[rep],
        rep_e_start=occ.e_start[rep],
        rep_e_len=e_len[rep],
        orient_prev=prev.astype(np.int64),
        orient_next=nxt.astype(np.int64),
        n_occurrences=len(occ),
    )


def mask_to_pairs(mask: int) -> list[tuple[int, int]]:
    """The ``(i, j)`` points of an alignment mask, sorted by (i, j)."""
    return [(b // 8, b % 8) for b in range(64) if (mask >> b) & 1]


def mask_to_text(mask: int) -> str:
    """Moses's within-phrase alignment field, e.g. ``0-0 1-2 2-1``."""
    return " ".join(f"{i}-{j}" for i, j in mask_to_pairs(mask))
