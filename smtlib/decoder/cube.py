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
:func:`_push_cell`, emptied into the stack by :func:`_pop_cell`).
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from smtlib.decoder.search_graph import (add_hypothesis, add_start_node, extension_base, finish, future_cost_after,
                                         graph_has_room, grow1, grow2, make_graph_room, new_graph, new_stacks,
                                         open_spans, prune, push, recombination_slot, set_coverage)
from smtlib.decoder.search_lm import lm_extend, make_state_room, start_states, states_have_room

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
            g, st, stk, q = _fill_stack(inp, g, st, stk, cubes, q, work, s)
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
    pushing its two neighbours (each cell once)."""
    seen_off = np.zeros(cubes.size[0] + 1, dtype=np.int64)
    pos = 0
    c = cubes.first[s]
    while c >= 0:
        seen_off[c] = pos
        pos += cubes.hyp_cnt[c] * _n_options(inp, cubes, c)
        c = cubes.next[c]
    seen = np.zeros(pos, dtype=np.bool_)
    q.size[:] = 0
    complete = s == inp.n
    n_lm = inp.lms.order.shape[0]
    c = cubes.first[s]
    while c >= 0:
        seen[seen_off[c]] = True
        st, q = _make_cell_room(st, q, n_lm)
        _push_cell(inp, g, st, cubes, q, work, c, 0, 0, complete)
        c = cubes.next[c]
    pops = 0
    while q.size[1] > 0 and pops < inp.pop_limit:
        item, heap_size = _heap_pop(q.heap, q.size[1], q.pri)
        q.size[1] = heap_size
        pops += 1
        work.stats[2] += 1
        if not graph_has_room(g, 1):
            g = make_graph_room(g, 1)
        _pop_cell(inp, g, stk, cubes, q, work, item, s, complete)
        cc = q.cube[item]
        n_o = _n_options(inp, cubes, cc)
        for step in range(2):
            ni = q.i[item] + 1 if step == 0 else q.i[item]
            nj = q.j[item] if step == 0 else q.j[item] + 1
            if ni >= cubes.hyp_cnt[cc] or nj >= n_o:
                continue
            cell = seen_off[cc] + ni * n_o + nj
            if seen[cell]:
                continue
            seen[cell] = True
            st, q = _make_cell_room(st, q, n_lm)
            _push_cell(inp, g, st, cubes, q, work, cc, ni, nj, complete)
    return g, st, stk, q


@numba.njit(cache=True, inline="always")
def _make_cell_room(st, q, n_lm):
    """Room for one more scored cell: ``n_lm`` LM states and one queue item (grown copies if needed)."""
    if not states_have_room(st, n_lm):
        st = make_state_room(st, n_lm)
    if q.size[0] == q.cube.shape[0]:
        q = _grow_queue(q)
    return st, q


@numba.njit(cache=True)
def _grow_queue(q):
    """A copy of ``q`` with twice the room."""
    cap = 2 * q.cube.shape[0]
    return CellQueue(grow1(q.cube, cap), grow1(q.i, cap), grow1(q.j, cap), grow1(q.sc, cap), grow1(q.fc, cap),
                     grow1(q.pri, cap), grow2(q.sid, cap), grow2(q.lm, cap), grow1(q.heap, cap), q.size)


@numba.njit(cache=True)
def _push_cell(inp, g, st, cubes, q, work, c, i, j, complete):
    """Score cell ``(i, j)`` of cube ``c`` completely (LM included) and push it on the queue.

    Its priority is the score plus the future cost; the caller has made room (:func:`_make_cell_room`).
    """
    opts = inp.opts
    w = inp.w
    start = cubes.start[c]
    end = cubes.end[c]
    u = cubes.hyps[cubes.hyp_off[c] + i]
    o = work.by_est[opts.span_first[start, end - start - 1] + j]
    fc_new = future_cost_after(g.fc[u], opts.fct, start, end, cubes.lo[c], cubes.hi[c])
    base, orient = extension_base(g.score[u], g.last_end[u], g.last_start[u], g.last_opt[u], start, end, w.dist, w.lr,
                                  opts.lr, w.use_lr)
    sc = base + opts.static[o]
    if w.use_lr:
        sc += w.lr[orient] * opts.lr[o, orient]
    work.stats[0] += 1
    work.stats[1] += 1
    lm_sc = lm_extend(st, inp.lms, w.lm, g.sid[u], o, opts.woff, opts.words, complete, 0.0, work.sid, work.lm, work.stats)
    sc += lm_sc
    it = q.size[0]
    q.cube[it] = c
    q.i[it] = i
    q.j[it] = j
    q.sc[it] = sc
    q.fc[it] = fc_new
    q.pri[it] = sc + (0.0 if complete else fc_new)
    q.sid[it] = work.sid
    q.lm[it] = work.lm
    q.size[1] = _heap_push(q.heap, q.size[1], it, q.pri)
    q.size[0] = it + 1


@numba.njit(cache=True)
def _pop_cell(inp, g, stk, cubes, q, work, item, s, complete):
    """Put the popped cell ``item`` into stack ``s``: recombined into a live node, or a new node.

    The caller has made room in the graph for one more node and edge."""
    c = q.cube[item]
    start = cubes.start[c]
    end = cubes.end[c]
    u = cubes.hyps[cubes.hyp_off[c] + q.i[item]]
    o = work.by_est[inp.opts.span_first[start, end - start - 1] + q.j[item]]
    set_coverage(work.cov, g.cov[u], start, end)
    sids = q.sid[item]
    h, slot, found = recombination_slot(g, work.cov, sids, end - 1, o, complete, inp.w.use_lr)
    v = add_hypothesis(g, u, o, q.sc[item], q.lm[item], work.cov, sids, start, end, q.fc[item], s, complete, h, slot,
                       found)
    if v >= 0:
        push(stk, s, v)  # at most pop_limit pops per stack: its width


@numba.njit(cache=True)
def _coverage_groups(g, members):
    """Group index of each node of ``members`` by coverage (in order of first appearance), and a
    representative node per group; returns ``(group, representatives, number of groups)``."""
    m = members.shape[0]
    grp = np.full(m, -1, dtype=np.int64)
    reps = np.empty(m, dtype=np.int64)
    n_groups = 0
    cw = g.cov.shape[1]
    for i in range(m):
        v = members[i]
        for gi in range(n_groups):
            r = reps[gi]
            same = True
            for x in range(cw):
                if g.cov[r, x] != g.cov[v, x]:
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
    hypotheses that may jump to the span. Returns the cubes (grown if needed)."""
    m = stk.cnt[s]
    if m == 0:
        return cubes
    members = stk.nodes[s, :m].copy()
    key = np.empty(m)
    for i in range(m):
        key[i] = -g.score[members[i]]
    members = members[np.argsort(key, kind="mergesort")]
    grp, reps, n_groups = _coverage_groups(g, members)
    spans = work.spans
    for gi in range(n_groups):
        for r in range(open_spans(g.cov[reps[gi]], inp.n, inp.maxlen, inp.opts.span_cnt, inp.dl, spans)):
            cubes = _add_cube(inp, g, cubes, members, grp, gi, s, spans[r, 0], spans[r, 1], spans[r, 2], spans[r, 3])
    return cubes


@numba.njit(cache=True)
def _add_cube(inp, g, cubes, members, grp, gi, s, start, end, lo, hi):
    """Add the cube of group ``gi``'s members that may jump to ``start:end`` (none: no cube)."""
    m = members.shape[0]
    n_hyps = cubes.size[1]
    if n_hyps + m > cubes.hyps.shape[0]:
        cubes = Cubes(cubes.hyp_off, cubes.hyp_cnt, cubes.start, cubes.end, cubes.lo, cubes.hi, cubes.next,
                      grow1(cubes.hyps, 2 * (n_hyps + m)), cubes.first, cubes.size)
    cnt = 0
    for i in range(m):
        if grp[i] != gi:
            continue
        v = members[i]
        if inp.dl >= 0 and abs(start - (g.last_end[v] + 1)) > inp.dl:
            continue
        cubes.hyps[n_hyps + cnt] = v
        cnt += 1
    if cnt == 0:
        return cubes
    c = cubes.size[0]
    if c == cubes.hyp_off.shape[0]:
        cap = 2 * c
        cubes = Cubes(grow1(cubes.hyp_off, cap), grow1(cubes.hyp_cnt, cap), grow1(cubes.start, cap),
                      grow1(cubes.end, cap), grow1(cubes.lo, cap), grow1(cubes.hi, cap), grow1(cubes.next, cap),
                      cubes.hyps, cubes.first, cubes.size)
    cubes.hyp_off[c] = n_hyps
    cubes.hyp_cnt[c] = cnt
    cubes.size[1] = n_hyps + cnt
    cubes.start[c] = start
    cubes.end[c] = end
    cubes.lo[c] = lo
    cubes.hi[c] = hi
    ns = s + end - start
    cubes.next[c] = cubes.first[ns]
    cubes.first[ns] = c
    cubes.size[0] = c + 1
    return cubes
