"""Linear regression of the model score on sentence BLEU (Neubig & Watanabe 2016, §3.6, §5.4).

The mean-squared-error loss asks the model score of every hypothesis to predict its negative
error, here sentence BLEU (``bleu+1``; ``-err = BLEU - 1`` differs by a constant):

    minimize  sum_i sum_{e ∈ c(i)} ( (w·h(e) - mean_i w·h) - (BLEU(e) - mean_i BLEU) )²  +  λ ||w||²

Scores are centred within each sentence (``center=true``, default): a linear model cannot give
each sentence its own offset, and only the ranking within a sentence matters. With centring the
loss equals, up to a factor ``k_i`` per sentence, the all-pairs regression on score and BLEU
differences of Bazrafshan, Chung & Gildea (2012, "Tuning as linear regression"), which the survey
cites for this loss. Solved exactly ("standard techniques for least-squared-error linear
regression", survey §5.4): for a dense-only pool by the normal equations
``(XᵀPX + λI) w = XᵀPy`` (P the per-sentence centring projector, applied through per-sentence
means, never as a matrix); with sparse features by LSQR (Paige & Saunders 1982) on the operator
``x -> P X x`` with damping ``sqrt(λ)``, so memory stays proportional to the non-zeros.
The initial weights are not used (the problem is convex with a unique minimiser). λ = 1 is ours.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from smtlib.bleu.expected import segment_sum
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, SentenceMetricTuner, pool_bleu, sentence_bleu
from smtlib.tuners.base import KBestTuner, TuneResult


def _centre(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    sizes = np.diff(offsets)
    means = segment_sum(values, offsets) / np.maximum(sizes, 1).reshape((-1,) + (1,) * (values.ndim - 1))
    return values - np.repeat(means, sizes, axis=0)


class LinearRegression(SentenceMetricTuner, KBestTuner):
    """Least-squares regression of (sentence-centred) model scores on sentence BLEU; Neubig & Watanabe (2016) §3.6."""

    name = "linreg"
    defaults = {"l2": 1.0, "center": True, "max_iterations": 1000, "tol": 1e-10, "sentence_bleu": "bleu+1"}

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        lam = float(p["l2"])
        if lam < 0:
            raise InputError(f"{self.name}: l2 must be >= 0")
        feats = Features(pool)
        offsets = pool.offsets if p["center"] else np.array([0, pool.n_hypotheses], dtype=np.int64)
        target = _centre(sentence_bleu(pool, p["sentence_bleu"]), offsets) if p["center"] else sentence_bleu(pool, p["sentence_bleu"])
        info: dict = {}
        if feats.n_sparse == 0:
            x = _centre(feats.dense, offsets) if p["center"] else feats.dense
            gram = x.T @ x + lam * np.eye(feats.n_dense)
            rhs = x.T @ target
            w = scipy.linalg.solve(gram, rhs, assume_a="sym") if lam > 0 else np.linalg.lstsq(gram, rhs, rcond=None)[0]
            info["solver"] = "normal equations"
        else:
            def matvec(v: np.ndarray) -> np.ndarray:
                v = np.ravel(v)
                scores = feats.scores(v)
                return _centre(scores, offsets) if p["center"] else scores

            def rmatvec(u: np.ndarray) -> np.ndarray:
                u = np.ravel(u)
                return feats.rmatvec(_centre(u, offsets) if p["center"] else u)

            op = scipy.sparse.linalg.LinearOperator((feats.n_rows, feats.dim), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)
            out = scipy.sparse.linalg.lsqr(op, target, damp=np.sqrt(lam), atol=p["tol"], btol=p["tol"], iter_lim=int(p["max_iterations"]))
            w = out[0]
            info.update(solver="lsqr", lsqr_stop=int(out[1]), iterations=int(out[2]))
        w = np.asarray(w, dtype=np.float64)
        residual = (_centre(feats.scores(w), offsets) if p["center"] else feats.scores(w)) - target
        info.update(mse=float(residual @ residual) / max(feats.n_rows, 1), train_bleu=100 * pool_bleu(pool, w))
        return TuneResult(w, info)
