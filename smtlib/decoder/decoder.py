"""Decoding one sentence: translation options, future costs, search, the graph, k-best lines.

:class:`Decoder` ties :mod:`~smtlib.decoder.model` (options and their scores),
:mod:`~smtlib.decoder.search` (the compiled stack search) and :mod:`~smtlib.lattice.paths` (the
search graph's k-best paths) together. Every k-best line's feature vector is recomputed edge by
edge from the model (not carried through the search) and its total is ``w . h`` of the values as
printed; the decoder checks that this total equals the search score of the same path (up to the
rounding of the printed values) and raises ``RuntimeError`` otherwise.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from typing import NamedTuple

import numba
import numpy as np

from smtlib._dot import dot, matvec
from smtlib.decoder.cube import cube_search_nb
from smtlib.decoder.model import PhraseModel, Weights, add_sparse_dots, lm_estimate_nb
from smtlib.decoder.phrases import ragged_take
from smtlib.decoder.search import search_nb
from smtlib.decoder.search_graph import LanguageModels, SearchGraph, SearchInput, SearchWeights
from smtlib.decoder.search_graph import Options as SearchOptions
from smtlib.decoder.settings import DecoderConfig
from smtlib.kbest.format import DECODED, FeatureGroup, features_field
from smtlib.lattice.format import IndexedValues, Lattice
from smtlib.lattice.paths import beam_prune_nb, kbest_nb

@dataclasses.dataclass
class SentenceOptions:
    """The translation options of one sentence, as flat arrays for the search (sorted per span)."""

    n: int
    maxlen: int
    start: np.ndarray
    end: np.ndarray
    woff: np.ndarray
    words: np.ndarray
    static: np.ndarray
    lr: np.ndarray
    bound: np.ndarray
    entry: np.ndarray
    span_first: np.ndarray
    span_cnt: np.ndarray
    fct: np.ndarray
    est: np.ndarray  #: estimated score (static + context-free LM), the cube search's option order


@dataclasses.dataclass
class SentenceResult:
    """What decoding one sentence gives."""

    sent_id: int
    best: str
    best_score: float
    kbest: list[KBestLine]
    lattice: Lattice | None
    n_nodes: int = 0
    n_edges: int = 0


@dataclasses.dataclass
class _LiveEdges:
    """The edges of the live search graph (numbered by ``_extract_nb``) and what k-best lines and
    lattices need of them: per edge its tail, head, score increment, option, phrase-table entry and
    dense features; caches of target phrases and sparse features."""

    n_nodes: int
    sel: np.ndarray  #: the search's edge ids
    tails: np.ndarray
    heads: np.ndarray
    deltas: np.ndarray
    opt: np.ndarray
    ent: np.ndarray
    dense: np.ndarray
    opts: SentenceOptions
    phrases: dict[int, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    phrase_texts: dict[int, str] = dataclasses.field(default_factory=dict)
    sparse: dict[int, dict[str, float]] = dataclasses.field(default_factory=dict)


@numba.njit(cache=True)
def _extract_nb(goal, nn, n_alive, n_stack, e_tail, e_head):
    """The live search graph: nodes that reach the goal, numbered by (stack, id), and their edges."""
    ne = e_tail.shape[0]
    cnt = np.zeros(nn + 1, dtype=np.int64)
    for e in range(ne):
        if n_alive[e_head[e]]:
            cnt[e_head[e] + 1] += 1
    off = np.cumsum(cnt)
    fill = off[:-1].copy()
    inc = np.empty(off[-1], dtype=np.int64)
    for e in range(ne):
        if n_alive[e_head[e]]:
            inc[fill[e_head[e]]] = e
            fill[e_head[e]] += 1
    live = np.zeros(nn, dtype=np.bool_)
    live[goal] = True
    stack = np.empty(nn, dtype=np.int64)
    stack[0] = goal
    top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        for i in range(off[v], off[v + 1]):
            t = e_tail[inc[i]]
            if not live[t]:
                live[t] = True
                stack[top] = t
                top += 1
    ids = np.empty(nn, dtype=np.int64)
    m = 0
    for v in range(nn):
        if live[v]:
            ids[m] = v
            m += 1
    ids = ids[:m]
    key = n_stack[ids] * (nn + 1) + ids
    order = np.argsort(key, kind="mergesort")
    new_id = np.full(nn, -1, dtype=np.int64)
    for i in range(m):
        new_id[ids[order[i]]] = i
    sel = np.empty(off[-1], dtype=np.int64)
    k = 0
    for e in range(ne):
        if n_alive[e_head[e]] and live[e_head[e]]:
            sel[k] = e
            k += 1
    sel = sel[:k]
    ekey = np.empty(k, dtype=np.int64)
    for i in range(k):
        ekey[i] = new_id[e_head[sel[i]]] * (m + 1) + new_id[e_tail[sel[i]]]
    sel = sel[np.argsort(ekey, kind="mergesort")]
    return new_id, m, sel


@numba.njit(cache=True)
def _edge_features_nb(sel, use_lr, e_tail, e_opt, n_last_end, n_last_start, n_last_opt, o_start, o_end, o_lr):
    """Distortion and reordering increments of the selected edges (the LM's come from the search)."""
    E = sel.shape[0]
    dist = np.zeros(E)
    lr = np.zeros((E, 6))
    for i in range(E):
        e = sel[i]
        u = e_tail[e]
        o = e_opt[e]
        start = o_start[o]
        end = o_end[o]
        jump = start - (n_last_end[u] + 1)
        dist[i] = -abs(jump)
        if use_lr:
            if start == n_last_end[u] + 1:
                orient = 0
            elif end == n_last_start[u]:
                orient = 1
            else:
                orient = 2
            lr[i, orient] = o_lr[o, orient]
            if n_last_opt[u] >= 0:
                lr[i, 3 + orient] = o_lr[n_last_opt[u], 3 + orient]
    return dist, lr


@numba.njit(cache=True)
def _future_costs_nb(best):
    """Future cost table (Koehn 2004, §3.3): the best split of every span into scored spans."""
    n = best.shape[0] - 1
    fct = np.full((n + 1, n + 1), -np.inf)
    for i in range(n + 1):
        fct[i, i] = 0.0
    for length in range(1, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            b = best[i, j]
            for mid in range(i + 1, j):
                c = fct[i, mid] + fct[mid, j]
                if c > b:
                    b = c
            fct[i, j] = b
    return fct


@numba.njit(cache=True)
def _span_index_nb(start, end, est, n, maxlen):
    """Per span ``(i, length)``, the first option and the number of options (the options sorted by
    start, then length), and the best estimate of each span ``[i, j)``, future costs' input."""
    span_first = np.zeros((max(n, 1), maxlen), dtype=np.int64)
    span_cnt = np.zeros((max(n, 1), maxlen), dtype=np.int64)
    best = np.full((n + 1, n + 1), -np.inf)
    for idx in range(len(start)):
        i = start[idx]
        ln = end[idx] - i
        if span_cnt[i, ln - 1] == 0:
            span_first[i, ln - 1] = idx
        span_cnt[i, ln - 1] += 1
        if est[idx] > best[i, end[idx]]:
            best[i, end[idx]] = est[idx]
    return span_first, span_cnt, best


def _round(values: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The values as k-best lines print them (:data:`~smtlib.kbest.format.DECODED`: 6 significant
    digits, like Moses), and that text.

    Each distinct value (by its bits, so ``-0.0`` and ``0.0`` stay apart) is printed once: a
    sentence's k-best paths share most of their feature values. The text is then read back for the
    rounded value rather than rounding again: the double nearest a 6-digit decimal prints as that
    decimal, so the two agree, and formatting was a tenth of a cube-pruning decode.
    """
    print_value = DECODED.value
    flat = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    distinct, where = np.unique(flat.view(np.int64), return_inverse=True)
    where = where.reshape(-1)  # numpy 2.0.0 gives the input's shape, later versions a flat array
    distinct_texts = [print_value(v) for v in distinct.view(np.float64).tolist()]
    rounded = np.array([float(t) for t in distinct_texts], dtype=np.float64)[where]
    return rounded.reshape(values.shape), [distinct_texts[i] for i in where.tolist()]


class KBestLine(NamedTuple):
    """One line of a sentence's k-best list."""

    hyp: str
    dense: np.ndarray  #: dense features as printed (rounded to 6 significant digits)
    sparse: dict[str, float]
    total: float  #: ``w . h`` of the printed features
    #: the dense groups, the dense values' texts and the sparse ``(name, text)`` pairs as printed
    printed: tuple[Sequence[FeatureGroup | tuple[str, int]], Sequence[str], Sequence[tuple[str, str]]]

    @property
    def features(self) -> str:
        """The printed features field (``Name= v ...``), joined only when asked for: a tuner that
        reads the values (``smtlib sgd pass``) never needs the text."""
        return features_field(*self.printed)


class Decoder:
    """Translate sentences with a loaded :class:`~smtlib.decoder.model.PhraseModel` and fixed weights."""

    def __init__(self, model: PhraseModel, weights: Weights, config: DecoderConfig | None = None):
        self.model = model
        self.weights = weights
        self.config = config or DecoderConfig()
        lay = model.layout
        self.w_lm = np.array([weights.dense[c] for c in lay.lm_cols], dtype=np.float64)
        self.w_dist = float(weights.dense[lay.dist_col])
        self.w_lr = weights.dense[lay.lr_col : lay.lr_col + 6].copy() if lay.lr_col >= 0 else np.zeros(6)
        self.use_lr = lay.lr_col >= 0
        self.sparse_w = weights.sparse_vector(model.sparse_index)
        self.lm_bos = np.array([lm.vocab["<s>"] for lm in model.lms], dtype=np.int64)
        self.lm_eos = np.array([lm.vocab["</s>"] for lm in model.lms], dtype=np.int64)
        self._search_weights = SearchWeights(self.w_lm, self.w_dist, self.w_lr, self.use_lr)
        self._cache: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        #: search counters summed over sentences: options looked at, options scored, hypotheses kept,
        #: LM scorings not found in the per-sentence cache
        self.counters = np.zeros(4, dtype=np.int64)
        #: CPU seconds of this process spent per phase, summed over sentences: collecting and
        #: ranking the options, the search, and the graph / k-best / lattice extraction
        self.timings = {"options": 0.0, "search": 0.0, "kbest": 0.0}

    # ------------------------------------------------------------------ options
    def _phrase_lm(self, phrases: list[tuple[int, ...]]) -> np.ndarray:
        """Context-free LM scores (per LM) of target phrases given as decoder word ids."""
        offs = np.zeros(len(phrases) + 1, dtype=np.int64)
        offs[1:] = np.cumsum([len(p) for p in phrases])
        flat = np.array([w for p in phrases for w in p], dtype=np.int64)
        return self._phrase_lm_flat(flat, offs)

    def _phrase_lm_flat(self, flat: np.ndarray, offs: np.ndarray) -> np.ndarray:
        """:meth:`_phrase_lm` of phrases given as one int64 array of word ids and their offsets."""
        m = self.model
        return lm_estimate_nb(m.lm_tab, m.lm_tabf, m.lm_off, m.lm_mask, m.lm_order, m.lm_map, flat, offs)

    def _ranked(self, srcs: list[str]) -> None:
        """Fill the cache for source phrases: entries sorted by estimated score, cut to the table limit.

        A cache item is ``(entries, static scores, estimates, target lengths, target words)``. The
        new phrases are scored and sorted at once: one stable sort by (phrase, -estimate) orders each
        phrase's entries as a stable sort of its own would.
        """
        m = self.model
        todo = list(dict.fromkeys(s for s in srcs if s not in self._cache))
        if not todo:
            return
        bounds = np.array([m.index.span(s) for s in todo], dtype=np.int64).reshape(-1, 2)
        counts = bounds[:, 1] - bounds[:, 0]
        first = np.zeros(len(todo) + 1, dtype=np.int64)
        np.cumsum(counts, out=first[1:])
        phrase = np.repeat(np.arange(len(todo), dtype=np.int64), counts)
        flat = bounds[phrase, 0] + (np.arange(first[-1], dtype=np.int64) - first[phrase])
        static = m.entry_static(self.weights, flat, self.sparse_w)
        offs, words = m.entry_tgt.take(flat)
        est = static + matvec(m.entry_lm(flat, offs, words), self.w_lm)
        order = np.lexsort((-est, phrase))
        limit = self.config.table_limit
        if limit > 0:
            kept = np.minimum(counts, limit)
            order = order[(np.arange(len(order), dtype=np.int64) - first[phrase]) < np.repeat(kept, counts)]
        else:
            kept = counts
        kept_first = np.zeros(len(todo) + 1, dtype=np.int64)
        np.cumsum(kept, out=kept_first[1:])
        tgt_off, tgt_words = ragged_take(offs, words, order)
        ents, statics, ests, lens = flat[order], static[order], est[order], np.diff(tgt_off)
        for p, s in enumerate(todo):
            lo, hi = kept_first[p], kept_first[p + 1]
            words_of = tgt_words[tgt_off[lo] : tgt_off[hi]]
            self._cache[s] = (ents[lo:hi], statics[lo:hi], ests[lo:hi], lens[lo:hi], words_of)

    def _spans(self, tokens: list[str]) -> list[tuple[int, int, str]]:
        """``(start, end, source phrase)`` of every span with entries, by start then length."""
        index = self.model.index
        maxlen = max(1, self.model.spec.max_phrase_length)
        n = len(tokens)
        spans = []
        for i in range(n):
            for j in range(i + 1, min(n, i + maxlen) + 1):
                src = " ".join(tokens[i:j])
                if src in index:
                    spans.append((i, j, src))
        return spans

    def _collect(self, tokens: list[str]) -> tuple[np.ndarray, ...]:
        """Starts, ends, entries, static scores, estimates, target lengths and target words of the
        options of every span (by start, then length), then of the pass-through options."""
        m = self.model
        n = len(tokens)
        spans = self._spans(tokens)
        self._ranked([s for _, _, s in spans])
        items = [self._cache[src] for _, _, src in spans]
        counts = [len(item[0]) for item in items]
        starts = [np.repeat(np.array([i for i, _, _ in spans], dtype=np.int64), counts)]
        ends = [np.repeat(np.array([j for _, j, _ in spans], dtype=np.int64), counts)]
        cols = (starts, ends, *([item[c] for item in items] for c in range(5)))
        # pass-through options for words without a one-word option (see smtlib.decoder.model)
        have_one = {i for i, j, _ in spans if j == i + 1}
        unk = [i for i in range(n) if i not in have_one]
        if unk:
            wp = self.weights.dense[m.layout.wp_col]
            ptg = np.array([m.add_word(tokens[i]) for i in unk], dtype=np.int64)
            lm_est = self._phrase_lm_flat(ptg, np.arange(len(unk) + 1, dtype=np.int64))
            for col, a in zip(cols, (np.array(unk), np.array(unk) + 1, np.full(len(unk), -1), np.full(len(unk), -wp),
                                     np.full(len(unk), -wp) + matvec(lm_est, self.w_lm), np.ones(len(unk), dtype=np.int64),
                                     ptg), strict=True):
                col.append(a)
        dtypes = (np.int64, np.int64, np.int64, np.float64, np.float64, np.int64, np.int64)
        return tuple(np.concatenate(col).astype(dtype, copy=False) if col else np.zeros(0, dtype=dtype)
                     for col, dtype in zip(cols, dtypes, strict=True))

    def options(self, tokens: list[str]) -> SentenceOptions:
        """All translation options of a sentence, per span sorted by their search bound."""
        m = self.model
        n = len(tokens)
        maxlen = max(1, m.spec.max_phrase_length)
        start, end, entry, static, est, lens, flat = self._collect(tokens)
        lr = np.zeros((len(entry), 6))
        if self.use_lr and len(entry):
            real = entry >= 0
            lr[real] = np.nan_to_num(m.entry_lr[entry[real]], nan=0.0)
        # search bound: static + LM upper bound + the best backward reordering score
        owner = np.repeat(np.arange(len(lens)), lens)
        bound = static.copy()
        for k in range(len(m.lms)):
            ub = np.zeros(len(lens))
            np.add.at(ub, owner, m.lm_ub[k, flat])
            bound += self.w_lm[k] * ub
        if self.use_lr:
            bound += (lr[:, :3] * self.w_lr[:3]).max(axis=1)
        # sort by (start, length, -bound)
        order = np.lexsort((-bound, end - start, start))
        start, end, entry, static, est, lr, bound = (a[order] for a in (start, end, entry, static, est, lr, bound))
        offs = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=offs[1:])
        woff, words = ragged_take(offs, flat, order)
        span_first, span_cnt, best = _span_index_nb(start, end, est, n, maxlen)
        fct = _future_costs_nb(best)
        return SentenceOptions(n, maxlen, start, end, woff, words, static, lr, bound, entry, span_first, span_cnt, fct,
                               est)

    # ------------------------------------------------------------------ decoding
    def decode(self, line: str, sent_id: int = 0, *, kbest: int | None = None, lattice: bool = False
               ) -> SentenceResult:
        """Translate one input line: options, search, the live search graph, k-best lines, lattice."""
        cfg = self.config
        k = cfg.k if kbest is None else kbest
        tokens = self.model.prepare_source(line)
        if not tokens:
            return self._empty(sent_id, lattice)
        t0 = time.process_time()
        opts = self.options(tokens)
        t1 = time.process_time()
        res = self._search(opts, cfg.distortion_limit)
        if res.goal < 0:  # no complete hypothesis: fall back to monotone decoding, which always has one
            res = self._search(opts, 0)
            if res.goal < 0:
                raise RuntimeError(f"sentence {sent_id}: the search found no complete translation")
        self.counters += res.stats
        t2 = time.process_time()
        self.timings["options"] += t1 - t0
        self.timings["search"] += t2 - t1
        edges = self._edges(res, opts, sent_id)
        max_pops = k * cfg.nbest_factor if cfg.distinct else k
        scores, offs, paths = kbest_nb(edges.n_nodes, edges.tails, edges.heads, edges.deltas, opts.woff[edges.opt],
                                       opts.woff[edges.opt + 1], opts.words, max(k, 1), max(max_pops, k, 1),
                                       cfg.distinct)
        lines = self._kbest_lines(edges, scores, offs, paths, sent_id)
        lat = self._lattice(edges, paths, sent_id) if lattice else None
        self.timings["kbest"] += time.process_time() - t2
        return SentenceResult(sent_id, lines[0][0] if lines else "", float(scores[0]) if len(scores) else float("-inf"),
                              lines[:k] if k > 0 else [], lat, edges.n_nodes, len(edges.sel))

    def _edges(self, res: SearchGraph, opts: SentenceOptions, sent_id: int) -> _LiveEdges:
        """The live search graph's edges with their recomputed feature vectors.

        Raises ``RuntimeError`` if an edge's search score is not ``w . h`` of its features.
        """
        m = self.model
        lay = m.layout
        new_id, n_nodes, sel = _extract_nb(res.goal, res.n_nodes, res.alive, res.stack, res.e_tail, res.e_head)
        dist, lr = _edge_features_nb(sel, self.use_lr, res.e_tail, res.e_opt, res.last_end, res.last_start,
                                     res.last_opt, opts.start, opts.end, opts.lr)
        opt = res.e_opt[sel]
        ent = opts.entry[opt]
        dense = np.zeros((len(sel), lay.size))
        real = ent >= 0
        for t, col in enumerate(lay.tm_cols):
            dense[real, col : col + 4] = m.entry_tm[ent[real], 4 * t : 4 * t + 4]
        dense[:, lay.wp_col] = -(opts.woff[opt + 1] - opts.woff[opt])
        lm = res.e_lm[sel]
        for kk, col in enumerate(lay.lm_cols):
            dense[:, col] = lm[:, kk]
        dense[:, lay.dist_col] = dist
        if self.use_lr:
            dense[:, lay.lr_col : lay.lr_col + 6] = lr
        deltas = res.e_score[sel] - res.score[res.e_tail[sel]]
        sparse_sc = np.zeros(len(sel))
        if len(self.sparse_w):
            uniq, inv = np.unique(ent, return_inverse=True)
            per = np.zeros(len(uniq))
            add_sparse_dots(m.entry_sparse, self.sparse_w, uniq, per)
            sparse_sc = per[inv]
        recomputed = matvec(dense, self.weights.dense) + sparse_sc
        if len(sel) and not np.allclose(recomputed, deltas, rtol=1e-9, atol=1e-6):
            bad = int(np.argmax(np.abs(recomputed - deltas)))
            raise RuntimeError(f"sentence {sent_id}: edge score {deltas[bad]} != w.h {recomputed[bad]}")
        return _LiveEdges(n_nodes, sel, new_id[res.e_tail[sel]], new_id[res.e_head[sel]], deltas, opt, ent, dense,
                          opts)

    def _phrase(self, edges: _LiveEdges, e: int) -> tuple[str, ...]:
        """Target words of edge ``e`` (cached per option)."""
        return self._option_phrase(edges, int(edges.opt[e]))

    def _option_phrase(self, edges: _LiveEdges, o: int) -> tuple[str, ...]:
        """Target words of translation option ``o`` (cached per sentence)."""
        if o not in edges.phrases:
            woff = edges.opts.woff
            edges.phrases[o] = tuple(self.model.words[w] for w in edges.opts.words[woff[o] : woff[o + 1]].tolist())
        return edges.phrases[o]

    def _phrase_text(self, edges: _LiveEdges, e: int) -> str:
        """Target words of edge ``e`` joined by spaces (cached per option)."""
        o = int(edges.opt[e])
        if o not in edges.phrase_texts:
            edges.phrase_texts[o] = " ".join(self._phrase(edges, e))
        return edges.phrase_texts[o]

    def _edge_sparse(self, edges: _LiveEdges, e: int) -> dict[str, float]:
        """Sparse features of edge ``e`` (cached per phrase-table entry)."""
        return self._entry_sparse(edges, int(edges.ent[e]))

    def _entry_sparse(self, edges: _LiveEdges, entry: int) -> dict[str, float]:
        """Sparse features of phrase-table entry ``entry`` (-1: none; cached per sentence)."""
        if entry not in edges.sparse:
            edges.sparse[entry] = self._sparse(entry)
        return edges.sparse[entry]

    def _kbest_lines(self, edges: _LiveEdges, scores: np.ndarray, offs: np.ndarray, paths: np.ndarray,
                     sent_id: int) -> list[KBestLine]:
        """The k-best paths' lines, sorted by the printed totals.

        Raises ``RuntimeError`` if a line's total (``w . h`` of the rounded features) is not the
        search score of its path.
        """
        n = len(scores)
        if n == 0:
            return []
        # every path's features at once (a path has at least one edge: start -> goal)
        sums = np.add.reduceat(edges.dense[paths[: offs[n]]], offs[:n], axis=0)
        rounded, texts = _round(sums)
        # every line's w . h at once: each row summed as dot sums it, so the same bits
        dense_totals = matvec(rounded, self.weights.dense).tolist()
        width = sums.shape[1]
        groups = self.model.layout.groups
        with_sparse = len(self.model.sparse_names) > 0
        # the k-best paths share most of their edges: each edge's words and sparse features looked up once
        used = np.unique(paths[: offs[n]]).tolist()
        edge_texts = {e: self._phrase_text(edges, e) for e in used}
        edge_sparse = {e: self._edge_sparse(edges, e) for e in used} if with_sparse else {}
        all_paths, bounds = paths[: offs[n]].tolist(), offs[: n + 1].tolist()
        lines = []
        for i in range(n):
            path = all_paths[bounds[i] : bounds[i + 1]]
            hyp = " ".join(t for t in (edge_texts[e] for e in path) if t)
            h_dense = rounded[i]
            h_sparse: dict[str, float] = {}
            sparse_texts: list[tuple[str, str]] = []
            if with_sparse:
                for e in path:
                    for name, v in edge_sparse[e].items():
                        h_sparse[name] = h_sparse.get(name, 0.0) + v
                # printed once, as _round does for the dense values: the text and its rounded value
                sparse_texts = [(name, DECODED.value(v)) for name, v in sorted(h_sparse.items()) if v != 0.0]
                h_sparse = {name: float(text) for name, text in sparse_texts}
            terms = [self.weights.sparse.get(nm, 0.0) * v for nm, v in h_sparse.items()]
            total = dense_totals[i] + sum(terms)
            if not self._total_matches(total, float(scores[i]), h_dense, terms):
                raise RuntimeError(f"sentence {sent_id}: k-best total {total} != search score {scores[i]}")
            lines.append(KBestLine(hyp, h_dense, h_sparse, total,
                                   (groups, texts[i * width : (i + 1) * width], sparse_texts)))
        # sort by the printed totals (rounding may swap near-ties), keeping the search order on ties
        lines.sort(key=lambda x: -x.total)
        return lines

    def _total_matches(self, total: float, score: float, h_dense: np.ndarray, sparse_terms: list[float]) -> bool:
        """Whether a k-best line's printed total is its path's search score, up to the printing's rounding.

        6-digit rounding moves each term ``w_k h_k`` by up to 5e-6 of itself: when large terms cancel
        (weights far from Moses-like ones, e.g. mid-way through a perceptron pass), the total can move
        by more than 1e-4 of itself, so the tolerance also scales with ``sum |w_k h_k|`` (computed only
        when the plain test fails).
        """
        if math.isclose(total, score, rel_tol=1e-4, abs_tol=1e-3):
            return True
        magnitude = dot(np.abs(h_dense), np.abs(self.weights.dense)) + sum(abs(t) for t in sparse_terms)
        return math.isclose(total, score, rel_tol=1e-4, abs_tol=1e-3 + 1e-5 * magnitude)

    def _lattice(self, edges: _LiveEdges, paths: np.ndarray, sent_id: int) -> Lattice:
        """The lattice of the live graph, beam-pruned around the 1-best (keeping the k-best ``paths``).

        Its ``words`` and ``sparse`` are :class:`~smtlib.lattice.format.IndexedValues`: one tuple per
        translation option and one dict per phrase-table entry of the kept edges, not one per edge
        (an unpruned lattice has thousands of edges per sentence and far fewer options).
        """
        beam = self.config.lattice_beam
        keep = np.arange(len(edges.sel))
        n_nodes, tails, heads = edges.n_nodes, edges.tails, edges.heads
        if beam > 0:
            new_node, n_nodes, keep = beam_prune_nb(edges.n_nodes, edges.tails, edges.heads, edges.deltas, float(beam),
                                                    np.unique(paths))
            tails, heads = new_node[edges.tails[keep]], new_node[edges.heads[keep]]
        opts, opt_ids = np.unique(edges.opt[keep], return_inverse=True)
        phrases = [self._option_phrase(edges, o) for o in opts.tolist()]
        if len(self.model.sparse_names):
            entries, entry_ids = np.unique(edges.ent[keep], return_inverse=True)
            sparse = IndexedValues(entry_ids.reshape(-1), [self._entry_sparse(edges, e) for e in entries.tolist()])
        else:
            sparse = IndexedValues(np.zeros(len(keep), dtype=np.int64), [{}])
        return Lattice(sent_id, n_nodes, tails, heads, IndexedValues(opt_ids.reshape(-1), phrases), edges.dense[keep],
                       sparse, list(self.model.layout.names))

    def _sparse(self, entry: int) -> dict[str, float]:
        if entry < 0:
            return {}
        ids, vals = self.model.entry_sparse[entry]
        return {self.model.sparse_names[i]: float(v) for i, v in zip(ids, vals, strict=True)}

    def _search(self, opts: SentenceOptions, dl: int) -> SearchGraph:
        """Run the configured search (stack or cube) with distortion limit ``dl``."""
        cfg = self.config
        m = self.model  # its lm_map grows with pass-through words: read it per sentence
        lms = LanguageModels(m.lm_tab, m.lm_tabf, m.lm_off, m.lm_mask, m.lm_order, m.lm_map, self.lm_bos, self.lm_eos)
        inp = SearchInput(opts.n, opts.maxlen, cfg.stack_size, cfg.pop_limit, dl,
                          SearchOptions(opts.start, opts.end, opts.woff, opts.words, opts.static, opts.lr, opts.bound,
                                        opts.est, opts.span_first, opts.span_cnt, opts.fct),
                          lms, self._search_weights)
        return cube_search_nb(inp) if cfg.search == "cube" else search_nb(inp)

    def _empty(self, sent_id: int, lattice: bool) -> SentenceResult:
        """An empty input line: the empty translation, scored by the LMs' ``<s> </s>``."""
        lay = self.model.layout
        dense = np.zeros(lay.size)
        for lm, col in zip(self.model.lms, lay.lm_cols, strict=True):
            dense[col] = lm.score_sentence([])
        h, texts = _round(dense)
        total = dot(h, self.weights.dense)
        lat = None
        if lattice:
            lat = Lattice(sent_id, 2, np.array([0]), np.array([1]), [()], dense[None, :], [{}], list(lay.names))
        line = KBestLine("", h, {}, total, (lay.groups, texts, ()))
        return SentenceResult(sent_id, "", total, [line], lat, 2, 1)
