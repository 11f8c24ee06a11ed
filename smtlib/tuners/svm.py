"""The latent structured SVM of Cherry & Foster (2012, §3.2; "svm" in §4).

Objective (their equation 4 with the latent hinge loss of §3.2):

    minimize  λ/2 ||w||² + sum_i ℓ_i(w),
    ℓ_i(w) = max_{e ∈ E_i} [Δ_i(e) + w·h_i(e)] - max_{e* ∈ E_i*} w·h_i(e*),
    Δ_i(e) = max_{e'} BLEU_i(e') - BLEU_i(e),

with sentence BLEU the interpolated BLEU of Liang et al. (2006, §3.1; variant
``liang-interpolated``) and the oracle set ``E_i*`` = every hypothesis of maximal interpolated BLEU
(ties form the set). Training alternates (Yu & Joachims 2009's latent SVM): fix each sentence's
oracle to the member of ``E_i*`` with the highest model score (the first selection uses the
initial weights, later ones the current weights), solve the resulting structured SVM with margin
rescaling, and repeat ``reselections`` = 10 times. λ = 1000 as in §4; like the paper the
regulariser is not divided by the number of sentences.

The structured SVM is solved in the dual, where ``w = sum_{i,e} α_{i,e} (h_i(e*_i) - h_i(e))`` with
``α ≥ 0`` and ``sum_e α_{i,e} ≤ 1/λ`` per sentence (the n-slack formulation of Tsochantaridis et
al. 2004/2005). The cutting-plane algorithm of Tsochantaridis et al. keeps a working set of
constraints per sentence: a sweep visits the sentences in random order, finds the most violated
hypothesis ``argmax_e Δ_i(e) + w·h_i(e)`` over the whole pool of that sentence, adds it when its
violation exceeds the sentence's current slack by more than ``epsilon``, and re-optimises that
sentence's dual variables by dual coordinate descent: SMO-style pair updates (two variables of the
same sentence, the implicit slack variable included, in closed form), as in the sequential dual
method of multi-class linear SVMs (Keerthi et al. 2008; LIBLINEAR's solver, Hsieh et al. 2008,
which Cherry & Foster used). Between two searches, sweeps over the working sets alone re-optimise the dual (as SVM-struct
alternates constraint search and QP); the solver stops when a search finds no sentence violated by
more than ``epsilon`` = 0.001 (SVM-struct's default ε = 0.1 for a loss on a 0-100 scale).
The dual variables are kept across oracle re-selections (any feasible α is a valid warm start).

Deviations: the QP solver is ours (numba), not LIBLINEAR; ``epsilon`` (in 0-1 BLEU units) and the
per-sentence working-set capacity are our choices, both settable.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib._dot import dot
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import (
    Features,
    SentenceMetricTuner,
    add_row,
    pool_bleu,
    row_diff_sq,
    row_dot,
    segment_argmax,
    segment_max,
    sentence_bleu,
)
from smtlib.tuners.base import KBestTuner, TuneResult


@numba.njit(cache=True, nogil=True)
def _sweep(dense, indptr, indices, data, offsets, cost, oracle, order, ws_rows, ws_alpha, ws_count, w, c_max, eps, inner, search):
    """One cutting-plane sweep with per-sentence SMO.

    Returns the largest violation seen: of a primal constraint beyond the sentence's slack, or of
    the dual optimality condition (gain gap of the best SMO pair) within a sentence. With ``search``
    false only the working sets are re-optimised (no pass over the pool).
    """
    cap = ws_rows.shape[1]
    worst = 0.0
    gains = np.empty(cap)
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        o = oracle[s]
        if hi - lo < 2 or o < 0:
            continue
        cnt = ws_count[s]
        if not search and cnt == 0:
            continue
        score_o = row_dot(dense, indptr, indices, data, o, w)
        best_val = -np.inf
        best_row = -1
        for r in range(lo, hi if search else lo):
            val = cost[r] + row_dot(dense, indptr, indices, data, r, w) - score_o
            if val > best_val:
                best_val = val
                best_row = r
        slack_loss = 0.0  # the slack variable's constraint: loss >= 0
        for k in range(cnt):
            r = ws_rows[s, k]
            val = cost[r] + row_dot(dense, indptr, indices, data, r, w) - score_o
            slack_loss = max(slack_loss, val)
        violation = best_val - slack_loss
        worst = max(worst, violation)
        if search and violation > eps:
            present = False
            for k in range(cnt):
                if ws_rows[s, k] == best_row:
                    present = True
            if not present:
                if cnt < cap:
                    ws_rows[s, cnt] = best_row
                    ws_alpha[s, cnt] = 0.0
                    cnt += 1
                    ws_count[s] = cnt
                else:
                    # full: recycle a constraint that carries no weight (shrinking)
                    for k in range(cnt):
                        if ws_alpha[s, k] == 0.0:
                            ws_rows[s, k] = best_row
                            break
        if cnt == 0:
            continue
        # SMO on this sentence: variables alpha_k (k < cnt) and slack = c_max - sum(alpha)
        for _ in range(inner):
            score_o = row_dot(dense, indptr, indices, data, o, w)
            used = 0.0
            for k in range(cnt):
                r = ws_rows[s, k]
                gains[k] = cost[r] + row_dot(dense, indptr, indices, data, r, w) - score_o
                used += ws_alpha[s, k]
            slack = c_max - used
            if slack <= 1e-12 * c_max:
                slack = 0.0  # rounding residue of sum(alpha) = c_max: the slack has no mass to give
            up, g_up = -1, 0.0  # -1 is the slack variable (gain 0)
            down, g_down = -1, np.inf
            if slack > 0.0:
                g_down = 0.0
            for k in range(cnt):
                if gains[k] > g_up:
                    up, g_up = k, gains[k]
                if ws_alpha[s, k] > 0.0 and gains[k] < g_down:
                    down, g_down = k, gains[k]
            if up == down or g_down == np.inf or g_up - g_down <= eps:
                break
            # the dual is not optimal for this sentence yet: keep sweeping
            worst = max(worst, g_up - g_down)
            if up >= 0 and down >= 0:
                q = row_diff_sq(dense, indptr, indices, data, ws_rows[s, up], ws_rows[s, down])
            elif up >= 0:
                q = row_diff_sq(dense, indptr, indices, data, o, ws_rows[s, up])
            else:
                q = row_diff_sq(dense, indptr, indices, data, o, ws_rows[s, down])
            avail = slack if down < 0 else ws_alpha[s, down]
            step = avail if q <= 0.0 else min(avail, (g_up - g_down) / q)
            if step <= 0.0:
                break
            # w += step * (psi_up - psi_down), psi_k = h(o) - h(e_k), psi_slack = 0
            if up >= 0:
                ws_alpha[s, up] += step
                add_row(dense, indptr, indices, data, ws_rows[s, up], -step, w)
            else:
                add_row(dense, indptr, indices, data, o, -step, w)
            if down >= 0:
                ws_alpha[s, down] = max(ws_alpha[s, down] - step, 0.0)
                add_row(dense, indptr, indices, data, ws_rows[s, down], step, w)
            else:
                add_row(dense, indptr, indices, data, o, step, w)
    return worst


@numba.njit(cache=True, nogil=True)
def _primal_weights(dense, indptr, indices, data, oracle, ws_rows, ws_alpha, ws_count, w):
    """w = sum_{s,k} alpha_{s,k} (h(oracle_s) - h(row_{s,k})), written into ``w``."""
    w[:] = 0.0
    for s in range(ws_count.shape[0]):
        total = 0.0
        for k in range(ws_count[s]):
            a = ws_alpha[s, k]
            if a != 0.0:
                total += a
                add_row(dense, indptr, indices, data, ws_rows[s, k], -a, w)
        if total != 0.0 and oracle[s] >= 0:
            add_row(dense, indptr, indices, data, oracle[s], total, w)


class StructuredHingeSolver:
    """Dual coordinate-descent cutting-plane solver of the n-slack structured SVM on a pool.

    ``solve(oracle, cost)`` minimises ``λ/2||w||² + sum_i max(0, max_e cost(e) + w·h(e) - w·h(oracle_i))``
    for the given oracle rows and per-hypothesis costs, warm-starting from the previous dual
    solution (constraints are kept as hypothesis rows, so they stay valid when oracles change).
    """

    def __init__(self, features: Features, offsets: np.ndarray, lam: float, epsilon: float, capacity: int, inner: int, max_sweeps: int, rng: np.random.Generator) -> None:
        if lam <= 0:
            raise InputError("l2 (λ) must be > 0 for the structured SVM solver")
        self.features = features
        self.offsets = offsets
        self.c_max = 1.0 / lam
        self.lam = lam
        self.epsilon = epsilon
        self.inner = inner
        self.max_sweeps = max_sweeps
        self.rng = rng
        n_sent = len(offsets) - 1
        self.ws_rows = np.zeros((n_sent, capacity), dtype=np.int64)
        self.ws_alpha = np.zeros((n_sent, capacity))
        self.ws_count = np.zeros(n_sent, dtype=np.int64)
        self.w = np.zeros(features.dim)
        self.sweeps = 0
        self.active = np.flatnonzero(np.diff(offsets) >= 2)

    def solve(self, oracle: np.ndarray, cost: np.ndarray) -> np.ndarray:
        dense, indptr, indices, data = self.features.arrays()
        oracle = np.asarray(oracle, dtype=np.int64)
        cost = np.asarray(cost, dtype=np.float64)
        _primal_weights(dense, indptr, indices, data, oracle, self.ws_rows, self.ws_alpha, self.ws_count, self.w)
        for _ in range(self.max_sweeps):
            # a search sweep adds the most violated constraints, then cheap sweeps over the working
            # sets alone bring the dual to optimality before the pool is searched again (SVM-struct)
            order = self.rng.permutation(self.active)
            worst = _sweep(dense, indptr, indices, data, self.offsets, cost, oracle, order, self.ws_rows, self.ws_alpha,
                           self.ws_count, self.w, self.c_max, self.epsilon, self.inner, True)
            self.sweeps += 1
            if worst <= self.epsilon:
                break
            for _ in range(self.max_sweeps):
                order = self.rng.permutation(self.active)
                if _sweep(dense, indptr, indices, data, self.offsets, cost, oracle, order, self.ws_rows, self.ws_alpha,
                          self.ws_count, self.w, self.c_max, self.epsilon, self.inner, False) <= self.epsilon:
                    break
        return self.w.copy()

    def objective(self, oracle: np.ndarray, cost: np.ndarray, w: np.ndarray) -> float:
        """The primal objective ``λ/2||w||² + sum_i hinge_i`` for fixed oracles."""
        scores = self.features.scores(w)
        present = oracle >= 0
        worst = segment_max(cost + scores, self.offsets)
        loss = np.maximum(worst[present] - scores[oracle[present]], 0.0).sum()
        return float(0.5 * self.lam * dot(w, w) + loss)


def oracle_by_model_score(in_set: np.ndarray, scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(S,) the member of each sentence's oracle set with the highest model score (first on ties)."""
    return segment_argmax(np.where(in_set, scores, -np.inf), offsets)


class LatentSVM(SentenceMetricTuner, KBestTuner):
    """Latent structured SVM with an oracle set of maximal interpolated BLEU; Cherry & Foster (2012) §3.2."""

    name = "svm"
    defaults = {
        "l2": 1000.0,  # λ of Cherry & Foster's objective (4)
        "reselections": 10,
        "epsilon": 1e-3,  # cutting-plane tolerance, in 0-1 BLEU (SVM-struct's 0.1 on a 0-100 loss)
        "capacity": 64,  # working-set constraints kept per sentence
        "inner": 20,  # SMO pair updates per visit of a sentence
        "max_sweeps": 200,
        "sentence_bleu": "liang-interpolated",
    }

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        feats = Features(pool)
        offsets = pool.offsets
        bleu = sentence_bleu(pool, p["sentence_bleu"])
        best = segment_max(bleu, offsets)
        sizes = np.diff(offsets)
        cost = np.repeat(best, sizes) - bleu
        in_set = cost <= 0.0
        solver = StructuredHingeSolver(feats, offsets, float(p["l2"]), float(p["epsilon"]), int(p["capacity"]),
                                       int(p["inner"]), int(p["max_sweeps"]), self.rng())
        w = init.copy()
        history = []
        oracle = oracle_by_model_score(in_set, feats.scores(w), offsets)
        for it in range(int(p["reselections"])):
            w = solver.solve(oracle, cost)
            history.append(solver.objective(oracle, cost, w))
            self.report("reselection", it + 1, int(p["reselections"]), objective=history[-1])
            new_oracle = oracle_by_model_score(in_set, feats.scores(w), offsets)
            if np.array_equal(new_oracle, oracle):
                break
            oracle = new_oracle
        info = {
            "objective": history[-1] if history else None,
            "objective_per_selection": history,
            "sweeps": solver.sweeps,
            "constraints": int(solver.ws_count.sum()),
            "oracle_set_size_mean": float(in_set.sum() / max((sizes > 0).sum(), 1)),
            "train_bleu": 100 * pool_bleu(pool, w),
        }
        return TuneResult(w, info)
