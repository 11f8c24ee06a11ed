"""Expected corpus BLEU (xBLEU) from expected sufficient statistics, optimised with L-BFGS.

Rosti, Zhang, Matsoukas & Schwartz (2010, 2011) and Neubig & Watanabe (2016, §5.5.2 and
Appendix A), after DeNero, Chiang & Knight (2009) and Pauls, DeNero & Klein (2009): with
``p_w(e | f_i) ∝ exp(γ w·h(e))`` over each sentence's hypotheses, the expected statistics of the
corpus are ``S(w) = sum_i sum_e p_w(e|f_i) s(e)`` (n-gram matches m_n, counts t_n, hypothesis and
reference lengths c, r) and the objective is corpus BLEU computed from them, in logs:

    log xBLEU(w) = 1/4 sum_n (log m_n(w) - log t_n(w)) + φ(1 - r(w)/c(w)),

φ a smoothed ``min(0, ·)`` (a softplus of width ``bp_smoothness``; see
:func:`smtlib.bleu.corpus.log_bleu_and_gradient`) so that the brevity penalty is differentiable.
The gradient follows Appendix A's chain rule: with ``g = ∂ log xBLEU / ∂S`` (one entry per
statistic) and ``u(e) = g · s(e)``,

    ∂ log xBLEU / ∂w = γ sum_i sum_e p(e|f_i) (u(e) - E_{p(·|f_i)}[u]) h(e),

since ``∂ E_i[s_k] / ∂w = γ (E_i[s_k h] - E_i[s_k] E_i[h])``; it costs one product with ``Xᵀ``.
We minimise ``-n log xBLEU(w) + λ/2 ||w||²`` (n = sentences with hypotheses; the log-BLEU is
multiplied by n so that λ has the per-sentence meaning of Cherry & Foster's equation 4) with
scipy's L-BFGS from the initial weights (stopping at a relative decrease below ``tol`` = 1e-6 or
after ``max_iterations`` = 200). λ = 50 (MR's value in Cherry & Foster §4; the xBLEU
papers do not give one), γ = 1 and the softplus width 0.01 are our defaults.

Other metrics (``smtlib tune xbleu --metric``). Nothing in the derivation is BLEU's but
that the corpus score is a differentiable function of summed statistics, which chrF (F-beta of
ratios of n-gram counts) and TER (edits over reference words) are too: the same chain rule applies
to their expected statistics with :func:`metric_and_gradient`'s gradient (the survey's §5.5 expected
loss from expected statistics, with the metric in BLEU's place). A mixture's score is the weighted
sum of its parts' (BLEU's exponentiated), maximised as it is: the log of a score with TER's negative
weight does not exist. λ keeps its per-sentence meaning, the score being 0-1 like BLEU.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.optimize

from smtlib._dot import dot, matvec, rmatvec
from smtlib.bleu.chrf import chrf_and_gradient
from smtlib.bleu.corpus import log_bleu_and_gradient
from smtlib.bleu.expected import segment_softmax, segment_sum
from smtlib.bleu.metrics import KIND_ADDITIVE, KIND_BLEU, KIND_CHRF, KIND_TER
from smtlib.bleu.ter import ter_and_gradient
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, pool_bleu
from smtlib.tuners.base import KBestTuner, TuneResult


def expected_objective(w: np.ndarray, features: Features, offsets: np.ndarray, stats: np.ndarray, scale: float,
                       score_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]]) -> tuple[float, np.ndarray]:
    """A corpus score of the expected statistics under weights ``w`` and its gradient in ``w``
    (Neubig & Watanabe 2016, Appendix A): ``score_and_gradient`` maps a statistics sum to the score
    and its gradient in that sum, the chain rule does the rest."""
    probs = segment_softmax(scale * features.scores(w), offsets)
    expected = rmatvec(stats, probs)
    value, g = score_and_gradient(expected)
    u = matvec(stats, g)
    centred = u - np.repeat(segment_sum(probs * u, offsets), np.diff(offsets))
    return value, scale * features.rmatvec(probs * centred)


def log_xbleu(w: np.ndarray, features: Features, offsets: np.ndarray, stats: np.ndarray, scale: float, bp_smoothness: float) -> tuple[float, np.ndarray]:
    """log xBLEU of weights ``w`` and its gradient (Neubig & Watanabe 2016, Appendix A)."""
    return expected_objective(w, features, offsets, stats, scale, lambda s: log_bleu_and_gradient(s, bp_smoothness))


def metric_and_gradient(stats_sum: np.ndarray, spec: np.ndarray, bp_smoothness: float) -> tuple[float, np.ndarray]:
    """The score of a metric or mixture (its spec, :mod:`smtlib.tuners.corpus_metric`) of a statistics
    sum, the weighted sum of its parts' corpus scores, and its gradient: BLEU with the smoothed
    brevity penalty of :func:`smtlib.bleu.corpus.log_bleu_and_gradient` (exponentiated), chrF
    (:func:`smtlib.bleu.chrf.chrf_and_gradient`), TER (:func:`smtlib.bleu.ter.ter_and_gradient`, with
    its negative weight), or the additive gold score."""
    value = 0.0
    grad = np.zeros_like(stats_sum, dtype=np.float64)
    for kind, start, end, weight, param, _ in spec:
        part = stats_sum[int(start):int(end)]
        if kind == KIND_BLEU:
            log_value, g = log_bleu_and_gradient(part, bp_smoothness)
            v = float(np.exp(log_value))
            g = v * g
        elif kind == KIND_CHRF:
            v, g = chrf_and_gradient(part, param)
        elif kind == KIND_TER:
            v, g = ter_and_gradient(part)
        elif kind == KIND_ADDITIVE:
            v, g = float(part[0]), np.ones(1)
        else:
            raise ValueError(f"metric spec has an unknown kind {kind}")
        value += weight * v
        grad[int(start):int(end)] += weight * g
    return value, grad


class ExpectedBleu(KBestTuner):
    """Expected corpus BLEU from expected sufficient statistics (xBLEU), L-BFGS; Rosti et al. (2010), survey App. A."""

    name = "xbleu"
    defaults = {"l2": 50.0, "scale": 1.0, "bp_smoothness": 0.01, "max_iterations": 200, "tol": 1e-6}

    def _minimise(self, pool: KBestPool, init: np.ndarray, stats: np.ndarray,
                  score_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]]):
        """L-BFGS on ``-n score(E[S]) + λ/2 ||w||²``; the result and the score function of weights."""
        p = self.params
        feats = Features(pool)
        offsets = pool.offsets
        n = max(int((np.diff(offsets) > 0).sum()), 1)
        lam, scale, smooth = float(p["l2"]), float(p["scale"]), float(p["bp_smoothness"])
        if lam < 0 or smooth < 0:
            raise InputError(f"{self.name}: l2 and bp_smoothness must be >= 0")

        def score(w: np.ndarray) -> tuple[float, np.ndarray]:
            return expected_objective(w, feats, offsets, stats, scale, score_and_gradient)

        def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = score(w)
            return -n * value + 0.5 * lam * dot(w, w), -n * grad + lam * w

        result = scipy.optimize.minimize(objective, init, jac=True, method="L-BFGS-B", options={"maxiter": int(p["max_iterations"]), "ftol": float(p["tol"])},
                                         callback=self.lbfgs_callback(int(p["max_iterations"])))
        return result, score

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        smooth = float(self.params["bp_smoothness"])
        stats = np.asarray(pool.stats, dtype=np.float64)
        result, log_score = self._minimise(pool, init, stats, lambda s: log_bleu_and_gradient(s, smooth))
        w = np.asarray(result.x, dtype=np.float64)
        info = {
            "xbleu_init": 100 * float(np.exp(log_score(init)[0])),
            "xbleu": 100 * float(np.exp(log_score(w)[0])),
            "iterations": int(result.nit),
            "converged": bool(result.success),
            "train_bleu": 100 * pool_bleu(pool, w),
        }
        return TuneResult(w, info)

    def fit_metric(self, pool: KBestPool, init: np.ndarray, metric) -> TuneResult:
        """:meth:`fit` toward a metric or mixture (a :class:`~smtlib.tuners.corpus_metric.CorpusMetric`):
        the expected statistics are its own, the score their weighted corpus score
        (:func:`metric_and_gradient`, maximised itself rather than its log, which TER's negative
        weight would not allow); ``xmetric`` is that score, ``train_metric`` the 1-best's corpus score
        (both percent)."""
        smooth = float(self.params["bp_smoothness"])
        spec = np.asarray(metric.kind, dtype=np.float64)
        result, score = self._minimise(pool, init, np.asarray(metric.stats, dtype=np.float64),
                                       lambda s: metric_and_gradient(s, spec, smooth))
        w = np.asarray(result.x, dtype=np.float64)
        info = {
            "xmetric_init": 100 * score(init)[0],
            "xmetric": 100 * score(w)[0],
            "iterations": int(result.nit),
            "converged": bool(result.success),
            "train_metric": 100 * metric.corpus_score(pool.best_indices(w)),
            "metric": metric.name,
        }
        return TuneResult(w, info)
