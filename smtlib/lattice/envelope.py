"""Upper envelopes over all paths of a lattice: the line search of lattice MERT (Macherey et al. 2008).

Along a line ``w(x) = w + x d`` every path ``p`` of a lattice is a line in ``x`` with intercept
``a_p = w . h(p)`` and slope ``b_p = d . h(p)``; both are sums over the path's edges
(``a_e = w . h_e``, ``b_e = d . h_e``). The 1-best path as a function of ``x`` is the upper
envelope of these (exponentially many) lines. Macherey et al. (2008, §3, Algorithm 1 "SweepLine" and
the lattice envelope propagation) compute it exactly by dynamic programming: the envelope of a node
is the upper envelope of the lines ``l + (a_e, b_e)`` over its incoming edges ``e`` and the lines
``l`` of the envelope of ``e``'s tail; lines that are not on a node's envelope cannot be on the
goal's envelope, so the node envelopes stay small (a few lines each) although the number of
paths is exponential. The goal's envelope is the sentence's envelope, each of its lines a path.

Here every node's candidate lines are scanned in slope order with the convex-hull rule used by the
k-best line search (:mod:`smtlib.tuners.line_search`): among equal slopes only the highest
intercept can win (on an exact tie, the candidate of the lower edge id, then of the lower line of the
tail, wins), and a line is dropped when the next steeper line overtakes its predecessor no later than
it does. Nodes are numbered topologically (``tail < head``) and edges sorted by head, so one pass over
the edges in order visits every node after all of its predecessors.

Most merges change nothing (72-86 % of them on the Multi30k dev lattices: decoder lattices have
thousands of edges into the goal and tens into many other nodes, and most of them bring no line
that beats the envelope built so far). Before merging, :func:`_first_change` replays what the
merge's pushes would decide for the incoming lines with the same floating-point operations, and
the merge is skipped when none of them changes the envelope, or starts at the first line that may;
the envelopes are bit-identical to those of the plain merge (tests/unit/lattice/test_envelope_fast.py),
and the envelope pass takes about two thirds of its former CPU time (benchmarks/lattice_tuners.py).

The node loop (:func:`_propagate`) rebinds no array: numba counts references of array variables
that a loop rebinds (an atomic increment and decrement each time), and with the envelope buffers
grown inside the loop and the hull's two stacks swapped by rebinding five views per merge, those
counts took 13 % of the pass's CPU time (``perf`` on the Multi30k dev lattices). The current hull
and the merge's stack are the two halves of one buffer (offsets swapped instead of arrays), and
:func:`_propagate` returns to :func:`sentence_envelope` to grow a buffer, then goes on. Same
operations in the same order, so the same envelopes; 1.2x less CPU per line search
(benchmarks/lattice_tuners.py ``--baseline``). A binary search for the first hull line an incoming
envelope reaches (``_first_change`` walks the hull from its first line) and resuming a merge's tail
by copying the hull once it rejoins it were measured too and gave nothing: the walk takes about
3 steps per merge (hulls average 10 lines where merges happen), and few merges end early.

:func:`upper_envelope` gives one :class:`~smtlib.lattice.format.Lattice`'s envelope with the path of
every segment. :func:`corpus_envelopes` does this for every sentence of a
:class:`~smtlib.lattice.lattice_set.LatticeSet` in one compiled call and returns the goal envelopes
as breakpoints in the representation of the k-best line search (the path that is best at ``x -> -inf`` per sentence, then ``(x, new path,
previous path)`` per breakpoint), together with the edges of every path on an envelope, so that
the corpus-level merge and the choice of the best interval are the k-best line search's own
(:func:`smtlib.tuners.line_search.interval_scores` / ``best_point``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numba
import numpy as np

from smtlib.lattice.format import Lattice
from smtlib.lattice.paths import reverse_prefix

_NEG_INF = -np.inf


@numba.njit(cache=True)
def grow(arr, used, capacity):
    """``arr`` copied into a new array of ``capacity`` (its first ``used`` entries), any dtype: the
    envelope stacks of :mod:`smtlib.lattice.envelope` and :mod:`smtlib.tuners.line_search` grow with it."""
    out = np.empty(capacity, dtype=arr.dtype)
    out[:used] = arr[:used]
    return out


@numba.njit(cache=True, inline="always", error_model="numpy")
def _push(ss, si, se, sp, sx, o, top, sl, ic, ed, pr):
    """Add a line (in non-decreasing slope order) to the hull stack; returns the new stack size.

    The stack is ``top`` lines from offset ``o`` of ``ss, si, se, sp, sx`` (slope, intercept, edge,
    line of the tail, where the line starts to be the maximum).

    A line with the slope of the top replaces it only with a strictly higher intercept (so on an
    exact tie the line met first stays); a line is popped when the new one overtakes the line
    below it no later than it started to be the maximum.
    """
    if top > 0 and ss[o + top - 1] == sl:
        if ic <= si[o + top - 1]:
            return top
        top -= 1
    x = _NEG_INF
    while top > 0:
        x = (si[o + top - 1] - ic) / (sl - ss[o + top - 1])  # sl > ss[top - 1] here: x is finite or +-inf
        if top > 1 and x <= sx[o + top - 1]:
            top -= 1
            continue
        break
    ss[o + top] = sl
    si[o + top] = ic
    se[o + top] = ed
    sp[o + top] = pr
    sx[o + top] = x if top > 0 else _NEG_INF
    return top + 1


@numba.njit(cache=True, inline="always", error_model="numpy")
def _first_change(cs, ci, cx, c, n_cur, env_s, env_i, j, j_hi, bk, ak):
    """Where merging lines ``j:j_hi`` of ``env_*`` shifted by ``(bk, ak)`` into the hull ``cs, ci, cx``
    (``n_cur >= 1`` lines from offset ``c``, ``cx`` where each starts) can first change it.

    Returns ``(p, q)``: ``p = -2`` when the merge would give the hull back unchanged (bit for bit);
    else the merge's stack is exactly hull lines ``0..p`` when incoming line ``q`` is pushed
    (``p = -1``: the stack is empty, the merge starts from scratch), so the caller copies those
    lines and merges from hull line ``p + 1`` and incoming line ``q`` on.

    The merge (in :func:`sentence_envelope`) pushes every line through :func:`_push` in slope order,
    the hull's lines first on equal slopes. This test decides, with the same floating-point
    operations as those pushes, which incoming lines leave the result unchanged (most do: 72-86 % of
    the merges on the Multi30k dev lattices change nothing). An incoming line ``l`` falls after hull
    line ``c_p`` (the last one with slope ``<= s_l``), in "gap ``p``":

    * ``s_l == s_p``: :func:`_push` drops it when ``i_l <= i_p`` (the top of the stack is ``c_p``
      then: lines of earlier gaps were popped by ``c_p``, see below), else it would replace ``c_p``;
    * ``s_p < s_l < s_{p+1}``: with ``t`` the start of ``c_{p+1}`` (``cx[p+1]``), the push of ``l`` onto
      ``c_p`` computes ``x1 = (i_p - i_l) / (s_l - s_p)``; ``x1 > t > cx[p]`` keeps ``c_p``, and every
      incoming line of this gap left on the stack then starts after ``t`` (each starts after the one
      below it, else that one is popped). The push of ``c_{p+1}`` onto such a line computes
      ``x2 = (i_l - i_{p+1}) / (s_{p+1} - s_l)``, and ``x2 <= t`` pops it; once all are popped,
      ``c_{p+1}`` meets ``c_p`` with the very operands (hence the very ``x = t``) of the hull, and the
      stack is the hull's again. So ``x1 > t`` and ``x2 <= t`` for every line of the gap suffice;
    * a slope below ``s_0`` or above the last slope always changes the hull (the bottom line is
      never popped, the last pushed line always stays).

    Lines are met in slope order, so when one of them may change the hull, all lines of earlier gaps
    have been shown harmless: the stack is hull lines ``0..p`` when the first line of its gap comes.
    The result is bit-identical to the plain merge (tests/unit/lattice/test_envelope_fast.py compares
    every node's envelope with a plain-Python merge without these shortcuts).
    """
    p = -1
    q0 = j
    s_first = cs[c]
    s_last = cs[c + n_cur - 1]
    for q in range(j, j_hi):
        sl = env_s[q] + bk
        il = env_i[q] + ak
        if sl < s_first:
            return -1, j
        moved = False
        while p + 1 < n_cur and cs[c + p + 1] <= sl:
            p += 1
            moved = True
        if moved:
            q0 = q
        if sl > s_last:
            return p, q0
        if cs[c + p] == sl:
            if il > ci[c + p]:
                return p, q0
            continue
        t = cx[c + p + 1]
        x1 = (ci[c + p] - il) / (sl - cs[c + p])
        if not x1 > t:
            return p, q0
        x2 = (il - ci[c + p + 1]) / (cs[c + p + 1] - sl)
        if not x2 <= t:
            return p, q0
    return -2, j_hi


@numba.njit(cache=True, error_model="numpy")
def _propagate(e, hi, used, tails, heads, a, b, env_s, env_i, env_e, env_p, node_lo, node_hi, hull):
    """Envelopes of the nodes whose edges start at ``e`` (up to ``hi``) while the buffers suffice.

    Returns ``(e, used, need)``: ``need = 0`` when every node is done, else the size bound of the
    node entered by edge ``e`` that may not fit in ``env_*`` or ``hull`` (grown by the caller, then
    called again from ``e``). No array is rebound here, so the loops take no reference counts.
    """
    cap = hull.shape[1] // 2
    hs, hi_, he, hp, hx = hull[0], hull[1], hull[2], hull[3], hull[4]
    while e < hi:
        v = heads[e]
        first = e
        last = e
        while last < hi and heads[last] == v:
            last += 1
        # size bound: the merged envelope has at most the sum of the tails' envelope sizes
        bound = 0
        for k in range(first, last):
            bound += node_hi[tails[k]] - node_lo[tails[k]]
        if bound == 0:
            e = last
            continue
        if cap < bound + 1 or used + bound > env_s.shape[0]:
            return first, used, bound
        e = last
        c = 0
        n = cap
        n_cur = 0
        for k in range(first, last):
            t = tails[k]
            j = node_lo[t]
            j_hi = node_hi[t]
            if j == j_hi:
                continue
            bk = b[k]
            ak = a[k]
            if n_cur == 0:  # the first envelope: scanned alone (rounding can make shifted slopes equal)
                for q in range(j, j_hi):
                    n_cur = _push(hs, hi_, he, hp, hx, c, n_cur, env_s[q] + bk, env_i[q] + ak, k, q)
                continue
            keep, j = _first_change(hs, hi_, hx, c, n_cur, env_s, env_i, j, j_hi, bk, ak)
            if keep == -2:
                continue  # the merge would give the current envelope back, bit for bit
            for i in range(keep + 1):  # the merge's stack when line j comes: the first lines, as they are
                hs[n + i] = hs[c + i]
                hi_[n + i] = hi_[c + i]
                he[n + i] = he[c + i]
                hp[n + i] = hp[c + i]
                hx[n + i] = hx[c + i]
            i = keep + 1
            top = keep + 1
            while i < n_cur or j < j_hi:
                if j >= j_hi or (i < n_cur and hs[c + i] <= env_s[j] + bk):
                    top = _push(hs, hi_, he, hp, hx, n, top, hs[c + i], hi_[c + i], he[c + i], hp[c + i])
                    i += 1
                else:
                    top = _push(hs, hi_, he, hp, hx, n, top, env_s[j] + bk, env_i[j] + ak, k, j)
                    j += 1
            c, n = n, c
            n_cur = top
        for q in range(n_cur):
            env_s[used + q] = hs[c + q]
            env_i[used + q] = hi_[c + q]
            env_e[used + q] = np.int64(he[c + q])
            env_p[used + q] = np.int64(hp[c + q])
        node_lo[v] = used
        node_hi[v] = used + n_cur
        used += n_cur
    return e, used, 0


@numba.njit(cache=True, error_model="numpy")
def sentence_envelope(n_nodes, lo, hi, tails, heads, a, b, ws):
    """Envelopes of every node of one lattice (edges ``lo:hi``, sorted by head, local node ids).

    ``ws`` is a workspace tuple of growable arrays (see :func:`new_workspace`); the (possibly grown)
    workspace is returned with the number of lines used. Node ``v``'s envelope is lines
    ``node_lo[v]:node_hi[v]`` of ``env_*`` (``ws[0:4]``; ``node_lo``/``node_hi`` are ``ws[4:6]``) in
    increasing slope: slope ``env_s``, intercept ``env_i``, the edge that enters ``v`` (``env_e``, -1
    at the start) and the line of the tail's envelope it extends (``env_p``, an index into ``env_*``).

    A node's envelope is built by merging its incoming edges one at a time: the current envelope and
    the next edge's shifted tail envelope are both sorted by slope, so one linear merge feeds the
    hull scan (:func:`_push`) and the result replaces the current envelope. On equal slopes the
    current envelope's line comes first, so exact ties go to the lower edge id, then to the lower
    line of the tail's envelope.
    """
    env_s, env_i, env_e, env_p, node_lo, node_hi, hull = ws
    if node_lo.shape[0] < n_nodes:
        node_lo = np.empty(2 * n_nodes, dtype=np.int64)
        node_hi = np.empty(2 * n_nodes, dtype=np.int64)
    for v in range(n_nodes):
        node_lo[v] = 0
        node_hi[v] = 0
    if n_nodes == 0:
        return (env_s, env_i, env_e, env_p, node_lo, node_hi, hull), 0
    env_s[0] = 0.0
    env_i[0] = 0.0
    env_e[0] = -1
    env_p[0] = -1
    node_hi[0] = 1
    e, used, need = _propagate(lo, hi, 1, tails, heads, a, b, env_s, env_i, env_e, env_p, node_lo, node_hi, hull)
    while need > 0:  # grow the buffers the next node may need, go on from there
        if hull.shape[1] // 2 < need + 1:
            hull = np.empty((5, 2 * (2 * need + 2)))
        if used + need > env_s.shape[0]:
            capacity = 2 * (used + need)
            env_s = grow(env_s, used, capacity)
            env_i = grow(env_i, used, capacity)
            env_e = grow(env_e, used, capacity)
            env_p = grow(env_p, used, capacity)
        e, used, need = _propagate(e, hi, used, tails, heads, a, b, env_s, env_i, env_e, env_p, node_lo, node_hi, hull)
    return (env_s, env_i, env_e, env_p, node_lo, node_hi, hull), used


def new_workspace(capacity: int = 1024):
    """Growable buffers for :func:`sentence_envelope`: ``capacity`` lines, a node hull of up to 64."""
    return (
        np.empty(capacity, dtype=np.float64),
        np.empty(capacity, dtype=np.float64),
        np.empty(capacity, dtype=np.int64),
        np.empty(capacity, dtype=np.int64),
        np.empty(capacity, dtype=np.int64),
        np.empty(capacity, dtype=np.int64),
        np.empty((5, 2 * min(capacity, 64))),
    )


@numba.njit(cache=True, error_model="numpy")
def goal_starts(env_s, env_i, lo, hi):
    """Where each line of an envelope (lines ``lo:hi`` in increasing slope) starts to be the maximum."""
    out = np.empty(hi - lo)
    if hi > lo:
        out[0] = _NEG_INF
    for k in range(lo + 1, hi):
        x = (env_i[k - 1] - env_i[k]) / (env_s[k] - env_s[k - 1])
        if not np.isfinite(x):
            x = 1e300 if x > 0 else -1e300
        out[k - lo] = x
    return out


@numba.njit(cache=True)
def trace_path(line, env_e, env_p, tails, buf):
    """Edges of the path of envelope line ``line`` (start to goal) written to ``buf``; returns the count."""
    n = 0
    q = line
    while env_e[q] >= 0:
        buf[n] = env_e[q]
        n += 1
        q = env_p[q]
    reverse_prefix(buf, n)
    return n


@numba.njit(cache=True, nogil=True)
def corpus_envelopes(n_nodes, edge_off, tails, heads, a, b):
    """Goal envelopes of every sentence, as k-best-line-search breakpoints over their paths.

    Parameters
    ----------
    n_nodes, edge_off
        (S,) nodes per sentence and (S+1,) edge ranges (edges sorted by head; local node ids).
    a, b
        (E,) ``w . h_e`` and ``d . h_e`` of every edge.

    Returns
    -------
    first : (S,) int64
        The path (an index into the returned paths) that is best at ``x -> -inf``, -1 for an
        empty lattice.
    bx, bnew, bprev : breakpoints
        Positions, the path that becomes best there and the one it replaces (ordered by sentence,
        then by x).
    path_sent, path_off, path_edges
        Sentence of each path and its global edge ids (start to goal), ``path_off`` delimiting them.
    """
    n_sent = n_nodes.shape[0]
    ws = (np.empty(1024), np.empty(1024), np.empty(1024, np.int64), np.empty(1024, np.int64),
          np.empty(1024, np.int64), np.empty(1024, np.int64), np.empty((5, 128)))
    first = np.full(n_sent, -1, dtype=np.int64)
    cap_b = max(16, 8 * n_sent)
    bx = np.empty(cap_b)
    bnew = np.empty(cap_b, dtype=np.int64)
    bprev = np.empty(cap_b, dtype=np.int64)
    nb = 0
    cap_p = max(16, 8 * n_sent)
    path_sent = np.empty(cap_p, dtype=np.int64)
    path_off = np.zeros(cap_p + 1, dtype=np.int64)
    cap_e = max(64, 64 * n_sent)
    path_edges = np.empty(cap_e, dtype=np.int64)
    n_paths = 0
    buf = np.empty(1024, dtype=np.int64)
    for s in range(n_sent):
        nn = n_nodes[s]
        if nn == 0:
            continue
        lo = edge_off[s]
        hi = edge_off[s + 1]
        ws, used = sentence_envelope(nn, lo, hi, tails, heads, a, b, ws)
        env_s, env_i, env_e, env_p, node_lo, node_hi = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5]
        g_lo = node_lo[nn - 1]
        g_hi = node_hi[nn - 1]
        if g_hi == g_lo:
            continue
        starts = goal_starts(env_s, env_i, g_lo, g_hi)
        m = g_hi - g_lo
        if n_paths + m > cap_p:
            cap_p = 2 * (n_paths + m)
            path_sent = grow(path_sent, n_paths, cap_p)
            path_off = grow(path_off, n_paths + 1, cap_p + 1)
        if nb + m > cap_b:
            cap_b = 2 * (nb + m)
            bx = grow(bx, nb, cap_b)
            bnew = grow(bnew, nb, cap_b)
            bprev = grow(bprev, nb, cap_b)
        if buf.shape[0] < nn + 1:
            buf = np.empty(2 * (nn + 1), dtype=np.int64)
        for k in range(m):
            length = trace_path(g_lo + k, env_e, env_p, tails, buf)
            if path_off[n_paths] + length > cap_e:
                cap_e = 2 * (path_off[n_paths] + length)
                path_edges = grow(path_edges, path_off[n_paths], cap_e)
            base = path_off[n_paths]
            for j in range(length):
                path_edges[base + j] = buf[j]
            path_off[n_paths + 1] = base + length
            path_sent[n_paths] = s
            if k == 0:
                first[s] = n_paths
            else:
                bx[nb] = starts[k]
                bnew[nb] = n_paths
                bprev[nb] = n_paths - 1
                nb += 1
            n_paths += 1
    return (first, bx[:nb], bnew[:nb], bprev[:nb], path_sent[:n_paths], path_off[: n_paths + 1],
            path_edges[: path_off[n_paths]])


# ------------------------------------------------------------------------ one Lattice
@dataclasses.dataclass
class Envelope:
    """The upper envelope of ``(w + gamma d) . h`` over the paths of a lattice.

    Segment ``i`` covers ``gamma`` in ``[starts[i], starts[i+1])`` (``starts[0] = -inf``); there the
    best path is ``paths[i]`` with score ``intercepts[i] + slopes[i] * gamma``.
    """

    starts: np.ndarray
    slopes: np.ndarray
    intercepts: np.ndarray
    paths: list[list[int]]


def upper_envelope(lat: Lattice, weights: Mapping[str, float] | np.ndarray,
                   direction: Mapping[str, float] | np.ndarray) -> Envelope:
    """Macherey et al. (2008): the upper envelope of ``(w + gamma d) . h`` over all paths of ``lat``.

    Node envelopes are propagated in topological order by :func:`corpus_envelopes` (each node's envelope is the upper envelope of its
    incoming edges' shifted tail envelopes); the goal's envelope is returned with the path of every
    segment.
    """
    a_e = lat.edge_scores(weights)
    b_e = lat.edge_scores(direction)
    order = np.lexsort((lat.tails, lat.heads))
    tails = np.asarray(lat.tails, dtype=np.int64)[order]
    heads = np.asarray(lat.heads, dtype=np.int64)[order]
    first, bx, _, _, _, path_off, path_edges = corpus_envelopes(
        np.array([lat.n_nodes], dtype=np.int64), np.array([0, lat.n_edges], dtype=np.int64), tails, heads,
        np.ascontiguousarray(a_e[order]), np.ascontiguousarray(b_e[order]))
    if first[0] < 0:
        return Envelope(np.zeros(0), np.zeros(0), np.zeros(0), [])
    paths = [order[path_edges[path_off[k] : path_off[k + 1]]].tolist() for k in range(len(path_off) - 1)]
    slopes = np.array([b_e[p].sum() if p else 0.0 for p in paths])
    icepts = np.array([a_e[p].sum() if p else 0.0 for p in paths])
    return Envelope(np.concatenate([[-np.inf], bx]), slopes, icepts, paths)
