"""Ramp loss minimised by the concave-convex procedure (Gimpel & Smith 2012, "RAMPION"-style).

Gimpel & Smith (2012, "Structured ramp loss minimization for machine translation", NAACL) and
Neubig & Watanabe (2016, §3.4, §5.3) define the ramp loss of a sentence with a cost
``c(e) = 1 - BLEU+1(e)`` as

    ℓ_i(w) = max_e [w·h(e) + c(e)] - max_e [w·h(e) - c(e)],

the difference of a "fear" and a "hope" maximisation (their ramp loss 3, the one RAMPION uses).
It is not convex; the concave-convex procedure (CCCP, Yuille & Rangarajan 2003), which Gimpel &
Smith use, fixes the hope ``e+_i = argmax_e w·h(e) - c(e)`` at the current weights, which turns
the objective ``λ/2 ||w||² + sum_i ℓ_i`` into a structured SVM with oracle ``e+_i`` and cost
``Δ_i(e) = c(e) - c(e+_i)``, solves that exactly, and repeats. Each step cannot increase the
objective. We solve the convex step with the latent SVM's dual coordinate-descent cutting-plane
solver (:class:`smtlib.tuners.svm.StructuredHingeSolver`), so this is the batch form of the loss on
a k-best pool, not Gimpel & Smith's online subgradient inner loop (RAMPION's Algorithm 1).

Defaults are ours: λ = 1000 (as Cherry & Foster's SVM, same hinge and cost scale), 10 CCCP steps
(stopping early when the hope hypotheses no longer change), sentence BLEU ``bleu+1`` in 0-1.
The first hope selection uses the initial weights.
"""

from __future__ import annotations

import numpy as np

from smtlib._dot import dot
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, SentenceMetricTuner, pool_bleu, segment_argmax, segment_max, sentence_bleu
from smtlib.tuners.base import KBestTuner, TuneResult
from smtlib.tuners.svm import StructuredHingeSolver


def ramp_objective(features: Features, offsets: np.ndarray, cost: np.ndarray, w: np.ndarray, lam: float) -> float:
    """``λ/2 ||w||² + sum_i max_e [w·h + c] - max_e [w·h - c]`` over sentences with hypotheses."""
    scores = features.scores(w)
    present = np.diff(offsets) > 0
    fear = segment_max(scores + cost, offsets)[present]
    hope = segment_max(scores - cost, offsets)[present]
    return float(0.5 * lam * dot(w, w) + (fear - hope).sum())


class RampLoss(SentenceMetricTuner, KBestTuner):
    """Ramp loss (hope/fear difference) by CCCP with an exact structured-SVM step; Gimpel & Smith (2012)."""

    name = "rampion"
    defaults = {
        "l2": 1000.0,
        "cccp_steps": 10,
        "epsilon": 1e-3,
        "capacity": 64,
        "inner": 20,
        "max_sweeps": 200,
        "sentence_bleu": "bleu+1",
    }

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        feats = Features(pool)
        offsets = pool.offsets
        sizes = np.diff(offsets)
        cost = 1.0 - sentence_bleu(pool, p["sentence_bleu"])
        lam = float(p["l2"])
        solver = StructuredHingeSolver(feats, offsets, lam, float(p["epsilon"]), int(p["capacity"]), int(p["inner"]),
                                       int(p["max_sweeps"]), self.rng())
        w = init.copy()
        history = [ramp_objective(feats, offsets, cost, w, lam)]
        hope = segment_argmax(feats.scores(w) - cost, offsets)
        steps = 0
        for _ in range(int(p["cccp_steps"])):
            relative = cost - np.repeat(np.where(hope >= 0, cost[np.maximum(hope, 0)], 0.0), sizes)
            w = solver.solve(hope, relative)
            steps += 1
            history.append(ramp_objective(feats, offsets, cost, w, lam))
            self.report("cccp step", steps, int(p["cccp_steps"]), objective=history[-1])
            new_hope = segment_argmax(feats.scores(w) - cost, offsets)
            if np.array_equal(new_hope, hope):
                break
            hope = new_hope
        info = {"objective_init": history[0], "objective": history[-1], "objective_per_step": history,
                "cccp_steps": steps, "sweeps": solver.sweeps, "train_bleu": 100 * pool_bleu(pool, w)}
        return TuneResult(w, info)
