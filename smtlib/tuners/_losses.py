"""Shared pieces of the group-B tuners (MR, latent SVM, c-MIRA, softmax, perceptron, AROW, linreg, xBLEU).

* :class:`Features`: the pool's dense block and sparse CSR block side by side, never joined, so
  that memory stays proportional to the non-zeros; matrix-vector products in both directions, and
  the raw arrays for the numba kernels below.
* numba kernels on single rows (``row_dot``, ``add_row``, ``row_diff_sq``) used by the online
  tuners, which visit one sentence at a time.
* sentence-level BLEU of every hypothesis, oracle sets (ties kept), per-sentence argmax with ties
  to the first row, the 1-best corpus BLEU of a weight vector.
* :class:`SentenceMetricTuner`: tuning toward another metric or a mixture. Inside its
  ``fit_metric``, :func:`sentence_bleu` gives the metric's sentence-level scores (the BLEU part of a
  mixture with the tuner's own sentence-BLEU variant) and :func:`pool_bleu` the metric's corpus
  score of the 1-best, so a tuner that reads its gold scores through these two is unchanged
  otherwise.

Everything here is deterministic; the random ones take a ``numpy.random.Generator``.
"""

from __future__ import annotations

import contextvars

import numba
import numpy as np
import scipy.sparse as sp

from smtlib._dot import matvec, rmatvec
from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.variants import get_variant
from smtlib.kbest.pool import KBestPool
from smtlib.tuners.base import TuneResult

#: the metric a :class:`SentenceMetricTuner` is tuning toward (a CorpusMetric), None for BLEU
_METRIC: contextvars.ContextVar = contextvars.ContextVar("smtlib_tuning_metric", default=None)


class Features:
    """The features of a pool as a dense ``(N, D)`` block and a sorted CSR ``(N, F)`` block.

    Weight vectors have ``D + F`` entries in ``pool.feature_names`` order. The pool is not
    modified: a CSR block with unsorted indices is copied before sorting.
    """

    def __init__(self, pool: KBestPool) -> None:
        self.dense = np.ascontiguousarray(pool.dense, dtype=np.float64)
        sparse = pool.sparse
        if not isinstance(sparse, sp.csr_matrix) or sparse.dtype != np.float64:
            sparse = sp.csr_matrix(sparse, dtype=np.float64)
        if not sparse.has_sorted_indices:
            sparse = sparse.copy()
            sparse.sort_indices()
        self.sparse = sparse
        self.n_rows = self.dense.shape[0]
        self.n_dense = self.dense.shape[1]
        self.n_sparse = sparse.shape[1]
        self.dim = self.n_dense + self.n_sparse
        # numba wants concrete arrays; these are views of the CSR arrays, not copies
        self.indptr = sparse.indptr
        self.indices = sparse.indices
        self.data = sparse.data

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(dense, indptr, indices, data)`` for the numba row kernels."""
        return self.dense, self.indptr, self.indices, self.data

    def scores(self, w: np.ndarray) -> np.ndarray:
        """(N,) model scores ``h(e) · w``."""
        out = matvec(self.dense, w[: self.n_dense])
        if self.n_sparse:
            out = out + self.sparse @ w[self.n_dense :]
        return out

    def rmatvec(self, u: np.ndarray) -> np.ndarray:
        """(D+F,) ``sum_e u(e) h(e)``, i.e. ``X^T u``."""
        out = np.empty(self.dim)
        out[: self.n_dense] = rmatvec(self.dense, u)
        if self.n_sparse:
            out[self.n_dense :] = self.sparse.T @ u
        return out

    def row_sum(self, rows: np.ndarray, coef: np.ndarray | float = 1.0) -> np.ndarray:
        """(D+F,) ``sum_k coef_k h(rows_k)`` touching only the selected rows."""
        rows = np.asarray(rows, dtype=np.int64)
        coef = np.broadcast_to(np.asarray(coef, dtype=np.float64), rows.shape)
        out = np.zeros(self.dim)
        if len(rows) == 0:
            return out
        out[: self.n_dense] = rmatvec(self.dense[rows], coef)
        if self.n_sparse:
            out[self.n_dense :] = self.sparse[rows].T @ coef
        return out

    def sq_norms(self) -> np.ndarray:
        """(N,) squared Euclidean norm of every row."""
        out = matvec(self.dense * self.dense, np.ones(self.n_dense))
        if self.n_sparse:
            out = out + np.asarray(self.sparse.multiply(self.sparse).sum(axis=1)).ravel()
        return out


# -- numba row kernels ------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def row_dot(dense, indptr, indices, data, r, w):
    """h(r) · w for row ``r`` (dense block then sparse block)."""
    d = dense.shape[1]
    total = 0.0
    for j in range(d):
        total += dense[r, j] * w[j]
    for k in range(indptr[r], indptr[r + 1]):
        total += data[k] * w[d + indices[k]]
    return total


@numba.njit(cache=True, nogil=True)
def add_row(dense, indptr, indices, data, r, scale, w):
    """w += scale * h(r), in place."""
    d = dense.shape[1]
    for j in range(d):
        w[j] += scale * dense[r, j]
    for k in range(indptr[r], indptr[r + 1]):
        w[d + indices[k]] += scale * data[k]


@numba.njit(cache=True, nogil=True)
def row_diff_sq(dense, indptr, indices, data, a, b):
    """||h(a) - h(b)||² (sparse indices sorted within each row)."""
    d = dense.shape[1]
    total = 0.0
    for j in range(d):
        x = dense[a, j] - dense[b, j]
        total += x * x
    ka, ea = indptr[a], indptr[a + 1]
    kb, eb = indptr[b], indptr[b + 1]
    while ka < ea or kb < eb:
        if kb >= eb or (ka < ea and indices[ka] < indices[kb]):
            total += data[ka] * data[ka]
            ka += 1
        elif ka >= ea or indices[kb] < indices[ka]:
            total += data[kb] * data[kb]
            kb += 1
        else:
            x = data[ka] - data[kb]
            total += x * x
            ka += 1
            kb += 1
    return total


@numba.njit(cache=True, nogil=True)
def segment_argmax(values, offsets):
    """(S,) first row of the maximum of ``values`` in each sentence range, -1 when empty."""
    n_sent = offsets.shape[0] - 1
    out = np.full(n_sent, -1, dtype=np.int64)
    for s in range(n_sent):
        best = -np.inf
        for r in range(offsets[s], offsets[s + 1]):
            if values[r] > best or out[s] < 0:
                best = values[r]
                out[s] = r
    return out


# -- BLEU helpers ---------------------------------------------------------------------------------
def sentence_bleu(pool: KBestPool, variant: str = "bleu+1") -> np.ndarray:
    """(N,) sentence-level BLEU (0-1) of every hypothesis with a named variant; inside
    :meth:`SentenceMetricTuner.fit_metric`, the sentence scores of the metric tuned toward."""
    metric = _METRIC.get()
    scores = get_variant(variant).score(pool.stats) if metric is None else metric.sentence_scores
    # the variants score an empty hypothesis 0; guard anyway, since every tuner needs finite costs
    return np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)


def segment_max(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(S,) maximum of ``values`` per sentence (-inf for an empty sentence)."""
    sizes = np.diff(offsets)
    out = np.full(len(sizes), -np.inf)
    nonempty = sizes > 0
    if nonempty.any():
        out[nonempty] = np.maximum.reduceat(values, offsets[:-1][nonempty])
    return out


def oracle_mask(bleu: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(N,) True for the hypotheses of maximal sentence BLEU in their sentence (ties: all of them)."""
    best = segment_max(bleu, offsets)
    return bleu >= np.repeat(best, np.diff(offsets))


def pool_bleu(pool: KBestPool, weights: np.ndarray, scores: np.ndarray | None = None) -> float:
    """Corpus BLEU (0-1, sacrebleu's default smoothing as ``smtlib tune`` reports) of the 1-best;
    inside :meth:`SentenceMetricTuner.fit_metric`, the corpus score of the metric tuned toward."""
    if scores is None:
        scores = pool.model_scores(weights)
    best = segment_argmax(np.asarray(scores, dtype=np.float64), pool.offsets)
    best = best[best >= 0]
    metric = _METRIC.get()
    if metric is not None:
        return metric.corpus_score(best)
    if len(best) == 0:
        return 0.0
    return corpus_bleu_from_stats(pool.stats[best])


def tuning_metric():
    """The metric a :class:`SentenceMetricTuner` is tuning toward (None: BLEU)."""
    return _METRIC.get()


class SentenceMetricTuner:
    """Mixin of the tuners whose gold scores are a sentence-level BLEU variant (``sentence_bleu``
    parameter) read through :func:`sentence_bleu` / :func:`pool_bleu`: they tune toward any metric
    or mixture of :mod:`smtlib.bleu.metrics` by its sentence-level form.

    The BLEU part of a mixture keeps the tuner's own variant. The training score in ``info`` is
    then ``train_metric`` (the metric's corpus score, percent) instead of ``train_bleu``.
    """

    def bleu_sentence(self, stats: np.ndarray) -> np.ndarray:
        return get_variant(self.params["sentence_bleu"]).score(stats)  # type: ignore[attr-defined]

    def fit_metric(self, pool: KBestPool, init: np.ndarray, metric) -> TuneResult:
        """:meth:`fit` with ``metric``'s sentence and corpus scores in place of BLEU's."""
        token = _METRIC.set(metric)
        try:
            result = self.fit(pool, init)  # type: ignore[attr-defined]
        finally:
            _METRIC.reset(token)
        if "train_bleu" in result.info:
            result.info["train_metric"] = result.info.pop("train_bleu")
        result.info["metric"] = metric.name
        return result
