"""Compiled kernels behind :mod:`smtlib.bleu.stats` (numba).

* :func:`intern_tokens` turns whitespace-separated UTF-8 text into integer token ids, exactly: an
  open-addressing table keyed by a 64-bit FNV-1a hash, with a byte comparison on every hit.
* :func:`stats_kernel` counts clipped n-gram matches: per sentence, an open-addressing table of the
  references' n-grams (max count over references) keyed by the exactly packed n-gram (16 bits per
  token id) and its order; per hypothesis, a use counter per entry implements the clipping.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib._bytes import FNV_OFFSET, FNV_PRIME, same_bytes



@numba.njit(cache=True)
def has_other_whitespace(data: np.ndarray) -> bool:
    """True if UTF-8 ``data`` holds whitespace other than space and newline (as ``str.split`` sees it)."""
    n = len(data)
    for i in range(n):
        c = data[i]
        if c < 32:
            if c == 9 or c == 11 or c == 12 or c == 13 or (28 <= c <= 31):
                return True
        elif c == 0xC2 and i + 1 < n and (data[i + 1] == 0x85 or data[i + 1] == 0xA0):
            return True
        elif c == 0xE1 and i + 2 < n and data[i + 1] == 0x9A and data[i + 2] == 0x80:
            return True
        elif c == 0xE2 and i + 2 < n:
            b, d = data[i + 1], data[i + 2]
            if b == 0x80 and (d <= 0x8A or d == 0xA8 or d == 0xA9 or d == 0xAF):
                return True
            if b == 0x81 and d == 0x9F:
                return True
        elif c == 0xE3 and i + 2 < n and data[i + 1] == 0x80 and data[i + 2] == 0x80:
            return True
    return False


@numba.njit(cache=True)
def intern_tokens(data: np.ndarray, n_texts: int):
    """Token ids (1-based) and per-text token offsets of ``\\n``-separated, space-split text.

    ``data`` is the UTF-8 encoding of ``"\\n".join(texts)``; tokens are maximal runs of bytes other
    than space and newline (the caller guarantees no other whitespace occurs). Each type's bytes
    are copied to a compact buffer so that hash hits compare against cache-resident memory.
    """
    n = len(data)
    capacity = 1 << 16
    # slot row: hash, start in `vocab`, length, id (0 = empty)
    slots = np.zeros((capacity, 4), dtype=np.int64)
    vocab = np.empty(1 << 16, dtype=np.uint8)
    vocab_used = 0
    n_types = 0
    ids = np.empty(n // 2 + 1, dtype=np.int64)
    offsets = np.zeros(n_texts + 1, dtype=np.int64)
    n_tokens = 0
    text = 0
    i = 0
    while i <= n:
        if i == n or data[i] == 10:  # end of a text
            text += 1
            offsets[text] = n_tokens
            i += 1
            continue
        if data[i] == 32:
            i += 1
            continue
        start = i
        h = FNV_OFFSET
        while i < n and data[i] != 32 and data[i] != 10:
            h = (h ^ np.uint64(data[i])) * FNV_PRIME
            i += 1
        length = i - start
        hs = np.int64(h)
        mask = capacity - 1
        slot = hs & mask
        while True:
            if slots[slot, 3] == 0:
                if vocab_used + length > len(vocab):
                    bigger = np.empty(2 * (len(vocab) + length), dtype=np.uint8)
                    bigger[:vocab_used] = vocab[:vocab_used]
                    vocab = bigger
                vocab[vocab_used : vocab_used + length] = data[start:i]
                n_types += 1
                slots[slot, 0] = hs
                slots[slot, 1] = vocab_used
                slots[slot, 2] = length
                slots[slot, 3] = n_types
                vocab_used += length
                ids[n_tokens] = n_types
                break
            if (slots[slot, 0] == hs and slots[slot, 2] == length
                    and same_bytes(vocab, slots[slot, 1], data, start, length)):
                ids[n_tokens] = slots[slot, 3]
                break
            slot = (slot + 1) & mask
        n_tokens += 1
        if n_types * 2 > capacity:  # grow and rehash
            capacity *= 2
            mask = capacity - 1
            bigger_slots = np.zeros((capacity, 4), dtype=np.int64)
            for old in range(len(slots)):
                if slots[old, 3] != 0:
                    t = slots[old, 0] & mask
                    while bigger_slots[t, 3] != 0:
                        t = (t + 1) & mask
                    bigger_slots[t, :] = slots[old, :]
            slots = bigger_slots
    return ids[:n_tokens], offsets, n_types


@numba.njit(cache=True, inline="always")
def _mix(key, order):
    x = np.uint64(key) ^ (np.uint64(order) * np.uint64(0x9E3779B97F4A7C15))
    x = (x ^ (x >> np.uint64(33))) * np.uint64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> np.uint64(33))
    return x


@numba.njit(cache=True, inline="always")
def _find_slot(toks, i, n, t_key, t_order, mask):
    """Packed key of the n-gram at ``toks[i]`` and its slot: where it is, or the empty slot for it."""
    key = np.int64(0)
    for j in range(n):
        key = (key << np.int64(16)) | toks[i + j]
    slot = np.int64(_mix(key, n) & mask)
    while t_order[slot] != 0 and not (t_order[slot] == n and t_key[slot] == key):
        slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
    return key, slot


@numba.njit(cache=True)
def _sentence_vocab(hyp_ids, hyp_offsets, order, lo, hi, ref_ids, ref_lo, ref_hi):
    """The distinct token ids of one sentence's hypotheses ``order[lo:hi]`` and references, sorted:
    a token's position in it + 1 is its renumbered id (global ids may not fit in 16 bits)."""
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
    return local


@numba.njit(cache=True)
def _reference_table(ref_ids, ref_offsets, s, n_refs, local, renumber, ref_lens):
    """The n-gram table of sentence ``s``'s references: ``(key, order, max count over references,
    mask)`` per slot (order 0: an empty slot); their lengths go to ``ref_lens``."""
    ref_lo = ref_offsets[s * n_refs]
    ref_hi = ref_offsets[(s + 1) * n_refs]
    capacity = 16
    while capacity < 4 * (ref_hi - ref_lo) * 2 + 16:
        capacity *= 2
    mask = np.uint64(capacity - 1)
    t_key = np.zeros(capacity, dtype=np.int64)
    t_order = np.zeros(capacity, dtype=np.int64)  # 0 = empty slot
    t_max = np.zeros(capacity, dtype=np.int64)
    t_cur = np.zeros(capacity, dtype=np.int64)  # count within the current reference
    touched = np.empty(capacity, dtype=np.int64)
    for r in range(n_refs):
        a, b = ref_offsets[s * n_refs + r], ref_offsets[s * n_refs + r + 1]
        toks = ref_ids[a:b]
        if renumber:
            toks = np.searchsorted(local, toks) + 1
        ref_lens[r] = b - a
        n_touched = 0
        for n in range(1, 5):
            for i in range(len(toks) - n + 1):
                key, slot = _find_slot(toks, i, n, t_key, t_order, mask)
                if t_order[slot] == 0:
                    t_order[slot] = n
                    t_key[slot] = key
                if t_cur[slot] == 0:
                    touched[n_touched] = slot
                    n_touched += 1
                t_cur[slot] += 1
        for q in range(n_touched):
            slot = touched[q]
            if t_cur[slot] > t_max[slot]:
                t_max[slot] = t_cur[slot]
            t_cur[slot] = 0
    return t_key, t_order, t_max, mask


@numba.njit(cache=True, inline="always")
def _reference_length(hyp_len, ref_lens, n_refs, rule):
    """The effective reference length: closest (shorter on ties; rule 0), shortest (1) or average (2)."""
    if rule == 0:
        best = ref_lens[0]
        for r in range(1, n_refs):
            d_new = abs(hyp_len - ref_lens[r])
            d_old = abs(hyp_len - best)
            if d_new < d_old or (d_new == d_old and ref_lens[r] < best):
                best = ref_lens[r]
        return float(best)
    if rule == 1:
        return float(ref_lens[:n_refs].min())
    return ref_lens[:n_refs].sum() / n_refs


@numba.njit(cache=True)
def stats_kernel(hyp_ids, hyp_offsets, order, sent_offsets, ref_ids, ref_offsets, n_refs, rule, renumber):
    """Statistics rows (sacrebleu layout) of the hypotheses, in ``order`` (grouped by sentence)."""
    n_hyp = len(order)
    n_sent = len(sent_offsets) - 1
    out = np.zeros((n_hyp, 10), dtype=np.float64)
    ref_lens = np.empty(n_refs, dtype=np.int64)
    for s in range(n_sent):
        lo, hi = sent_offsets[s], sent_offsets[s + 1]
        if lo == hi:
            continue
        local = np.empty(0, dtype=np.int64)
        if renumber:
            local = _sentence_vocab(hyp_ids, hyp_offsets, order, lo, hi, ref_ids, ref_offsets[s * n_refs],
                                    ref_offsets[(s + 1) * n_refs])
        t_key, t_order, t_max, mask = _reference_table(ref_ids, ref_offsets, s, n_refs, local, renumber, ref_lens)
        t_used = np.zeros(len(t_key), dtype=np.int64)  # clipping: the uses of each entry by one hypothesis
        touched = np.empty(len(t_key), dtype=np.int64)
        for k in range(lo, hi):
            h = order[k]
            toks = hyp_ids[hyp_offsets[h] : hyp_offsets[h + 1]]
            if renumber:
                toks = np.searchsorted(local, toks) + 1
            hyp_len = len(toks)
            out[k, 0] = hyp_len
            out[k, 1] = _reference_length(hyp_len, ref_lens, n_refs, rule)
            n_touched = 0
            for n in range(1, 5):
                count = hyp_len - n + 1
                if count <= 0:
                    continue
                out[k, 5 + n] = count
                matched = 0
                for i in range(count):
                    _, slot = _find_slot(toks, i, n, t_key, t_order, mask)
                    if t_order[slot] != 0 and t_used[slot] < t_max[slot]:
                        if t_used[slot] == 0:
                            touched[n_touched] = slot
                            n_touched += 1
                        t_used[slot] += 1
                        matched += 1
                out[k, 1 + n] = matched
            for q in range(n_touched):
                t_used[touched[q]] = 0
    return out
