"""AROW with a diagonal covariance on hope/fear pairs (Neubig & Watanabe 2016, §6.4).

Adaptive regularization of weight vectors (Crammer, Kulesza & Dredze 2009) keeps a Gaussian
N(μ, Σ) over weights; the survey (§6.4) and Chiang (2012, "Hope and fear for discriminative
training of statistical translation models", JMLR 13) use it for MT with a diagonal Σ whose entries
act as per-feature learning rates. For each sentence, in a fresh random order on every pass:

* the pair: ``pairs=hope-fear`` (default; Chiang et al. 2008, Chiang 2012): hope
  ``e+ = argmax_e μ·h(e) + BLEU(e)`` and fear ``e- = argmax_e μ·h(e) - BLEU(e)``;
  ``pairs=oracle-1best``: the best-BLEU hypothesis (highest model score among ties) and the model
  1-best (Crammer et al.'s classification setting transferred to ranking);
* ``x = h(e+) - h(e-)``, the cost-sensitive margin of Chiang (2012): the loss is
  ``ℓ = Δ - μ·x`` with ``Δ = BLEU(e+) - BLEU(e-)`` (Crammer et al.'s hinge uses Δ = 1);
* if ℓ > 0: ``β = 1 / (xᵀΣx + r)``, ``α = ℓ β``, ``μ <- μ + α Σ x``, and the covariance update
  ``Σ <- Σ - β Σ x xᵀ Σ`` restricted to its diagonal, ``Σ_jj <- Σ_jj - β Σ_jj² x_j²`` (Crammer et al.
  2009, §3 update (7)-(8), diagonal approximation as in their experiments; stays positive because
  ``β Σ_jj x_j² < 1``).

Sentence BLEU is ``bleu+1``, in percent (``bleu_scale`` = 100): the margin Δ must be commensurate
with model-score differences of real features (Chiang et al. 2008 scale their pseudo-document BLEU
by the document length for the same reason); in 0-1 units hope, fear and 1-best coincide on real
pools and AROW barely moves (measured on Moses's test_scorer_data: 9.34 -> 9.45 BLEU from an
LM-only start with 0-1 units, see the tests). Defaults: r = 1 (Crammer et al.'s experiments tune r; 1 is the usual
default), Σ_0 = I, 10 passes, μ_0 = the initial weights; the final mean μ is returned (AROW does not
average; ``average=true`` returns the mean of μ over all visits instead, computed lazily).
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, SentenceMetricTuner, oracle_mask, pool_bleu, row_dot, sentence_bleu
from smtlib.tuners.base import KBestTuner, TuneResult


@numba.njit(cache=True, nogil=True)
def _pair_vector(dense, indptr, indices, data, plus, minus, idx_buf, val_buf):
    """x = h(plus) - h(minus) as (indices, values) over the D+F coordinates; returns its length."""
    d = dense.shape[1]
    n = 0
    for j in range(d):
        x = dense[plus, j] - dense[minus, j]
        if x != 0.0:
            idx_buf[n] = j
            val_buf[n] = x
            n += 1
    ka, ea = indptr[plus], indptr[plus + 1]
    kb, eb = indptr[minus], indptr[minus + 1]
    while ka < ea or kb < eb:
        if kb >= eb or (ka < ea and indices[ka] < indices[kb]):
            col, x = indices[ka], data[ka]
            ka += 1
        elif ka >= ea or indices[kb] < indices[ka]:
            col, x = indices[kb], -data[kb]
            kb += 1
        else:
            col, x = indices[ka], data[ka] - data[kb]
            ka += 1
            kb += 1
        if x != 0.0:
            idx_buf[n] = d + col
            val_buf[n] = x
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _pass(dense, indptr, indices, data, offsets, bleu, in_oracle, order, mu, sigma, r, hope_fear, u, c):
    """One AROW pass; mu, sigma and u (lazy-average accumulator, u += c δ) in place. Returns (updates, c)."""
    max_nnz = dense.shape[1]
    for s in range(offsets.shape[0] - 1):
        for row in range(offsets[s], offsets[s + 1]):
            max_nnz = max(max_nnz, dense.shape[1] + indptr[row + 1] - indptr[row])
    idx_buf = np.empty(2 * max_nnz, dtype=np.int64)
    val_buf = np.empty(2 * max_nnz)
    updates = 0
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        if hi - lo >= 2:
            plus, minus = -1, -1
            best_plus, best_minus = -np.inf, -np.inf
            for row in range(lo, hi):
                score = row_dot(dense, indptr, indices, data, row, mu)
                if hope_fear:
                    a, b = score + bleu[row], score - bleu[row]
                else:
                    a = score if in_oracle[row] else -np.inf
                    b = score
                if plus < 0 or a > best_plus:
                    plus, best_plus = row, a
                if minus < 0 or b > best_minus:
                    minus, best_minus = row, b
            cost = bleu[plus] - bleu[minus]
            if plus != minus and cost > 0.0:
                n = _pair_vector(dense, indptr, indices, data, plus, minus, idx_buf, val_buf)
                margin = 0.0
                confidence = 0.0
                for k in range(n):
                    margin += mu[idx_buf[k]] * val_buf[k]
                    confidence += sigma[idx_buf[k]] * val_buf[k] * val_buf[k]
                loss = cost - margin
                if loss > 0.0 and n > 0:
                    beta = 1.0 / (confidence + r)
                    alpha = loss * beta
                    for k in range(n):
                        j = idx_buf[k]
                        sx = sigma[j] * val_buf[k]
                        mu[j] += alpha * sx
                        u[j] += c * alpha * sx
                        sigma[j] -= beta * sx * sx
                    updates += 1
        c += 1.0
    return updates, c


class Arow(SentenceMetricTuner, KBestTuner):
    """AROW (diagonal covariance) on hope/fear pairs with a BLEU-difference margin; Neubig & Watanabe (2016) §6.4."""

    name = "arow"
    defaults = {"r": 1.0, "passes": 10, "pairs": "hope-fear", "average": False, "sentence_bleu": "bleu+1", "bleu_scale": 100.0}

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        if p["pairs"] not in ("hope-fear", "oracle-1best"):
            raise InputError(f"{self.name}: pairs must be 'hope-fear' or 'oracle-1best'")
        if p["r"] <= 0:
            raise InputError(f"{self.name}: r must be > 0")
        rng = self.rng()
        feats = Features(pool)
        dense, indptr, indices, data = feats.arrays()
        offsets = pool.offsets
        bleu = float(p["bleu_scale"]) * sentence_bleu(pool, p["sentence_bleu"])
        in_oracle = oracle_mask(bleu, offsets)
        active = np.flatnonzero(np.diff(offsets) > 0)
        mu = init.copy()
        sigma = np.ones_like(mu)
        u = np.zeros_like(mu)
        c = 1.0
        updates = []
        for k in range(int(p["passes"])):
            n, c = _pass(dense, indptr, indices, data, offsets, bleu, in_oracle, rng.permutation(active), mu, sigma,
                         float(p["r"]), p["pairs"] == "hope-fear", u, c)
            updates.append(int(n))
            self.report("pass", k + 1, int(p["passes"]), updates=int(n))
        # the mean of μ before the first and after every visit (Daumé's lazy averaging)
        result = mu - u / c if p["average"] else mu
        info = {"updates_per_pass": updates, "sigma_min": float(sigma.min()) if len(sigma) else None,
                "train_bleu": 100 * pool_bleu(pool, result)}
        return TuneResult(result, info)
