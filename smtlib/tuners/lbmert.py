"""Lattice MERT (``smtlib tune lbmert``): Macherey et al. (2008), the lb-mert row of Cherry & Foster (2012).

MERT whose line search ranges over *every path of every lattice* instead of a k-best list:

* along a line ``w + x d`` the 1-best of each sentence is the upper envelope of its lattice paths'
  lines, computed exactly by propagating envelopes through the lattice
  (:mod:`smtlib.lattice.envelope`; Macherey et al. 2008, §3);
* every segment of a sentence's envelope is a path whose BLEU statistics are counted from its words
  (:func:`smtlib.lattice.stats.path_stats`), once per step: a table of the paths met so far keeps
  them (:class:`smtlib.lattice.path_table.PathTable`; 97 % of the envelope paths of a step were met
  before); the sentences' breakpoints are merged and corpus
  BLEU (no smoothing) is scored on every interval, and the best interval is chosen, by the k-best line
  search's own code (:func:`smtlib.tuners.line_search.interval_scores` and ``best_point``: the
  leftmost best interval, its midpoint, Moses's steps into an unbounded one);
* the search around the line search is ``mert``'s: the coordinate axes (plus ``random_directions``
  random unit directions) per round, sequential or best-of-round sweeps, the current weights plus
  ``random_restarts`` random starting points (Cherry & Foster §4: 20 random restarts), and the final
  weights divided by their L1 norm. The parameters have ``mert``'s names and defaults.

Lattices are unpruned (Cherry & Foster §4: "Lattice MERT using unpruned lattices"; decode with
``--lattice-beam 0``). Across iterations only the paths that were on some line search's upper
envelope are kept (§4, "aggregating only those paths on the line search's upper envelope"): the
tuner collects them (:attr:`LbMert.envelope_paths`) and ``smtlib tune lbmert --paths-out`` writes
them, with the paths it was given, as a k-best file that the next iteration reads with ``--kbest``;
there they are whole-path edges from the start to the goal of their sentence's lattice.

On a k-best pool (:meth:`fit`), every hypothesis is such a whole-path edge with the pool's BLEU
statistics, and the line search is exactly k-best MERT's (a test checks it on small lattices against
``mert``'s line search on the same lattices' complete path lists).

The climbs (from the current weights and from each random start) are independent (Neubig &
Watanabe 2016, §7.2: "each of the random restarts is completely independent"), and ``threads``
(``smtlib tune --jobs N``) runs them on N threads; the compiled kernels they call release the GIL.
Each climb has its own line-search object (its count and its collection of envelope paths), and the
collections are merged in climb order with the same de-duplication (:class:`EnvelopePaths`), so the
weights, ``info`` and the aggregated paths are bit-identical for any N. On one thread the climbs share
one table of the paths met (a path found again by a later climb is not collected twice, and the merge
keeps the same first occurrences); on threads each climb has its own table. The random starts are drawn
up front from the seed as before; the random directions of a climb (``random_directions > 0``, not
the default) come from a generator of its own, spawned from the seed per climb
(:class:`numpy.random.SeedSequence`), instead of the one generator the climbs shared one after the
other: a deviation from the earlier sequential version (other random directions, hence other results,
for ``random_directions > 0``) so that no climb depends on the others' order.

Cost (Multi30k dev, Medium, unpruned lattices, 20 restarts; CPU seconds, user + system;
``benchmarks/lattice_tuners.py``): a step on 200 sentences (1.59M edges) is 1,166 line searches,
205 s CPU (0.117 s per line search, over 90 % of it the envelope pass); on all 1,014 sentences (8.07M
edges) a line search is 0.54 s, a step about 10-11 CPU minutes on a quiet machine (measured on a
loaded one with ``--jobs 2``: 1,086 s CPU, 797 s wall, 1,417 line searches at 0.75 s). ``--jobs 2`` on two free cores:
200 sentences 180.7 -> 115.5 s wall (the line search holds the GIL for almost none of its time;
loading and writing stay sequential), so about 6-7 minutes of wall time per full-dev step.
Around the line searches, a 200-sentence step also loads the lattices (about 5 s) and writes the ~290k aggregated paths (``--paths-out``: formatting about
4 s, since the features and words are gathered in batches, was about 40 s; gzip at the loop's level 1
about 0.6 s, was 4.7 s at level 9); a second iteration reads those paths back as whole-path edges
in about 7 s. On Table 6's ja-en lattices (500 sentences, 0.5M edges with the aggregated paths) a step is
26-30 CPU-s, 80 % of it the envelope passes, and counting the paths' statistics once per step (not once
per search) took 15-19 % off it (``benchmarks/results/lbmert_step.md``).

Dense features only, as MERT (n/a on Big in Tables 4-6).
"""

from __future__ import annotations

import math
import concurrent.futures

import numpy as np

from smtlib._dot import dot, matvec
from smtlib.errors import InputError
from smtlib.lattice.envelope import corpus_envelopes
from smtlib.lattice.lattice_set import LatticeSet
from smtlib.lattice.path_table import PathTable
from smtlib.lattice.paths import viterbi_paths
from smtlib.lattice.stats import LatticeReferences, path_stats
from smtlib.tuners.base import LatticeTuner, TuneResult
from smtlib.tuners.line_search import best_point, interval_scores
from smtlib.tuners.corpus_metric import BLEU, bleu_none_from_sums


class LatticeLineSearch:
    """Exact line searches over the lattices of a :class:`LatticeSet` (see the module docstring).

    One object per climb: it counts its searches and collects the envelope paths it meets, new to its table,
    in the order found (:attr:`chunks`: compact arrays, one entry per search that found new paths);
    :class:`EnvelopePaths` merges the collections of several in order.
    """

    def __init__(self, ls: LatticeSet, refs: LatticeReferences, collect: bool = True, table: PathTable | None = None):
        self.ls = ls
        self.refs = refs
        self.collect = collect
        #: the envelope paths met so far, with their statistics: this climb's own, or (climbs run one
        #: after the other) the step's, shared by the climbs
        self._table = PathTable(ls, refs) if table is None else table
        #: per search with new paths: (hashes, sentences, edge offsets from 0, edges) of those paths
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.searches = 0

    def score(self, a: np.ndarray) -> float:
        """Corpus BLEU (0-1, no smoothing) of the Viterbi paths under edge scores ``a``."""
        ls = self.ls
        sent, off, edges = viterbi_paths(ls.n_nodes, ls.edge_off, ls.tails, ls.heads, a)
        stats = path_stats(ls, self.refs, sent, off, edges)
        return float(bleu_none_from_sums(stats.sum(axis=0) if len(stats) else np.zeros(10)))

    def search(self, a: np.ndarray, b: np.ndarray, fallback_width: float, unbounded: int | None) -> tuple[float, float]:
        """Best corpus BLEU along the line with edge intercepts ``a`` and slopes ``b``, and the step."""
        ls = self.ls
        first, bx, bnew, bprev, psent, poff, pedges = corpus_envelopes(ls.n_nodes, ls.edge_off, ls.tails, ls.heads, a, b)
        stats, hashes, new = self._table.lookup(psent, poff, pedges)
        xs, scores = interval_scores(first, bx, bnew, bprev, stats, BLEU)
        if unbounded is None:
            score, x, _ = best_point(xs, scores, fallback_width)
        else:
            score, x, _ = best_point(xs, scores, fallback_width, unbounded)
        self.searches += 1
        if self.collect and new.any():
            self._remember(hashes, new, psent, poff, pedges)
        return float(score), float(x)

    def _remember(self, hashes: np.ndarray, new: np.ndarray, psent: np.ndarray, poff: np.ndarray,
                  pedges: np.ndarray) -> None:
        """Keep the paths met for the first time (``new``: not in the table, not an input whole-path edge)."""
        lengths = np.diff(poff)
        off = np.zeros(int(new.sum()) + 1, dtype=np.int64)
        np.cumsum(lengths[new], out=off[1:])
        self.chunks.append((hashes[new], psent[new], off, pedges[np.repeat(new, lengths)]))

    @property
    def paths(self) -> list[tuple[int, np.ndarray]]:
        """(sentence, edges) of the envelope paths this object collected, in the order found."""
        return merge_envelope_paths([self])


def merge_envelope_paths(searches: list[LatticeLineSearch]) -> list[tuple[int, np.ndarray]]:
    """(sentence, edges) of the paths collected by ``searches``, in order, each path once (by its hash).

    Merging the climbs' collections in climb order gives exactly the list one shared collection
    would have gathered with the climbs run one after the other: the first occurrence of each path.
    """
    merged = EnvelopePaths()
    for search in searches:
        merged.add(search)
    return merged.paths


class EnvelopePaths:
    """The envelope paths of several climbs, merged in the order they are added (each path once)."""

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self.paths: list[tuple[int, np.ndarray]] = []

    def add(self, search: LatticeLineSearch) -> None:
        """Append the paths ``search`` collected that no earlier climb had."""
        seen = self._seen
        for hashes, sent, off, edges in search.chunks:
            for p, h in enumerate(hashes.tolist()):
                if h in seen:
                    continue
                seen.add(h)
                self.paths.append((int(sent[p]), edges[off[p] : off[p + 1]].copy()))


def _unbounded_rule(name: str) -> int | None:
    """The code of ``best_point``'s rule for unbounded intervals (None: that version has no choice)."""
    from smtlib.tuners import line_search

    rules = getattr(line_search, "UNBOUNDED_RULES", None)
    if rules is None:
        return None
    if name not in rules:
        raise InputError(f"lbmert: unbounded_step must be one of {', '.join(rules)}")
    return rules[name]


class LbMert(LatticeTuner):
    """Lattice MERT (Macherey et al. 2008): exact line search over every lattice path, 20 random restarts."""

    name = "lbmert"
    supports_sparse = False
    defaults = {
        "random_restarts": 20,  # random starting points besides the current weights (C&F 2012 §4, as mert)
        "random_directions": 0,  # random unit directions per round besides the coordinate axes (as mert)
        "sweep": "sequential",  # "sequential": take each improving step; "best": one step per round
        "min_gain": 1e-6,  # a step must improve BLEU (0-1) by more than this
        "max_rounds": 500,  # safety bound on rounds per starting point
        "restart_low": 0.0,  # random starting points: uniform in [restart_low, restart_high]
        "restart_high": 1.0,
        "unbounded_step": "moses",  # step into an unbounded best interval (see line_search.best_point)
        "normalize": "l1",  # "l1" (Moses) or "none"
    }

    def __init__(self, seed: int = 0, threads: int = 1, **params):
        super().__init__(seed, **params)
        #: threads running the climbs (``smtlib tune --jobs``); not a hyper-parameter: results do not depend on it
        self.threads = int(threads)
        #: (sentence, edges) of every lattice path found on an upper envelope by the last fit
        self.envelope_paths: list[tuple[int, np.ndarray]] = []

    def _check(self) -> None:
        p = self.params
        if p["random_restarts"] < 0 or p["random_directions"] < 0:
            raise InputError("lbmert: random_restarts and random_directions must be >= 0")
        if p["sweep"] not in ("sequential", "best"):
            raise InputError("lbmert: sweep must be 'sequential' or 'best'")
        if p["normalize"] not in ("l1", "none"):
            raise InputError("lbmert: normalize must be 'l1' or 'none'")
        if not p["restart_low"] <= p["restart_high"]:
            raise InputError("lbmert: restart_low must not exceed restart_high")
        if p["min_gain"] < 0 or p["max_rounds"] < 1:
            raise InputError("lbmert: min_gain must be >= 0 and max_rounds >= 1")
        _unbounded_rule(p["unbounded_step"])
        if self.threads < 1:
            raise InputError("lbmert: threads (--jobs) must be >= 1")

    @property
    def new_paths(self) -> list[tuple[int, np.ndarray]]:
        """The envelope paths of the last fit (what lb-mert aggregates, C&F §4)."""
        return self.envelope_paths

    def fit_lattices(self, ls: LatticeSet, refs: LatticeReferences, init: np.ndarray) -> TuneResult:
        """Tune on corpus BLEU over all paths of ``ls`` (weights aligned with ``ls.all_feature_names``)."""
        self._check()
        if ls.sparse.shape[1]:
            raise InputError(f"lbmert works on dense features only; the lattices have {ls.sparse.shape[1]} sparse features")
        p = self.params
        init = np.asarray(init, dtype=np.float64)
        dense = ls.dense
        n_dense = dense.shape[1]
        rng = self.rng()
        starts = [init[:n_dense].copy()]
        for _ in range(p["random_restarts"]):
            starts.append(rng.uniform(p["restart_low"], p["restart_high"], size=n_dense))
        # each climb its own generator (random directions), so that the climbs are independent
        climb_rngs = [np.random.default_rng(child) for child in np.random.SeedSequence(self.seed).spawn(len(starts))]
        unbounded = _unbounded_rule(p["unbounded_step"])

        # climbs one after the other share one table of the paths met (and their statistics); climbs on
        # threads have their own. Either way each path's statistics are the same numbers, and the
        # merged envelope paths the same first occurrences in climb order (EnvelopePaths).
        shared = PathTable(ls, refs) if self.threads == 1 else None

        def climb(k: int) -> tuple[np.ndarray, float, int, LatticeLineSearch]:
            search = LatticeLineSearch(ls, refs, table=shared)
            return (*self._climb(dense, search, starts[k], climb_rngs[k], unbounded), search)

        best_w, best_score = starts[0], -np.inf
        runs = []
        merged = EnvelopePaths()
        searches = 0
        climbs = range(len(starts))
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(self.threads, len(starts))) as pool:
            # results are taken in climb order, whatever order the threads finish them in
            results = pool.map(climb, climbs) if self.threads > 1 else map(climb, climbs)
            for k, (w, score, rounds, search) in enumerate(results):
                runs.append({"start": k, "score": score, "rounds": rounds})
                searches += search.searches
                merged.add(search)
                if score > best_score:
                    best_w, best_score = w, score
                self.report_score("restart", k + 1, len(starts), "bleu", score, best_score)
        final = best_w.copy()
        if p["normalize"] == "l1":
            norm = float(np.abs(final).sum())
            if norm > 0:
                final = final / norm
        weights = init.copy()
        weights[:n_dense] = final
        self.envelope_paths = merged.paths
        info = {
            "metric": "bleu",
            "objective": best_score,
            "objective_init": LatticeLineSearch(ls, refs, collect=False).score(matvec(dense, init[:n_dense])),
            "restarts": runs,
            "line_searches": searches,
            "envelope_paths": len(merged.paths),
            "lattice_edges": int(ls.n_edges),
        }
        return TuneResult(weights, info)

    def _climb(self, dense: np.ndarray, search: LatticeLineSearch, start: np.ndarray, rng: np.random.Generator,
               unbounded: int | None) -> tuple[np.ndarray, float, int]:
        """Hill-climb from ``start`` with exact lattice line searches (``mert``'s sweeps)."""
        p = self.params
        n_dense = dense.shape[1]
        n_dirs = n_dense + p["random_directions"]
        w = start.astype(np.float64).copy()
        a = matvec(dense, w)  # kept equal to dense @ w by the same steps as w
        current = search.score(a)
        failed = 0
        last = -1
        rounds = 0
        for rounds in range(1, p["max_rounds"] + 1):
            best_move = None
            randoms = []
            for _ in range(p["random_directions"]):
                r = rng.standard_normal(n_dense)
                randoms.append(r / max(math.sqrt(dot(r, r)), 1e-300))
            for d in range(n_dirs):
                if d == last and d < n_dense:
                    failed += 1
                    if p["sweep"] == "sequential" and failed >= n_dirs:
                        break
                    continue
                if d < n_dense:
                    direction = None
                    b = dense[:, d]
                    scale = float(np.abs(w).sum())
                else:
                    direction = randoms[d - n_dense]
                    b = matvec(dense, direction)
                    scale = float(np.abs(w).sum()) / max(float(np.abs(direction).sum()), 1e-300)
                score, x = search.search(a, np.ascontiguousarray(b), scale if scale > 0 else 1.0, unbounded)
                if not (score > current + p["min_gain"]) or x == 0.0:
                    failed += 1
                    if p["sweep"] == "sequential" and failed >= n_dirs:
                        break
                    continue
                if p["sweep"] == "sequential":
                    _step(w, d, direction, x)
                    a += x * b
                    current = score
                    failed = 0
                    last = d
                elif best_move is None or score > best_move[0]:
                    best_move = (score, x, d, direction)
            if p["sweep"] == "best":
                if best_move is None:
                    break
                score, x, d, direction = best_move
                _step(w, d, direction, x)
                a = matvec(dense, w)
                current = score
                last = d
            elif failed >= n_dirs:
                break
        return w, search.score(matvec(dense, w)), rounds


def _step(w: np.ndarray, d: int, direction: np.ndarray | None, x: float) -> None:
    if direction is None:
        w[d] += x
    else:
        w += x * direction
