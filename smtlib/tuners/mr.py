"""Minimum risk training: expected sentence BLEU under the model's k-best distribution.

Cherry & Foster (2012, §2.4 and §4, "mr"); the loss is Och (2003, §6)'s and Smith & Eisner
(2006)'s expected cost with sentence-level costs:

    minimize  λ/2 ||w||² + sum_i E_{p_w}[Δ_i(e)],   p_w(e | f_i) ∝ exp(w · h_i(e)),
    Δ_i(e) = -BLEU_i(e)

(Cherry & Foster's equation 4: the regulariser is *not* divided by the number of sentences n, so
its relative weight falls as the tuning set grows). BLEU_i is in percent (``bleu_scale`` = 100), the
scale on which the paper's λ = 50 and Figure 1's λ = 5 ... 5000 are given: with BLEU in 0-1 the same
λ = 50 is a hundred times stronger (our λ = 0.5 in percent units). Measured on Multi30k fr-en
Medium, full dev, 15 iterations (``smtlib/tuners/README.md``): λ = 50 on 0-1 BLEU stalls from
iteration 4 with small weights and a flat k-best distribution, 0.5 dev BLEU below λ = 50 on percent
BLEU; ``--set bleu_scale=1`` restores it. The per-sentence gradient is
``E[h Δ] - E[Δ] E[h]`` (their §2.4). Sentence BLEU is ``bleu+1`` (Lin & Och 2004), the add-1
smoothed sentence BLEU that Cherry & Foster assume "unless otherwise stated" (§2): the loss needs
a per-sentence score that is never undefined, and add-1 keeps the unigram precision (and so the
brevity penalty) unsmoothed, unlike ``moses-smoothed``.

Optimiser (Cherry & Foster §4, after Bottou 2010): stochastic gradient descent, one sentence per
step, on the objective divided by n, i.e. ``λ_B/2 ||w||² + 1/n sum_i ℓ_i`` with ``λ_B = λ / n``
(the same minimiser), learning rate ``η_t = η0 / (1 + η0 λ_B t)``. η0 is chosen as in Bottou's
``sgd`` code (``determineEta0``): run one epoch from the current point on a sample of sentences
(``eta0_sample`` = 1,000 sentences, the sample of Bottou's ``sgd`` code; the whole pool when it is
smaller, so on our 1,014-sentence dev set nearly the full epoch the paper describes) for η0 and 2·η0
and move by factors of 2 in the direction that lowers the sample objective until it stops falling.
Each search starts from ``1 / E||h - mean_i h||²`` (at most ``1 / (2 λ_B)``); strict improvement is
needed to move, so a flat objective keeps the starting value. At a local optimum (relative change
of the full objective below ``tol``, or ``max_epochs`` epochs) the data are reshuffled, η0 is re-tuned and SGD restarts from the optimum;
``restarts`` = 5 such runs, and the weights with the lowest objective are returned. No temperature:
"we trust λ = 50 to maintain a reasonable distribution".

The weight vector is kept as ``w = a · v`` so that the L2 shrinkage costs O(1) per step and an
update touches only the non-zeros of the sentence's hypotheses (Bottou's trick).
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib._dot import dot
from smtlib.bleu.expected import segment_softmax, segment_sum
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, SentenceMetricTuner, add_row, pool_bleu, row_dot, sentence_bleu
from smtlib.tuners.base import KBestTuner, TuneResult

_ETA_FACTOR = 2.0
_MAX_ETA_TRIALS = 16


@numba.njit(cache=True, nogil=True)
def _sgd_epoch(dense, indptr, indices, data, offsets, cost, order, v, a, eta0, lam, t):
    """One SGD epoch over ``order``; ``w = a * v`` (v updated in place). Returns ``(a, t)``."""
    max_size = 0
    for s in order:
        max_size = max(max_size, offsets[s + 1] - offsets[s])
    prob = np.empty(max(max_size, 1))
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        eta = eta0 / (1.0 + eta0 * lam * t)
        t += 1.0
        n = hi - lo
        cbar = 0.0
        if n >= 2:
            top = -np.inf
            for r in range(lo, hi):
                prob[r - lo] = a * row_dot(dense, indptr, indices, data, r, v)
                top = max(top, prob[r - lo])
            z = 0.0
            for k in range(n):
                prob[k] = np.exp(prob[k] - top)
                z += prob[k]
            for k in range(n):
                prob[k] /= z
                cbar += prob[k] * cost[lo + k]
        a *= 1.0 - eta * lam
        if n >= 2:
            for k in range(n):
                coef = prob[k] * (cost[lo + k] - cbar)
                if coef != 0.0:
                    add_row(dense, indptr, indices, data, lo + k, -eta * coef / a, v)
        if a < 1e-6:
            # fold the scale back in before it underflows
            for j in range(v.shape[0]):
                v[j] *= a
            a = 1.0
    return a, t


def risk_objective(features: Features, offsets: np.ndarray, cost: np.ndarray, w: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """``λ/2 ||w||² + sum_i E_p[cost]`` and its gradient (Cherry & Foster §2.4), full batch."""
    probs = segment_softmax(features.scores(w), offsets)
    expected = segment_sum(probs * cost, offsets)
    centred = cost - np.repeat(expected, np.diff(offsets))
    grad = features.rmatvec(probs * centred) + lam * w
    return float(expected.sum() + 0.5 * lam * dot(w, w)), grad


@numba.njit(cache=True, nogil=True)
def _expected_cost(dense, indptr, indices, data, offsets, cost, sentences, w):
    """sum over ``sentences`` of E_p[cost] under p ∝ exp(w·h), in one pass without temporaries."""
    total = 0.0
    max_size = 0
    for s in sentences:
        max_size = max(max_size, offsets[s + 1] - offsets[s])
    buf = np.empty(max(max_size, 1))
    for s in sentences:
        lo, hi = offsets[s], offsets[s + 1]
        if hi == lo:
            continue
        top = -np.inf
        for r in range(lo, hi):
            buf[r - lo] = row_dot(dense, indptr, indices, data, r, w)
            top = max(top, buf[r - lo])
        z = 0.0
        acc = 0.0
        for r in range(lo, hi):
            e = np.exp(buf[r - lo] - top)
            z += e
            acc += e * cost[r]
        total += acc / z
    return total


class MinimumRisk(SentenceMetricTuner, KBestTuner):
    """Minimum risk (expected sentence BLEU) with SGD; Cherry & Foster (2012) §2.4, §4 "mr"."""

    name = "mr"
    defaults = {
        "l2": 50.0,  # λ of Cherry & Foster's objective (4), not divided by the number of sentences
        "restarts": 5,
        "max_epochs": 20,
        "tol": 1e-4,
        "eta0": 0.0,  # 0 = choose by one-epoch trials (Bottou); > 0 = fixed
        "eta0_sample": 1000,  # sentences used for the η0 trials (Bottou's sgd: 1,000)
        "sentence_bleu": "bleu+1",
        "bleu_scale": 100.0,  # Δ_i = -bleu_scale * BLEU_i: percent, the scale of the paper's λ
    }

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        rng = self.rng()
        feats = Features(pool)
        dense, indptr, indices, data = feats.arrays()
        offsets = pool.offsets
        if not p["bleu_scale"] > 0:
            raise InputError(f"{self.name}: bleu_scale must be > 0")
        cost = -float(p["bleu_scale"]) * sentence_bleu(pool, p["sentence_bleu"])
        lam = float(p["l2"])
        if lam < 0:
            raise InputError(f"{self.name}: l2 must be >= 0")
        active = np.flatnonzero(np.diff(offsets) > 0)
        n = max(len(active), 1)
        lam_b = lam / n

        def objective(w: np.ndarray) -> float:
            return _expected_cost(dense, indptr, indices, data, offsets, cost, active, w) + 0.5 * lam * dot(w, w)

        def run_epoch(w: np.ndarray, order: np.ndarray, eta0: float, t: float) -> tuple[np.ndarray, float]:
            v = w.copy()
            a, t = _sgd_epoch(dense, indptr, indices, data, offsets, cost, order, v, 1.0, eta0, lam_b, t)
            return a * v, t

        def choose_eta0(w: np.ndarray) -> float:
            sample = active if len(active) <= p["eta0_sample"] else np.sort(rng.choice(active, p["eta0_sample"], replace=False))
            order = rng.permutation(sample)

            def trial(eta: float) -> float:
                if lam_b * eta >= 1.0:  # the shrink factor 1 - η λ_B would not be positive
                    return np.inf
                trained = run_epoch(w, order, eta, 0.0)[0]
                # the sample's share of the objective: its expected costs and λ_B |sample| / 2 ||w||²
                return _expected_cost(dense, indptr, indices, data, offsets, cost, sample, trained) + 0.5 * lam_b * len(sample) * dot(trained, trained)

            # Bottou's determineEta0: move by factors of 2 while the one-epoch sample objective falls
            lo = start_eta
            if lam_b > 0:
                lo = min(lo, 0.5 / lam_b)  # keep the shrink factor 1 - η λ_B >= 1/2
            lo_cost, hi = trial(lo), lo * _ETA_FACTOR
            hi_cost = trial(hi)
            if lo_cost < hi_cost:
                for _ in range(_MAX_ETA_TRIALS):
                    hi, hi_cost = lo, lo_cost
                    lo = lo / _ETA_FACTOR
                    lo_cost = trial(lo)
                    if not lo_cost < hi_cost:
                        break
                return hi if hi_cost <= lo_cost else lo
            for _ in range(_MAX_ETA_TRIALS):
                if not hi_cost < lo_cost:
                    break
                lo, lo_cost = hi, hi_cost
                hi = hi * _ETA_FACTOR
                hi_cost = trial(hi)
            return lo

        if p["eta0"] > 0 and p["eta0"] * lam_b >= 1.0:
            raise InputError(f"mr: eta0={p['eta0']} is too large for l2={lam} over {n} sentences (need eta0 < {1 / lam_b:g})")
        start_eta = _initial_eta(feats, offsets)
        best_w, best_obj = init.copy(), objective(init)
        start_obj = best_obj
        history = []
        w = init.copy()
        for restart in range(int(p["restarts"])):
            eta0 = float(p["eta0"]) if p["eta0"] > 0 else choose_eta0(w)
            t = 0.0
            run_best_w, run_best = w, objective(w)
            epochs = 0
            for _ in range(int(p["max_epochs"])):
                w, t = run_epoch(w, rng.permutation(active), eta0, t)
                epochs += 1
                obj = objective(w)
                improved = run_best - obj
                if obj < run_best:
                    run_best_w, run_best = w, obj
                self.report("epoch", epochs, int(p["max_epochs"]), restart=restart + 1, objective=obj, best=run_best)
                if improved <= p["tol"] * max(abs(run_best), 1e-12):
                    break
            history.append({"restart": restart, "eta0": eta0, "epochs": epochs, "objective": run_best})
            w = run_best_w  # restart from the optimum
            if run_best < best_obj:
                best_w, best_obj = run_best_w.copy(), run_best
        info = {
            "objective_init": start_obj,
            "objective": best_obj,
            "runs": history,
            "train_bleu": 100 * pool_bleu(pool, best_w),
            "sentence_bleu": p["sentence_bleu"],
        }
        return TuneResult(best_w, info)


def _initial_eta(feats: Features, offsets: np.ndarray) -> float:
    """A scale-aware first η0 for the search: 1 / mean within-sentence squared deviation of h.

    Dense columns are centred per sentence exactly; the sparse block contributes its uncentred
    mean squared norm (an upper bound), so the guess never needs densifying.
    """
    sizes = np.diff(offsets)
    n_rows = max(int(sizes.sum()), 1)
    spread = 0.0
    if feats.n_dense:
        means = segment_sum(feats.dense, offsets) / np.maximum(sizes, 1)[:, None]
        total = dot(feats.dense.ravel(), feats.dense.ravel())
        spread += max(total - float((sizes[:, None] * means * means).sum()), 0.0) / n_rows
    if feats.n_sparse:
        spread += dot(feats.sparse.data, feats.sparse.data) / n_rows
    return 1.0 / spread if spread > 0 else 1.0
