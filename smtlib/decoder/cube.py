"""Phrase-based decoding with cube pruning (Chiang 2007, §5; Huang & Chiang 2007; Moses's ``SearchCubePruning``).

The stacks, recombination, future costs, distortion limit and scores are those of the stack search
(:mod:`smtlib.decoder.search`); what differs is which extensions are scored at all. Instead of
extending every hypothesis of a stack by every option of every span, the extensions are grouped
into *cubes*: for one coverage (all hypotheses of a stack that cover the same source words) and one
uncovered span, the grid of (hypothesis, option) pairs, hypotheses sorted by score (best first) and
options by their estimated score (the phrase table scores plus the context-free LM estimate, the
order of the future-cost table). A stack is filled by popping, best first, at most ``pop_limit``
extensions from a priority queue of all the cubes that lead into it: it starts with the top-left
corner of every cube, and popping cell ``(i, j)`` pushes ``(i + 1, j)`` and ``(i, j + 1)`` (each
cell once). A pushed cell is scored completely (LM included: the LM makes the grid non-monotone,
which is why the result is approximate); the queue is ordered by score plus future cost. The stack
is then pruned to ``stack_size`` as in the stack search and its cubes into later stacks are built.

Moses's ``-search-algorithm 1`` semantics: ``-cube-pruning-pop-limit`` (default 1000) pops per
stack; the hypotheses of a cube are those of its coverage that the distortion limit allows to jump
to the span (``|start - (last_end + 1)| <= limit``, and for every hypothesis the span must end close
enough to the first gap); the stack is pruned to ``-s`` after its pops; recombination happens when a
popped hypothesis enters the stack (the loser stays as an extra incoming edge, Moses's arc list, so
k-best lists and lattices come from the same kind of search graph). Deviations: one queue per stack
over all its cubes instead of Moses's queue of per-coverage queues (the pop order is the same: the
best cell of any cube first); ties are broken by push order, which makes the search deterministic;
Moses's ``cube-pruning-diversity`` (default 0) and lazy scoring (default off) are not offered.

The returned search graph has the layout of :func:`smtlib.decoder.search.search_nb`'s.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.decoder.lm import lm_score_word
from smtlib.decoder.search import _covered, _first_gap, _grow1, _grow2, _intern, _mix, _prune, _rehash_states

NEG_INF = -np.inf


@numba.njit(cache=True)
def _options_by_estimate(span_first, span_cnt, o_est):
    """Per span, its option ids sorted by estimated score (best first, stable)."""
    order = np.arange(o_est.shape[0])
    for i in range(span_first.shape[0]):
        for ln in range(span_first.shape[1]):
            cnt = span_cnt[i, ln]
            if cnt > 1:
                first = span_first[i, ln]
                perm = np.argsort(-o_est[first : first + cnt], kind="mergesort")
                for r in range(cnt):
                    order[first + r] = first + perm[r]
    return order


@numba.njit(cache=True, inline="always")
def _before(pri_a, seq_a, pri_b, seq_b):
    """Whether queue item a comes out before item b: higher priority first, then earlier push."""
    return pri_a > pri_b or (pri_a == pri_b and seq_a < seq_b)


@numba.njit(cache=True)
def _heap_push(heap, size, item, it_pri):
    """Push ``item`` (ordered by ``it_pri``, ties by item id = push order) onto the binary heap."""
    i = size
    heap[i] = item
    while i > 0:
        p = (i - 1) >> 1
        if _before(it_pri[heap[i]], heap[i], it_pri[heap[p]], heap[p]):
            heap[i], heap[p] = heap[p], heap[i]
            i = p
        else:
            break
    return size + 1


@numba.njit(cache=True)
def _heap_pop(heap, size, it_pri):
    """Remove and return the heap's best item."""
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        b = a + 1
        c = a
        if b < size and _before(it_pri[heap[b]], heap[b], it_pri[heap[a]], heap[a]):
            c = b
        if _before(it_pri[heap[c]], heap[c], it_pri[heap[i]], heap[i]):
            heap[i], heap[c] = heap[c], heap[i]
            i = c
        else:
            break
    return top, size


@numba.njit(cache=True)
def _lm_score(u, o, complete, n_sid, n_opts, o_woff, o_words, lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map,
              lm_eos, w_lm, s_ctx, s_bo, s_len, s_lm, n_states, sh_keys, sh_ids, cc_keys, cc_sum, cc_sid, cc_n,
              ca, ba, cb, bb, scratch, out_sid, out_lm, stats):
    """``w_LM . LM`` of option ``o`` after node ``u``'s LM states (cached as in the stack search).

    Writes each LM's new state id and increment into ``out_sid``/``out_lm``; the caller has made room
    for one new state per LM. Returns (weighted LM score, state count, cache entry count).
    """
    n_lm = lm_order.shape[0]
    cc_cap = cc_keys.shape[0]
    total = 0.0
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
                lp, ln = lm_score_word(lm_tab, lm_tabf, lm_off[k], lm_mask[k], lm_order[k], 0, ca, ba, ln,
                                       lm_map[k, o_words[wi]], cb, bb, scratch)
                lmsum += lp
                ca, cb = cb, ca
                ba, bb = bb, ba
            nsid, n_states = _intern(k, ca, ba, ln, s_ctx, s_bo, s_len, s_lm, n_states, sh_keys, sh_ids)
            if 2 * (cc_n + 1) > cc_cap:  # a full cache is simply emptied
                cc_keys[:] = -1
                cc_n = 0
                cslot = _mix(np.uint64(7), ckey) & cmask
            cc_keys[cslot] = ckey
            cc_sum[cslot] = lmsum
            cc_sid[cslot] = nsid
            cc_n += 1
        out_sid[k] = nsid
        if complete:
            lp, ln = lm_score_word(lm_tab, lm_tabf, lm_off[k], lm_mask[k], lm_order[k], 0, ca, ba, ln, lm_eos[k],
                                   cb, bb, scratch)
            lmsum += lp
            ca, cb = cb, ca
            ba, bb = bb, ba
        total += w_lm[k] * lmsum
        out_lm[k] = lmsum
    return total, n_states, cc_n


@numba.njit(cache=True)
def cube_search_nb(n, maxlen, stack_size, pop_limit, dl, use_lr,
                   o_start, o_end, o_woff, o_words, o_static, o_lr, o_est, span_first, span_cnt, fct,
                   lm_tab, lm_tabf, lm_off, lm_mask, lm_order, lm_map, lm_bos, lm_eos,
                   w_lm, w_dist, w_lr):
    """Run the cube-pruning search on one sentence; return the search graph as ``search_nb`` does."""
    n_lm = lm_order.shape[0]
    M = 1
    for k in range(n_lm):
        M = max(M, lm_order[k] - 1)
    CW = max(1, (n + 63) // 64)
    n_opts = o_static.shape[0]
    by_est = _options_by_estimate(span_first, span_cnt, o_est)

    # ---- nodes, edges, recombination table (as in search_nb)
    ncap = 1024
    n_cov = np.zeros((ncap, CW), dtype=np.uint64)
    n_last_start = np.zeros(ncap, dtype=np.int64)
    n_last_end = np.zeros(ncap, dtype=np.int64)
    n_last_opt = np.zeros(ncap, dtype=np.int64)
    n_sid = np.zeros((ncap, n_lm), dtype=np.int64)
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
    e_lm = np.zeros((ecap, n_lm))
    ne = 0
    hcap = 4096
    h_keys = np.zeros(hcap, dtype=np.uint64)
    h_node = np.full(hcap, -1, dtype=np.int64)
    hn = 0
    st_nodes = np.zeros((n + 1, max(pop_limit, 1)), dtype=np.int64)
    st_cnt = np.zeros(n + 1, dtype=np.int64)
    st_thresh = np.full(n + 1, NEG_INF)

    # ---- interned LM states and the LM cache (as in search_nb)
    s_cap = 1024
    s_ctx = np.zeros((s_cap, M), dtype=np.int64)
    s_bo = np.zeros((s_cap, M), dtype=np.float32)
    s_len = np.zeros(s_cap, dtype=np.int64)
    s_lm = np.zeros(s_cap, dtype=np.int64)
    n_states = 0
    sh_cap = 4096
    sh_keys = np.zeros(sh_cap, dtype=np.uint64)
    sh_ids = np.zeros(sh_cap, dtype=np.int64)
    cc_keys = np.full(1 << 16, -1, dtype=np.int64)
    cc_sum = np.zeros(1 << 16)
    cc_sid = np.zeros(1 << 16, dtype=np.int64)
    cc_n = 0

    # ---- cubes: source hypotheses (sorted), span, target stack; linked per target stack
    ccap = 256
    c_hyp_off = np.zeros(ccap, dtype=np.int64)
    c_hyp_cnt = np.zeros(ccap, dtype=np.int64)
    c_start = np.zeros(ccap, dtype=np.int64)
    c_end = np.zeros(ccap, dtype=np.int64)
    c_lo = np.zeros(ccap, dtype=np.int64)
    c_hi = np.zeros(ccap, dtype=np.int64)
    c_next = np.zeros(ccap, dtype=np.int64)
    n_cubes = 0
    c_hyps = np.zeros(4096, dtype=np.int64)
    n_chyps = 0
    first_cube = np.full(n + 1, -1, dtype=np.int64)

    # ---- queue items (reset per stack): cube, cell, node, option, score, future cost, LM states/values
    icap = 1024
    it_cube = np.zeros(icap, dtype=np.int64)
    it_i = np.zeros(icap, dtype=np.int64)
    it_j = np.zeros(icap, dtype=np.int64)
    it_sc = np.zeros(icap)
    it_fc = np.zeros(icap)
    it_pri = np.zeros(icap)
    it_sid = np.zeros((icap, n_lm), dtype=np.int64)
    it_lm = np.zeros((icap, n_lm))
    heap = np.zeros(icap, dtype=np.int64)

    # the empty hypothesis
    n_last_start[0] = -1
    n_last_end[0] = -1
    n_last_opt[0] = -1
    scratch = np.zeros(M + 2, dtype=np.bool_)
    ca = np.zeros(M + 1, dtype=np.int64)
    ba = np.zeros(M + 1, dtype=np.float32)
    cb = np.zeros(M + 1, dtype=np.int64)
    bb = np.zeros(M + 1, dtype=np.float32)
    for k in range(n_lm):
        ca[:] = 0
        ba[:] = 0
        cb[:] = 0
        bb[:] = 0
        ln = 0
        if lm_order[k] > 1:
            lm_score_word(lm_tab, lm_tabf, lm_off[k], lm_mask[k], lm_order[k], 0, ca, ba, 0, lm_bos[k], cb, bb,
                          scratch)
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
    cell_sid = np.zeros(n_lm, dtype=np.int64)
    cell_lm = np.zeros(n_lm)
    # counters: cells pushed, cells scored, hypotheses popped, LM scorings not in the cache
    stats = np.zeros(4, dtype=np.int64)

    for s in range(n + 1):
        if s > 0:
            # ---- fill stack s: pop the best cells of its cubes
            total_cells = 0
            c = first_cube[s]
            while c >= 0:
                total_cells += c_hyp_cnt[c] * span_cnt[c_start[c], c_end[c] - c_start[c] - 1]
                c = c_next[c]
            seen_off = np.zeros(n_cubes + 1, dtype=np.int64)
            c = first_cube[s]
            pos = 0
            while c >= 0:
                seen_off[c] = pos
                pos += c_hyp_cnt[c] * span_cnt[c_start[c], c_end[c] - c_start[c] - 1]
                c = c_next[c]
            seen = np.zeros(total_cells, dtype=np.bool_)
            n_items = 0
            hsize = 0
            complete = s == n
            pops = 0
            pending_c = first_cube[s]
            # cells to push are handled in one loop: first every cube's corner, then the pops' neighbours
            while True:
                # pick the next cell to push, if any
                pc = pending_c
                have = pc >= 0
                if have:
                    pending_c = c_next[pc]
                if not have:
                    if hsize == 0 or pops >= pop_limit:
                        break
                    # ---- pop the best cell into the stack
                    item, hsize = _heap_pop(heap, hsize, it_pri)
                    pops += 1
                    stats[2] += 1
                    cc = it_cube[item]
                    ci = it_i[item]
                    cj = it_j[item]
                    u = c_hyps[c_hyp_off[cc] + ci]
                    first = span_first[c_start[cc], c_end[cc] - c_start[cc] - 1]
                    o = by_est[first + cj]
                    start = c_start[cc]
                    end = c_end[cc]
                    sc = it_sc[item]
                    for i in range(CW):
                        new_cov[i] = n_cov[u, i]
                    for i in range(start, end):
                        new_cov[i >> 6] |= np.uint64(1) << np.uint64(i & 63)
                    h = np.uint64(0x12345)
                    for i in range(CW):
                        h = _mix(h, np.int64(new_cov[i] & np.uint64(0x7FFFFFFFFFFFFFFF)))
                        h = _mix(h, np.int64(new_cov[i] >> np.uint64(63)))
                    if not complete:
                        for k in range(n_lm):
                            h = _mix(h, it_sid[item, k])
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
                                    if n_sid[v, k] != it_sid[item, k]:
                                        same = False
                            if same:
                                found = v
                                break
                        slot = (slot + np.uint64(1)) & hmask
                    if ne == ecap:
                        ecap *= 2
                        e_tail = _grow1(e_tail, ecap)
                        e_head = _grow1(e_head, ecap)
                        e_opt = _grow1(e_opt, ecap)
                        e_score = _grow1(e_score, ecap)
                        e_lm = _grow2(e_lm, ecap)
                    e_tail[ne] = u
                    e_opt[ne] = o
                    e_score[ne] = sc
                    e_lm[ne] = it_lm[item]
                    if found >= 0 and n_alive[found]:
                        e_head[ne] = found
                        if sc > n_score[found]:
                            n_score[found] = sc
                            n_best[found] = ne
                            n_last_opt[found] = o
                            n_last_start[found] = start
                        ne += 1
                    else:
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
                            n_sid[v, k] = it_sid[item, k]
                        n_score[v] = sc
                        n_fc[v] = 0.0 if complete else it_fc[item]
                        n_best[v] = ne
                        n_alive[v] = True
                        n_stack[v] = s
                        e_head[ne] = v
                        ne += 1
                        if found >= 0:
                            h_node[slot] = v
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
                        if st_cnt[s] == st_nodes.shape[1]:
                            grown = np.zeros((n + 1, 2 * st_nodes.shape[1]), dtype=np.int64)
                            grown[:, : st_nodes.shape[1]] = st_nodes
                            st_nodes = grown
                        st_nodes[s, st_cnt[s]] = v
                        st_cnt[s] += 1
                    # ---- its two neighbours
                    n_o = span_cnt[c_start[cc], c_end[cc] - c_start[cc] - 1]
                    for step in range(2):
                        ni = ci + 1 if step == 0 else ci
                        nj = cj if step == 0 else cj + 1
                        if ni >= c_hyp_cnt[cc] or nj >= n_o:
                            continue
                        cell = seen_off[cc] + ni * n_o + nj
                        if seen[cell]:
                            continue
                        seen[cell] = True
                        # score and push the neighbour (the same code as a corner, below)
                        if n_items == it_cube.shape[0]:
                            icap = 2 * it_cube.shape[0]
                            it_cube = _grow1(it_cube, icap)
                            it_i = _grow1(it_i, icap)
                            it_j = _grow1(it_j, icap)
                            it_sc = _grow1(it_sc, icap)
                            it_fc = _grow1(it_fc, icap)
                            it_pri = _grow1(it_pri, icap)
                            it_sid = _grow2(it_sid, icap)
                            it_lm = _grow2(it_lm, icap)
                            heap = _grow1(heap, icap)
                        if n_states + n_lm + 1 >= s_ctx.shape[0]:
                            s_ctx = _grow2(s_ctx, 2 * s_ctx.shape[0])
                            s_bo = _grow2(s_bo, 2 * s_bo.shape[0])
                            s_len = _grow1(s_len, 2 * s_len.shape[0])
                            s_lm = _grow1(s_lm, 2 * s_lm.shape[0])
                        if 2 * (n_states + n_lm + 1) > sh_cap:
                            sh_cap *= 2
                            sh_keys = np.zeros(sh_cap, dtype=np.uint64)
                            sh_ids = np.zeros(sh_cap, dtype=np.int64)
                            _rehash_states(s_ctx, s_len, s_lm, n_states, sh_keys, sh_ids)
                        nu = c_hyps[c_hyp_off[cc] + ni]
                        no = by_est[first + nj]
                        sc, fc_new = _base_score(nu, no, c_start[cc], c_end[cc], c_lo[cc], c_hi[cc], n_score, n_fc,
                                                 n_last_end, n_last_start, n_last_opt, fct, o_static, o_lr, use_lr,
                                                 w_dist, w_lr)
                        stats[0] += 1
                        stats[1] += 1
                        lm_sc, n_states, cc_n = _lm_score(
                            nu, no, complete, n_sid, n_opts, o_woff, o_words, lm_tab, lm_tabf, lm_off, lm_mask,
                            lm_order, lm_map, lm_eos, w_lm, s_ctx, s_bo, s_len, s_lm, n_states, sh_keys, sh_ids,
                            cc_keys, cc_sum, cc_sid, cc_n, ca, ba, cb, bb, scratch, cell_sid, cell_lm, stats)
                        sc += lm_sc
                        it_cube[n_items] = cc
                        it_i[n_items] = ni
                        it_j[n_items] = nj
                        it_sc[n_items] = sc
                        it_fc[n_items] = fc_new
                        it_pri[n_items] = sc + (0.0 if complete else fc_new)
                        it_sid[n_items] = cell_sid
                        it_lm[n_items] = cell_lm
                        hsize = _heap_push(heap, hsize, n_items, it_pri)
                        n_items += 1
                    continue
                # ---- push a cube's corner
                n_o = span_cnt[c_start[pc], c_end[pc] - c_start[pc] - 1]
                seen[seen_off[pc]] = True
                if n_items == it_cube.shape[0]:
                    icap = 2 * it_cube.shape[0]
                    it_cube = _grow1(it_cube, icap)
                    it_i = _grow1(it_i, icap)
                    it_j = _grow1(it_j, icap)
                    it_sc = _grow1(it_sc, icap)
                    it_fc = _grow1(it_fc, icap)
                    it_pri = _grow1(it_pri, icap)
                    it_sid = _grow2(it_sid, icap)
                    it_lm = _grow2(it_lm, icap)
                    heap = _grow1(heap, icap)
                if n_states + n_lm + 1 >= s_ctx.shape[0]:
                    s_ctx = _grow2(s_ctx, 2 * s_ctx.shape[0])
                    s_bo = _grow2(s_bo, 2 * s_bo.shape[0])
                    s_len = _grow1(s_len, 2 * s_len.shape[0])
                    s_lm = _grow1(s_lm, 2 * s_lm.shape[0])
                if 2 * (n_states + n_lm + 1) > sh_cap:
                    sh_cap *= 2
                    sh_keys = np.zeros(sh_cap, dtype=np.uint64)
                    sh_ids = np.zeros(sh_cap, dtype=np.int64)
                    _rehash_states(s_ctx, s_len, s_lm, n_states, sh_keys, sh_ids)
                nu = c_hyps[c_hyp_off[pc]]
                no = by_est[span_first[c_start[pc], c_end[pc] - c_start[pc] - 1]]
                sc, fc_new = _base_score(nu, no, c_start[pc], c_end[pc], c_lo[pc], c_hi[pc], n_score, n_fc,
                                         n_last_end, n_last_start, n_last_opt, fct, o_static, o_lr, use_lr, w_dist,
                                         w_lr)
                stats[0] += 1
                stats[1] += 1
                lm_sc, n_states, cc_n = _lm_score(
                    nu, no, complete, n_sid, n_opts, o_woff, o_words, lm_tab, lm_tabf, lm_off, lm_mask, lm_order,
                    lm_map, lm_eos, w_lm, s_ctx, s_bo, s_len, s_lm, n_states, sh_keys, sh_ids, cc_keys, cc_sum,
                    cc_sid, cc_n, ca, ba, cb, bb, scratch, cell_sid, cell_lm, stats)
                sc += lm_sc
                it_cube[n_items] = pc
                it_i[n_items] = 0
                it_j[n_items] = 0
                it_sc[n_items] = sc
                it_fc[n_items] = fc_new
                it_pri[n_items] = sc + (0.0 if complete else fc_new)
                it_sid[n_items] = cell_sid
                it_lm[n_items] = cell_lm
                hsize = _heap_push(heap, hsize, n_items, it_pri)
                n_items += 1
            if s == n:
                break
            _prune(s, stack_size, st_nodes, st_cnt, st_thresh, n_score, n_fc, n_alive)

        # ---- the cubes out of stack s: group its hypotheses by coverage (best first)
        m = st_cnt[s]
        if m == 0:
            continue
        members = st_nodes[s, :m].copy()
        key = np.empty(m)
        for i in range(m):
            key[i] = -n_score[members[i]]
        members = members[np.argsort(key, kind="mergesort")]
        grp = np.full(m, -1, dtype=np.int64)
        reps = np.empty(m, dtype=np.int64)
        n_groups = 0
        for i in range(m):
            v = members[i]
            for g in range(n_groups):
                r = reps[g]
                same = True
                for w in range(CW):
                    if n_cov[r, w] != n_cov[v, w]:
                        same = False
                        break
                if same:
                    grp[i] = g
                    break
            if grp[i] < 0:
                reps[n_groups] = v
                grp[i] = n_groups
                n_groups += 1
        for g in range(n_groups):
            cov = n_cov[reps[g]]
            gap = _first_gap(cov, n)
            for start in range(gap, n):
                if _covered(cov, start):
                    continue
                lo = start
                while lo > 0 and not _covered(cov, lo - 1):
                    lo -= 1
                for length in range(1, maxlen + 1):
                    end = start + length
                    if end > n or _covered(cov, end - 1):
                        break
                    if span_cnt[start, length - 1] == 0:
                        continue
                    if dl >= 0 and start != gap and abs(end - gap) > dl:
                        continue
                    hi = end
                    while hi < n and not _covered(cov, hi):
                        hi += 1
                    if n_chyps + m > c_hyps.shape[0]:
                        c_hyps = _grow1(c_hyps, 2 * (n_chyps + m))
                    cnt = 0
                    for i in range(m):
                        if grp[i] != g:
                            continue
                        v = members[i]
                        jump = start - (n_last_end[v] + 1)
                        if dl >= 0 and abs(jump) > dl:
                            continue
                        c_hyps[n_chyps + cnt] = v
                        cnt += 1
                    if cnt == 0:
                        continue
                    if n_cubes == c_hyp_off.shape[0]:
                        ccap = 2 * n_cubes
                        c_hyp_off = _grow1(c_hyp_off, ccap)
                        c_hyp_cnt = _grow1(c_hyp_cnt, ccap)
                        c_start = _grow1(c_start, ccap)
                        c_end = _grow1(c_end, ccap)
                        c_lo = _grow1(c_lo, ccap)
                        c_hi = _grow1(c_hi, ccap)
                        c_next = _grow1(c_next, ccap)
                    c_hyp_off[n_cubes] = n_chyps
                    c_hyp_cnt[n_cubes] = cnt
                    n_chyps += cnt
                    c_start[n_cubes] = start
                    c_end[n_cubes] = end
                    c_lo[n_cubes] = lo
                    c_hi[n_cubes] = hi
                    ns = s + length
                    c_next[n_cubes] = first_cube[ns]
                    first_cube[ns] = n_cubes
                    n_cubes += 1
    goal = -1
    if n == 0:
        goal = 0
    else:
        for i in range(st_cnt[n]):
            if n_alive[st_nodes[n, i]]:
                goal = st_nodes[n, i]
    return (goal, nn, ne, n_score[:nn].copy(), n_best[:nn].copy(), n_alive[:nn].copy(), n_stack[:nn].copy(),
            n_last_end[:nn].copy(), n_last_start[:nn].copy(), n_last_opt[:nn].copy(), e_tail[:ne].copy(),
            e_head[:ne].copy(), e_opt[:ne].copy(), e_score[:ne].copy(), e_lm[:ne].copy(), stats)


@numba.njit(cache=True, inline="always")
def _base_score(u, o, start, end, lo, hi, n_score, n_fc, n_last_end, n_last_start, n_last_opt, fct, o_static, o_lr,
                use_lr, w_dist, w_lr):
    """Score of extending node ``u`` by option ``o`` without the LM, and the new future cost."""
    fc_new = n_fc[u] - fct[lo, hi] + fct[lo, start] + fct[end, hi]
    u_end = n_last_end[u]
    jump = start - (u_end + 1)
    if jump < 0:
        jump = -jump
    if start == u_end + 1:
        orient = 0
    elif end == n_last_start[u]:
        orient = 1
    else:
        orient = 2
    sc = n_score[u] - w_dist * jump
    if use_lr and n_last_opt[u] >= 0:
        sc += w_lr[3 + orient] * o_lr[n_last_opt[u], 3 + orient]
    sc = sc + o_static[o]
    if use_lr:
        sc += w_lr[orient] * o_lr[o, orient]
    return sc, fc_new
