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

The search is split by responsibility: :func:`search_nb` walks the stacks and makes room, and
:func:`_expand` extends one hypothesis by the options of its open spans (bound, LM, recombination,
the new edge or node, pruning when the stack is full). The graph, stacks, open spans, future cost,
distortion/reordering score and pruning are shared with cube pruning
(:mod:`smtlib.decoder.search_graph`), so are the LM state table and the LM cache
(:mod:`smtlib.decoder.search_lm`). The per-option work in :func:`_expand` is written out on local
arrays rather than calling those modules' tuple-taking helpers: in numba every array passed to a
function or copied out of a tuple costs two atomic reference-count updates, and per option that
made the search 2.2 times slower (measured; the same holds for the cube search's per-cell code).

Scores are ``w . h`` with the feature values of :mod:`smtlib.decoder.model`; LM values are natural
logs, the end-of-sentence probability is added when the coverage becomes complete, distortion is
``-|start - (last_end + 1)|`` per phrase, and lexicalized reordering follows Moses's
``msd-bidirectional-fe``: the backward model scores the orientation (monotone, swap, discontinuous)
of each phrase with respect to the previous one with the phrase's own probabilities, the forward
model scores the orientation of the next phrase with the previous phrase's probabilities. The first
phrase's backward orientation is monotone if it starts at 0, else discontinuous.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from smtlib.decoder.borrowed import borrowed
from smtlib.decoder.search_graph import (add_start_node, extension_base, finish, future_cost_after,
                                         graph_has_room, make_graph_room, new_graph, new_stacks, open_spans,
                                         mix, prune, push, set_coverage, widen_stacks)
from smtlib.decoder.lm import lm_score_word
from smtlib.decoder.search_lm import cache_slot, intern_state, lm_end, make_state_room, start_states, states_have_room

#: per-search work arrays: the new hypothesis's coverage, LM state ids and LM increments, the open
#: spans of the hypothesis being expanded (see :func:`~smtlib.decoder.search_graph.open_spans`) and
#: the counters (options looked at, options scored, hypotheses kept, LM cache misses)
StackWork = namedtuple("StackWork", "cov sid lm spans stats")


@numba.njit(cache=True)
def search_nb(inp):
    """Run the stack search on one :data:`~smtlib.decoder.search_graph.SearchInput`.

    Returns its :data:`~smtlib.decoder.search_graph.SearchGraph`.
    """
    n = inp.n
    n_lm = inp.lms.order.shape[0]
    st, sids = start_states(inp.lms)
    g = new_graph(max(1, (n + 63) // 64), n_lm)
    add_start_node(g, sids, inp.opts.fct[0, n])
    stk = new_stacks(n, 64 if inp.stack_size <= 0 else inp.stack_size + inp.stack_size // 4 + 2)
    work = StackWork(np.zeros(g.cov.shape[1], dtype=np.uint64), np.zeros(n_lm, dtype=np.int64), np.zeros(n_lm),
                     np.zeros((max(n, 1) * inp.maxlen, 4), dtype=np.int64), np.zeros(4, dtype=np.int64))
    lm_ok = True  # the LM bound is an upper bound on the LM score, useless for w < 0
    for k in range(n_lm):
        if inp.w.lm[k] < 0:
            lm_ok = False
    # one hypothesis's expansion adds at most one node, edge and n_lm LM states per option
    room = inp.opts.static.shape[0]
    for s in range(n):
        prune(stk, s, inp.stack_size, g)
        for si in range(stk.cnt[s]):
            u = stk.nodes[s, si]
            if not g.alive[u]:
                continue
            if not graph_has_room(g, room):
                g = make_graph_room(g, room)
            if not states_have_room(st, n_lm * room):
                st = make_state_room(st, n_lm * room)
            if inp.stack_size <= 0:  # a limited stack is pruned when full, and never grows
                stk = widen_stacks(stk, room)
            _expand(inp, g, st, stk, work, u, s, lm_ok)
    return finish(g, stk, n, work.stats)


@numba.njit(cache=True)
def _expand(inp, g, st, stk, work, u, s, lm_ok):
    """Extend node ``u`` of stack ``s`` by each option of every span the distortion limit allows.

    Per span, options come sorted by their bound: once the bound falls below the target stack's
    threshold, none of the rest can survive. A scored extension above the threshold is recombined or
    becomes a new node; a full stack is pruned first. The caller has made room for one node, edge
    and ``n_lm`` LM states per option.

    The arrays are borrowed (:mod:`smtlib.decoder.borrowed`) and unpacked into locals here, once per
    hypothesis, and the per-option work is written out inline: in numba every array passed to a
    function (or copied from a tuple) costs two atomic reference-count updates unless it is borrowed,
    which made per-option helper calls 2.2 times slower in total.
    """
    # every array without reference counting (smtlib.decoder.borrowed): this function neither returns
    # nor keeps one, and the caller has made room, so none is reallocated here
    inp, g, st, stk, work = borrowed(inp), borrowed(g), borrowed(st), borrowed(stk), borrowed(work)
    opts, w = inp.opts, inp.w
    static, o_lr, bound, woff, words = opts.static, opts.lr, opts.bound, opts.woff, opts.words
    (s_ctx, s_bo, s_len, s_lm, s_keys, s_ids, cache_keys, cache_sum, cache_sid, s_size, st_ca, st_ba, st_cb, st_bb,
     scratch) = st
    lms = inp.lms
    tab, tabf, lm_off, lm_mask, lm_order, lm_map = lms.tab, lms.tabf, lms.off, lms.mask, lms.order, lms.map
    w_lm, w_lr, use_lr = w.lm, w.lr, w.use_lr
    thresh = stk.thresh
    new_cov, new_sid, cur_lm, stats = work.cov, work.sid, work.lm, work.stats
    (n_cov, last_start, last_end, last_opt, n_sid, score, fc, best, alive, stack, e_tail, e_head, e_opt, e_score, e_lm,
     rc_keys, rc_node, size) = g
    cw = n_cov.shape[1]
    u_sid = n_sid[u]
    n_lm = w_lm.shape[0]
    n_opts = static.shape[0]
    spans = work.spans
    for i in range(open_spans(n_cov[u], inp.n, inp.maxlen, opts.span_cnt, inp.dl, spans)):
        start, end, lo, hi = spans[i, 0], spans[i, 1], spans[i, 2], spans[i, 3]
        if inp.dl >= 0 and abs(start - (last_end[u] + 1)) > inp.dl:
            continue
        length = end - start
        cnt = opts.span_cnt[start, length - 1]
        first = opts.span_first[start, length - 1]
        fc_new = future_cost_after(fc[u], opts.fct, start, end, lo, hi)
        base, orient = extension_base(score[u], last_end[u], last_start[u], last_opt[u], start, end, w.dist, w_lr, o_lr,
                                      use_lr)
        set_coverage(new_cov, n_cov[u], start, end)
        ns = s + length
        complete = ns == inp.n
        stats[0] += cnt
        for o in range(first, first + cnt):
            if lm_ok and not complete and base + bound[o] + fc_new < thresh[ns]:
                break  # options are sorted by bound: none of the rest can survive
            stats[1] += 1
            sc = base + static[o]
            if use_lr:
                sc += w_lr[orient] * o_lr[o, orient]
            for k in range(n_lm):
                sid = u_sid[k]
                ckey = (sid * n_opts + o) * n_lm + k
                slot = cache_slot(cache_keys, ckey)
                if cache_keys[slot] == ckey:
                    lmsum = cache_sum[slot]
                    nsid = cache_sid[slot]
                else:  # score the phrase, intern the state reached, cache both (see search_lm)
                    stats[3] += 1
                    ca, ba, cb, bb = st_ca, st_ba, st_cb, st_bb
                    ln = s_len[sid]
                    for j in range(ln):
                        ca[j] = s_ctx[sid, j]
                        ba[j] = s_bo[sid, j]
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
                new_sid[k] = nsid
                if complete:
                    lmsum += lm_end(st, lms, k, nsid)
                sc += w_lm[k] * lmsum
                cur_lm[k] = lmsum
            if not complete and sc + fc_new < thresh[ns]:
                continue
            stats[2] += 1
            # recombination and the new edge or node, written out here on local arrays (see _expand);
            # the cube search has the same code for a popped cell (smtlib.decoder.cube._fill_stack)
            h = np.uint64(0x12345)
            for x in range(cw):
                h = mix(h, np.int64(new_cov[x] & np.uint64(0x7FFFFFFFFFFFFFFF)))
                h = mix(h, np.int64(new_cov[x] >> np.uint64(63)))
            if not complete:
                for k in range(n_lm):
                    h = mix(h, new_sid[k])
                h = mix(h, end - 1)
                if use_lr:
                    h = mix(h, o)
            h |= np.uint64(1)
            rmask = np.uint64(rc_keys.shape[0] - 1)
            slot = h & rmask
            found = -1
            while rc_keys[slot] != 0:
                if rc_keys[slot] == h:
                    v = rc_node[slot]
                    same = True
                    for x in range(cw):
                        if n_cov[v, x] != new_cov[x]:
                            same = False
                    if same and not complete:
                        if last_end[v] != end - 1 or (use_lr and last_opt[v] != o):
                            same = False
                        for k in range(n_lm):
                            if n_sid[v, k] != new_sid[k]:
                                same = False
                    if same:
                        found = v
                        break
                slot = (slot + np.uint64(1)) & rmask
            ne = size[1]
            e_tail[ne] = u
            e_opt[ne] = o
            e_score[ne] = sc
            e_lm[ne] = cur_lm
            size[1] = ne + 1
            if found >= 0 and alive[found]:
                e_head[ne] = found
                if sc > score[found]:
                    score[found] = sc
                    best[found] = ne
                    last_opt[found] = o
                    last_start[found] = start
                continue
            v = size[0]
            size[0] = v + 1
            n_cov[v] = new_cov
            last_start[v] = start
            last_end[v] = end - 1
            last_opt[v] = o
            n_sid[v] = new_sid
            score[v] = sc
            fc[v] = 0.0 if complete else fc_new
            best[v] = ne
            alive[v] = True
            stack[v] = ns
            e_head[ne] = v
            if found >= 0:
                rc_node[slot] = v  # replaces a pruned node with the same state
            else:
                rc_keys[slot] = h
                rc_node[slot] = v
                size[2] += 1
            if stk.cnt[ns] == stk.nodes.shape[1]:  # width stack_size * 1.25 + 2: pruning makes room
                prune(stk, ns, inp.stack_size, g)
            push(stk, ns, v)
