"""What the stack search (:mod:`~smtlib.decoder.search`) and cube pruning (:mod:`~smtlib.decoder.cube`) share.

Both searches grow the same search graph (Moses's hypotheses and arc lists) in the same stacks; they
differ only in which extensions of a stack's hypotheses they score. This module holds:

* the inputs, grouped: :data:`SearchInput` (sentence length, search settings, the sentence's
  :data:`Options`, the :data:`LanguageModels` and :data:`SearchWeights`);
* the graph under construction, :data:`Graph` (nodes, edges and the recombination table, with
  their counts in ``size``) and the stacks, :data:`Stacks`; the callers make room for a batch of
  extensions first (:func:`make_graph_room`, :func:`widen_stacks`), so no function of the hot
  loops returns a tuple of arrays (in numba each array in a returned or passed tuple costs two
  atomic reference-count updates);
* the pieces of one extension: the spans a coverage may translate next under the distortion limit
  (:func:`open_spans`), the future cost after it (Koehn 2004, §3.3), its score without the LM
  (:func:`extension_base`); recombination and the new edge or node are written out in each search's
  loop on local arrays (:func:`smtlib.decoder.search._expand`, :func:`smtlib.decoder.cube._fill_stack`):
  a call per extension passed the graph's 18 arrays, two atomic reference-count updates each;
* histogram pruning (:func:`prune`) and the returned :data:`SearchGraph`.

The rules themselves (distortion limit, recombination key, pruning) are documented in
:mod:`smtlib.decoder.search`; the LM states and the LM cache are in :mod:`smtlib.decoder.search_lm`.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

NEG_INF = -np.inf

#: a sentence's translation options, sorted per span (see ``Decoder.options``): source span
#: ``start``/``end``, target words ``words[woff[o]:woff[o + 1]]``, static score (``w . h`` without
#: LM, distortion and reordering), the six reordering values ``lr``, the search ``bound`` (static +
#: LM upper bound + best backward reordering; the stack search's sort key), the estimate ``est``
#: (the cube search's order), ``span_first``/``span_cnt`` per (start, length - 1), future costs ``fct``
Options = namedtuple("Options", "start end woff words static lr bound est span_first span_cnt fct")
#: the LMs' packed tables (:mod:`smtlib.decoder.lm`) and per LM its ids of ``<s>`` and ``</s>``
LanguageModels = namedtuple("LanguageModels", "tab tabf off mask order map bos eos")
#: LM weights (one per LM), the distortion weight, the six reordering weights and whether they are used
SearchWeights = namedtuple("SearchWeights", "lm dist lr use_lr")
#: one search problem: sentence length ``n``, longest source phrase ``maxlen``, stack size (0 =
#: unlimited), cube pop limit, distortion limit (negative = unlimited), options, LMs, weights
SearchInput = namedtuple("SearchInput", "n maxlen stack_size pop_limit dl opts lms w")
#: the graph under construction: per node its coverage bit set, last phrase (start, end inclusive,
#: option), LM state ids, score, future cost, best incoming edge, whether it survives pruning and its
#: stack; per edge tail, head, option, score of the head through it and the LM increments; the
#: recombination table (hash -> node); ``size`` = [nodes, edges, recombination entries]
Graph = namedtuple("Graph", "cov last_start last_end last_opt sid score fc best alive stack "
                            "e_tail e_head e_opt e_score e_lm rc_keys rc_node size")
#: stack ``s`` holds nodes ``nodes[s, :cnt[s]]`` (dead ones included until pruned); ``thresh[s]``
#: is the worst surviving score + future cost after its last pruning
Stacks = namedtuple("Stacks", "nodes cnt thresh")
#: what a search returns: the goal node (-1 if none), node and edge counts, the node and edge arrays
#: (trimmed) and the search's four counters
SearchGraph = namedtuple("SearchGraph", "goal n_nodes n_edges score best alive stack last_end last_start last_opt "
                                        "e_tail e_head e_opt e_score e_lm stats")


@numba.njit(cache=True)
def grow1(a, cap):
    """A copy of the 1-d array ``a`` with room for ``cap`` items."""
    b = np.empty(cap, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@numba.njit(cache=True)
def grow2(a, cap):
    """A copy of the 2-d array ``a`` with room for ``cap`` rows."""
    b = np.empty((cap, a.shape[1]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@numba.njit(cache=True, inline="always")
def mix(h, v):
    """One step of the hash used for recombination keys, LM states and the LM cache."""
    h = (h ^ np.uint64(v + 0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
    return h ^ (h >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def covered(cov, i):
    """Whether source word ``i`` is in the coverage bit set ``cov``."""
    return (cov[i >> 6] >> np.uint64(i & 63)) & np.uint64(1)


@numba.njit(cache=True)
def first_gap(cov, n):
    """The first uncovered source position (``n`` if none)."""
    for i in range(n):
        if not covered(cov, i):
            return i
    return n


# ---------------------------------------------------------------------------- the graph
@numba.njit(cache=True)
def new_graph(cov_words, n_lm):
    """An empty graph with room for 1,024 nodes and 4,096 edges."""
    ncap, ecap, hcap = 1024, 4096, 4096
    return Graph(np.zeros((ncap, cov_words), dtype=np.uint64), np.zeros(ncap, dtype=np.int64),
                 np.zeros(ncap, dtype=np.int64), np.zeros(ncap, dtype=np.int64),
                 np.zeros((ncap, n_lm), dtype=np.int64), np.zeros(ncap), np.zeros(ncap),
                 np.full(ncap, -1, dtype=np.int64), np.zeros(ncap, dtype=np.bool_), np.zeros(ncap, dtype=np.int64),
                 np.zeros(ecap, dtype=np.int64), np.zeros(ecap, dtype=np.int64), np.zeros(ecap, dtype=np.int64),
                 np.zeros(ecap), np.zeros((ecap, n_lm)), np.zeros(hcap, dtype=np.uint64),
                 np.full(hcap, -1, dtype=np.int64), np.zeros(3, dtype=np.int64))


@numba.njit(cache=True)
def graph_has_room(g, room):
    """Whether ``g`` can take ``room`` more nodes and edges (its recombination table staying half empty)."""
    return (g.size[0] + room <= g.score.shape[0] and g.size[1] + room <= g.e_tail.shape[0]
            and 2 * (g.size[2] + room) <= g.rc_keys.shape[0])


@numba.njit(cache=True)
def make_graph_room(g, room):
    """A copy of ``g`` with room for ``room`` more nodes and edges (arrays doubled until they fit).

    Growing is left to the callers, once per batch of extensions: functions in the hot loop then
    return no tuples of arrays (each returned array costs reference counting).
    """
    cap = g.score.shape[0]
    while g.size[0] + room > cap:
        cap *= 2
    if cap > g.score.shape[0]:
        g = Graph(grow2(g.cov, cap), grow1(g.last_start, cap), grow1(g.last_end, cap), grow1(g.last_opt, cap),
                  grow2(g.sid, cap), grow1(g.score, cap), grow1(g.fc, cap), grow1(g.best, cap), grow1(g.alive, cap),
                  grow1(g.stack, cap), g.e_tail, g.e_head, g.e_opt, g.e_score, g.e_lm, g.rc_keys, g.rc_node, g.size)
    cap = g.e_tail.shape[0]
    while g.size[1] + room > cap:
        cap *= 2
    if cap > g.e_tail.shape[0]:
        g = Graph(g.cov, g.last_start, g.last_end, g.last_opt, g.sid, g.score, g.fc, g.best, g.alive, g.stack,
                  grow1(g.e_tail, cap), grow1(g.e_head, cap), grow1(g.e_opt, cap), grow1(g.e_score, cap),
                  grow2(g.e_lm, cap), g.rc_keys, g.rc_node, g.size)
    cap = g.rc_keys.shape[0]
    while 2 * (g.size[2] + room) > cap:
        cap *= 2
    if cap > g.rc_keys.shape[0]:
        g = _rehash_recombination(g, cap)
    return g


@numba.njit(cache=True)
def _rehash_recombination(g, cap):
    """A copy of ``g`` whose recombination table has ``cap`` slots (entries rehashed)."""
    old_keys = g.rc_keys
    old_node = g.rc_node
    keys = np.zeros(cap, dtype=np.uint64)
    node = np.full(cap, -1, dtype=np.int64)
    mask = np.uint64(cap - 1)
    for i in range(old_keys.shape[0]):
        if old_keys[i] != 0:
            sl = old_keys[i] & mask
            while keys[sl] != 0:
                sl = (sl + np.uint64(1)) & mask
            keys[sl] = old_keys[i]
            node[sl] = old_node[i]
    return Graph(g.cov, g.last_start, g.last_end, g.last_opt, g.sid, g.score, g.fc, g.best, g.alive, g.stack,
                 g.e_tail, g.e_head, g.e_opt, g.e_score, g.e_lm, keys, node, g.size)


@numba.njit(cache=True)
def add_start_node(g, sids, fc):
    """Node 0: the empty hypothesis with the LMs' ``<s>`` states ``sids`` and future cost ``fc``."""
    g.last_start[0] = -1
    g.last_end[0] = -1
    g.last_opt[0] = -1
    g.sid[0] = sids
    g.fc[0] = fc
    g.alive[0] = True
    g.size[0] = 1


# ---------------------------------------------------------------------------- one extension
@numba.njit(cache=True, inline="always")
def open_spans(cov, n, maxlen, span_cnt, dl, out):
    """The spans with options that an extension of coverage ``cov`` may translate next.

    Moses's rules (``SearchNormal::ProcessOneHypothesis``) except the jump from the hypothesis's last
    phrase, which the caller checks: the span is uncovered and, unless it starts at the first gap,
    ends within ``dl`` of it. Writes ``(start, end, lo, hi)`` rows into ``out`` (``lo:hi`` is the
    uncovered run containing the span, for the future cost), by start then length; returns the count.
    """
    gap = first_gap(cov, n)
    m = 0
    for start in range(gap, n):
        if covered(cov, start):
            continue
        lo = start
        while lo > 0 and not covered(cov, lo - 1):
            lo -= 1
        for length in range(1, maxlen + 1):
            end = start + length  # exclusive
            if end > n or covered(cov, end - 1):
                break
            if span_cnt[start, length - 1] == 0:
                continue
            if dl >= 0 and start != gap and abs(end - gap) > dl:
                continue
            hi = end
            while hi < n and not covered(cov, hi):
                hi += 1
            out[m, 0] = start
            out[m, 1] = end
            out[m, 2] = lo
            out[m, 3] = hi
            m += 1
    return m


@numba.njit(cache=True, inline="always")
def future_cost_after(fc, fct, start, end, lo, hi):
    """The future cost once ``start:end`` of the uncovered run ``lo:hi`` is covered (Koehn 2004, §3.3)."""
    return fc - fct[lo, hi] + fct[lo, start] + fct[end, hi]


@numba.njit(cache=True, inline="always")
def extension_base(score, last_end, last_start, last_opt, start, end, w_dist, w_lr, o_lr, use_lr):
    """Score of a node plus what extending it by span ``start:end`` costs before the option itself.

    Distortion ``-|start - (last_end + 1)|`` and, with lexicalized reordering, the forward score of
    the node's last phrase (``last_start``..``last_end``, option ``last_opt``) for the new orientation.
    Returns ``(score, orientation)`` (0 monotone, 1 swap, 2 discontinuous).
    """
    jump = abs(start - (last_end + 1))
    if start == last_end + 1:
        orient = 0
    elif end == last_start:
        orient = 1
    else:
        orient = 2
    base = score - w_dist * jump
    if use_lr and last_opt >= 0:
        base += w_lr[3 + orient] * o_lr[last_opt, 3 + orient]
    return base, orient


@numba.njit(cache=True, inline="always")
def set_coverage(out, cov, start, end):
    """``out`` = ``cov`` plus the words ``start:end``."""
    for i in range(cov.shape[0]):
        out[i] = cov[i]
    for i in range(start, end):
        out[i >> 6] |= np.uint64(1) << np.uint64(i & 63)


# ---------------------------------------------------------------------------- stacks
@numba.njit(cache=True)
def new_stacks(n, width):
    """``n + 1`` empty stacks with room for ``width`` nodes each; node 0 in stack 0."""
    stk = Stacks(np.zeros((n + 1, width), dtype=np.int64), np.zeros(n + 1, dtype=np.int64), np.full(n + 1, NEG_INF))
    stk.cnt[0] = 1
    return stk


@numba.njit(cache=True, inline="always")
def push(stk, s, v):
    """Append node ``v`` to stack ``s`` (the caller has made room, see :func:`widen_stacks`)."""
    stk.nodes[s, stk.cnt[s]] = v
    stk.cnt[s] += 1


@numba.njit(cache=True)
def widen_stacks(stk, room):
    """``stk``, or a copy whose stacks are wide enough for ``room`` more nodes each."""
    need = 0
    for s in range(stk.cnt.shape[0]):
        need = max(need, stk.cnt[s] + room)
    width = stk.nodes.shape[1]
    if need <= width:
        return stk
    while need > width:
        width *= 2
    grown = np.zeros((stk.nodes.shape[0], width), dtype=np.int64)
    grown[:, : stk.nodes.shape[1]] = stk.nodes
    return Stacks(grown, stk.cnt, stk.thresh)


@numba.njit(cache=True)
def prune(stk, s, keep, g):
    """Keep the ``keep`` best live nodes of stack ``s`` (by score + future cost); raise its threshold.

    Histogram pruning; ``keep <= 0`` only drops dead nodes. The others are marked dead in ``g``.
    """
    cnt = stk.cnt[s]
    nodes = stk.nodes[s]
    m = 0
    for i in range(cnt):
        v = nodes[i]
        if g.alive[v]:
            nodes[m] = v
            m += 1
    key = np.empty(m)
    for i in range(m):
        v = nodes[i]
        key[i] = -(g.score[v] + g.fc[v])
    order = np.argsort(key, kind="mergesort")
    kept = np.empty(m, dtype=np.int64)
    for i in range(m):
        kept[i] = nodes[order[i]]
    n_keep = m if keep <= 0 else min(keep, m)
    for i in range(n_keep, m):
        g.alive[kept[i]] = False
    for i in range(n_keep):
        nodes[i] = kept[i]
    stk.cnt[s] = n_keep
    if keep > 0 and m >= keep:
        worst = g.score[kept[keep - 1]] + g.fc[kept[keep - 1]]
        if worst > stk.thresh[s]:
            stk.thresh[s] = worst


@numba.njit(cache=True)
def finish(g, stk, n, stats):
    """The :data:`SearchGraph`: the goal is the last live node of the last stack (node 0 if ``n == 0``)."""
    goal = -1
    if n == 0:
        goal = 0
    else:
        for i in range(stk.cnt[n]):
            if g.alive[stk.nodes[n, i]]:
                goal = stk.nodes[n, i]
    nn = g.size[0]
    ne = g.size[1]
    return SearchGraph(goal, nn, ne, g.score[:nn].copy(), g.best[:nn].copy(), g.alive[:nn].copy(),
                       g.stack[:nn].copy(), g.last_end[:nn].copy(), g.last_start[:nn].copy(), g.last_opt[:nn].copy(),
                       g.e_tail[:ne].copy(), g.e_head[:ne].copy(), g.e_opt[:ne].copy(), g.e_score[:ne].copy(),
                       g.e_lm[:ne].copy(), stats)
