"""k-best MERT inside a box, with some features held fixed (``smtlib loop --range`` / ``--fixed`` with mert).

:class:`BoundedMert` is :class:`smtlib.tuners.mert.Mert` (Och 2003, §5; the same hyper-parameters
and defaults) with the constraints of :class:`smtlib.loop.constraints.Box`:

* **fixed features** are never a search direction (coordinate axes of the free features only;
  random directions, ``random_directions``, are zero on the fixed features) and keep their value in
  every starting point: mert-moses.pl's ``--activate-features`` ("others are fixed to the starting
  values"), which Moses's ``mert`` implements the same way;
* **random restarts** are drawn uniformly inside each feature's range (mert-moses.pl ``--range``,
  "min and max value ... for random generation", written to ``init.opt``'s second and third lines
  for ``mert``); a feature without a range is drawn from [``restart_low``, ``restart_high``] as
  plain MERT does, moved inside its half-open range when it has one bound only; the current weights,
  the first starting point, are clipped into the box;
* **line searches** stay inside the box, which Moses's ``mert`` does not do (its ranges only shape
  the restarts): along a direction d from w the step x is limited to the interval where
  ``lower <= w + x d <= upper``; the exact error surface along the line (Och's upper envelopes,
  :func:`smtlib.tuners.line_search.envelopes` and :func:`~smtlib.tuners.line_search.interval_scores`)
  is cut to that interval, and the step goes to the middle of the best piece (leftmost on ties, as
  Moses), or, where the piece is unbounded because the feature has no bound on that side, to Moses's
  ``x_1 - 1000`` / ``x_n + 0.1`` (or the ``neighbour`` rule, as ``unbounded_step`` says).

The weights are not divided by their L1 norm at the end (``normalize`` is ignored): the fixed
features' values and the ranges are on the scale the user gave, and rescaling would leave both.
Dense features only, as :class:`~smtlib.tuners.mert.Mert`.
"""

from __future__ import annotations

import numpy as np

from smtlib._dot import dot, matvec
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.loop.constraints import Box
from smtlib.tuners.base import TuneResult
from smtlib.tuners.corpus_metric import CorpusMetric
from smtlib.tuners.line_search import (
    MOSES_LEFT_STEP,
    MOSES_RIGHT_STEP,
    envelopes,
    interval_scores,
    model_scores,
)
from smtlib.tuners.mert import Mert


class BoundedMert(Mert):
    """k-best MERT whose restarts and line searches respect a :class:`~smtlib.loop.constraints.Box`."""

    #: the constraints over the pool's dense features; set before calling (None: no constraint)
    box: Box | None = None

    def fit_metric(self, pool: KBestPool, init: np.ndarray, metric: CorpusMetric) -> TuneResult:
        """Maximise ``metric`` over the pool inside the box (see the module docstring)."""
        self._check()
        if pool.has_sparse():
            raise InputError("mert works on dense features only")
        dense = np.ascontiguousarray(pool.dense, dtype=np.float64)
        n = dense.shape[1]
        box = self.box if self.box is not None else Box.none(n)
        lower, upper, free = box.lower[:n], box.upper[:n], box.free[:n]
        if not free.any():
            raise InputError("mert: every feature is fixed, there is nothing to tune")
        offsets = np.asarray(pool.offsets, dtype=np.int64)
        init = np.asarray(init, dtype=np.float64)
        current = np.where(free, np.clip(init[:n], lower, upper), init[:n])
        p = self.params
        rng = self.rng()
        low_r, high_r = _restart_interval(lower, upper, p["restart_low"], p["restart_high"])
        starts = [current]
        for _ in range(p["random_restarts"]):
            starts.append(np.where(free, rng.uniform(low_r, high_r), current))
        best_w, best_score, runs = None, -np.inf, []
        for k, start in enumerate(starts):
            w, score, rounds, searches = self._climb_boxed(dense, offsets, metric, start, rng, lower, upper, free)
            runs.append({"start": k, "score": score, "rounds": rounds, "line_searches": searches})
            if score > best_score:
                best_w, best_score = w, score
            self.report_score("restart", k + 1, len(starts), metric.name, score, best_score, line_searches=searches)
        weights = init.copy()
        weights[:n] = best_w
        info = {
            "metric": metric.name,
            "objective": best_score,
            "objective_init": self._score(dense, offsets, metric, current),
            "restarts": runs,
            "line_searches": int(sum(r["line_searches"] for r in runs)),
            "bounded": True,
        }
        return TuneResult(weights, info)

    def _climb_boxed(self, dense, offsets, metric, start, rng, lower, upper, free):
        """Hill-climb from ``start`` with line searches cut to the box (the sweeps of :meth:`Mert._climb`)."""
        p = self.params
        n = dense.shape[1]
        axes = np.flatnonzero(free)
        n_random = p["random_directions"]
        w = start.astype(np.float64).copy()
        intercepts, top = model_scores(dense, w, offsets)
        current = metric.corpus_score(top)
        searches = rounds = failed = 0
        last = -1
        n_dirs = len(axes) + n_random
        for rounds in range(1, p["max_rounds"] + 1):
            directions = [(int(d), None) for d in axes]
            for _ in range(n_random):
                v = rng.standard_normal(n) * free
                directions.append((-1, v / max(float(np.sqrt(dot(v, v))), 1e-300)))
            best_move = None
            for index, (d, vector) in enumerate(directions):
                if index == last and d >= 0:
                    failed += 1
                    if p["sweep"] == "sequential" and failed >= n_dirs:
                        break
                    continue
                # matvec, not BLAS: the slopes decide the step, and their bits must not depend on the CPU
                if vector is None:
                    slopes, axis = dense[:, d].copy(), np.zeros(n)
                    axis[d] = 1.0
                else:
                    slopes, axis = matvec(dense, vector), vector
                a, b = _feasible(w, axis, lower, upper)
                scale = float(np.abs(w).sum()) / max(float(np.abs(axis).sum()), 1e-300)
                score, x = self._search(slopes, intercepts, offsets, metric, a, b, scale if scale > 0 else 1.0)
                searches += 1
                if not (score > current + p["min_gain"]) or x == 0.0:
                    failed += 1
                    if p["sweep"] == "sequential" and failed >= n_dirs:
                        break
                    continue
                if p["sweep"] == "sequential":
                    w, intercepts, current = self._step(dense, offsets, metric, w, axis, x, lower, upper, free)
                    failed, last = 0, index
                elif best_move is None or score > best_move[0]:
                    best_move = (score, x, index, axis)
            if p["sweep"] == "best":
                if best_move is None:
                    break
                _, x, index, axis = best_move
                w, intercepts, current = self._step(dense, offsets, metric, w, axis, x, lower, upper, free)
                last = index
            elif failed >= n_dirs:
                break
        return w, self._score(dense, offsets, metric, w), rounds, searches

    @staticmethod
    def _step(dense, offsets, metric, w, axis, x, lower, upper, free):
        """w + x·axis, kept inside the box (a rounding error must not leave it), with its model scores and score."""
        w = w + x * axis
        w = np.where(free, np.clip(w, lower, upper), w)
        intercepts, top = model_scores(dense, w, offsets)
        return w, intercepts, metric.corpus_score(top)

    def _search(self, slopes, intercepts, offsets, metric, a, b, fallback):
        """The best score along the line on the step interval [a, b] and the step reaching it (0: stay)."""
        if not a < b:
            return -np.inf, 0.0
        first, bx, bnew, bprev = envelopes(np.ascontiguousarray(slopes), intercepts, offsets)
        xs, scores = interval_scores(first, bx, bnew, bprev, metric.stats, metric.kind)
        return best_in_interval(xs, scores, a, b, self.params["unbounded_step"], fallback)


def best_in_interval(xs: np.ndarray, scores: np.ndarray, a: float, b: float, unbounded: str = "moses",
                     fallback: float = 1.0) -> tuple[float, float]:
    """The best score of the pieces ``(-inf, xs[0]), [xs[0], xs[1]), ..., [xs[-1], inf)`` that meet
    the step interval [a, b], and the step chosen in the best piece cut to [a, b].

    Ties go to the leftmost piece (Moses). A piece cut at a finite end on both sides gives its
    middle; a piece unbounded on one side (the feature has no bound there) gives Moses's ``x_1 -
    1000`` / ``x_n + 0.1`` (``unbounded="moses"``) or half the width of its neighbour (``fallback``
    with a single breakpoint). A flat line (no breakpoint) gives step 0.
    """
    if len(xs) == 0:
        return float(scores[0]), 0.0
    left = np.concatenate([[-np.inf], xs])
    right = np.concatenate([xs, [np.inf]])
    lo = np.maximum(left, a)
    hi = np.minimum(right, b)
    ok = lo < hi
    if not ok.any():
        return -np.inf, 0.0
    masked = np.where(ok, scores, -np.inf)
    i = int(np.argmax(masked))
    lo_i, hi_i = float(lo[i]), float(hi[i])
    if np.isfinite(lo_i) and np.isfinite(hi_i):
        return float(scores[i]), 0.5 * (lo_i + hi_i)
    if not np.isfinite(lo_i):  # the first piece, unbounded on the left
        width = MOSES_LEFT_STEP if unbounded == "moses" else 0.5 * (xs[1] - xs[0] if len(xs) > 1 else fallback)
        return float(scores[i]), hi_i - width
    width = MOSES_RIGHT_STEP if unbounded == "moses" else 0.5 * (xs[-1] - xs[-2] if len(xs) > 1 else fallback)
    return float(scores[i]), lo_i + width


def _feasible(w: np.ndarray, direction: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> tuple[float, float]:
    """The steps x with ``lower <= w + x·direction <= upper`` (an interval [a, b] around 0)."""
    a, b = -np.inf, np.inf
    moving = np.flatnonzero(direction != 0)
    for i in moving:
        d = direction[i]
        lo, hi = (lower[i] - w[i]) / d, (upper[i] - w[i]) / d
        if d < 0:
            lo, hi = hi, lo
        a, b = max(a, lo), min(b, hi)
    return min(a, 0.0), max(b, 0.0)


def _restart_interval(lower: np.ndarray, upper: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Where random restarts are drawn: the range where there is one, else [low, high] moved inside a
    one-sided range."""
    width = high - low
    lo = np.where(np.isfinite(lower), lower, low)
    hi = np.where(np.isfinite(upper), upper, high)
    only_lower = np.isfinite(lower) & ~np.isfinite(upper) & (hi < lo)
    hi = np.where(only_lower, lo + width, hi)
    only_upper = np.isfinite(upper) & ~np.isfinite(lower) & (lo > hi)
    lo = np.where(only_upper, hi - width, lo)
    return lo, hi
