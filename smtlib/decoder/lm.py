"""A compact back-off n-gram language model for the decoder's compiled search loop.

ARPA files (plain or gzip) are read into one open-addressing hash table of 64-bit n-gram keys with
a log-probability and a back-off weight per entry, queried from numba code. The query follows the
back-off recursion of Katz (1987) as the ARPA format defines it::

    log p(w | h_1..h_L) = prob(h_1..h_{m-1} w) + sum_{j=m}^{L} bo(h_{L-j+1}..h_L)

where ``h_1..h_{m-1} w`` is the longest n-gram of the model that ends the history. Like KenLM
(Heafield 2011, §4.1 "state minimization"), the state kept after a word is the shortest suffix of
the history that can still change a future probability: words beyond the longest matched n-gram are
dropped, and so is a matched n-gram that is the context of no longer n-gram and has back-off 0. Two
hypotheses with equal minimized states score every continuation identically, which is what makes
recombination on the state exact.

Scores are natural logarithms: the ARPA log10 values are multiplied by ln(10) when the table is
built, which is how Moses reports LM feature values (``LM0=`` in n-best lists is
``ln(10) * sum log10 p``). A word outside the vocabulary is scored as ``<unk>``; an ARPA file without
a ``<unk>`` unigram gets one with log10 probability -100, KenLM's default (reading the file:
:mod:`smtlib.decoder.arpa`).

The hash of an n-gram is built from its *last* word backwards (newest word first), so the decoder
finds the longest match of ``h w`` by extending one word to the left per probe.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numba
import numpy as np

from smtlib.decoder.arpa import ArpaGrams, parse_arpa
from smtlib.errors import InputError

LN10 = math.log(10.0)
_SEED = np.uint64(0xCBF29CE484222325)
_PRIME = np.uint64(0x100000001B3)


@numba.njit(cache=True, inline="always")
def hash_step(h: np.uint64, word: np.int64) -> np.uint64:
    """FNV-1a style step: fold one word id into the running n-gram hash."""
    return (h ^ np.uint64(word + 1)) * np.uint64(0x100000001B3)


@numba.njit(cache=True, inline="always")
def hash_final(h: np.uint64) -> np.uint64:
    """MurmurHash3's 64-bit finalizer with bit 1 set (0 marks an empty slot) and bit 0 clear (it
    holds the entry's "extendable" flag in the table)."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return (h | np.uint64(2)) & ~np.uint64(1)


@numba.njit(cache=True)
def _keys_for(ids: np.ndarray) -> np.ndarray:
    """Keys of the n-grams in the rows of ``ids`` (oldest word first, hashed newest first)."""
    n, m = ids.shape
    out = np.empty(n, dtype=np.uint64)
    for r in range(n):
        h = np.uint64(0xCBF29CE484222325)
        for c in range(m - 1, -1, -1):
            h = hash_step(h, ids[r, c])
        out[r] = hash_final(h)
    return out


@numba.njit(cache=True)
def _insert_all(keys, probs, bos, ext, tab, tabf):
    mask = np.uint64(tab.shape[0] - 1)
    for i in range(keys.shape[0]):
        k = keys[i]
        slot = k & mask
        while tab[slot, 0] != 0 and (tab[slot, 0] & ~np.uint64(1)) != k:
            slot = (slot + np.uint64(1)) & mask
        tab[slot, 0] = k | np.uint64(1) if ext[i] else k
        tabf[slot, 2] = probs[i]
        tabf[slot, 3] = bos[i]


@numba.njit(cache=True, inline="always")
def table_find(tab: np.ndarray, off: np.int64, mask: np.uint64, key: np.uint64) -> np.int64:
    """Row of ``key`` in the table region starting at ``off``, or -1.

    The table is one ``(size, 2)`` uint64 array (key with the flag in bit 0, then the float32
    probability and back-off), so a probe touches one 16-byte row: one cache line.
    """
    slot = key & mask
    while True:
        k = tab[off + np.int64(slot), 0]
        if (k & ~np.uint64(1)) == key:
            return off + np.int64(slot)
        if k == 0:
            return -1
        slot = (slot + np.uint64(1)) & mask


@numba.njit(cache=True, inline="always")
def lm_score_word(tab, tabf, off, mask, order, unk, ctx, ctx_bo, ctx_len, word, out_ctx, out_bo, scratch):
    """Score one word after a minimized state; write the new state.

    Parameters
    ----------
    tab, tabf
        The hash table (see :func:`table_find`) and its float32 view (column 2 the natural-log
        probability, column 3 the back-off).
    off, mask, order, unk
        This LM's region of the table, its size mask, its order and its ``<unk>`` id.
    ctx, ctx_bo, ctx_len
        The state: up to ``order-1`` word ids (oldest first) and the back-off of each suffix
        (``ctx_bo[j]`` is the back-off of the last ``j+1`` words).
    word
        The LM id of the word (already mapped to ``unk`` if unknown).
    out_ctx, out_bo
        Arrays of at least ``order-1`` entries receiving the new state (they must not alias ``ctx``).
    scratch
        A boolean work array of at least ``order`` entries.

    Returns
    -------
    (log_prob, new_len)
    """
    h = hash_step(np.uint64(0xCBF29CE484222325), word)
    slot = table_find(tab, off, mask, hash_final(h))
    if slot < 0:
        word = unk
        h = hash_step(np.uint64(0xCBF29CE484222325), word)
        slot = table_find(tab, off, mask, hash_final(h))
    prob = np.float64(tabf[slot, 2])
    matched = 1
    # back-offs and "extendable" flags of the matched n-grams "... w" of length 1..matched
    out_bo[0] = tabf[slot, 3]
    scratch[0] = (tab[slot, 0] & np.uint64(1)) != 0
    limit = min(ctx_len, order - 1)
    for i in range(1, limit + 1):
        h = hash_step(h, ctx[ctx_len - i])
        s = table_find(tab, off, mask, hash_final(h))
        if s < 0:
            break
        prob = np.float64(tabf[s, 2])
        if i < order - 1:
            out_bo[i] = tabf[s, 3]
            scratch[i] = (tab[s, 0] & np.uint64(1)) != 0
        matched = i + 1
    # contexts longer than the match back off
    for j in range(matched - 1, ctx_len):
        prob += np.float64(ctx_bo[j])
    new_len = min(matched, order - 1)
    while new_len > 0 and not scratch[new_len - 1]:
        new_len -= 1
    # new context: (ctx + [word])[-new_len:]
    for j in range(new_len - 1):
        out_ctx[j] = ctx[ctx_len - (new_len - 1) + j]
    if new_len > 0:
        out_ctx[new_len - 1] = word
    return prob, new_len


@dataclasses.dataclass
class NGramLM:
    """One ARPA model held as a hash table (see the module docstring).

    Attributes
    ----------
    order
        The n-gram order.
    vocab
        Word -> id; ``<unk>`` is id 0, ``<s>`` and ``</s>`` are present.
    tab, tabf
        The hash table (:func:`table_find`): per row the 64-bit key (0 = empty) whose bit 0 says
        whether the entry must be kept in a state (it is a context of a longer n-gram or has a
        non-zero back-off), then the natural-log probability and back-off as float32 (``tabf``, a
        float32 view of the same memory, columns 2 and 3).
    max_word_prob
        For every word id, the highest natural-log probability of any n-gram ending in it plus the
        most the back-offs can add (a context-free upper bound on ``log p(w | h)``).
    n_ngrams
        Entries per order.
    """

    order: int
    vocab: dict[str, int]
    tab: np.ndarray
    tabf: np.ndarray
    max_word_prob: np.ndarray
    n_ngrams: list[int]

    @property
    def mask(self) -> np.uint64:
        return np.uint64(self.tab.shape[0] - 1)

    @property
    def unk(self) -> int:
        return 0

    def word_id(self, word: str) -> int:
        return self.vocab.get(word, 0)

    def score_sentence(self, words: list[str], *, bos: bool = True, eos: bool = True) -> float:
        """Natural-log probability of a sentence (slow path, for checks and tests)."""
        ctx = np.zeros(max(self.order - 1, 1), dtype=np.int64)
        ctx_bo = np.zeros(max(self.order - 1, 1), dtype=np.float32)
        length = 0
        if bos:
            ctx[0] = self.vocab["<s>"]
            s = table_find(self.tab, 0, self.mask, _keys_for(np.array([[ctx[0]]], dtype=np.int64))[0])
            ctx_bo[0] = self.tabf[s, 3]
            length = 1 if self.order > 1 else 0
        total = 0.0
        seq = [self.word_id(w) for w in words] + ([self.vocab["</s>"]] if eos else [])
        for wid in seq:
            out_ctx = np.zeros_like(ctx)
            out_bo = np.zeros_like(ctx_bo)
            p, length = lm_score_word(
                self.tab, self.tabf, 0, self.mask, self.order, 0, ctx, ctx_bo, length, wid,
                out_ctx, out_bo, np.zeros(self.order, dtype=np.bool_),
            )
            total += p
            ctx, ctx_bo = out_ctx, out_bo
        return total


def ngram_keys(grams: ArpaGrams) -> dict[int, np.ndarray]:
    """The hash-table key of every entry, per order (see :func:`hash_final`)."""
    return {n: _keys_for(ids) for n, ids in grams.ids.items()}


def extendable(grams: ArpaGrams, keys: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Per order, whether each entry is the context (prefix) of an entry one order higher."""
    out = {}
    for n, k in keys.items():
        if n + 1 in grams.ids:
            prefixes = np.unique(_keys_for(np.ascontiguousarray(grams.ids[n + 1][:, :-1])))
            out[n] = np.isin(k, prefixes)
        else:
            out[n] = np.zeros(len(k), dtype=np.bool_)
    return out


def _hash_table(keys: np.ndarray, prob: np.ndarray, bo: np.ndarray, ext: np.ndarray) -> np.ndarray:
    """The packed open-addressing table (see :func:`table_find`), at most half full."""
    size = 1 << max(4, int(math.ceil(math.log2(max(2 * len(keys), 2)))))
    tab = np.zeros((size, 2), dtype=np.uint64)
    _insert_all(keys, prob.astype(np.float32), bo.astype(np.float32), ext, tab, tab.view(np.float32))
    return tab


def word_bounds(vocab_size: int, order: int, last: np.ndarray, prob: np.ndarray, bo: np.ndarray) -> np.ndarray:
    """``NGramLM.max_word_prob``: per word, the best probability of an entry ending in it (as float32,
    as the table holds it) plus ``order - 1`` times the largest back-off (at least 0), plus 1e-6."""
    max_bo = max(0.0, float(bo.max())) if len(bo) else 0.0
    best = np.full(vocab_size, -np.inf)
    np.maximum.at(best, last, prob.astype(np.float32).astype(np.float64))
    best = np.where(np.isfinite(best), best, float(prob.max()))
    best += (order - 1) * max_bo
    return best + 1e-6


def build_lm(grams: ArpaGrams) -> NGramLM:
    """Hash the entries into an :class:`NGramLM` (natural-log scores, "extendable" flags, bounds)."""
    keys = ngram_keys(grams)
    ext_by_order = extendable(grams, keys)
    orders = sorted(keys)
    prob = np.concatenate([grams.log10_prob[n] * LN10 for n in orders])
    bo = np.concatenate([grams.log10_bo[n] * LN10 for n in orders])
    ext = np.concatenate([ext_by_order[n] for n in orders]) | (bo != 0.0)
    last = np.concatenate([grams.ids[n][:, -1] for n in orders])
    tab = _hash_table(np.concatenate([keys[n] for n in orders]), prob, bo, ext)
    bounds = word_bounds(len(grams.vocab), grams.order, last, prob, bo)
    n_ngrams = [len(keys.get(n, ())) for n in range(1, grams.order + 1)]
    return NGramLM(grams.order, grams.vocab, tab, tab.view(np.float32), bounds, n_ngrams)


def read_arpa(path: str | os.PathLike, keep_words: set[str] | None = None) -> NGramLM:
    """Read an ARPA file into an :class:`NGramLM`.

    Parameters
    ----------
    path
        The ARPA file (plain or gzip).
    keep_words
        If given, n-grams containing a word outside this set (and outside ``<s> </s> <unk>``) are
        dropped: the decoder can never query them, so filtering to the words its phrase options
        can produce changes no score (as Moses's LM filtering).

    Raises
    ------
    InputError
        On a file that is not ARPA, a malformed entry (a NaN or +inf value included), a count
        mismatch, or a word without a unigram entry.
    """
    return build_lm(parse_arpa(path, keep_words))


def check_order(name: str, declared: int | None, order: int, path) -> None:
    """InputError if ``model.yaml`` declares another order for LM ``name`` than its file has."""
    if declared is not None and declared != order:
        raise InputError(f"{name}: model.yaml says order {declared}, the ARPA file has {order}", path)
