"""BLEU sufficient statistics, computed for many hypotheses at once.

Layout of one statistics row (float64, the layout of sacrebleu's ``_compute_segment_statistics``):

=========  =====================================================================
column     meaning
=========  =====================================================================
0          hypothesis length in tokens (``HYP_LEN``)
1          effective reference length (``REF_LEN``; closest / shortest / average)
2 .. 5     clipped matches of 1- to 4-grams (``MATCHES``)
6 .. 9     hypothesis 1- to 4-gram counts (``TOTALS``)
=========  =====================================================================

Clipping follows Papineni et al. (2002): a hypothesis n-gram is credited at most as many times as
it occurs in the reference where it occurs most often. The ``closest`` rule picks the reference
length nearest the hypothesis length, the shorter one on ties (sacrebleu, Moses ``--closest``);
``shortest`` is the IBM/NIST rule; ``average`` is Moses's ``--average``.

Speed: tokens become integer ids (pandas.factorize), n-grams are packed exactly into 64-bit keys
(16 bits per token; when a corpus has 65,535 types or more, ids are renumbered per sentence, where
they always fit), and a numba kernel counts clipped matches with sorted arrays per sentence.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numba
import numpy as np
import pandas as pd

from smtlib.errors import InputError

NGRAM_ORDER = 4
HYP_LEN = 0
REF_LEN = 1
MATCHES = slice(2, 2 + NGRAM_ORDER)
TOTALS = slice(2 + NGRAM_ORDER, 2 + 2 * NGRAM_ORDER)
STATS_WIDTH = 2 + 2 * NGRAM_ORDER

REF_LENGTH_RULES = ("closest", "shortest", "average")
TOKENIZERS = ("none", "13a", "intl", "char", "zh", "ja-mecab", "ko-mecab", "flores101", "flores200")
_RULE_CODE = {"closest": 0, "shortest": 1, "average": 2}


@dataclasses.dataclass(frozen=True)
class BleuSettings:
    """How text becomes statistics: the options that change BLEU's value.

    Attributes
    ----------
    tokenize
        sacrebleu tokenizer name; ``none`` splits on whitespace only (pre-tokenized MT output).
    lowercase
        Lowercase hypotheses and references before tokenizing (sacrebleu's ``-lc``).
    ref_length
        Effective reference length rule: ``closest`` (sacrebleu and Moses default), ``shortest``
        or ``average``.
    """

    tokenize: str = "none"
    lowercase: bool = False
    ref_length: str = "closest"

    def __post_init__(self) -> None:
        if self.ref_length not in REF_LENGTH_RULES:
            raise InputError(f"unknown reference-length rule {self.ref_length!r} (choose from {REF_LENGTH_RULES})")
        if self.tokenize not in TOKENIZERS:
            raise InputError(f"unknown tokenizer {self.tokenize!r} (choose from {TOKENIZERS})")

    def signature(self) -> str:
        """The part of a score's signature that these settings determine."""
        case = "lc" if self.lowercase else "mixed"
        return f"case:{case}|tok:{self.tokenize}|reflen:{self.ref_length}"


@functools.lru_cache(maxsize=None)
def _tokenizer(name: str):
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(tokenize=name).tokenizer


def preprocess(segments: Sequence[str], settings: BleuSettings) -> list[str]:
    """Lowercase and tokenize as sacrebleu's ``BLEU._preprocess_segment`` does."""
    if settings.lowercase:
        segments = [s.lower() for s in segments]
    if settings.tokenize == "none":
        return list(segments)
    tok = _tokenizer(settings.tokenize)
    return [tok(s.rstrip()) for s in segments]


def _token_arrays(segments: list[str], codes: dict | None = None) -> tuple[list[list[str]], np.ndarray]:
    split = [s.split() for s in segments]
    lengths = np.fromiter((len(t) for t in split), dtype=np.int64, count=len(split))
    offsets = np.zeros(len(split) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return split, offsets


def compute_stats(
    hypotheses: Sequence[str],
    sentence_ids: np.ndarray | Sequence[int],
    references: Sequence[Sequence[str]],
    settings: BleuSettings = BleuSettings(),
) -> np.ndarray:
    """Statistics rows for every hypothesis.

    Parameters
    ----------
    hypotheses
        N hypothesis strings.
    sentence_ids
        For each hypothesis, the 0-based id of its source sentence (indexes the references).
    references
        One sequence per reference set, each with one segment per sentence id.
    settings
        Tokenization, case and reference-length rule.

    Returns
    -------
    numpy.ndarray
        ``(N, STATS_WIDTH)`` float64 array in the layout of this module's docstring.
    """
    if not references:
        raise InputError("no references given")
    n_sent = len(references[0])
    for r, ref_set in enumerate(references):
        if len(ref_set) != n_sent:
            raise InputError(f"reference set {r + 1} has {len(ref_set)} segments, the first has {n_sent}")
    sentence_ids = np.asarray(sentence_ids, dtype=np.int64)
    if len(sentence_ids) != len(hypotheses):
        raise InputError(f"{len(hypotheses)} hypotheses but {len(sentence_ids)} sentence ids")
    if len(sentence_ids) and (sentence_ids.min() < 0 or sentence_ids.max() >= n_sent):
        bad = int(sentence_ids.max() if sentence_ids.max() >= n_sent else sentence_ids.min())
        raise InputError(f"sentence id {bad} has no reference (references have {n_sent} segments)")
    n_refs = len(references)
    hyp_text = preprocess(hypotheses, settings)
    # References interleaved: reference r of sentence s is segment s * n_refs + r.
    ref_text = preprocess([references[r][s] for s in range(n_sent) for r in range(n_refs)], settings)
    hyp_tokens, hyp_offsets = _token_arrays(hyp_text)
    ref_tokens, ref_offsets = _token_arrays(ref_text)
    flat = [tok for toks in hyp_tokens for tok in toks] + [tok for toks in ref_tokens for tok in toks]
    codes, uniques = pd.factorize(pd.array(flat, dtype=object) if flat else np.array([], dtype=object), sort=False)
    codes = codes.astype(np.int64) + 1  # 0 is never a token: keeps packed keys of different lengths apart
    n_hyp_tok = int(hyp_offsets[-1])
    hyp_ids = codes[:n_hyp_tok]
    ref_ids = codes[n_hyp_tok:]
    # Hypotheses grouped by sentence for the kernel; results put back in input order.
    order = np.argsort(sentence_ids, kind="stable")
    sent_offsets = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(np.bincount(sentence_ids, minlength=n_sent), out=sent_offsets[1:])
    renumber = len(uniques) >= 65535
    stats_sorted = _stats_kernel(
        hyp_ids, hyp_offsets, order, sent_offsets, ref_ids, ref_offsets, n_refs, _RULE_CODE[settings.ref_length], renumber
    )
    stats = np.empty_like(stats_sorted)
    stats[order] = stats_sorted
    return stats


@numba.njit(cache=True)
def _pack(tokens: np.ndarray, start: int, n: int) -> np.int64:
    key = np.int64(0)
    for j in range(n):
        key = (key << np.int64(16)) | np.int64(tokens[start + j])
    return key


@numba.njit(cache=True)
def _ngram_keys(tokens: np.ndarray, n: int) -> np.ndarray:
    count = max(len(tokens) - n + 1, 0)
    keys = np.empty(count, dtype=np.int64)
    for i in range(count):
        keys[i] = _pack(tokens, i, n)
    return keys


@numba.njit(cache=True)
def _count_sorted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique keys of a sorted array and their counts."""
    n = len(keys)
    uniq = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if m > 0 and uniq[m - 1] == keys[i]:
            counts[m - 1] += 1
        else:
            uniq[m] = keys[i]
            counts[m] = 1
            m += 1
    return uniq[:m], counts[:m]


@numba.njit(cache=True)
def _stats_kernel(hyp_ids, hyp_offsets, order, sent_offsets, ref_ids, ref_offsets, n_refs, rule, renumber):
    n_hyp = len(order)
    n_sent = len(sent_offsets) - 1
    out = np.zeros((n_hyp, 10), dtype=np.float64)
    for s in range(n_sent):
        lo, hi = sent_offsets[s], sent_offsets[s + 1]
        if lo == hi:
            continue
        ref_lo = ref_offsets[s * n_refs]
        ref_hi = ref_offsets[(s + 1) * n_refs]
        # Local vocabulary when global ids would not fit in 16 bits.
        local = np.empty(0, dtype=np.int64)
        if renumber:
            total = ref_hi - ref_lo
            for k in range(lo, hi):
                h = order[k]
                total += hyp_offsets[h + 1] - hyp_offsets[h]
            pool = np.empty(total, dtype=np.int64)
            p = 0
            for t in range(ref_lo, ref_hi):
                pool[p] = ref_ids[t]
                p += 1
            for k in range(lo, hi):
                h = order[k]
                for t in range(hyp_offsets[h], hyp_offsets[h + 1]):
                    pool[p] = hyp_ids[t]
                    p += 1
            local = np.unique(pool)
            if len(local) >= 65535:
                raise ValueError("more than 65,534 distinct tokens in one sentence's hypotheses and references")
        # Reference n-gram counts, max over references, per order.
        ref_lens = np.empty(n_refs, dtype=np.int64)
        ref_keys = []
        ref_counts = []
        for n in range(1, 5):
            all_keys = np.empty(0, dtype=np.int64)
            all_counts = np.empty(0, dtype=np.int64)
            for r in range(n_refs):
                a, b = ref_offsets[s * n_refs + r], ref_offsets[s * n_refs + r + 1]
                toks = ref_ids[a:b]
                if renumber:
                    toks = np.searchsorted(local, toks) + 1
                ref_lens[r] = b - a
                keys = np.sort(_ngram_keys(toks, n))
                u, c = _count_sorted(keys)
                all_keys = np.concatenate((all_keys, u))
                all_counts = np.concatenate((all_counts, c))
            idx = np.argsort(all_keys, kind="mergesort")
            sk = all_keys[idx]
            sc = all_counts[idx]
            m = 0
            uk = np.empty(len(sk), dtype=np.int64)
            uc = np.empty(len(sk), dtype=np.int64)
            for i in range(len(sk)):
                if m > 0 and uk[m - 1] == sk[i]:
                    if sc[i] > uc[m - 1]:
                        uc[m - 1] = sc[i]
                else:
                    uk[m] = sk[i]
                    uc[m] = sc[i]
                    m += 1
            ref_keys.append(uk[:m])
            ref_counts.append(uc[:m])
        for k in range(lo, hi):
            h = order[k]
            toks = hyp_ids[hyp_offsets[h] : hyp_offsets[h + 1]]
            if renumber:
                toks = np.searchsorted(local, toks) + 1
            hyp_len = len(toks)
            out[k, 0] = hyp_len
            # Effective reference length.
            if rule == 0:
                best = ref_lens[0]
                for r in range(1, n_refs):
                    d_new = abs(hyp_len - ref_lens[r])
                    d_old = abs(hyp_len - best)
                    if d_new < d_old or (d_new == d_old and ref_lens[r] < best):
                        best = ref_lens[r]
                out[k, 1] = best
            elif rule == 1:
                out[k, 1] = ref_lens.min()
            else:
                out[k, 1] = ref_lens.sum() / n_refs
            for n in range(1, 5):
                keys = np.sort(_ngram_keys(toks, n))
                out[k, 5 + n] = len(keys)
                u, c = _count_sorted(keys)
                rk = ref_keys[n - 1]
                rc = ref_counts[n - 1]
                matched = 0
                if len(rk) > 0:
                    pos = np.searchsorted(rk, u)
                    for i in range(len(u)):
                        if pos[i] < len(rk) and rk[pos[i]] == u[i]:
                            matched += min(c[i], rc[pos[i]])
                out[k, 1 + n] = matched
    return out
