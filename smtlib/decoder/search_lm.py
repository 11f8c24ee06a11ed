"""LM states and LM scoring during the search, shared by the stack search and cube pruning.

Each LM state (the minimized context of :mod:`smtlib.decoder.lm` and its back-offs) is *interned*:
it gets an id, the first time it is seen, in a table of distinct states, so hypotheses store and
recombination compares one integer per LM. The LM score of an option after a state and the state
it leads to are cached per sentence, keyed by (state id, option, LM): hypotheses that differ only
in coverage share their LM state, so about two thirds of the phrase scorings on Multi30k are cache
hits. A full cache is emptied (its entries are exact, so when it is emptied changes no result).

:data:`LMStates` holds the state table (``ctx``, ``bo``, ``len``, ``lm`` per id), its hash index
(``keys``/``ids``), the cache (``cache_keys``/``cache_sum``/``cache_sid``), ``size`` = [states,
cache entries] and the work buffers of :func:`smtlib.decoder.lm.lm_score_word`.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from smtlib.decoder.lm import lm_score_word
from smtlib.decoder.search_graph import grow1, grow2, mix

#: interned LM states, their hash index, the per-sentence LM cache and work buffers (see the module doc)
LMStates = namedtuple("LMStates", "ctx bo len lm keys ids cache_keys cache_sum cache_sid size ca ba cb bb scratch")

_CACHE_SLOTS = 1 << 16


@numba.njit(cache=True)
def _state_hash(k, ctx, ln):
    h = mix(np.uint64(0x5555), k)
    h = mix(h, ln)
    for j in range(ln):
        h = mix(h, ctx[j])
    return h | np.uint64(1)


@numba.njit(cache=True, inline="always")
def intern_state(s_ctx, s_bo, s_len, s_lm, keys, ids, size, k, ctx, bo, ln):
    """Id of LM ``k``'s state ``ctx[:ln]`` (back-offs ``bo``) in the state table (``LMStates``'s
    ``ctx, bo, len, lm, keys, ids, size``), adding it if new (the caller has made room)."""
    h = _state_hash(k, ctx, ln)
    mask = np.uint64(keys.shape[0] - 1)
    slot = h & mask
    while keys[slot] != 0:
        if keys[slot] == h:
            sid = ids[slot]
            if s_lm[sid] == k and s_len[sid] == ln:
                same = True
                for j in range(ln):
                    if s_ctx[sid, j] != ctx[j]:
                        same = False
                if same:
                    return sid
        slot = (slot + np.uint64(1)) & mask
    sid = size[0]
    for j in range(ln):
        s_ctx[sid, j] = ctx[j]
        s_bo[sid, j] = bo[j]
    s_len[sid] = ln
    s_lm[sid] = k
    keys[slot] = h
    ids[slot] = sid
    size[0] = sid + 1
    return sid


@numba.njit(cache=True, inline="always")
def _intern(st, k, ctx, bo, ln):
    return intern_state(st.ctx, st.bo, st.len, st.lm, st.keys, st.ids, st.size, k, ctx, bo, ln)


@numba.njit(cache=True)
def states_have_room(st, room):
    """Whether ``st`` can take ``room`` more states with its index at most half full."""
    need = st.size[0] + room
    return need < st.ctx.shape[0] and 2 * need <= st.keys.shape[0]


@numba.njit(cache=True)
def make_state_room(st, room):
    """A copy of ``st`` with room for ``room`` more states (see :func:`states_have_room`)."""
    need = st.size[0] + room
    if need >= st.ctx.shape[0]:
        cap = 2 * st.ctx.shape[0]
        while need >= cap:
            cap *= 2
        st = LMStates(grow2(st.ctx, cap), grow2(st.bo, cap), grow1(st.len, cap), grow1(st.lm, cap), st.keys, st.ids,
                      st.cache_keys, st.cache_sum, st.cache_sid, st.size, st.ca, st.ba, st.cb, st.bb, st.scratch)
    if 2 * need > st.keys.shape[0]:
        cap = 2 * st.keys.shape[0]
        while 2 * need > cap:
            cap *= 2
        keys = np.zeros(cap, dtype=np.uint64)
        ids = np.zeros(cap, dtype=np.int64)
        mask = np.uint64(cap - 1)
        for sid in range(st.size[0]):
            h = _state_hash(st.lm[sid], st.ctx[sid], st.len[sid])
            slot = h & mask
            while keys[slot] != 0:
                slot = (slot + np.uint64(1)) & mask
            keys[slot] = h
            ids[slot] = sid
        st = LMStates(st.ctx, st.bo, st.len, st.lm, keys, ids, st.cache_keys, st.cache_sum, st.cache_sid, st.size,
                      st.ca, st.ba, st.cb, st.bb, st.scratch)
    return st


@numba.njit(cache=True)
def start_states(lms):
    """A new state table and each LM's start state (``<s>`` as context; empty for unigram LMs)."""
    n_lm = lms.order.shape[0]
    M = 1
    for k in range(n_lm):
        M = max(M, lms.order[k] - 1)
    cap = 1024
    st = LMStates(np.zeros((cap, M), dtype=np.int64), np.zeros((cap, M), dtype=np.float32),
                  np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64), np.zeros(4096, dtype=np.uint64),
                  np.zeros(4096, dtype=np.int64), np.full(_CACHE_SLOTS, -1, dtype=np.int64), np.zeros(_CACHE_SLOTS),
                  np.zeros(_CACHE_SLOTS, dtype=np.int64), np.zeros(2, dtype=np.int64),
                  np.zeros(M + 1, dtype=np.int64), np.zeros(M + 1, dtype=np.float32), np.zeros(M + 1, dtype=np.int64),
                  np.zeros(M + 1, dtype=np.float32), np.zeros(M + 2, dtype=np.bool_))
    sids = np.zeros(n_lm, dtype=np.int64)
    ca = np.zeros(M + 1, dtype=np.int64)
    ba = np.zeros(M + 1, dtype=np.float32)
    cb = np.zeros(M + 1, dtype=np.int64)
    bb = np.zeros(M + 1, dtype=np.float32)
    for k in range(n_lm):
        ln = 0
        if lms.order[k] > 1:
            # "<s>" and its back-off as a context
            lm_score_word(lms.tab, lms.tabf, lms.off[k], lms.mask[k], lms.order[k], 0, ca, ba, 0, lms.bos[k], cb, bb,
                          st.scratch)
            cb[0] = lms.bos[k]
            ln = 1
        sids[k] = _intern(st, k, cb, bb, ln)
    return st, sids


@numba.njit(cache=True, inline="always")
def cache_slot(cache_keys, ckey):
    """The LM cache slot of key ``ckey`` (the key's own slot, or the free slot where it would go).

    The key of LM ``k``'s score of option ``o`` after state ``sid`` is ``(sid * n_options + o) * n_lm
    + k``. At a hit the caller reads ``cache_sum``/``cache_sid``; else it scores the phrase with
    :func:`smtlib.decoder.lm.lm_score_word`, interns the state reached (:func:`intern_state`) and
    stores both at the slot (emptying the cache first when it is half full).
    """
    mask = np.uint64(cache_keys.shape[0] - 1)
    slot = mix(np.uint64(7), ckey) & mask
    while cache_keys[slot] != -1 and cache_keys[slot] != ckey:
        slot = (slot + np.uint64(1)) & mask
    return slot


@numba.njit(cache=True, inline="always")
def lm_end(st, lms, k, sid):
    """LM ``k``'s log-probability of ``</s>`` after state ``sid``."""
    ln = st.len[sid]
    for j in range(ln):
        st.ca[j] = st.ctx[sid, j]
        st.ba[j] = st.bo[sid, j]
    lp, _ = lm_score_word(lms.tab, lms.tabf, lms.off[k], lms.mask[k], lms.order[k], 0, st.ca, st.ba, ln, lms.eos[k],
                          st.cb, st.bb, st.scratch)
    return lp

