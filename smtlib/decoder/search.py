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

The search is split by responsibility: :func:`search_nb` walks the stacks, :func:`_expand` one
hypothesis's spans, :func:`_extend_span` the options of one span (bound, LM, recombination, the
new edge or node, pruning when the stack is full). The graph, stacks, spans, scores and pruning are
shared with cube pruning (:mod:`smtlib.decoder.search_graph`), so are the LM states and the LM cache
(:mod:`smtlib.decoder.search_lm`).

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

from smtlib.decoder.search_graph import (add_hypothesis, add_start_node, extension_base, finish, future_cost_after,
                                         new_graph, new_stacks, open_spans, option_score, prune, push,
                                         recombination_slot, set_coverage)
from smtlib.decoder.search_lm import lm_extend, start_states

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
    for s in range(n):
        prune(stk, s, inp.stack_size, g)
        for si in range(stk.cnt[s]):
            u = stk.nodes[s, si]
            if g.alive[u]:
                g, st, stk = _expand(inp, g, st, stk, work, u, s, lm_ok)
    return finish(g, stk, n, work.stats)


@numba.njit(cache=True)
def _expand(inp, g, st, stk, work, u, s, lm_ok):
    """Extend node ``u`` of stack ``s`` by the options of every span the distortion limit allows."""
    cov = g.cov[u]
    u_sid = g.sid[u]
    u_end = g.last_end[u]
    spans = work.spans
    for i in range(open_spans(cov, inp.n, inp.maxlen, inp.opts.span_cnt, inp.dl, spans)):
        start = spans[i, 0]
        if inp.dl >= 0 and abs(start - (u_end + 1)) > inp.dl:
            continue
        g, st, stk = _extend_span(inp, g, st, stk, work, u, cov, u_sid, s, start, spans[i, 1], spans[i, 2],
                                  spans[i, 3], lm_ok)
    return g, st, stk


@numba.njit(cache=True)
def _extend_span(inp, g, st, stk, work, u, cov, u_sid, s, start, end, lo, hi, lm_ok):
    """Extend node ``u`` (coverage ``cov``, LM states ``u_sid``) by each option of span ``start:end``.

    Options come sorted by their bound: once the bound falls below the target stack's threshold,
    none of the rest can survive. A scored extension that survives the threshold is recombined or
    becomes a new node; a full stack is pruned first.
    """
    opts = inp.opts
    w = inp.w
    length = end - start
    cnt = opts.span_cnt[start, length - 1]
    first = opts.span_first[start, length - 1]
    fc_new = future_cost_after(g.fc[u], opts.fct, start, end, lo, hi)
    base, orient = extension_base(g, u, start, end, w, opts)
    set_coverage(work.cov, cov, start, end)
    ns = s + length
    complete = ns == inp.n
    stats = work.stats
    stats[0] += cnt
    for o in range(first, first + cnt):
        if lm_ok and not complete and base + opts.bound[o] + fc_new < stk.thresh[ns]:
            break  # options are sorted by bound: none of the rest can survive
        stats[1] += 1
        sc = option_score(base, o, orient, w, opts)
        sc, st = lm_extend(st, inp.lms, w.lm, u_sid, o, opts, complete, sc, work.sid, work.lm, stats)
        if not complete and sc + fc_new < stk.thresh[ns]:
            continue
        stats[2] += 1
        h, slot, found = recombination_slot(g, work.cov, work.sid, end - 1, o, complete, w.use_lr)
        v, g = add_hypothesis(g, u, o, sc, work.lm, work.cov, work.sid, start, end, fc_new, ns, complete, h, slot,
                              found)
        if v < 0:
            continue
        size = inp.stack_size
        if stk.cnt[ns] == stk.nodes.shape[1] and size > 0 and stk.cnt[ns] >= size + size // 4:
            prune(stk, ns, size, g)
        stk = push(stk, ns, v)
    return g, st, stk
