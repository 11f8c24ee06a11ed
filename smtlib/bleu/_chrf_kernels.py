"""Compiled kernel behind :mod:`smtlib.bleu.chrf` (numba): n-gram counts against each reference.

:func:`ngram_match_kernel` takes integer sequences (characters or words as ids) and, per sentence,
builds a trie of its references' n-grams (orders 1..N) in an open-addressing table keyed exactly by
``(parent node, token id)``; each node keeps its count in every reference. A hypothesis walks the
same trie from every start position, so each of its n-grams is found (or known absent) in O(1),
and matches are clipped per reference with a use counter per node (Popović 2015: the matches of
an n-gram are the minimum of its hypothesis and reference counts).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def _slot(parent, token, keys, mask):
    """The slot of the child ``token`` of ``parent``: where it is, or the empty slot for it."""
    key = (np.int64(parent) << np.int64(32)) | np.int64(token)
    x = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    slot = np.int64((x ^ (x >> np.uint64(29))) & mask)
    while keys[slot] != -1 and keys[slot] != key:
        slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
    return key, slot


@numba.njit(cache=True)
def ngram_match_kernel(hyp_ids, hyp_offsets, order, sent_offsets, ref_ids, ref_offsets, n_refs, max_order):
    """Per hypothesis (in ``order``, grouped by sentence), reference and order: hyp, ref and match counts.

    Returns a ``(N, n_refs, max_order, 3)`` int64 array of ``[hyp n-grams, ref n-grams, clipped
    matches]``. Reference ``r`` of sentence ``s`` is sequence ``s * n_refs + r`` of ``ref_ids``.
    """
    n_hyp = len(order)
    n_sent = len(sent_offsets) - 1
    out = np.zeros((n_hyp, n_refs, max_order, 3), dtype=np.int64)
    ref_lens = np.zeros(n_refs, dtype=np.int64)
    for s in range(n_sent):
        lo, hi = sent_offsets[s], sent_offsets[s + 1]
        if lo == hi:
            continue
        total = ref_offsets[(s + 1) * n_refs] - ref_offsets[s * n_refs]
        n_nodes_max = total * max_order + 1
        capacity = 16
        while capacity < 2 * n_nodes_max:
            capacity *= 2
        mask = np.uint64(capacity - 1)
        keys = np.full(capacity, -1, dtype=np.int64)
        node_of = np.zeros(capacity, dtype=np.int64)
        counts = np.zeros((n_nodes_max, n_refs), dtype=np.int64)
        used = np.zeros((n_nodes_max, n_refs), dtype=np.int64)
        stamp = np.zeros(n_nodes_max, dtype=np.int64)
        n_nodes = 1  # node 0 is the root (the empty n-gram)
        for r in range(n_refs):
            a, b = ref_offsets[s * n_refs + r], ref_offsets[s * n_refs + r + 1]
            ref_lens[r] = b - a
            for i in range(a, b):
                node = 0
                for n in range(min(max_order, b - i)):
                    key, slot = _slot(node, ref_ids[i + n], keys, mask)
                    if keys[slot] == -1:
                        keys[slot] = key
                        node_of[slot] = n_nodes
                        n_nodes += 1
                    node = node_of[slot]
                    counts[node, r] += 1
        for k in range(lo, hi):
            h = order[k]
            a, b = hyp_offsets[h], hyp_offsets[h + 1]
            length = b - a
            for i in range(a, b):
                node = 0
                for n in range(min(max_order, b - i)):
                    key, slot = _slot(node, hyp_ids[i + n], keys, mask)
                    if keys[slot] == -1:
                        break  # no reference has this n-gram, nor any longer one from i
                    node = node_of[slot]
                    if stamp[node] != k + 1:  # first use by this hypothesis: its use counters restart
                        stamp[node] = k + 1
                        for r in range(n_refs):
                            used[node, r] = 0
                    for r in range(n_refs):
                        if used[node, r] < counts[node, r]:
                            used[node, r] += 1
                            out[k, r, n, 2] += 1
            for r in range(n_refs):
                for n in range(max_order):
                    ref_count = max(ref_lens[r] - n, 0)
                    out[k, r, n, 1] = ref_count
                    # sacrebleu counts no hypothesis n-grams of an order its reference has none of
                    out[k, r, n, 0] = max(length - n, 0) if ref_count > 0 else 0
    return out
