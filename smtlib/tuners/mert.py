"""k-best MERT: Och's (2003) exact line search with random restarts (``smtlib tune mert``).

The objective is corpus BLEU (no smoothing, as Moses ``mert`` optimises) of the 1-best
hypotheses under the weights, on the merged k-best pool. Search follows Och (2003, §5) and the
kb-mert baseline of Cherry & Foster (2012, §4) / Hopkins & May (2011, §5.4.1):

* a line search along a direction d from the point p is exact: every sentence's 1-best as a
  function of the step is the upper envelope of its hypotheses' lines
  (:mod:`smtlib.tuners.mert_envelope`), and corpus BLEU is scored on every interval of the merged
  breakpoints from summed statistics; the step is the midpoint of the leftmost best interval
  (Moses's tie-breaking);
* directions are the coordinate axes plus ``random_directions`` random unit vectors per round
  (Moses ``mert --nrandom``);
* a round tries every direction; with ``sweep="sequential"`` (default) each improving step is
  taken at once (coordinate ascent, as Och's Powell-style search), with ``sweep="best"`` only the
  best of the round's lines is taken (Moses's ``SimpleOptimizer``); rounds repeat until no line
  improves the score by more than ``min_gain``;
* ``restarts`` starting points (20, the kb-mert setting): the current weights and
  ``restarts - 1`` points drawn uniformly from [``restart_low``, ``restart_high``] per feature;
  the best end point wins (the earliest on ties, so the current weights win a draw).

Like Moses, the final weights are divided by their L1 norm (``normalize="l1"``; BLEU is scale
invariant, so this only fixes the scale; all-zero weights are left alone and the base class warns).

Deviations from Moses, all documented in the parameters: the default ``sweep`` is sequential
because Moses's one-move-per-round search needs several times more line searches for the same
end point; the step into an unbounded best interval is taken on the scale of the neighbouring
interval instead of cmert's constants (+0.1 / -1000); Moses's merging of breakpoints closer than
1e-4 (a float32 artefact) is not needed in float64.

Dense features only (``supports_sparse = False``): Cherry & Foster (2012, §2) and Hopkins &
May (2011, §3) show that MERT does not scale beyond a few dozen features.
"""

from __future__ import annotations

import numpy as np

from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool, argmax_per_sentence
from smtlib.tuners.base import TuneResult, Tuner
from smtlib.tuners.mert_envelope import line_search
from smtlib.tuners.mert_metric import CorpusMetric, bleu_metric


class Mert(Tuner):
    """k-best MERT: Och (2003) exact line search, coordinate + random directions, 20 restarts."""

    name = "mert"
    supports_sparse = False
    defaults = {
        "restarts": 20,  # starting points, one of them the current weights (Cherry & Foster 2012 §4)
        "random_directions": 2,  # random unit directions per round besides the coordinate axes
        "sweep": "sequential",  # "sequential": take each improving step; "best": Moses, one step per round
        "min_gain": 1e-6,  # a round must improve BLEU (0-1) by more than this to continue
        "max_rounds": 500,  # safety bound on rounds per starting point
        "restart_low": -1.0,  # random starting points: uniform in [restart_low, restart_high]
        "restart_high": 1.0,
        "normalize": "l1",  # "l1" (Moses) or "none"
    }

    def _check(self) -> None:
        p = self.params
        if p["restarts"] < 1:
            raise InputError("mert: restarts must be at least 1")
        if p["random_directions"] < 0:
            raise InputError("mert: random_directions must be >= 0")
        if p["sweep"] not in ("sequential", "best"):
            raise InputError("mert: sweep must be 'sequential' or 'best'")
        if p["normalize"] not in ("l1", "none"):
            raise InputError("mert: normalize must be 'l1' or 'none'")
        if not p["restart_low"] <= p["restart_high"]:
            raise InputError("mert: restart_low must not exceed restart_high")
        if p["min_gain"] < 0 or p["max_rounds"] < 1:
            raise InputError("mert: min_gain must be >= 0 and max_rounds >= 1")

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        """Tune on corpus BLEU of the pool (see the module docstring)."""
        return self.fit_metric(pool, init, bleu_metric(pool.stats))

    def fit_metric(self, pool: KBestPool, init: np.ndarray, metric: CorpusMetric) -> TuneResult:
        """Maximise ``metric`` (a corpus score of summed per-hypothesis statistics) over the pool.

        :meth:`fit` passes corpus BLEU; Hopkins & May's synthetic experiment passes a decomposable
        gold score (:func:`smtlib.tuners.mert_metric.additive_metric`).
        """
        self._check()
        if pool.has_sparse():
            raise InputError("mert works on dense features only")
        init = np.asarray(init, dtype=np.float64)
        dense = np.ascontiguousarray(pool.dense, dtype=np.float64)
        n_dense = dense.shape[1]
        offsets = np.asarray(pool.offsets, dtype=np.int64)
        columns = np.ascontiguousarray(dense.T)
        rng = self.rng()
        p = self.params
        starts = [init[:n_dense].copy()]
        for _ in range(p["restarts"] - 1):
            starts.append(rng.uniform(p["restart_low"], p["restart_high"], size=n_dense))
        best_w, best_score = None, -np.inf
        runs = []
        for k, start in enumerate(starts):
            w, score, rounds, searches = self._climb(dense, columns, offsets, metric, start, rng)
            runs.append({"start": k, "score": score, "rounds": rounds, "line_searches": searches})
            if score > best_score:
                best_w, best_score = w, score
        weights = init.copy()
        final = best_w.copy()
        if p["normalize"] == "l1":
            norm = float(np.abs(final).sum())
            if norm > 0:  # all-zero weights stay zero; Tuner.__call__ warns and keeps init
                final = final / norm
        weights[:n_dense] = final
        info = {
            "metric": metric.name,
            "objective": best_score,
            "objective_init": self._score(dense, offsets, metric, init[:n_dense]),
            "restarts": runs,
            "line_searches": int(sum(r["line_searches"] for r in runs)),
        }
        return TuneResult(weights, info)

    @staticmethod
    def _score(dense: np.ndarray, offsets: np.ndarray, metric: CorpusMetric, w: np.ndarray) -> float:
        """The metric at the true 1-best under ``w`` (first row on ties, as the reranker)."""
        return metric.corpus_score(argmax_per_sentence(dense @ w, offsets))

    def _climb(
        self,
        dense: np.ndarray,
        columns: np.ndarray,
        offsets: np.ndarray,
        metric: CorpusMetric,
        start: np.ndarray,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, float, int, int]:
        """Hill-climb from ``start`` with exact line searches until no line improves."""
        p = self.params
        n_dense = dense.shape[1]
        w = start.astype(np.float64).copy()
        current = self._score(dense, offsets, metric, w)
        stats = metric.stats
        searches = 0
        rounds = 0
        intercepts = dense @ w  # kept equal to dense @ w by the same steps as w
        for rounds in range(1, p["max_rounds"] + 1):
            improved = False
            best_move = None  # (score, x, direction, slopes) for sweep="best"
            n_random = p["random_directions"]
            for d in range(n_dense + n_random):
                if d < n_dense:
                    direction = None
                    slopes = columns[d]
                    scale = float(np.abs(w).sum())
                else:
                    direction = rng.standard_normal(n_dense)
                    direction /= max(float(np.linalg.norm(direction)), 1e-300)
                    slopes = dense @ direction
                    scale = float(np.abs(w).sum()) / max(float(np.abs(direction).sum()), 1e-300)
                score, x = line_search(slopes, intercepts, offsets, stats, metric.kind, scale if scale > 0 else 1.0)
                searches += 1
                if not (score > current + p["min_gain"]) or x == 0.0:
                    continue
                if p["sweep"] == "sequential":
                    _step(w, d, direction, x)
                    intercepts += x * slopes
                    current = score
                    improved = True
                elif best_move is None or score > best_move[0]:
                    best_move = (score, x, d, direction)
            if best_move is not None:
                score, x, d, direction = best_move
                _step(w, d, direction, x)
                intercepts = dense @ w
                current = score
                improved = True
            if not improved:
                break
        # the line searches' scores are exact on their envelopes; report the reranker's view
        return w, self._score(dense, offsets, metric, w), rounds, searches


def _step(w: np.ndarray, d: int, direction: np.ndarray | None, x: float) -> None:
    """w += x * direction (coordinate axis d when ``direction`` is None), in place."""
    if direction is None:
        w[d] += x
    else:
        w += x * direction
