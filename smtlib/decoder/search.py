"""Phrase-based stack decoding (Koehn et al. 2003; Koehn 2004, Pharaoh; Moses's ``SearchNormal``).

Hypotheses are grouped in stacks by the number of source words they cover. Each stack is expanded in
turn: every hypothesis is extended by every translation option of every uncovered span the
distortion limit allows, and the new hypothesis goes to the stack of its new coverage.

* **Distortion limit** (Moses ``SearchNormal::ProcessOneHypothesis``): a phrase may start at ``s``
  only if ``|s - (last_end + 1)| <= limit``, and a phrase that does not start at the first gap must
  end close enough to the first gap for the decoder to jump back: ``|end + 1 - first_gap| <= limit``.
* **Future cost** (Koehn 2004, §3.3): for every span the best ``w . static + w_LM . LM estimate`` of
  its options, combined over spans by dynamic programming; a hypothesis's estimate is the sum over
  its maximal uncovered runs. Histogram pruning ranks by score plus future cost.
* **Recombination**: two hypotheses in a stack are merged when they agree on the coverage, each LM's
  minimized state (see :mod:`smtlib.decoder.lm`), the end of the last phrase (distortion) and, with
  lexicalized reordering, the last phrase itself (its span decides the backward orientation of the
  next phrase and its forward scores are applied when the next phrase comes). The loser is kept as an
  extra incoming edge of the merged node (Moses's arc list): the search graph for k-best lists and
  lattices. In the last stack every hypothesis is complete and nothing follows, so all of them merge
  into one goal node (recombination on the coverage alone is exact there).
* **Histogram pruning** to ``stack_size`` nodes, done when a stack holds 25% more (Moses waits for
  twice as many; pruning sooner raises the threshold sooner, about 10% faster here, and gives the
  same surviving nodes and 1-best: only recombined arcs below the beam are lost earlier), and once
  more before the stack is expanded; after a pruning, a new hypothesis that scores below the worst
  survivor can never survive and is dropped at once. The drop is also tried *before*
  the LM is queried, with an upper bound on the LM score of the phrase (the largest probability any
  n-gram ending in each word has); the bound is exact-safe, so this changes no result.
* **LM caching**: each LM state is interned (an id per distinct minimized state), and the LM score
  and resulting state of an option after a state are cached per sentence: hypotheses that differ
  only in coverage share their LM state, so about two thirds of the phrase scorings on Multi30k are
  cache hits. Recombination compares state ids.

Profile (Multi30k val, medium model, stack 100, k=100; counters of :class:`Decoder`): per sentence
about 128k options are looked at, 65k pass the bound and are scored, 25k become a node or an edge;
before caching, ``search_nb`` was 75% of the time (cProfile) and the rest was feature replay per
edge (now kept from the search) and Python glue; the LM table probes were the main cost, hence the
packed one-row-per-probe table (:mod:`smtlib.decoder.lm`) and the cache.

Scores are ``w . h`` with the feature values of :mod:`smtlib.decoder.model`; LM values are natural
logs, the end-of-sentence probability is added when the coverage becomes complete, distortion is
``-|start - (last_end + 1)|`` per phrase, and lexicalized reordering follows Moses's
``msd-bidirectional-fe``: the backward model scores the orientation (monotone, swap, discontinuous)
of each phrase with respect to the previous one with the phrase's own probabilities, the forward
model scores the orientation of the next phrase with the previous phrase's probabilities. The first
phrase's backward orientation is monotone if it starts at 0, else discontinuous.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.decoder.lm import lm_score_word

NEG_INF = -np.inf


@numba.njit(cache=True)
def _grow1(a, cap):
    b = np.empty(cap, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@numba.njit(cache=True)
def _grow2(a, cap):
    b = np.empty((cap, a.shape[1]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@numba.njit(cache=True)
def _grow3(a, cap):
    b = np.empty((cap, a.shape[1], a.shape[2]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@numba.njit(cache=True, inline="always")
def _mix(h, v):
    h = (h ^ np.uint64(v + 0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
    return h ^ (h >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def _covered(cov, i):
    return (cov[i >> 6] >> np.uint64(i & 63)) & np.uint64(1)


@numba.njit(cache=True)
def _first_gap(cov, n):
    for i in range(n):
        if not _covered(cov, i):
            return i
    return n


@numba.njit(cache=True)
def _state_hash(k, ctx, ln):
    h = _mix(np.uint64(0x5555), k)
    h = _mix(h, ln)
    for j in range(ln):
        h = _mix(h, ctx[j])
    return h | np.uint64(1)


@numba.njit(cache=True)
def _intern(k, ctx, bo, ln, s_ctx, s_bo, s_len, s_lm, n_states, sh_keys, sh_ids):
    """Id of LM ``k``'s state ``ctx[:ln]`` (back-offs ``bo``), adding it if new (the caller has made room)."""
    h = _state_hash(k, ctx, ln)
    mask = np.uint64(sh_keys.shape[0] - 1)
    slot = h & mask
    while sh_keys[slot] != 0:
        if sh_keys[slot] == h:
            sid = sh_ids[slot]
            if s_lm[sid] == k and s_len[sid] == ln:
                same = True
                for j in range(ln):
                    if s_ctx[sid, j] != ctx[j]:
                        same = False
                if same:
                    return sid, n_states
        slot = (slot + np.uint64(1)) & mask
    sid = n_states
    for j in range(ln):
        s_ctx[sid, j] = ctx[j]
        s_bo[sid, j] = bo[j]
    s_len[sid] = ln
    s_lm[sid] = k
    sh_keys[slot] = h
    sh_ids[slot] = sid
    return sid, n_states + 1


@numba.njit(cache=True)
def _rehash_states(s_ctx, s_len, s_lm, n_states, sh_keys, sh_ids):
    mask = np.uint64(sh_keys.shape[0] - 1)
    for sid in range(n_states):
        h = _state_hash(s_lm[sid], s_ctx[sid], s_len[sid])
        slot = h & mask
        while sh_keys[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        sh_keys[slot] = h
        sh_ids[slot] = sid


@numba.njit(cache=True)
def _prune(s, keep, st_nodes, st_cnt, st_thresh, n_score, n_fc, n_alive):
    """Keep the ``keep`` best live nodes of stack ``s`` (by score + future cost); raise its threshold."""
    cnt = st_cnt[s]
    m = 0
    for i in range(cnt):
        v = st_nodes[s, i]
        if n_alive[v]:
            st_nodes[s, m] = v
            m += 1
    key = np.empty(m)
    for i in range(m):
        v = st_nodes[s, i]
        key[i] = -(n_score[v] + n_fc[v])
    order = np.argsort(key, kind="mergesort")
    kept = np.empty(m, dtype=np.int64)
    for i in range(m):
        kept[i] = st_nodes[s, order[i]]
    n_keep = m if keep <= 0 else min(keep, m)
    for i in range(n_keep, m):
        n_alive[kept[i]] = False
    for i in range(n_keep):
        st_nodes[s, i] = kept[i]
    st_cnt[s] = n_keep
    if keep > 0 and m >= keep:
        worst = n_score[kept[keep - 1]] + n_fc[kept[keep - 1]]
        if worst > st_thresh[s]:
            st_thresh[s] = worst


@numba.njit(cache=True)
def search_nb(n, maxlen, stack_size, dl, use_lr,
              o_start, o_end, o_woff, o_words, o_static, o_lr, o_bound, span_first, span_cnt, fct,
              lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, lm_bos, lm_eos,
              w_lm, w_dist, w_lr):
    """Run the stack search on one sentence; return the search graph (see :func:`decode_graph`)."""
    n_lm = lm_order.shape[0]
    M = 1
    for k in range(n_lm):
        M = max(M, lm_order[k] - 1)
    CW = max(1, (n + 63) // 64)
    full = np.zeros(CW, dtype=np.uint64)
    for i in range(n):
        full[i >> 6] |= np.uint64(1) << np.uint64(i & 63)

    ncap = 1024
    n_cov = np.zeros((ncap, CW), dtype=np.uint64)
    n_last_start = np.zeros(ncap, dtype=np.int64)
    n_last_end = np.zeros(ncap, dtype=np.int64)
    n_last_opt = np.zeros(ncap, dtype=np.int64)
    n_sid = np.zeros((ncap, n_lm), dtype=np.int64)  # each LM's state, as an id in the state table
    n_score = np.zeros(ncap)
    n_fc = np.zeros(ncap)
    n_best = np.full(ncap, -1, dtype=np.int64)
    n_alive = np.zeros(ncap, dtype=np.bool_)
    n_stack = np.zeros(ncap, dtype=np.int64)
    nn = 0
    ecap = 4096
    e_tail = np.zeros(ecap, dtype=np.int64)
    e_head = np.zeros(ecap, dtype=np.int64)
    e_opt = np.zeros(ecap, dtype=np.int64)
    e_score = np.zeros(ecap)
    e_lm = np.zeros((ecap, n_lm))  # each edge's LM increments (for its feature vector)
    cur_lm = np.zeros(n_lm)
    ne = 0
    hcap = 4096
    h_keys = np.zeros(hcap, dtype=np.uint64)
    h_node = np.full(hcap, -1, dtype=np.int64)
    hn = 0
    scap = 64 if stack_size <= 0 else stack_size + stack_size // 4 + 2
    st_nodes = np.zeros((n + 1, scap), dtype=np.int64)
    st_cnt = np.zeros(n + 1, dtype=np.int64)
    st_thresh = np.full(n + 1, NEG_INF)

    # LM states are interned (ids), and LM results are cached per (state, option, LM): hypotheses
    # that differ only in coverage share their LM state, so most phrase scorings repeat.
    n_opts = o_static.shape[0]
    s_cap = 1024
    s_ctx = np.zeros((s_cap, M), dtype=np.int64)
    s_bo = np.zeros((s_cap, M), dtype=np.float32)
    s_len = np.zeros(s_cap, dtype=np.int64)
    s_lm = np.zeros(s_cap, dtype=np.int64)
    n_states = 0
    sh_cap = 4096
    sh_keys = np.zeros(sh_cap, dtype=np.uint64)
    sh_ids = np.zeros(sh_cap, dtype=np.int64)
    cc_cap = 1 << 16
    cc_keys = np.full(cc_cap, -1, dtype=np.int64)
    cc_sum = np.zeros(cc_cap)
    cc_sid = np.zeros(cc_cap, dtype=np.int64)
    cc_n = 0

    # the empty hypothesis
    n_last_start[0] = -1
    n_last_end[0] = -1
    n_last_opt[0] = -1
    scratch = np.zeros(M + 2, dtype=np.bool_)
    for k in range(n_lm):
        ca = np.zeros(M + 1, dtype=np.int64)
        ba = np.zeros(M + 1, dtype=np.float32)
        cb = np.zeros(M + 1, dtype=np.int64)
        bb = np.zeros(M + 1, dtype=np.float32)
        ln = 0
        if lm_order[k] > 1:
            # "<s>" and its back-off as a context
            lm_score_word(lm_tab, lm_tabf, lm_off[k], lm_mask[k], lm_order[k], 0,
                          ca, ba, 0, lm_bos[k], cb, bb, scratch)
            cb[0] = lm_bos[k]
            ln = 1
        sid, n_states = _intern(k, cb, bb, ln, s_ctx, s_bo, s_len, s_lm, n_states, sh_keys, sh_ids)
        n_sid[0, k] = sid
    n_fc[0] = fct[0, n]
    n_alive[0] = True
    st_nodes[0, 0] = 0
    st_cnt[0] = 1
    nn = 1

    new_cov = np.zeros(CW, dtype=np.uint64)
    new_sid = np.zeros(n_lm, dtype=np.int64)
    ca = np.zeros(M + 1, dtype=np.int64)
    ba = np.zeros(M + 1, dtype=np.float32)
    cb = np.zeros(M + 1, dtype=np.int64)
    bb = np.zeros(M + 1, dtype=np.float32)
    # counters: options looked at, LM evaluations, hypotheses kept (new node or extra edge)
    stats = np.zeros(4, dtype=np.int64)
    lm_ok = True
    for k in range(n_lm):
        if w_lm[k] < 0:
            lm_ok = False  # the LM bound is an upper bound on the LM score, useless for w < 0

    for s in range(n):
        _prune(s, stack_size, st_nodes, st_cnt, st_thresh, n_score, n_fc, n_alive)
        for si in range(st_cnt[s]):
            u = st_nodes[s, si]
            if not n_alive[u]:
                continue
            cov = n_cov[u]
            gap = _first_gap(cov, n)
            u_end = n_last_end[u]
            u_start = n_last_start[u]
            u_opt = n_last_opt[u]
            for start in range(gap, n):
                if _covered(cov, start):
                    continue
                jump = start - (u_end + 1)
                if jump < 0:
                    jump = -jump
                if dl >= 0 and jump > dl:
                    continue
                # the run of uncovered words containing ``start`` begins at ``lo``
                lo = start
                while lo > 0 and not _covered(cov, lo - 1):
                    lo -= 1
                for length in range(1, maxlen + 1):
                    end = start + length  # exclusive
                    if end > n or _covered(cov, end - 1):
                        break
                    cnt = span_cnt[start, length - 1]
                    if cnt == 0:
                        continue
                    if dl >= 0 and start != gap:
                        back = end - gap
                        if back < 0:
                            back = -back
                        if back > dl:
                            continue
                    hi = end
                    while hi < n and not _covered(cov, hi):
                        hi += 1
                    fc_new = n_fc[u] - fct[lo, hi] + fct[lo, start] + fct[end, hi]
                    if start == u_end + 1:
                        orient = 0
                    elif end == u_start:
                        orient = 1
                    else:
                        orient = 2
                    base = n_score[u] - w_dist * jump
                    if use_lr and u_opt >= 0:
                        base += w_lr[3 + orient] * o_lr[u_opt, 3 + orient]
                    for i in range(CW):
                        new_cov[i] = cov[i]
                    for i in range(start, end):
                        new_cov[i >> 6] |= np.uint64(1) << np.uint64(i & 63)
                    complete = end - start + s == n
                    ns = s + end - start
                    thresh = st_thresh[ns]
                    first = span_first[start, length - 1]
                    stats[0] += cnt
                    for o in range(first, first + cnt):
                        if lm_ok and not complete and base + o_bound[o] + fc_new < thresh:
                            break  # options are sorted by o_bound: none of the rest can survive
                        stats[1] += 1
                        sc = base + o_static[o]
                        if use_lr:
                            sc += w_lr[orient] * o_lr[o, orient]
                        for k in range(n_lm):
                            sid = n_sid[u, k]
                            ckey = (sid * n_opts + o) * n_lm + k
                            cmask = np.uint64(cc_cap - 1)
                            cslot = _mix(np.uint64(7), ckey) & cmask
                            while cc_keys[cslot] != -1 and cc_keys[cslot] != ckey:
                                cslot = (cslot + np.uint64(1)) & cmask
                            if cc_keys[cslot] == ckey:
                                lmsum = cc_sum[cslot]
                                nsid = cc_sid[cslot]
                                ln = s_len[nsid]
                                for j in range(ln):
                                    ca[j] = s_ctx[nsid, j]
                                    ba[j] = s_bo[nsid, j]
                            else:
                                stats[3] += 1
                                ln = s_len[sid]
                                for j in range(ln):
                                    ca[j] = s_ctx[sid, j]
                                    ba[j] = s_bo[sid, j]
                                lmsum = 0.0
                                for wi in range(o_woff[o], o_woff[o + 1]):
                                    lp, ln = lm_score_word(lm_tab, lm_tabf, lm_off[k], lm_mask[k],
                                                           lm_order[k], 0, ca, ba, ln, lm_map[k, o_words[wi]], cb, bb,
                                                           scratch)
                                    lmsum += lp
                                    ca, cb = cb, ca
                                    ba, bb = bb, ba
                                if n_states + 1 >= s_ctx.shape[0]:
                                    s_ctx = _grow2(s_ctx, 2 * s_ctx.shape[0])
                                    s_bo = _grow2(s_bo, 2 * s_bo.shape[0])
                                    s_len = _grow1(s_len, 2 * s_len.shape[0])
                                    s_lm = _grow1(s_lm, 2 * s_lm.shape[0])
                                if 2 * (n_states + 1) > sh_cap:
                                    sh_cap *= 2
                                    sh_keys = np.zeros(sh_cap, dtype=np.uint64)
                                    sh_ids = np.zeros(sh_cap, dtype=np.int64)
                                    _rehash_states(s_ctx, s_len, s_lm, n_states, sh_keys, sh_ids)
                                nsid, n_states = _intern(k, ca, ba, ln, s_ctx, s_bo, s_len, s_lm, n_states,
                                                         sh_keys, sh_ids)
                                if 2 * (cc_n + 1) > cc_cap:  # a full cache is simply emptied
                                    cc_keys[:] = -1
                                    cc_n = 0
                                    cslot = _mix(np.uint64(7), ckey) & cmask
                                cc_keys[cslot] = ckey
                                cc_sum[cslot] = lmsum
                                cc_sid[cslot] = nsid
                                cc_n += 1
                            new_sid[k] = nsid
                            if complete:
                                lp, ln = lm_score_word(lm_tab, lm_tabf, lm_off[k], lm_mask[k],
                                                       lm_order[k], 0, ca, ba, ln, lm_eos[k], cb, bb, scratch)
                                lmsum += lp
                                ca, cb = cb, ca
                                ba, bb = bb, ba
                            sc += w_lm[k] * lmsum
                            cur_lm[k] = lmsum
                        if not complete and sc + fc_new < thresh:
                            continue
                        stats[2] += 1
                        # ---- recombination key
                        h = np.uint64(0x12345)
                        for i in range(CW):
                            h = _mix(h, np.int64(new_cov[i] & np.uint64(0x7FFFFFFFFFFFFFFF)))
                            h = _mix(h, np.int64(new_cov[i] >> np.uint64(63)))
                        if not complete:
                            for k in range(n_lm):
                                h = _mix(h, new_sid[k])
                            h = _mix(h, end - 1)
                            if use_lr:
                                h = _mix(h, o)
                        h |= np.uint64(1)
                        hmask = np.uint64(hcap - 1)
                        slot = h & hmask
                        found = -1
                        while h_keys[slot] != 0:
                            if h_keys[slot] == h:
                                v = h_node[slot]
                                same = True
                                for i in range(CW):
                                    if n_cov[v, i] != new_cov[i]:
                                        same = False
                                if same and not complete:
                                    if n_last_end[v] != end - 1 or (use_lr and n_last_opt[v] != o):
                                        same = False
                                    for k in range(n_lm):
                                        if n_sid[v, k] != new_sid[k]:
                                            same = False
                                if same:
                                    found = v
                                    break
                            slot = (slot + np.uint64(1)) & hmask
                        # ---- the edge
                        if ne == ecap:
                            ecap *= 2
                            e_tail = _grow1(e_tail, ecap)
                            e_head = _grow1(e_head, ecap)
                            e_opt = _grow1(e_opt, ecap)
                            e_score = _grow1(e_score, ecap)
                            e_lm = _grow2(e_lm, ecap)
                        if found >= 0 and n_alive[found]:
                            e_tail[ne] = u
                            e_head[ne] = found
                            e_opt[ne] = o
                            e_score[ne] = sc
                            e_lm[ne] = cur_lm
                            if sc > n_score[found]:
                                n_score[found] = sc
                                n_best[found] = ne
                                n_last_opt[found] = o
                                n_last_start[found] = start
                            ne += 1
                            continue
                        # ---- a new node
                        if nn == ncap:
                            ncap *= 2
                            n_cov = _grow2(n_cov, ncap)
                            n_last_start = _grow1(n_last_start, ncap)
                            n_last_end = _grow1(n_last_end, ncap)
                            n_last_opt = _grow1(n_last_opt, ncap)
                            n_sid = _grow2(n_sid, ncap)
                            n_score = _grow1(n_score, ncap)
                            n_fc = _grow1(n_fc, ncap)
                            n_best = _grow1(n_best, ncap)
                            n_alive = _grow1(n_alive, ncap)
                            n_stack = _grow1(n_stack, ncap)
                        v = nn
                        nn += 1
                        for i in range(CW):
                            n_cov[v, i] = new_cov[i]
                        n_last_start[v] = start
                        n_last_end[v] = end - 1
                        n_last_opt[v] = o
                        for k in range(n_lm):
                            n_sid[v, k] = new_sid[k]
                        n_score[v] = sc
                        n_fc[v] = 0.0 if complete else fc_new
                        n_best[v] = ne
                        n_alive[v] = True
                        n_stack[v] = ns
                        e_tail[ne] = u
                        e_head[ne] = v
                        e_opt[ne] = o
                        e_score[ne] = sc
                        e_lm[ne] = cur_lm
                        ne += 1
                        if found >= 0:
                            h_node[slot] = v  # replaces a pruned node with the same state
                        else:
                            h_keys[slot] = h
                            h_node[slot] = v
                            hn += 1
                            if 2 * hn > hcap:
                                old_keys = h_keys
                                old_node = h_node
                                hcap *= 2
                                h_keys = np.zeros(hcap, dtype=np.uint64)
                                h_node = np.full(hcap, -1, dtype=np.int64)
                                hmask = np.uint64(hcap - 1)
                                for i in range(old_keys.shape[0]):
                                    if old_keys[i] != 0:
                                        sl = old_keys[i] & hmask
                                        while h_keys[sl] != 0:
                                            sl = (sl + np.uint64(1)) & hmask
                                        h_keys[sl] = old_keys[i]
                                        h_node[sl] = old_node[i]
                        # ---- into the stack
                        if st_cnt[ns] == st_nodes.shape[1]:
                            if stack_size > 0 and st_cnt[ns] >= stack_size + stack_size // 4:
                                _prune(ns, stack_size, st_nodes, st_cnt, st_thresh, n_score, n_fc, n_alive)
                                thresh = st_thresh[ns]
                            if st_cnt[ns] == st_nodes.shape[1]:
                                grown = np.zeros((n + 1, 2 * st_nodes.shape[1]), dtype=np.int64)
                                grown[:, : st_nodes.shape[1]] = st_nodes
                                st_nodes = grown
                        st_nodes[ns, st_cnt[ns]] = v
                        st_cnt[ns] += 1
    goal = -1
    if n == 0:
        goal = 0
    else:
        for i in range(st_cnt[n]):
            if n_alive[st_nodes[n, i]]:
                goal = st_nodes[n, i]
    return (goal, nn, ne, n_score[:nn].copy(), n_best[:nn].copy(), n_alive[:nn].copy(), n_stack[:nn].copy(),
            n_last_end[:nn].copy(), n_last_start[:nn].copy(), n_last_opt[:nn].copy(), e_tail[:ne].copy(), e_head[:ne].copy(), e_opt[:ne].copy(),
            e_score[:ne].copy(), e_lm[:ne].copy(), stats)
