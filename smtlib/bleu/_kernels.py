"""Compiled kernels behind :mod:`smtlib.bleu.stats` (numba).

* :func:`intern_tokens` turns whitespace-separated UTF-8 text into integer token ids, exactly: an
  open-addressing table keyed by a 64-bit FNV-1a hash, with a byte comparison on every hit.
* :func:`stats_kernel` counts clipped n-gram matches of orders 1..N: per sentence, an
  open-addressing table of the references' n-grams (max count over references), each keyed
  exactly by ``(slot of its first n-1 tokens, its last token id)`` -- a trie in a hash table, as
  :mod:`smtlib.bleu._chrf_kernels` keeps chrF's n-grams -- so any vocabulary (token ids below
  2**32) and any order fit a 64-bit key; per hypothesis, a use counter per entry implements the
  clipping, and an n-gram whose first n-1 tokens are in no reference is skipped without a lookup.
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
def _find_slot(prefix, token, t_key, mask):
    """The slot of the n-gram ``(prefix, token)``: where it is, or the empty slot for it.

    ``prefix`` is the slot of the n-gram's first n-1 tokens (-1 for a unigram), ``token`` its last
    token id; the key ``(prefix + 1) << 32 | token`` is exact because every prefix of a table
    n-gram is in the table (an n-gram of a reference contains its (n-1)-gram).
    """
    key = ((np.int64(prefix) + np.int64(1)) << np.int64(32)) | np.int64(token)
    x = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    slot = np.int64((x ^ (x >> np.uint64(29))) & mask)
    while t_key[slot] != -1 and t_key[slot] != key:
        slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
    return key, slot


@numba.njit(cache=True)
def _reference_table(ref_ids, ref_offsets, s, n_refs, max_order, ref_lens, prefix):
    """The n-gram table of sentence ``s``'s references: ``(key, max count over references, mask)``
    per slot (key -1: an empty slot); their lengths go to ``ref_lens``. ``prefix`` is scratch space
    of at least the longest reference's length."""
    ref_lo = ref_offsets[s * n_refs]
    ref_hi = ref_offsets[(s + 1) * n_refs]
    capacity = 16
    while capacity < 2 * max_order * (ref_hi - ref_lo) + 16:
        capacity *= 2
    mask = np.uint64(capacity - 1)
    t_key = np.full(capacity, -1, dtype=np.int64)
    t_max = np.zeros(capacity, dtype=np.int64)
    t_cur = np.zeros(capacity, dtype=np.int64)  # count within the current reference
    touched = np.empty(capacity, dtype=np.int64)
    for r in range(n_refs):
        a, b = ref_offsets[s * n_refs + r], ref_offsets[s * n_refs + r + 1]
        ref_lens[r] = b - a
        n_touched = 0
        for i in range(b - a):
            prefix[i] = -1
        for n in range(1, max_order + 1):
            for i in range(b - a - n + 1):
                key, slot = _find_slot(prefix[i], ref_ids[a + i + n - 1], t_key, mask)
                t_key[slot] = key
                prefix[i] = slot
                if t_cur[slot] == 0:
                    touched[n_touched] = slot
                    n_touched += 1
                t_cur[slot] += 1
        for q in range(n_touched):
            slot = touched[q]
            if t_cur[slot] > t_max[slot]:
                t_max[slot] = t_cur[slot]
            t_cur[slot] = 0
    return t_key, t_max, mask


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
def stats_kernel(hyp_ids, hyp_offsets, order, sent_offsets, ref_ids, ref_offsets, n_refs, rule, max_order):
    """Statistics rows (sacrebleu layout, orders 1..``max_order``) of the hypotheses, in ``order``
    (grouped by sentence)."""
    n_hyp = len(order)
    n_sent = len(sent_offsets) - 1
    out = np.zeros((n_hyp, 2 + 2 * max_order), dtype=np.float64)
    ref_lens = np.empty(n_refs, dtype=np.int64)
    longest = 0
    for k in range(len(hyp_offsets) - 1):
        longest = max(longest, hyp_offsets[k + 1] - hyp_offsets[k])
    for k in range(len(ref_offsets) - 1):
        longest = max(longest, ref_offsets[k + 1] - ref_offsets[k])
    prefix = np.empty(longest, dtype=np.int64)
    for s in range(n_sent):
        lo, hi = sent_offsets[s], sent_offsets[s + 1]
        if lo == hi:
            continue
        t_key, t_max, mask = _reference_table(ref_ids, ref_offsets, s, n_refs, max_order, ref_lens, prefix)
        t_used = np.zeros(len(t_key), dtype=np.int64)  # clipping: the uses of each entry by one hypothesis
        touched = np.empty(len(t_key), dtype=np.int64)
        for k in range(lo, hi):
            h = order[k]
            a = hyp_offsets[h]
            hyp_len = hyp_offsets[h + 1] - a
            out[k, 0] = hyp_len
            out[k, 1] = _reference_length(hyp_len, ref_lens, n_refs, rule)
            n_touched = 0
            for i in range(hyp_len):
                prefix[i] = -1
            for n in range(1, max_order + 1):
                count = hyp_len - n + 1
                if count <= 0:
                    break
                out[k, 1 + max_order + n] = count
                matched = 0
                for i in range(count):
                    if n > 1 and prefix[i] < 0:
                        continue  # its first n-1 tokens are in no reference, so it is in none
                    _, slot = _find_slot(prefix[i], hyp_ids[a + i + n - 1], t_key, mask)
                    if t_key[slot] == -1:
                        prefix[i] = -1
                        continue
                    prefix[i] = slot
                    if t_used[slot] < t_max[slot]:
                        if t_used[slot] == 0:
                            touched[n_touched] = slot
                            n_touched += 1
                        t_used[slot] += 1
                        matched += 1
                out[k, 1 + n] = matched
            for q in range(n_touched):
                t_used[touched[q]] = 0
    return out
