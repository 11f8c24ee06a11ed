"""k-best MERT: Och's (2003) exact line search with random restarts (``smtlib tune mert``).

The objective is corpus BLEU (no smoothing, as Moses ``mert`` optimises) of the 1-best
hypotheses under the weights, on the merged k-best pool. Search follows Och (2003, §5) and the
kb-mert baseline of Cherry & Foster (2012, §4) / Hopkins & May (2011, §5.4.1):

* a line search along a direction d from the point p is exact: every sentence's 1-best as a
  function of the step is the upper envelope of its hypotheses' lines
  (:mod:`smtlib.tuners.line_search`), and corpus BLEU is scored on every interval of the merged
  breakpoints from summed statistics; the step is the midpoint of the leftmost best interval
  (Moses's tie-breaking);
* directions are the coordinate axes (Och 2003; Moses ``mert``'s default; Cherry & Foster's
  kb-mert), plus ``random_directions`` random unit vectors per round when asked (default 0; Moses
  ``mert -m``, Cer et al. 2008);
* with ``sweep="best"`` (default) every direction is searched from the same point and only the
  best line is stepped along (Moses's ``SimpleOptimizer``); with ``sweep="sequential"`` each
  improving step is taken at once (coordinate ascent, as Och's Powell-style search) and the climb
  ends after a full cycle of directions without a step; a step must gain more than ``min_gain``;
* the current weights plus ``random_restarts`` = 20 random starting points (Cherry & Foster
  2012 §4 "20 random restarts"; Moses ``mert -n 20``), drawn uniformly from
  [``restart_low``, ``restart_high``] = [0, 1] per feature, Moses's range; the best end point
  wins (the earliest on ties, so the current weights win a draw).
* a best interval that is unbounded is entered as cmert and Moses do, ``x_1 - 1000`` on the left
  and ``x_n + 0.1`` on the right (``unbounded_step="moses"``). This matters: on Moses's
  ``mert.basic`` regression data the optimum (0.304339) has a word-penalty weight 1,000 times the
  others, which only the far step reaches; our former rule (half the neighbouring interval's
  width, ``unbounded_step="neighbour"``) stopped at 0.304121 from every seed.

Like Moses, the final weights are divided by their L1 norm (``normalize="l1"``; BLEU is scale
invariant, so this only fixes the scale; all-zero weights are left alone and the base class warns).

The default sweep is Moses's. The sequential sweep needs fewer line searches and reaches the same
end point on Moses's regression data, but not on this project's own pools: on a Multi30k fr-en
Medium pool (200 dev sentences, 9 merged 100-best lists, even ids tuned, odd held out, 10 seeds;
``benchmarks/results/moses_tuners.md``) it reaches 54.33 ± 0.37 pool BLEU and 50.20 held-out where
Moses's ``mert`` reaches 54.69 / 50.81 and ``sweep=best`` 54.72 / 50.98, at 2.0 s CPU per step
against 1.9 (the requirement: ours at least level with the reference on the same pool). Deviation from Moses:
its merging of breakpoints closer than 1e-4 (a float32 artefact) is not needed in float64.

Dense features only (``supports_sparse = False``): Cherry & Foster (2012, §2) and Hopkins &
May (2011, §3) show that MERT does not scale beyond a few dozen features.
"""

from __future__ import annotations

import math
import numpy as np

from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners.base import KBestTuner, TuneResult
from smtlib.tuners.line_search import (
    UNBOUNDED_RULES,
    add_scaled,
    column_extremes,
    columns_of,
    model_scores,
    search_line,
)
from smtlib.tuners.corpus_metric import CorpusMetric, bleu_metric
from smtlib._dot import dot, matvec


class Mert(KBestTuner):
    """k-best MERT: Och (2003) exact line search along the coordinate axes, 20 random restarts."""

    name = "mert"
    supports_sparse = False
    defaults = {
        "random_restarts": 20,  # random starting points besides the current weights (C&F 2012 §4; Moses mert -n 20)
        "random_directions": 0,  # random unit directions per round besides the coordinate axes (Moses mert -m)
        "sweep": "best",  # "best": one step per round along the best line (Moses); "sequential": every improving step
        "min_gain": 1e-6,  # a step must improve BLEU (0-1) by more than this
        "max_rounds": 500,  # safety bound on rounds per starting point
        "restart_low": 0.0,  # random starting points: uniform in [restart_low, restart_high] (Moses: [0, 1])
        "restart_high": 1.0,
        "unbounded_step": "moses",  # step into an unbounded best interval: "moses" (x1 - 1000 / xn + 0.1) | "neighbour"
        "normalize": "l1",  # "l1" (Moses) or "none"
    }

    def _check(self) -> None:
        p = self.params
        if p["random_restarts"] < 0:
            raise InputError("mert: random_restarts must be >= 0")
        if p["random_directions"] < 0:
            raise InputError("mert: random_directions must be >= 0")
        if p["sweep"] not in ("sequential", "best"):
            raise InputError("mert: sweep must be 'sequential' or 'best'")
        if p["normalize"] not in ("l1", "none"):
            raise InputError("mert: normalize must be 'l1' or 'none'")
        if p["unbounded_step"] not in UNBOUNDED_RULES:
            raise InputError(f"mert: unbounded_step must be one of {', '.join(UNBOUNDED_RULES)}")
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
        gold score (:func:`smtlib.tuners.corpus_metric.additive_metric`).
        """
        self._check()
        if pool.has_sparse():
            raise InputError("mert works on dense features only")
        init = np.asarray(init, dtype=np.float64)
        dense = np.ascontiguousarray(pool.dense, dtype=np.float64)
        n_dense = dense.shape[1]
        offsets = np.asarray(pool.offsets, dtype=np.int64)
        columns = columns_of(dense)
        rng = self.rng()
        p = self.params
        starts = [init[:n_dense].copy()]
        for _ in range(p["random_restarts"]):
            starts.append(rng.uniform(p["restart_low"], p["restart_high"], size=n_dense))
        extremes = column_extremes(columns, offsets)  # the hull filter's fixed anchors per axis
        best_w, best_score = None, -np.inf
        runs = []
        for k, start in enumerate(starts):
            w, score, rounds, searches = self._climb(dense, columns, extremes, offsets, metric, start, rng)
            runs.append({"start": k, "score": score, "rounds": rounds, "line_searches": searches})
            if score > best_score:
                best_w, best_score = w, score
            self.report_score("restart", k + 1, len(starts), metric.name, score, best_score, line_searches=searches)
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
        return metric.corpus_score(model_scores(dense, np.ascontiguousarray(w, dtype=np.float64), offsets)[1])

    def _climb(
        self,
        dense: np.ndarray,
        columns: np.ndarray,
        extremes: tuple[np.ndarray, np.ndarray],
        offsets: np.ndarray,
        metric: CorpusMetric,
        start: np.ndarray,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, float, int, int]:
        """Hill-climb from ``start`` with exact line searches until no line improves.

        Sequential sweep: the directions are tried in a cycle (axes, then the round's random
        directions) and the climb stops once every direction of a round has failed at the current
        point, i.e. after a full cycle without a step (a direction just stepped along is at its line
        optimum, so it is not searched again from the same point). Best sweep (Moses): every
        direction from the same point, then one step along the best; the direction just taken is
        skipped in the next round for the same reason.
        """
        p = self.params
        n_dense = dense.shape[1]
        n_random = p["random_directions"]
        n_dirs = n_dense + n_random
        unbounded = UNBOUNDED_RULES[p["unbounded_step"]]
        low, high = extremes
        none = np.zeros(0, dtype=np.int64)
        w = start.astype(np.float64).copy()
        stats = metric.stats
        searches = 0
        rounds = 0
        failed = 0  # consecutive line searches without a step (sequential sweep)
        last = -1  # the direction of the last step
        # intercepts are kept equal to dense @ w by the same steps as w; the 1-best rows (rows of
        # greatest intercept) are the hull filter's anchors
        intercepts, top = model_scores(dense, w, offsets)
        current = metric.corpus_score(top)
        for rounds in range(1, p["max_rounds"] + 1):
            best_move = None  # (score, x, direction index, direction, slopes, rows) for sweep="best"
            randoms = [_random_direction(rng, n_dense) for _ in range(n_random)]
            for d in range(n_dirs):
                if d == last and d < n_dense:
                    failed += 1  # its line optimum is the current point: nothing to find
                    if p["sweep"] == "sequential" and failed >= n_dirs:
                        break
                    continue
                if d < n_dense:
                    direction = None
                    slopes = columns[d]
                    scale = float(np.abs(w).sum())
                    anchors = (low[d], high[d], top)
                else:
                    direction = randoms[d - n_dense]
                    slopes = matvec(dense, direction)
                    scale = float(np.abs(w).sum()) / max(float(np.abs(direction).sum()), 1e-300)
                    anchors = (none, none, none)
                fallback = scale if scale > 0 else 1.0
                score, x, rows = search_line(slopes, intercepts, offsets, stats, metric.kind, *anchors, fallback, unbounded)
                searches += 1
                if not (score > current + p["min_gain"]) or x == 0.0:
                    failed += 1
                    if p["sweep"] == "sequential" and failed >= n_dirs:
                        break
                    continue
                if p["sweep"] == "sequential":
                    _step(w, d, direction, x)
                    add_scaled(intercepts, x, slopes)
                    top = rows(x)
                    current = score
                    failed = 0
                    last = d
                elif best_move is None or score > best_move[0]:
                    best_move = (score, x, d, direction, slopes, rows)
            if p["sweep"] == "best":
                if best_move is None:
                    break
                score, x, d, direction, slopes, rows = best_move
                _step(w, d, direction, x)
                add_scaled(intercepts, x, slopes)
                top = rows(x)
                current = score
                last = d
            elif failed >= n_dirs:
                break
        # the line searches' scores are exact on their envelopes; report the reranker's view
        return w, self._score(dense, offsets, metric, w), rounds, searches


def _random_direction(rng: np.random.Generator, n: int) -> np.ndarray:
    """A uniformly random unit vector (Cer, Jurafsky & Manning 2008; Moses mert -m)."""
    direction = rng.standard_normal(n)
    return direction / max(math.sqrt(dot(direction, direction)), 1e-300)


def _step(w: np.ndarray, d: int, direction: np.ndarray | None, x: float) -> None:
    """w += x * direction (coordinate axis d when ``direction`` is None), in place."""
    if direction is None:
        w[d] += x
    else:
        w += x * direction
