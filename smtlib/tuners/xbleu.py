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
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from smtlib.bleu.corpus import log_bleu_and_gradient
from smtlib.bleu.expected import segment_softmax, segment_sum
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, pool_bleu
from smtlib.tuners.base import KBestTuner, TuneResult


def log_xbleu(w: np.ndarray, features: Features, offsets: np.ndarray, stats: np.ndarray, scale: float, bp_smoothness: float) -> tuple[float, np.ndarray]:
    """log xBLEU of weights ``w`` and its gradient (Neubig & Watanabe 2016, Appendix A)."""
    probs = segment_softmax(scale * features.scores(w), offsets)
    expected = probs @ stats
    value, g = log_bleu_and_gradient(expected, bp_smoothness)
    u = stats @ g
    centred = u - np.repeat(segment_sum(probs * u, offsets), np.diff(offsets))
    return value, scale * features.rmatvec(probs * centred)


class ExpectedBleu(KBestTuner):
    """Expected corpus BLEU from expected sufficient statistics (xBLEU), L-BFGS; Rosti et al. (2010), survey App. A."""

    name = "xbleu"
    defaults = {"l2": 50.0, "scale": 1.0, "bp_smoothness": 0.01, "max_iterations": 200, "tol": 1e-6}

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        feats = Features(pool)
        offsets = pool.offsets
        stats = np.asarray(pool.stats, dtype=np.float64)
        n = max(int((np.diff(offsets) > 0).sum()), 1)
        lam, scale, smooth = float(p["l2"]), float(p["scale"]), float(p["bp_smoothness"])
        if lam < 0 or smooth < 0:
            raise InputError(f"{self.name}: l2 and bp_smoothness must be >= 0")

        def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = log_xbleu(w, feats, offsets, stats, scale, smooth)
            return -n * value + 0.5 * lam * float(w @ w), -n * grad + lam * w

        result = scipy.optimize.minimize(objective, init, jac=True, method="L-BFGS-B", options={"maxiter": int(p["max_iterations"]), "ftol": float(p["tol"])},
                                         callback=self.lbfgs_callback(int(p["max_iterations"])))
        w = np.asarray(result.x, dtype=np.float64)
        info = {
            "xbleu_init": 100 * float(np.exp(log_xbleu(init, feats, offsets, stats, scale, smooth)[0])),
            "xbleu": 100 * float(np.exp(log_xbleu(w, feats, offsets, stats, scale, smooth)[0])),
            "iterations": int(result.nit),
            "converged": bool(result.success),
            "train_bleu": 100 * pool_bleu(pool, w),
        }
        return TuneResult(w, info)
