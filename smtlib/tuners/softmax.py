"""Softmax (log-linear likelihood) loss of the oracle set, optimised with L-BFGS.

Neubig & Watanabe (2016, §3.2, and §5.2 for the optimiser): the model is the log-linear
distribution ``p_w(e | f_i) ∝ exp(w · h_i(e))`` over each sentence's hypotheses and the loss is
the negative log-probability of the oracle set ``o(i)``,

    minimize  λ/2 ||w||² - sum_i log [ sum_{e ∈ o(i)} exp(w·h_i(e)) / sum_{e ∈ c(i)} exp(w·h_i(e)) ]

(Berger et al. 1996; Och & Ney 2002; Blunsom et al. 2008). Its gradient is
``sum_i E_p[h] - E_{p | o(i)}[h] + λ w``. The oracle set holds every hypothesis of maximal sentence
BLEU (``bleu+1``, Lin & Och 2004; ties make the set, which is why the loss is not convex in general,
survey §5.2). A sentence whose hypotheses are all oracles (or that has one hypothesis) contributes
nothing. Optimised with scipy's L-BFGS (Liu & Nocedal 1989) from the initial weights, until the relative
decrease of the objective falls below ``tol`` = 1e-5 or after ``max_iterations`` = 100 (our
choices: each iteration costs two passes over the features, so this bounds the time on big sparse
pools; the training BLEU barely moves past 1e-5, measured on a generated pool).

λ is not given by the survey; the default 1.0 (regulariser not divided by the number of
sentences, as Cherry & Foster's equation 4) is ours.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from smtlib._dot import dot
from smtlib.bleu.expected import segment_softmax, segment_sum
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, SentenceMetricTuner, oracle_mask, pool_bleu, sentence_bleu
from smtlib.tuners.base import KBestTuner, TuneResult


def softmax_objective(w: np.ndarray, features: Features, offsets: np.ndarray, in_oracle: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """Negative oracle-set log-likelihood plus L2, and its gradient."""
    scores = features.scores(w)
    sizes = np.diff(offsets)
    probs = segment_softmax(scores, offsets)
    oracle_probs = segment_softmax(np.where(in_oracle, scores, -np.inf), offsets)
    mass = segment_sum(np.where(in_oracle, probs, 0.0), offsets)
    present = sizes > 0
    loss = -np.log(np.maximum(mass[present], 1e-300)).sum()
    grad = features.rmatvec(probs - oracle_probs) + lam * w
    return float(loss + 0.5 * lam * dot(w, w)), grad


class SoftmaxLoss(SentenceMetricTuner, KBestTuner):
    """Log-linear likelihood of the oracle set with L-BFGS and L2; Neubig & Watanabe (2016) §3.2, §5.2."""

    name = "softmax"
    defaults = {"l2": 1.0, "max_iterations": 100, "tol": 1e-5, "sentence_bleu": "bleu+1"}

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        feats = Features(pool)
        offsets = pool.offsets
        in_oracle = oracle_mask(sentence_bleu(pool, p["sentence_bleu"]), offsets)
        lam = float(p["l2"])
        result = scipy.optimize.minimize(
            softmax_objective, init, args=(feats, offsets, in_oracle, lam), jac=True, method="L-BFGS-B",
            options={"maxiter": int(p["max_iterations"]), "ftol": float(p["tol"])},
            callback=self.lbfgs_callback(int(p["max_iterations"])),
        )
        w = np.asarray(result.x, dtype=np.float64)
        info = {
            "objective_init": softmax_objective(init, feats, offsets, in_oracle, lam)[0],
            "objective": float(result.fun),
            "iterations": int(result.nit),
            "converged": bool(result.success),
            "train_bleu": 100 * pool_bleu(pool, w),
        }
        return TuneResult(w, info)
