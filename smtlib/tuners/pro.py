"""Pairwise ranking optimisation (``smtlib tune pro``): Hopkins & May (2011), §4 and §5.4.3.

1. **Sampler** (H&M Figure 4, §4.2): for every sentence draw Γ = 5000 hypothesis pairs (j, j')
   uniformly with replacement; accept a pair with probability α(|g(j) - g(j')|), the step function
   α(n) = 0 for n < 0.05 and 1 otherwise; keep the Ξ = 50 accepted pairs with the largest
   differential (ties by drawing order). g is Moses PRO's sentence BLEU, ``moses-smoothed``
   (add-one on every n-gram order; ``bp_smooth=True`` adds Nakov et al.'s (2012) brevity-penalty
   smoothing, Moses ``pro --smooth-brevity-penalty``). Moses accepts the same |diff| >= 0.05, but
   keeps "the Ξ largest" differently: the first Ξ draws (in drawing order) whose differential is
   within 1e-5 of the Ξ-th largest or above it, which under ties can keep a tied draw instead of a
   larger one drawn later; ``moses_ties=True`` reproduces that rule for comparisons with Moses.
2. **Classifier** (§4.1): each kept pair gives the difference vector x = h(better) - h(worse) with
   label +1 and -x with label -1 (both signs, "to ensure balance"); a logistic-regression
   (maximum-entropy) classifier without bias is trained on them, as MegaM in Moses (and Cherry &
   Foster 2012, §4: "MegaM with a maximum of 30 iterations ... the early stopping provides a form
   of regularization"): L-BFGS from w = 0 for at most ``max_iter`` = 30 iterations, with MegaM's
   Gaussian prior: MegaM's ``-lambda`` is the prior's precision, default 1, and Moses's
   ``mert-moses.pl`` runs ``megam -fvals -maxi 30 -nobias binary`` without changing it, so the
   objective is the logistic loss plus ``l2``/2 ||w||^2 with ``l2`` = 1. The loss over both signs
   is exactly twice the one-sided logistic loss, 2 sum log(1 + exp(-w·x)) (Cherry & Foster 2012,
   footnote 2), as MegaM sees both lines of every pair. Cherry & Foster's Chinese-English setting
   (their Table 6) is ``max_iter=100, gamma=50``: the workflow's ``pair_method_settings``.
3. **Interpolation** (§5.4.3): w = Ψ w_new + (1 - Ψ) w_old. Hopkins & May use Ψ = 0.1 (with up to 30
   iterations and k = 1500); Cherry & Foster run PRO "as is done in Moses", and Moses's
   ``mert-moses.pl`` does not interpolate unless asked (``--historic-interpolation``, default 0).
   Our default is Moses's, Ψ = 1 (no interpolation); ``--set psi=0.1`` is Hopkins & May's. Measured
   on Multi30k fr-en Medium (``smtlib/tuners/README.md``): from the workflow's initial weights
   Ψ = 0.1 is still climbing at iteration 15 of the outer loop, 0.4 dev BLEU and 0.7 test BLEU below
   Ψ = 1, which reaches its level at iteration 2. The classifier's scale is
   arbitrary (it depends on separability and on the iteration cap) while w_old has the scale of the
   previous step, so w_new is first rescaled to the L1 norm of w_old, which makes Ψ the share of
   the new direction in a vector of unchanged norm. With all-zero w_old the classifier's weights
   are returned divided by their L1 norm. Ψ = 1 returns the (rescaled) classifier weights.

Sparse features: the difference vectors are built from the pool's dense rows and CSR rows of the
sampled hypotheses only (memory proportional to their non-zeros); the classifier works on the
dense block and a CSR block without densifying.

``samples_out`` writes the sampled pairs in Moses ``pro``'s format (``1 F0 v F3 v ...`` then the
negated ``0`` line; dense features as ``F<index>``, sparse ones by name), for comparison with
Moses's expected samples; :func:`sample_pairs` is the sampler alone.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import scipy.optimize
import scipy.sparse as sp
from scipy.special import expit

from smtlib._dot import dot, matvec, rmatvec
from smtlib.bleu.variants import get_variant
from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.kbest.pool import KBestPool
from smtlib.tuners.base import KBestTuner, TuneResult
from smtlib.tuners.corpus_metric import CorpusMetric, bleu_metric

_CHUNK = 256  # sentences per block of random draws (fixed, so samples do not depend on memory)


@numba.njit(cache=True)
def _select(sentences, offsets, first, second, scores, gamma, xi, min_diff, moses_ties, out_better, out_worse, out_diff, out_sent, count):
    """Keep, per sentence, the ``xi`` accepted draws with the largest |score difference|.

    ``first``/``second`` hold ``gamma`` local indices per sentence of ``sentences``, in order.
    Ties are broken by drawing order (stable sort). With ``moses_ties`` the rule of Moses ``pro``
    is used instead: t = the xi-th largest difference minus 1e-5, then the first xi draws (in
    drawing order) with a difference >= t, which can prefer draws tied near t over larger ones
    drawn later. Returns the new ``count``.
    """
    diffs = np.empty(gamma)
    keep = np.empty(gamma, dtype=np.int64)
    for i in range(len(sentences)):
        s = sentences[i]
        lo = offsets[s]
        m = 0
        for q in range(gamma):
            a = lo + first[i * gamma + q]
            b = lo + second[i * gamma + q]
            d = abs(scores[a] - scores[b])
            if d >= min_diff and d > 0.0:
                diffs[m] = -d
                keep[m] = q
                m += 1
        ranked = np.argsort(diffs[:m], kind="mergesort")
        if moses_ties and m > xi:
            threshold = -diffs[ranked[xi - 1]] - 1e-5
            taken = 0
            for r in range(m):
                if taken < xi and -diffs[r] >= threshold:
                    ranked[taken] = r
                    taken += 1
        for r in range(min(xi, m)):
            q = keep[ranked[r]]
            a = lo + first[i * gamma + q]
            b = lo + second[i * gamma + q]
            if scores[a] >= scores[b]:
                out_better[count] = a
                out_worse[count] = b
            else:
                out_better[count] = b
                out_worse[count] = a
            out_diff[count] = -diffs[ranked[r]]
            out_sent[count] = s
            count += 1
    return count


def sample_pairs(
    offsets: np.ndarray,
    scores: np.ndarray,
    rng: np.random.Generator,
    gamma: int = 5000,
    xi: int = 50,
    min_diff: float = 0.05,
    moses_ties: bool = False,
) -> dict[str, np.ndarray]:
    """Hopkins & May's (2011, Figure 4) sampler over a pool.

    Parameters
    ----------
    offsets
        (S+1,) sentence row ranges.
    scores
        (N,) sentence-level gold score g of every hypothesis.
    rng
        The random generator (pairs are drawn sentence by sentence in blocks of fixed size).
    gamma, xi, min_diff
        Γ draws per sentence, Ξ pairs kept, and the step α (accept when |Δg| >= min_diff).
    moses_ties
        Select as Moses ``pro`` does (see :func:`_select`) instead of exactly the Ξ largest.

    Returns
    -------
    dict with ``better``, ``worse`` (rows), ``diff`` (|Δg| > 0) and ``sentence``, ordered by
    sentence, then by decreasing differential (drawing order with ``moses_ties``).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    sizes = np.diff(offsets)
    eligible = np.flatnonzero(sizes >= 2)  # one hypothesis: every pair is (j, j) with Δg = 0
    capacity = len(eligible) * min(xi, gamma)
    better = np.empty(capacity, dtype=np.int64)
    worse = np.empty(capacity, dtype=np.int64)
    diff = np.empty(capacity, dtype=np.float64)
    sentence = np.empty(capacity, dtype=np.int64)
    count = 0
    for start in range(0, len(eligible), _CHUNK):
        block = eligible[start : start + _CHUNK]
        highs = np.repeat(sizes[block], gamma)
        first = rng.integers(0, highs)
        second = rng.integers(0, highs)
        count = _select(
            block, offsets, first, second, scores, gamma, xi, float(min_diff), bool(moses_ties), better, worse, diff, sentence, count
        )
    return {"better": better[:count], "worse": worse[:count], "diff": diff[:count], "sentence": sentence[:count]}


def _logistic_fit(dense_x: np.ndarray, sparse_x: sp.csr_matrix, l2: float, max_iter: int,
                  callback: Callable[[Any], None] | None = None) -> tuple[np.ndarray, dict]:
    """Logistic regression without bias on rows x (label +1) and -x (label -1), L-BFGS from 0.

    Objective: 2 sum_i log(1 + exp(-w·x_i)) + l2/2 ||w||^2 (the two labelled copies of a pair
    contribute equally). Returns the weights over [dense columns, sparse columns]. ``callback``
    (progress lines) is passed to ``scipy.optimize.minimize``.
    """
    n_dense = dense_x.shape[1]
    n_sparse = sparse_x.shape[1]
    sparse_t = sparse_x.T.tocsr() if n_sparse else None

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        margin = matvec(dense_x, w[:n_dense])
        if n_sparse:
            margin = margin + sparse_x @ w[n_dense:]
        loss = 2.0 * float(np.logaddexp(0.0, -margin).sum()) + 0.5 * l2 * dot(w, w)
        coef = -2.0 * expit(-margin)  # d loss / d margin
        grad = np.empty_like(w)
        grad[:n_dense] = rmatvec(dense_x, coef)
        if n_sparse:
            grad[n_dense:] = sparse_t @ coef
        grad += l2 * w
        return loss, grad

    w0 = np.zeros(n_dense + n_sparse)
    result = scipy.optimize.minimize(objective, w0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter},
                                     callback=callback)
    return result.x, {"classifier_loss": float(result.fun), "classifier_iterations": int(result.nit)}


class Pro(KBestTuner):
    """PRO, Hopkins & May (2011): Γ=5000 sampled pairs, Ξ=50 kept, maxent classifier; no interpolation (Moses)."""

    name = "pro"
    defaults = {
        "gamma": 5000,  # Γ: pairs drawn per sentence (§4.2)
        "xi": 50,  # Ξ: pairs kept per sentence (§4.2)
        "min_diff": 0.05,  # α: accept a pair when its sentence-BLEU differential is >= this (§4.2)
        "smoothing": 1.0,  # add-k of Moses's smoothed sentence BLEU (moses-smoothed)
        "bp_smooth": False,  # Nakov et al. (2012) brevity-penalty smoothing
        "max_iter": 30,  # classifier iterations (MegaM -maxi 30 in Moses; Cherry & Foster §4)
        "l2": 1.0,  # L2 penalty: the precision of MegaM's Gaussian prior (-lambda, default 1, kept by Moses)
        "psi": 1.0,  # Ψ: w = Ψ w_new + (1 - Ψ) w_old; 1 = Moses's default (off), 0.1 = H&M §5.4.3
        "samples_out": "",  # write the sampled pairs here in Moses pro's format
        "moses_ties": False,  # select the Ξ pairs as Moses pro does (threshold, then drawing order)
    }

    def _check(self) -> None:
        p = self.params
        if p["gamma"] < 1 or p["xi"] < 1:
            raise InputError("pro: gamma and xi must be at least 1")
        if p["min_diff"] < 0 or p["l2"] < 0 or p["smoothing"] < 0:
            raise InputError("pro: min_diff, l2 and smoothing must be >= 0")
        if p["max_iter"] < 1:
            raise InputError("pro: max_iter must be at least 1")
        if not 0 < p["psi"] <= 1:
            raise InputError("pro: psi must be in (0, 1]")

    def sentence_scores(self, pool: KBestPool) -> np.ndarray:
        """Moses PRO's sentence BLEU of every hypothesis (``moses-smoothed``)."""
        return self.bleu_sentence(pool.stats)

    def bleu_sentence(self, stats: np.ndarray) -> np.ndarray:
        """Moses PRO's sentence BLEU (``moses-smoothed``) of BLEU statistics rows; also the BLEU part
        of a metric mixture's sentence scores (``--metric``)."""
        variant = get_variant("moses-smoothed", smoothing=float(self.params["smoothing"]), bp_smooth=bool(self.params["bp_smooth"]))
        return variant.score(stats)

    def sample(self, pool: KBestPool, metric: CorpusMetric | None = None) -> dict[str, np.ndarray]:
        """The sampler alone (same draws as :meth:`fit` with the same seed)."""
        self._check()
        scores = metric.sentence_scores if metric is not None and metric.sentence_scores is not None else self.sentence_scores(pool)
        p = self.params
        return sample_pairs(pool.offsets, scores, self.rng(), p["gamma"], p["xi"], p["min_diff"], p["moses_ties"])

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        """Sample, classify and interpolate (see the module docstring)."""
        return self.fit_metric(pool, init, bleu_metric(pool.stats))

    def fit_metric(self, pool: KBestPool, init: np.ndarray, metric: CorpusMetric) -> TuneResult:
        """PRO with ``metric``'s sentence-level scores as g when it has them, else sentence BLEU."""
        p = self.params
        pairs = self.sample(pool, metric)
        init = np.asarray(init, dtype=np.float64)
        info: dict = {"metric": metric.name, "pairs": int(len(pairs["better"]))}
        if p["samples_out"]:
            write_samples(p["samples_out"], pool, pairs)
        if len(pairs["better"]) == 0:
            warnings.warn("pro: no pair has a sentence-BLEU differential >= min_diff; keeping the initial weights", stacklevel=3)
            return TuneResult(init.copy(), {**info, "fallback": "no pairs"})
        dense_x = pool.dense[pairs["better"]] - pool.dense[pairs["worse"]]
        sparse_x = (pool.sparse[pairs["better"]] - pool.sparse[pairs["worse"]]).tocsr() if pool.has_sparse() else sp.csr_matrix((len(dense_x), 0))
        new, fit_info = _logistic_fit(dense_x, sparse_x, float(p["l2"]), int(p["max_iter"]),
                                      callback=self.lbfgs_callback(int(p["max_iter"])))
        info.update(fit_info)
        new_norm = float(np.abs(new).sum())
        if not new_norm > 0:
            warnings.warn("pro: the classifier returned all-zero weights; keeping the initial weights", stacklevel=3)
            return TuneResult(init.copy(), {**info, "fallback": "all-zero classifier"})
        old_norm = float(np.abs(init).sum())
        if old_norm > 0:
            scaled = new * (old_norm / new_norm)
            weights = p["psi"] * scaled + (1.0 - p["psi"]) * init
        else:
            weights = new / new_norm
        info["classifier_l1"] = new_norm
        return TuneResult(weights, info)


def write_samples(path: str, pool: KBestPool, pairs: dict[str, np.ndarray]) -> None:
    """Write pairs as Moses ``pro`` does: ``1`` + h(better) - h(worse), then ``0`` + the negation.

    Dense features are ``F<column>``, sparse features keep their names; zero differences are left
    out. Values are written with 6 significant digits, as Moses's default stream precision.
    """
    names = [f"F{j}" for j in range(pool.dense.shape[1])] + list(pool.sparse_names)
    with atomic_output(path) as out:
        n_dense = pool.dense.shape[1]
        for b, w in zip(pairs["better"], pairs["worse"], strict=True):
            dense = pool.dense[b] - pool.dense[w]
            columns = list(np.flatnonzero(dense))
            values = list(dense[columns])
            if pool.has_sparse():
                row = (pool.sparse[b] - pool.sparse[w]).tocsr()
                row.sum_duplicates()
                keep = row.data != 0
                columns += list(n_dense + row.indices[keep])
                values += list(row.data[keep])
            out.write("1" + "".join(f" {names[j]} {v:.6g}" for j, v in zip(columns, values, strict=True)) + "\n")
            out.write("0" + "".join(f" {names[j]} {-v:.6g}" for j, v in zip(columns, values, strict=True)) + "\n")
