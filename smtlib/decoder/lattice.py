"""Translation lattices: the decoder's search graph with a feature vector on every edge.

File format (``smtlib-lattice/1``), UTF-8 text, plain or gzip (by the ``.gz`` name)::

    #smtlib-lattice/1
    #features TranslationModel0_0 TranslationModel0_1 ... LexicalReordering0_5
    SENTENCE 0 NODES 5 EDGES 7
    0 1 ||| a man ||| -1.2 -0.7 -2.3 -0.9 -8.04 -2 0 ||| cbin_3=1
    0 2 ||| man ||| ...
    ...
    SENTENCE 1 NODES 2 EDGES 1
    0 1 ||| ||| 0 0 0 0 -1.9 0 0 |||

* The ``#features`` line names the dense values, in the order of every edge's third field (the
  model's ``dense_features`` order, as in k-best lines).
* One block per input sentence, with the 0-based sentence id, the number of nodes and of edges.
  Node 0 is the start (nothing translated), node ``NODES-1`` the goal (everything translated,
  end-of-sentence scored). Nodes are numbered topologically: every edge has ``tail < head``.
* An edge line is ``tail head ||| target words ||| dense values ||| sparse`` where the target words
  are the phrase the edge appends (empty only for the single edge of an empty sentence), the dense
  values are the edge's *increment* of every dense feature (phrase scores, the LM scores of the new
  words in their context and, on edges into the goal, of ``</s>``, word penalty, distortion,
  lexicalized reordering), and ``sparse`` is ``name=value`` pairs of the edge's sparse features
  (possibly empty). Edges are sorted by head, then by tail.
* A path from 0 to the goal is one derivation of a translation: its words are the concatenation of
  its edges' words, its feature vector the sum of its edges' vectors, and its model score ``w . h``
  the sum of the edges' scores. Every hypothesis the decoder kept after recombination and pruning is
  a path; recombined hypotheses (Moses's arcs) are extra incoming edges of the same node.

With a lattice beam (``smtlib decode --lattice-beam B``, default 10; 0 = the whole graph) only the edges whose best path scores
within ``B`` of the 1-best (under the decoding weights) are written, together with every edge of
the k-best paths, so the 1-best and the k-best list are still paths (:func:`beam_prune_nb`).

Library: :func:`read_lattices` / :func:`write_lattice`, :func:`best_path` (Viterbi under any
weights), :func:`kbest_paths` (the k best paths, optionally with distinct translations; the lazy
deviation search that also gives the decoder's k-best lists), and :func:`upper_envelope` (the
piecewise-linear maximum of ``(w + gamma d) . h`` over all paths as a function of ``gamma``,
Macherey et al. 2008, Algorithm 1 / §3 "lattice MERT"), for lattice MERT and lattice MIRA.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping
from typing import IO

import numba
import numpy as np

from smtlib.errors import InputError
from smtlib.io import open_text
from smtlib.values import parse_number

FORMAT = "#smtlib-lattice/1"


@dataclasses.dataclass
class Lattice:
    """One sentence's lattice (see the module docstring).

    Attributes
    ----------
    sent_id, n_nodes
        Sentence id and number of nodes (0 = start, ``n_nodes-1`` = goal).
    tails, heads
        Edge end points, ``tails < heads``.
    words
        Target words of each edge (a tuple of strings).
    dense
        ``(n_edges, n_dense)`` feature increments.
    sparse
        Per edge, ``{name: value}``.
    feature_names
        Names of the dense columns.
    """

    sent_id: int
    n_nodes: int
    tails: np.ndarray
    heads: np.ndarray
    words: list[tuple[str, ...]]
    dense: np.ndarray
    sparse: list[dict[str, float]]
    feature_names: list[str]

    @property
    def n_edges(self) -> int:
        return len(self.tails)

    def edge_scores(self, weights: Mapping[str, float] | np.ndarray) -> np.ndarray:
        """``w . h_e`` of every edge; ``weights`` is a name->value map or a dense vector."""
        if isinstance(weights, np.ndarray):
            return self.dense @ weights
        w = np.array([weights.get(n, 0.0) for n in self.feature_names], dtype=np.float64)
        out = self.dense @ w
        for e, sp in enumerate(self.sparse):
            for name, v in sp.items():
                out[e] += weights.get(name, 0.0) * v
        return out

    def path_features(self, edges: list[int] | np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
        """Summed dense and sparse features of a path."""
        dense = self.dense[np.asarray(edges, dtype=np.int64)].sum(axis=0) if len(edges) else np.zeros(
            self.dense.shape[1])
        sparse: dict[str, float] = {}
        for e in edges:
            for name, v in self.sparse[e].items():
                sparse[name] = sparse.get(name, 0.0) + v
        return dense, sparse

    def path_words(self, edges: list[int] | np.ndarray) -> list[str]:
        return [w for e in edges for w in self.words[e]]

    def _word_ids(self) -> tuple[np.ndarray, np.ndarray]:
        vocab: dict[str, int] = {}
        ids = [vocab.setdefault(w, len(vocab)) for ws in self.words for w in ws]
        offs = np.zeros(self.n_edges + 1, dtype=np.int64)
        offs[1:] = np.cumsum([len(ws) for ws in self.words])
        return offs, np.array(ids, dtype=np.int64)


# ---------------------------------------------------------------------------------------- I/O
def _fmt(v: float) -> str:
    if v == 0.0:
        return "0"
    return f"{v:.9g}"


def write_lattice(out: IO[str], lat: Lattice) -> None:
    """Write one sentence block (the header line is written by the caller, see :func:`lattice_header`)."""
    out.write(f"SENTENCE {lat.sent_id} NODES {lat.n_nodes} EDGES {lat.n_edges}\n")
    for e in range(lat.n_edges):
        dense = " ".join(_fmt(float(v)) for v in lat.dense[e])
        sparse = " ".join(f"{k}={_fmt(v)}" for k, v in lat.sparse[e].items())
        out.write(f"{lat.tails[e]} {lat.heads[e]} ||| {' '.join(lat.words[e])} ||| {dense} ||| {sparse}\n")


def lattice_header(feature_names: list[str]) -> str:
    return f"{FORMAT}\n#features {' '.join(feature_names)}\n"


def _count(text: str, what: str, path, lineno: int) -> int:
    if not text.isascii() or not text.isdigit():
        raise InputError(f"{what} {text!r} is not a non-negative integer", path, lineno)
    return int(text)


def _edge_line(line: str, names: list[str], n_nodes: int, path, lineno: int):
    """(tail, head, words, dense values, sparse) of one edge line; an InputError names the line."""
    if not line.endswith("\n"):
        what = "the file ends inside a block (truncated?)" if not line else "the last line has no line end (truncated?)"
        raise InputError(what, path, lineno)
    if "||||" in line:
        raise InputError("'||||' is ambiguous: which three '|' are the separator?", path, lineno)
    fields = line[:-1].split("|||")
    if len(fields) != 4:
        raise InputError(f"edge line must have 4 '|||'-separated fields, found {len(fields)}", path, lineno)
    ends = fields[0].split()
    if len(ends) != 2:
        raise InputError(f"expected 'tail head' before the first '|||', got {fields[0].strip()!r}", path, lineno)
    tail, head = (_count(x, "node", path, lineno) for x in ends)
    if not 0 <= tail < head < n_nodes:
        raise InputError(f"edge {tail} -> {head} does not satisfy 0 <= tail < head < NODES ({n_nodes})", path, lineno)
    values = [parse_number(v, "dense value", path, lineno) for v in fields[2].split()]
    sparse: dict[str, float] = {}
    for item in fields[3].split():
        name, sep, value = item.partition("=")
        if not sep or not name or "=" in value:
            raise InputError(f"sparse feature {item!r} is not 'name=value' (sparse names never hold '=')", path, lineno)
        if name in sparse:
            raise InputError(f"sparse feature {name!r} appears twice", path, lineno)
        sparse[name] = parse_number(value, f"value of sparse feature {name!r}:", path, lineno)
    return tail, head, tuple(fields[1].split()), values, sparse


def iter_lattices(path: str | os.PathLike) -> Iterator[Lattice]:
    """Read a lattice file block by block.

    Every line is checked, so that a damaged file is an error at its real line rather than another
    lattice: numbers follow :mod:`smtlib.values` (finite), sentence ids are 0, 1, 2 ... (one block
    per input sentence, as ``smtlib decode --lattice`` writes them), every edge has as many dense
    values as the ``#features`` line names (when the first two edges of the file agree with each
    other but not with it, the ``#features`` line is the one reported), edges are sorted by head
    then tail, a sparse feature appears once per edge, and the file ends with a line end.

    Raises
    ------
    InputError
        On a malformed file, naming the file and the 1-based line.
    """
    with open_text(path, what="lattice file") as fh:
        first = fh.readline()
        if first.rstrip("\n") != FORMAT:
            raise InputError(f"not a lattice file (first line should be {FORMAT!r})", path, 1)
        second = fh.readline()
        parts = second.split()
        if not parts or parts[0] != "#features" or not second.endswith("\n"):
            raise InputError("missing '#features' line", path, 2)
        names = parts[1:]
        if not names:
            raise InputError("the '#features' line names no feature", path, 2)
        if len(set(names)) != len(names):
            raise InputError("the '#features' line names a feature twice", path, 2)
        lineno = 2
        edges_seen = 0
        expected_id = 0
        while True:
            header = fh.readline()
            lineno += 1
            if not header:
                return
            parts = header.split()
            if len(parts) != 6 or parts[0] != "SENTENCE" or parts[2] != "NODES" or parts[4] != "EDGES" or not header.endswith("\n"):
                raise InputError(f"expected 'SENTENCE id NODES n EDGES m', got {header.strip()!r}", path, lineno)
            sent_id, n_nodes, n_edges = (_count(parts[k], parts[k - 1].lower() if k > 1 else "sentence id", path, lineno)
                                         for k in (1, 3, 5))
            if sent_id != expected_id:
                raise InputError(f"sentence id {sent_id} where {expected_id} is expected (blocks are 0, 1, 2 ...)", path, lineno)
            expected_id += 1
            if n_nodes < 2 or n_edges < 1:
                raise InputError("a lattice has 2 nodes and 1 edge at least", path, lineno)
            tails = np.zeros(n_edges, dtype=np.int64)
            heads = np.zeros(n_edges, dtype=np.int64)
            dense = np.zeros((n_edges, len(names)))
            words: list[tuple[str, ...]] = []
            sparse: list[dict[str, float]] = []
            for e in range(n_edges):
                line = fh.readline()
                lineno += 1
                tail, head, phrase, vals, sp = _edge_line(line, names, n_nodes, path, lineno)
                if len(vals) != len(names):
                    if edges_seen == 0:
                        ahead = fh.readline().split("|||")
                        if len(ahead) == 4 and len(ahead[2].split()) == len(vals):
                            raise InputError(f"the '#features' line names {len(names)} features but the edges have "
                                             f"{len(vals)} values", path, 2)
                    raise InputError(f"edge has {len(vals)} dense values, expected {len(names)}", path, lineno)
                if e and (head, tail) < (heads[e - 1], tails[e - 1]):
                    raise InputError(f"edge {tail} -> {head} after {tails[e - 1]} -> {heads[e - 1]}: edges must be sorted "
                                     "by head, then tail", path, lineno)
                tails[e], heads[e] = tail, head
                dense[e] = vals
                words.append(phrase)
                sparse.append(sp)
                edges_seen += 1
            yield Lattice(sent_id, n_nodes, tails, heads, words, dense, sparse, names)


def read_lattices(path: str | os.PathLike) -> list[Lattice]:
    """All lattices of a file."""
    return list(iter_lattices(path))


# ------------------------------------------------------------------------------ algorithms
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

    Node envelopes are propagated in topological order by the compiled kernel of
    :mod:`smtlib.decoder.lattice_envelope` (each node's envelope is the upper envelope of its
    incoming edges' shifted tail envelopes); the goal's envelope is returned with the path of every
    segment.
    """
    from smtlib.decoder.lattice_envelope import corpus_envelopes

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
