"""Paths through a translation lattice (:class:`smtlib.lattice.format.Lattice`, node 0 the start,
the last node the goal, ``tail < head``).

:func:`best_path` (Viterbi under any weights; :func:`viterbi_path` / :func:`viterbi_paths` the same
on a :class:`~smtlib.lattice.lattice_set.LatticeSet`'s flat arrays, for the tuners),
:func:`kbest_paths` (the k best paths, optionally with distinct translations: :func:`kbest_nb`, the
lazy deviation search that also gives the decoder's k-best lists), two prunings by max-marginal score (the best path through an edge): :func:`beam_prune_nb`
(within a beam of the 1-best: ``smtlib decode --lattice-beam``) and :func:`density_prune_edges` (the
best ``max_edges``: lb-mira's density pruning; :func:`subgraph` renumbers what is kept). The upper envelope of all paths along a line is :mod:`smtlib.lattice.envelope`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numba
import numpy as np

from smtlib.lattice.format import Lattice


@numba.njit(cache=True)
def _incoming(n_nodes, tails, heads, deltas):
    """Viterbi scores and, per node, its incoming edges sorted best first (ties by edge id)."""
    ne = tails.shape[0]
    best = np.full(n_nodes, -np.inf)
    best[0] = 0.0
    cnt = np.zeros(n_nodes + 1, dtype=np.int64)
    for e in range(ne):
        cnt[heads[e] + 1] += 1
    off = np.cumsum(cnt)
    fill = off[:-1].copy()
    byhead = np.empty(ne, dtype=np.int64)
    order_t = np.argsort(heads, kind="mergesort")
    for i in range(ne):
        e = order_t[i]
        byhead[fill[heads[e]]] = e
        fill[heads[e]] += 1
    # nodes in id order are topological (tail < head)
    in_sorted = np.empty(ne, dtype=np.int64)
    in_score = np.empty(ne)
    for v in range(1, n_nodes):
        a, b = off[v], off[v + 1]
        sc = np.empty(b - a)
        for i in range(a, b):
            e = byhead[i]
            sc[i - a] = best[tails[e]] + deltas[e]
        order = np.argsort(-sc, kind="mergesort")
        for i in range(b - a):
            in_sorted[a + i] = byhead[a + order[i]]
            in_score[a + i] = sc[order[i]]
        if b > a:
            best[v] = in_score[a]
    return best, off, in_sorted, in_score


@numba.njit(cache=True)
def _best_chain(v, off, in_sorted, tails, buf, pos):
    """Append the best edges from node ``v`` back to the start to ``buf`` from ``pos``; new length."""
    while v != 0 and off[v + 1] > off[v]:
        e = in_sorted[off[v]]
        buf[pos] = e
        pos += 1
        v = tails[e]
    return pos


@numba.njit(cache=True)
def kbest_nb(n_nodes, tails, heads, deltas, wstart, wend, words, k, max_pops, distinct):
    """The k best start-goal paths, lazily, by deviations from best paths (Moses's ``TrellisPath``).

    Edge ``e`` appends the words ``words[wstart[e]:wend[e]]``. A path is its parent path with the incoming edge of one node ``v`` replaced by ``v``'s
    ``r``-th best incoming edge, followed by the best path back to the start from that edge's tail.
    Popping a path pushes its next sibling (rank ``r+1`` at ``v``) and, for every node on its new best
    suffix, the deviation to that node's second-best incoming edge, so every path is produced exactly
    once and in order of score (as Huang & Chiang 2005, Algorithm 3, on a graph whose edges have one
    tail). With ``distinct``, paths whose word sequence equals an earlier one are skipped, and at most
    ``max_pops`` paths are examined (Moses's n-best factor).

    Returns
    -------
    (scores, offsets, edges) of the accepted paths; edges run from the start to the goal.
    """
    best, off, in_sorted, in_score = _incoming(n_nodes, tails, heads, deltas)
    goal = n_nodes - 1
    maxlen = n_nodes + 1
    cap = 1024
    p_parent = np.empty(cap, dtype=np.int64)
    p_node = np.empty(cap, dtype=np.int64)
    p_rank = np.empty(cap, dtype=np.int64)
    p_pos = np.empty(cap, dtype=np.int64)
    p_score = np.empty(cap)
    heap = np.empty(cap, dtype=np.int64)
    hsize = 0
    npaths = 0
    out_scores = np.empty(max(k, 1))
    out_off = np.zeros(max(k, 1) + 1, dtype=np.int64)
    out_edges = np.empty(max(k, 1) * maxlen, dtype=np.int64)
    out_hash = np.empty(max(k, 1), dtype=np.uint64)
    n_out = 0
    if k <= 0 or not np.isfinite(best[goal]):
        return out_scores[:0], out_off[:1], out_edges[:0]
    seq = np.empty(maxlen, dtype=np.int64)
    tmp = np.empty(maxlen, dtype=np.int64)
    anc = np.empty(maxlen + 1, dtype=np.int64)
    # root
    p_parent[0] = -1
    p_node[0] = goal
    p_rank[0] = 0
    p_pos[0] = 0
    p_score[0] = best[goal]
    npaths = 1
    heap[0] = 0
    hsize = 1
    pops = 0
    while hsize > 0 and n_out < k and pops < max_pops:
        # pop the max (ties: smaller path id)
        p = heap[0]
        hsize -= 1
        last = heap[hsize]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= hsize:
                break
            if c + 1 < hsize and (p_score[heap[c + 1]] > p_score[heap[c]] or (
                    p_score[heap[c + 1]] == p_score[heap[c]] and heap[c + 1] < heap[c])):
                c += 1
            if p_score[heap[c]] > p_score[last] or (p_score[heap[c]] == p_score[last] and heap[c] < last):
                heap[i] = heap[c]
                i = c
            else:
                break
        if hsize > 0:
            heap[i] = last
        pops += 1
        # reconstruct the edge sequence (goal first)
        na = 0
        q = p
        while q >= 0:
            anc[na] = q
            na += 1
            q = p_parent[q]
        length = _best_chain(goal, off, in_sorted, tails, seq, 0)
        for ai in range(na - 2, -1, -1):
            q = anc[ai]
            v = p_node[q]
            pos = p_pos[q]
            e = in_sorted[off[v] + p_rank[q]]
            seq[pos] = e
            length = _best_chain(tails[e], off, in_sorted, tails, seq, pos + 1)
        # its words
        h = np.uint64(1469598103934665603)
        for j in range(length - 1, -1, -1):
            e = seq[j]
            for wi in range(wstart[e], wend[e]):
                h = (h ^ np.uint64(words[wi] + 1)) * np.uint64(1099511628211)
        dup = False
        if distinct:
            for j in range(n_out):
                if out_hash[j] == h:
                    dup = True
                    break
        if not dup:
            out_scores[n_out] = p_score[p]
            out_hash[n_out] = h
            base = out_off[n_out]
            for j in range(length):
                out_edges[base + j] = seq[length - 1 - j]
            out_off[n_out + 1] = base + length
            n_out += 1
        # successors
        start_j = 0 if p_parent[p] < 0 else p_pos[p] + 1
        need = length - start_j + 2
        if npaths + need >= cap:
            cap = 2 * (npaths + need)
            p_parent = np.concatenate((p_parent, np.empty(cap - p_parent.shape[0], dtype=np.int64)))
            p_node = np.concatenate((p_node, np.empty(cap - p_node.shape[0], dtype=np.int64)))
            p_rank = np.concatenate((p_rank, np.empty(cap - p_rank.shape[0], dtype=np.int64)))
            p_pos = np.concatenate((p_pos, np.empty(cap - p_pos.shape[0], dtype=np.int64)))
            p_score = np.concatenate((p_score, np.empty(cap - p_score.shape[0])))
            heap = np.concatenate((heap, np.empty(cap - heap.shape[0], dtype=np.int64)))
        cands = 0
        if p_parent[p] >= 0:
            v = p_node[p]
            r = p_rank[p] + 1
            if off[v] + r < off[v + 1]:
                q = npaths
                p_parent[q] = p_parent[p]
                p_node[q] = v
                p_rank[q] = r
                p_pos[q] = p_pos[p]
                p_score[q] = p_score[p] - in_score[off[v] + r - 1] + in_score[off[v] + r]
                npaths += 1
                tmp[cands] = q
                cands += 1
        for j in range(start_j, length):
            w = heads[seq[j]]
            if off[w + 1] - off[w] >= 2 and np.isfinite(in_score[off[w] + 1]):
                q = npaths
                p_parent[q] = p
                p_node[q] = w
                p_rank[q] = 1
                p_pos[q] = j
                p_score[q] = p_score[p] - best[w] + in_score[off[w] + 1]
                npaths += 1
                if cands < tmp.shape[0]:
                    tmp[cands] = q
                    cands += 1
        for ci in range(cands):
            q = tmp[ci]
            i = hsize
            hsize += 1
            while i > 0:
                par = (i - 1) // 2
                if p_score[heap[par]] > p_score[q] or (p_score[heap[par]] == p_score[q] and heap[par] < q):
                    break
                heap[i] = heap[par]
                i = par
            heap[i] = q
    return out_scores[:n_out], out_off[: n_out + 1], out_edges[: out_off[n_out]]


@numba.njit(cache=True)
def beam_prune_nb(n_nodes, tails, heads, deltas, beam, keep_edges):
    """Edges whose best path through them is within ``beam`` of the best path (max-marginal pruning,
    as density/beam pruning of search graphs in Moses and cdec), plus ``keep_edges``; returns the new
    node ids (-1 = dropped), the number of nodes left and the kept edges (sorted by head, tail)."""
    ne = tails.shape[0]
    fwd = np.full(n_nodes, -np.inf)
    fwd[0] = 0.0
    order = np.argsort(heads, kind="mergesort")
    for i in range(ne):
        e = order[i]
        c = fwd[tails[e]] + deltas[e]
        if c > fwd[heads[e]]:
            fwd[heads[e]] = c
    bwd = np.full(n_nodes, -np.inf)
    bwd[n_nodes - 1] = 0.0
    for i in range(ne - 1, -1, -1):
        e = order[i]
        c = bwd[heads[e]] + deltas[e]
        if c > bwd[tails[e]]:
            bwd[tails[e]] = c
    best = fwd[n_nodes - 1]
    keep = np.zeros(ne, dtype=np.bool_)
    for e in range(ne):
        if fwd[tails[e]] + deltas[e] + bwd[heads[e]] >= best - beam:
            keep[e] = True
    for i in range(keep_edges.shape[0]):
        keep[keep_edges[i]] = True
    used = np.zeros(n_nodes, dtype=np.bool_)
    used[0] = True
    used[n_nodes - 1] = True
    for e in range(ne):
        if keep[e]:
            used[tails[e]] = True
            used[heads[e]] = True
    new_id = np.full(n_nodes, -1, dtype=np.int64)
    m = 0
    for v in range(n_nodes):
        if used[v]:
            new_id[v] = m
            m += 1
    kept = np.empty(ne, dtype=np.int64)
    k = 0
    for e in range(ne):
        if keep[e]:
            kept[k] = e
            k += 1
    return new_id, m, kept[:k]


@numba.njit(cache=True)
def max_marginals(n_nodes, tails, heads, deltas):
    """Score of the best start-goal path through every edge (edges sorted by head)."""
    ne = tails.shape[0]
    fwd = np.full(n_nodes, -np.inf)
    fwd[0] = 0.0
    for e in range(ne):
        c = fwd[tails[e]] + deltas[e]
        if c > fwd[heads[e]]:
            fwd[heads[e]] = c
    bwd = np.full(n_nodes, -np.inf)
    bwd[n_nodes - 1] = 0.0
    for e in range(ne - 1, -1, -1):
        c = bwd[heads[e]] + deltas[e]
        if c > bwd[tails[e]]:
            bwd[tails[e]] = c
    out = np.empty(ne)
    for e in range(ne):
        out[e] = fwd[tails[e]] + deltas[e] + bwd[heads[e]]
    return out


@numba.njit(cache=True)
def reverse_prefix(buf, n):
    """Reverse ``buf[:n]`` in place: a path traced back from the goal, put in start-to-goal order."""
    for k in range(n // 2):
        tmp = buf[k]
        buf[k] = buf[n - 1 - k]
        buf[n - 1 - k] = tmp


@numba.njit(cache=True)
def viterbi_path(lo, hi, n_nodes, tails, heads, scores, buf):
    """The best path by model score (edges ``lo:hi`` sorted by head); ties: the first edge. Returns
    ``(score, n)`` with the edges in ``buf[:n]`` (``n = -1`` if the goal is unreachable)."""
    best = np.full(n_nodes, -np.inf)
    back = np.full(n_nodes, -1, dtype=np.int64)
    best[0] = 0.0
    for e in range(lo, hi):
        c = best[tails[e]] + scores[e]
        if c > best[heads[e]]:
            best[heads[e]] = c
            back[heads[e]] = e
    goal = n_nodes - 1
    if not np.isfinite(best[goal]):
        return -np.inf, -1
    n = 0
    v = goal
    while v != 0:
        e = back[v]
        buf[n] = e
        n += 1
        v = tails[e]
    reverse_prefix(buf, n)
    return best[goal], n


@numba.njit(cache=True, nogil=True)
def viterbi_paths(n_nodes, edge_off, tails, heads, scores):
    """The best path of every sentence: (sentence of each path, offsets, edges); empty lattices skipped."""
    n_sent = n_nodes.shape[0]
    sent = np.empty(n_sent, dtype=np.int64)
    off = np.zeros(n_sent + 1, dtype=np.int64)
    edges = np.empty(tails.shape[0] + 1, dtype=np.int64)
    buf = np.empty(1024, dtype=np.int64)
    k = 0
    for s in range(n_sent):
        if n_nodes[s] == 0:
            continue
        if buf.shape[0] < n_nodes[s] + 1:
            buf = np.empty(2 * (n_nodes[s] + 1), dtype=np.int64)
        _, n = viterbi_path(edge_off[s], edge_off[s + 1], n_nodes[s], tails, heads, scores, buf)
        if n < 0:
            continue
        sent[k] = s
        for j in range(n):
            edges[off[k] + j] = buf[j]
        off[k + 1] = off[k] + n
        k += 1
    return sent[:k], off[: k + 1], edges[: off[k]]


def density_prune_edges(n_nodes: int, tails: np.ndarray, heads: np.ndarray, deltas: np.ndarray,
                        max_edges: int) -> np.ndarray:
    """Edges kept by density pruning to ``max_edges`` (sorted ids): the ``max_edges`` edges with the best
    max-marginal score (the best path through the edge, Moses's ``Graph::Prune``; ties at the threshold
    are kept), which keeps every kept edge on a kept path (lb-mira's 50 edges per reference word)."""
    mm = max_marginals(n_nodes, tails, heads, deltas)
    finite = np.isfinite(mm)
    if max_edges <= 0 or np.count_nonzero(finite) <= max_edges:
        return np.flatnonzero(finite)
    threshold = np.sort(mm[finite])[::-1][max_edges - 1]
    return np.flatnonzero(finite & (mm >= threshold))


def subgraph(n_nodes: int, tails: np.ndarray, heads: np.ndarray, keep: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Renumber the nodes used by the edges ``keep`` (start and goal always kept): (nodes, tails, heads)."""
    used = np.zeros(n_nodes, dtype=bool)
    used[[0, n_nodes - 1]] = True
    used[tails[keep]] = True
    used[heads[keep]] = True
    new_id = np.cumsum(used) - 1
    return int(used.sum()), new_id[tails[keep]], new_id[heads[keep]]


def best_path(lat: Lattice, weights: Mapping[str, float] | np.ndarray) -> tuple[float, list[int]]:
    """The highest-scoring path under ``weights``: (score, edges from start to goal)."""
    scores, offs, edges = kbest_paths(lat, weights, 1)
    if not scores:
        return float("-inf"), []
    return scores[0], edges[0]


def kbest_paths(lat: Lattice, weights: Mapping[str, float] | np.ndarray, k: int, *, distinct: bool = False,
                max_pops: int | None = None) -> tuple[list[float], list[int], list[list[int]]]:
    """The ``k`` best paths under ``weights``, best first.

    Parameters
    ----------
    distinct
        Skip paths whose translation (word sequence) equals a better path's.
    max_pops
        With ``distinct``, examine at most this many paths (default ``20 * k``).

    Returns
    -------
    (scores, unused, paths): each path is a list of edge ids from the start to the goal.
    """
    deltas = lat.edge_scores(weights)
    woff, wids = lat._word_ids()
    pops = max_pops if max_pops is not None else (20 * k if distinct else k)
    scores, offs, edges = kbest_nb(lat.n_nodes, lat.tails, lat.heads, deltas, woff[:-1], woff[1:], wids, k,
                                   max(pops, k), distinct)
    paths = [edges[offs[i] : offs[i + 1]].tolist() for i in range(len(scores))]
    return scores.tolist(), offs.tolist(), paths
