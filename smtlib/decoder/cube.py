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

The graph, stacks, spans, scores, recombination and pruning are those of
:mod:`smtlib.decoder.search_graph`, the LM states and cache those of :mod:`smtlib.decoder.search_lm`
(both shared with the stack search); this module adds the cubes (:data:`Cubes`, built per coverage
group by :func:`_add_cubes`) and the queue of scored cells (:data:`CellQueue`, filled by
:func:`_fill_stack`, which also empties it into the stack).

Reference counts. numba updates an array's reference count atomically (about 20 cycles each) when
the array is passed to a compiled function, bound to a new variable (an inlined function's
parameters too) or taken out of a tuple, and LLVM removes only the updates it can prove redundant.
So :func:`_fill_stack` writes out what a pop does (the coverage, recombination and new edge or node:
the same code as the stack search's :func:`smtlib.decoder.search._expand`), and it and
:func:`_add_cubes`'s loop work on *borrowed* arrays (:mod:`smtlib.decoder.borrowed`: the same arrays
with no reference count, valid while the caller holds them), so the per-cell, per-pop and per-word
code binds arrays for free. The operations are the same and in the same order, so the search is the
same, bytes out included (``benchmarks/results/profile_decode.md``).
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from smtlib.decoder.borrowed import borrowed
from smtlib.decoder.search_graph import (add_start_node, extension_base, finish, future_cost_after, graph_has_room,
                                         grow1, make_graph_room, mix, new_graph, new_stacks, open_spans, prune)
from smtlib.decoder.lm import lm_score_word
from smtlib.decoder.search_lm import (cache_slot, intern_state, lm_end, make_state_room, start_states,
                                      states_have_room)

#: the cubes built so far: per cube its hypotheses ``hyps[hyp_off:hyp_off + hyp_cnt]`` (best first),
#: its span ``start:end`` in the uncovered run ``lo:hi``, the next cube into the same stack; ``first[s]``
#: the first cube into stack ``s``; ``size`` = [cubes, hypotheses]
Cubes = namedtuple("Cubes", "hyp_off hyp_cnt start end lo hi next hyps first size")
#: the scored cells of one stack's cubes: cube, cell (i, j), score, future cost, priority, LM state ids
#: and increments; a binary heap of item ids; ``size`` = [items, heap size]
CellQueue = namedtuple("CellQueue", "cube i j sc fc pri sid lm heap size")
#: per-search work arrays: options per span by estimate, a new hypothesis's coverage, LM state ids and
#: increments, open spans, counters (cells pushed, cells scored, hypotheses popped, LM cache misses)
CubeWork = namedtuple("CubeWork", "by_est cov sid lm spans stats")


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


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
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
def cube_search_nb(inp):
    """Run the cube-pruning search on one :data:`~smtlib.decoder.search_graph.SearchInput`.

    Returns its :data:`~smtlib.decoder.search_graph.SearchGraph`, as the stack search does.
    """
    n = inp.n
    n_lm = inp.lms.order.shape[0]
    opts = inp.opts
    st, sids = start_states(inp.lms)
    g = new_graph(max(1, (n + 63) // 64), n_lm)
    add_start_node(g, sids, opts.fct[0, n])
    stk = new_stacks(n, max(inp.pop_limit, 1))
    cubes = Cubes(np.zeros(256, dtype=np.int64), np.zeros(256, dtype=np.int64), np.zeros(256, dtype=np.int64),
                  np.zeros(256, dtype=np.int64), np.zeros(256, dtype=np.int64), np.zeros(256, dtype=np.int64),
                  np.zeros(256, dtype=np.int64), np.zeros(4096, dtype=np.int64), np.full(n + 1, -1, dtype=np.int64),
                  np.zeros(2, dtype=np.int64))
    icap = 1024
    q = CellQueue(np.zeros(icap, dtype=np.int64), np.zeros(icap, dtype=np.int64), np.zeros(icap, dtype=np.int64),
                  np.zeros(icap), np.zeros(icap), np.zeros(icap), np.zeros((icap, n_lm), dtype=np.int64),
                  np.zeros((icap, n_lm)), np.zeros(icap, dtype=np.int64), np.zeros(2, dtype=np.int64))
    work = CubeWork(_options_by_estimate(opts.span_first, opts.span_cnt, opts.est),
                    np.zeros(g.cov.shape[1], dtype=np.uint64), np.zeros(n_lm, dtype=np.int64), np.zeros(n_lm),
                    np.zeros((max(n, 1) * inp.maxlen, 4), dtype=np.int64), np.zeros(4, dtype=np.int64))
    for s in range(n + 1):
        if s > 0:
            g, st, q = _make_room(inp, g, st, stk, cubes, q, s)
            _fill_stack(inp, g, st, stk, cubes, q, work, s)
            if s == n:
                break
            prune(stk, s, inp.stack_size, g)
        cubes = _add_cubes(inp, g, stk, cubes, work, s)
    return finish(g, stk, n, work.stats)


@numba.njit(cache=True, inline="always")
def _n_options(inp, cubes, c):
    """The number of options of cube ``c``'s span."""
    return inp.opts.span_cnt[cubes.start[c], cubes.end[c] - cubes.start[c] - 1]


@numba.njit(cache=True)
def _fill_stack(inp, g, st, stk, cubes, q, work, s):
    """Fill stack ``s``: push every cube's corner, then pop the best cell (at most ``pop_limit`` times),
    pushing its two neighbours (each cell once) before the next pop.

    Cells to push wait in a first-in first-out list, so that one piece of code scores corners and
    neighbours alike. The caller has made room for every cell (queue items, ``n_lm`` LM states each)
    and every pop (graph). Pushing a cell and popping one are written out on local arrays, as the
    stack search's option loop is (:func:`smtlib.decoder.search._expand`), and every array is
    borrowed (the module docstring says why).
    """
    # every array of the search without reference counting (smtlib.decoder.borrowed): this function
    # neither returns nor keeps one, and the caller has made room, so none is reallocated here
    inp, g, st, stk, cubes, q, work = (borrowed(inp), borrowed(g), borrowed(st), borrowed(stk), borrowed(cubes),
                                       borrowed(q), borrowed(work))
    seen_off = np.zeros(cubes.size[0] + 1, dtype=np.int64)
    pos = 0
    n_corners = 0
    c = cubes.first[s]
    while c >= 0:
        seen_off[c] = pos
        pos += cubes.hyp_cnt[c] * _n_options(inp, cubes, c)
        n_corners += 1
        c = cubes.next[c]
    seen = np.zeros(pos, dtype=np.bool_)
    pending = np.empty((max(n_corners, 2), 3), dtype=np.int64)
    head, tail = 0, 0
    c = cubes.first[s]
    while c >= 0:
        seen[seen_off[c]] = True
        pending[tail, 0] = c
        pending[tail, 1] = 0
        pending[tail, 2] = 0
        tail += 1
        c = cubes.next[c]
    opts, w, lms = inp.opts, inp.w, inp.lms
    static, o_lr, woff, words, span_first, fct = opts.static, opts.lr, opts.woff, opts.words, opts.span_first, opts.fct
    w_lm, w_lr, use_lr, w_dist = w.lm, w.lr, w.use_lr, w.dist
    tab, tabf, lm_off, lm_mask, lm_order, lm_map = lms.tab, lms.tabf, lms.off, lms.mask, lms.order, lms.map
    (s_ctx, s_bo, s_len, s_lm, s_keys, s_ids, cache_keys, cache_sum, cache_sid, s_size, st_ca, st_ba, st_cb, st_bb,
     scratch) = st
    score, fc, last_end, last_start, last_opt, n_sid = g.score, g.fc, g.last_end, g.last_start, g.last_opt, g.sid
    c_hyps, c_hyp_off, c_start, c_end = cubes.hyps, cubes.hyp_off, cubes.start, cubes.end
    c_lo, c_hi = cubes.lo, cubes.hi
    it_cube, it_i, it_j, it_sc, it_fc, it_pri = q.cube, q.i, q.j, q.sc, q.fc, q.pri
    it_sid, it_lm, heap = q.sid, q.lm, q.heap
    by_est, stats = work.by_est, work.stats
    # for the pops: the graph's other arrays, the stacks', the cubes' counts, the new coverage
    g_cov, g_best, g_alive, g_stack, g_size = g.cov, g.best, g.alive, g.stack, g.size
    e_tail, e_head, e_opt, e_score, e_lm, rc_keys, rc_node = g.e_tail, g.e_head, g.e_opt, g.e_score, g.e_lm, \
        g.rc_keys, g.rc_node
    stk_nodes, stk_cnt = stk.nodes, stk.cnt
    c_hyp_cnt, span_cnt, new_cov = cubes.hyp_cnt, opts.span_cnt, work.cov
    cw = g_cov.shape[1]
    rc_mask = np.uint64(rc_keys.shape[0] - 1)
    n_lm = w_lm.shape[0]
    n_opts = static.shape[0]
    complete = s == inp.n
    n_items = 0
    hsize = 0
    pops = 0
    while True:
        if head < tail:
            # ---- score a cell completely (LM included) and push it; priority = score + future cost
            c, i, j = pending[head, 0], pending[head, 1], pending[head, 2]
            head += 1
            if head == tail:
                head, tail = 0, 0
            start, end = c_start[c], c_end[c]
            u = c_hyps[c_hyp_off[c] + i]
            o = by_est[span_first[start, end - start - 1] + j]
            fc_new = future_cost_after(fc[u], fct, start, end, c_lo[c], c_hi[c])
            base, orient = extension_base(score[u], last_end[u], last_start[u], last_opt[u], start, end, w_dist, w_lr,
                                          o_lr, use_lr)
            sc = base + static[o]
            if use_lr:
                sc += w_lr[orient] * o_lr[o, orient]
            stats[0] += 1
            stats[1] += 1
            lm_sc = 0.0
            for k in range(n_lm):  # as in smtlib.decoder.search._expand
                sid = n_sid[u, k]
                ckey = (sid * n_opts + o) * n_lm + k
                slot = cache_slot(cache_keys, ckey)
                if cache_keys[slot] == ckey:
                    lmsum = cache_sum[slot]
                    nsid = cache_sid[slot]
                else:
                    stats[3] += 1
                    ca, ba, cb, bb = st_ca, st_ba, st_cb, st_bb
                    ln = s_len[sid]
                    for x in range(ln):
                        ca[x] = s_ctx[sid, x]
                        ba[x] = s_bo[sid, x]
                    lmsum = 0.0
                    for wi in range(woff[o], woff[o + 1]):
                        lp, ln = lm_score_word(tab, tabf, lm_off[k], lm_mask[k], lm_order[k], 0, ca, ba, ln,
                                               lm_map[k, words[wi]], cb, bb, scratch)
                        lmsum += lp
                        ca, cb = cb, ca
                        ba, bb = bb, ba
                    nsid = intern_state(s_ctx, s_bo, s_len, s_lm, s_keys, s_ids, s_size, k, ca, ba, ln)
                    if 2 * (s_size[1] + 1) > cache_keys.shape[0]:  # a full cache is simply emptied
                        cache_keys[:] = -1
                        s_size[1] = 0
                        slot = cache_slot(cache_keys, ckey)
                    cache_keys[slot] = ckey
                    cache_sum[slot] = lmsum
                    cache_sid[slot] = nsid
                    s_size[1] += 1
                it_sid[n_items, k] = nsid
                if complete:
                    lmsum += lm_end(st, lms, k, nsid)
                lm_sc += w_lm[k] * lmsum
                it_lm[n_items, k] = lmsum
            sc += lm_sc
            it_cube[n_items] = c
            it_i[n_items] = i
            it_j[n_items] = j
            it_sc[n_items] = sc
            it_fc[n_items] = fc_new
            it_pri[n_items] = sc + (0.0 if complete else fc_new)
            hsize = _heap_push(heap, hsize, n_items, it_pri)
            n_items += 1
            continue
        if hsize == 0 or pops >= inp.pop_limit:
            break
        # ---- pop the best cell
        item, hsize = _heap_pop(heap, hsize, it_pri)
        pops += 1
        stats[2] += 1
        # the popped cell into stack s: recombined into a live node, or a new node, written out on the
        # local arrays (the module docstring says why), as the stack search's _expand does it
        cc = it_cube[item]
        p_start, p_end = c_start[cc], c_end[cc]
        p_u = c_hyps[c_hyp_off[cc] + it_i[item]]
        p_o = by_est[span_first[p_start, p_end - p_start - 1] + it_j[item]]
        for x in range(cw):
            new_cov[x] = g_cov[p_u, x]
        for x in range(p_start, p_end):
            new_cov[x >> 6] |= np.uint64(1) << np.uint64(x & 63)
        rc_h = np.uint64(0x12345)
        for x in range(cw):
            rc_h = mix(rc_h, np.int64(new_cov[x] & np.uint64(0x7FFFFFFFFFFFFFFF)))
            rc_h = mix(rc_h, np.int64(new_cov[x] >> np.uint64(63)))
        if not complete:
            for k in range(n_lm):
                rc_h = mix(rc_h, it_sid[item, k])
            rc_h = mix(rc_h, p_end - 1)
            if use_lr:
                rc_h = mix(rc_h, p_o)
        rc_h |= np.uint64(1)
        rc_slot = rc_h & rc_mask
        found = -1
        while rc_keys[rc_slot] != 0:
            if rc_keys[rc_slot] == rc_h:
                rv = rc_node[rc_slot]
                same = True
                for x in range(cw):
                    if g_cov[rv, x] != new_cov[x]:
                        same = False
                if same and not complete:
                    if last_end[rv] != p_end - 1 or (use_lr and last_opt[rv] != p_o):
                        same = False
                    for k in range(n_lm):
                        if n_sid[rv, k] != it_sid[item, k]:
                            same = False
                if same:
                    found = rv
                    break
            rc_slot = (rc_slot + np.uint64(1)) & rc_mask
        ne = g_size[1]
        e_tail[ne] = p_u
        e_opt[ne] = p_o
        e_score[ne] = it_sc[item]
        for k in range(n_lm):
            e_lm[ne, k] = it_lm[item, k]
        g_size[1] = ne + 1
        if found >= 0 and g_alive[found]:
            e_head[ne] = found
            if it_sc[item] > score[found]:
                score[found] = it_sc[item]
                g_best[found] = ne
                last_opt[found] = p_o
                last_start[found] = p_start
        else:
            nv = g_size[0]
            g_size[0] = nv + 1
            for x in range(cw):
                g_cov[nv, x] = new_cov[x]
            last_start[nv] = p_start
            last_end[nv] = p_end - 1
            last_opt[nv] = p_o
            for k in range(n_lm):
                n_sid[nv, k] = it_sid[item, k]
            score[nv] = it_sc[item]
            fc[nv] = 0.0 if complete else it_fc[item]
            g_best[nv] = ne
            g_alive[nv] = True
            g_stack[nv] = s
            e_head[ne] = nv
            if found >= 0:
                rc_node[rc_slot] = nv  # replaces a pruned node with the same state
            else:
                rc_keys[rc_slot] = rc_h
                rc_node[rc_slot] = nv
                g_size[2] += 1
            stk_nodes[s, stk_cnt[s]] = nv  # at most pop_limit pops per stack: its width
            stk_cnt[s] += 1
        # its two neighbours wait to be pushed
        n_o = span_cnt[p_start, p_end - p_start - 1]
        for step in range(2):
            ni = it_i[item] + 1 if step == 0 else it_i[item]
            nj = it_j[item] if step == 0 else it_j[item] + 1
            if ni >= c_hyp_cnt[cc] or nj >= n_o:
                continue
            cell = seen_off[cc] + ni * n_o + nj
            if seen[cell]:
                continue
            seen[cell] = True
            pending[tail, 0] = cc
            pending[tail, 1] = ni
            pending[tail, 2] = nj
            tail += 1


@numba.njit(cache=True)
def _make_room(inp, g, st, stk, cubes, q, s):
    """Room for filling stack ``s``: its corners plus two neighbours per pop, ``pop_limit`` pops."""
    n_corners = 0
    c = cubes.first[s]
    while c >= 0:
        n_corners += 1
        c = cubes.next[c]
    cells = n_corners + 2 * inp.pop_limit
    if not graph_has_room(g, inp.pop_limit):
        g = make_graph_room(g, inp.pop_limit)
    n_lm = inp.lms.order.shape[0]
    if not states_have_room(st, n_lm * cells):
        st = make_state_room(st, n_lm * cells)
    if q.cube.shape[0] < cells:
        cap = q.cube.shape[0]
        while cap < cells:
            cap *= 2
        q = CellQueue(np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64),
                      np.empty(cap), np.empty(cap), np.empty(cap), np.empty((cap, n_lm), dtype=np.int64),
                      np.empty((cap, n_lm)), np.empty(cap, dtype=np.int64), q.size)
    return g, st, q


@numba.njit(cache=True)
def _coverage_groups(g, members):
    """Group index of each node of ``members`` by coverage (in order of first appearance), and a
    representative node per group; returns ``(group, representatives, number of groups)``."""
    m = members.shape[0]
    grp = np.full(m, -1, dtype=np.int64)
    reps = np.empty(m, dtype=np.int64)
    n_groups = 0
    cov = g.cov  # taken out of the graph once (an access through ``g`` costs two atomic reference counts)
    cw = cov.shape[1]
    for i in range(m):
        v = members[i]
        for gi in range(n_groups):
            r = reps[gi]
            same = True
            for x in range(cw):
                if cov[r, x] != cov[v, x]:
                    same = False
                    break
            if same:
                grp[i] = gi
                break
        if grp[i] < 0:
            reps[n_groups] = v
            grp[i] = n_groups
            n_groups += 1
    return grp, reps, n_groups


@numba.njit(cache=True)
def _add_cubes(inp, g, stk, cubes, work, s):
    """The cubes out of stack ``s``: per coverage group (hypotheses best first) and open span, those
    hypotheses that may jump to the span (a span none of them may jump to gets no cube). Returns the
    cubes (grown if needed).

    Room is made first, for the most the stack can add (one cube per group and open span, holding all
    of the group's hypotheses), so that the loop over (group, span) pairs, thousands per stack, neither
    reallocates an array nor rebinds one, and its arrays need no reference counting
    (:mod:`smtlib.decoder.borrowed`).
    """
    m = stk.cnt[s]
    if m == 0:
        return cubes
    members = stk.nodes[s, :m].copy()
    key = np.empty(m)
    for i in range(m):
        key[i] = -g.score[members[i]]
    members = members[np.argsort(key, kind="mergesort")]
    grp, reps, n_groups = _coverage_groups(g, members)
    group_size = np.zeros(n_groups, dtype=np.int64)
    for i in range(m):
        group_size[grp[i]] += 1
    more_cubes, more_hyps = 0, 0
    for gi in range(n_groups):
        n_spans = open_spans(g.cov[reps[gi]], inp.n, inp.maxlen, inp.opts.span_cnt, inp.dl, work.spans)
        more_cubes += n_spans
        more_hyps += n_spans * group_size[gi]
    cubes = _cube_room(cubes, more_cubes, more_hyps)
    _fill_cubes(borrowed(inp), borrowed(g), borrowed(cubes), borrowed(work), s, borrowed(members), borrowed(grp),
                borrowed(reps), n_groups)
    return cubes


@numba.njit(cache=True)
def _cube_room(cubes, more_cubes, more_hyps):
    """``cubes`` with room for ``more_cubes`` cubes and ``more_hyps`` hypotheses (capacities doubled)."""
    need = cubes.size[0] + more_cubes
    if need > cubes.hyp_off.shape[0]:
        cap = 2 * cubes.hyp_off.shape[0]
        while cap < need:
            cap *= 2
        cubes = Cubes(grow1(cubes.hyp_off, cap), grow1(cubes.hyp_cnt, cap), grow1(cubes.start, cap),
                      grow1(cubes.end, cap), grow1(cubes.lo, cap), grow1(cubes.hi, cap), grow1(cubes.next, cap),
                      cubes.hyps, cubes.first, cubes.size)
    need = cubes.size[1] + more_hyps
    if need > cubes.hyps.shape[0]:
        cap = 2 * cubes.hyps.shape[0]
        while cap < need:
            cap *= 2
        cubes = Cubes(cubes.hyp_off, cubes.hyp_cnt, cubes.start, cubes.end, cubes.lo, cubes.hi, cubes.next,
                      grow1(cubes.hyps, cap), cubes.first, cubes.size)
    return cubes


@numba.njit(cache=True)
def _fill_cubes(inp, g, cubes, work, s, members, grp, reps, n_groups):
    """:func:`_add_cubes`'s loop, on borrowed arrays (the caller holds them and has made room)."""
    spans = work.spans
    hyp_off, hyp_cnt, c_start, c_end, c_lo, c_hi, c_next = (cubes.hyp_off, cubes.hyp_cnt, cubes.start, cubes.end,
                                                            cubes.lo, cubes.hi, cubes.next)
    hyps, first, size = cubes.hyps, cubes.first, cubes.size
    last_end, g_cov, span_cnt = g.last_end, g.cov, inp.opts.span_cnt
    dl = inp.dl
    m = members.shape[0]
    for gi in range(n_groups):
        for r in range(open_spans(g_cov[reps[gi]], inp.n, inp.maxlen, span_cnt, dl, spans)):
            start, end = spans[r, 0], spans[r, 1]
            n_hyps = size[1]
            cnt = 0
            for i in range(m):
                if grp[i] != gi:
                    continue
                v = members[i]
                if dl >= 0 and abs(start - (last_end[v] + 1)) > dl:
                    continue
                hyps[n_hyps + cnt] = v
                cnt += 1
            if cnt == 0:
                continue
            c = size[0]
            hyp_off[c] = n_hyps
            hyp_cnt[c] = cnt
            size[1] = n_hyps + cnt
            c_start[c] = start
            c_end[c] = end
            c_lo[c] = spans[r, 2]
            c_hi[c] = spans[r, 3]
            ns = s + end - start
            c_next[c] = first[ns]
            first[ns] = c
            size[0] = c + 1
