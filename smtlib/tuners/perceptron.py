"""Averaged structured perceptron toward the oracle (Neubig & Watanabe 2016, §6.2).

For each sentence, in a fresh random order on each of ``passes`` passes: the model's 1-best
``ê = argmax_e w·h(e)``; if it is not an oracle, ``w <- w + η (h(o) - h(ê))`` where ``o`` is the
oracle with the highest model score (a local update, survey §4.1, as Liang et al. 2006). The oracle
set holds the hypotheses of maximal sentence BLEU (``bleu+1``, ties kept). The averaged perceptron
(Collins 2002; survey §6.2) returns the average of the weights after every visit, computed with the
usual lazy trick (Daumé 2006): ``w̄ = w - u / c`` with ``u = sum_t t δ_t``.

Training starts from the initial weights. η = 1 and 10 passes are our defaults (the survey gives
none); with a non-zero start η sets how far the perceptron may move from it. All ``passes`` are
run, as Collins's averaged perceptron does: after a mistake-free pass w no longer changes, but the
average keeps moving toward it (each later visit adds w once more), so stopping there would freeze
the average nearer the early weights. ``stop_when_separated=true`` stops after the first
mistake-free pass instead (it saves time on separable pools and returns that earlier average).
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, SentenceMetricTuner, add_row, oracle_mask, pool_bleu, row_dot, sentence_bleu
from smtlib.tuners.base import KBestTuner, TuneResult


@numba.njit(cache=True, nogil=True)
def _pass(dense, indptr, indices, data, offsets, in_oracle, order, w, u, c, rate):
    """One perceptron pass; updates w and u in place, returns (c, mistakes)."""
    mistakes = 0
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        best, best_score = -1, -np.inf
        orc, orc_score = -1, -np.inf
        for r in range(lo, hi):
            score = row_dot(dense, indptr, indices, data, r, w)
            if best < 0 or score > best_score:
                best, best_score = r, score
            if in_oracle[r] and (orc < 0 or score > orc_score):
                orc, orc_score = r, score
        if best >= 0 and not in_oracle[best]:
            mistakes += 1
            add_row(dense, indptr, indices, data, orc, rate, w)
            add_row(dense, indptr, indices, data, best, -rate, w)
            add_row(dense, indptr, indices, data, orc, c * rate, u)
            add_row(dense, indptr, indices, data, best, -c * rate, u)
        c += 1.0
    return c, mistakes


class AveragedPerceptron(SentenceMetricTuner, KBestTuner):
    """Averaged structured perceptron toward the sentence-BLEU oracle; Neubig & Watanabe (2016) §6.2."""

    name = "perceptron"
    defaults = {"passes": 10, "rate": 1.0, "average": True, "sentence_bleu": "bleu+1", "stop_when_separated": False}

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        rng = self.rng()
        feats = Features(pool)
        dense, indptr, indices, data = feats.arrays()
        offsets = pool.offsets
        in_oracle = oracle_mask(sentence_bleu(pool, p["sentence_bleu"]), offsets)
        active = np.flatnonzero(np.diff(offsets) > 0)
        w = init.copy()
        u = np.zeros_like(w)
        c = 1.0
        mistakes = []
        for k in range(int(p["passes"])):
            c, errors = _pass(dense, indptr, indices, data, offsets, in_oracle, rng.permutation(active), w, u, c, float(p["rate"]))
            mistakes.append(int(errors))
            self.report("pass", k + 1, int(p["passes"]), mistakes=int(errors))
            if errors == 0 and p["stop_when_separated"]:
                break  # separated: w cannot change any more (the average still could)
        result = w - u / c if p["average"] else w
        info = {"mistakes_per_pass": mistakes, "train_bleu": 100 * pool_bleu(pool, result)}
        return TuneResult(result, info)
