"""What the group-A tuners optimise: per-hypothesis statistics and how a corpus scores them.

MERT (Och 2003) needs a *corpus* score computed from statistics summed over the chosen
hypotheses; PRO and batch MIRA need a *sentence-level* score per hypothesis. On a real pool both
come from the BLEU statistics rows of :mod:`smtlib.bleu.stats` (corpus BLEU without smoothing, as
Moses ``mert`` optimises; Moses's smoothed sentence BLEU for PRO; the pseudo-document BLEU for
batch MIRA). Hopkins & May (2011, §3) also tune against a *decomposable* gold function,
G(p) = sum_i g(i, p(i)), e.g. a gold linear model in their synthetic experiment (Figure 3).

:class:`CorpusMetric` covers both: a statistics matrix (N, W) and a compiled function scoring one
summed row. :func:`bleu_metric` is the real-BLEU path, :func:`additive_metric` the gold-function
adapter; the tuners take an optional metric and default to BLEU, so the BLEU path does not change
when the adapter is used. :func:`mixture_metric` is any metric of
:mod:`smtlib.bleu.metrics` or a weighted mixture of them (Moses's interpolated scorer): its
statistics are the parts' side by side and its corpus score the weighted sum of the parts' corpus
scores (BLEU unsmoothed, chrF and TER exactly as sacrebleu; TER with a negative weight).

A metric's ``kind`` is a *spec*, a float64 ``(M, 6)`` array with one row per part,
``[kind code, first column, end column, weight, parameter, length column]`` (the codes are
:mod:`smtlib.bleu.metrics`'s ``KIND_*``; the parameter is chrF's beta; the length column is the
part's reference length, which scales batch MIRA's pseudo-document gain). :data:`BLEU` and
:data:`ADDITIVE` are the specs of plain BLEU and of the additive gold score. The compiled
:func:`metric_from_sums` scores a summed row under a spec; MERT's line search and batch MIRA's
epochs take the spec as they took the kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numba
import numpy as np

from smtlib.bleu.metrics import KIND_ADDITIVE, KIND_BLEU, KIND_CHRF, KIND_TER, Mixture
from smtlib.bleu.stats import STATS_WIDTH

#: spec of corpus BLEU of summed statistics rows (see the module docstring)
BLEU = np.array([[KIND_BLEU, 0, STATS_WIDTH, 1.0, 0.0, 1]], dtype=np.float64)
#: spec of the sum of per-hypothesis gains
ADDITIVE = np.array([[KIND_ADDITIVE, 0, 1, 1.0, 0.0, 0]], dtype=np.float64)


@numba.njit(cache=True)
def bleu_none_from_sums(sums: np.ndarray) -> float:
    """Corpus BLEU (0-1) of one summed statistics row, no smoothing (Papineni et al. 2002).

    Equal to :func:`smtlib.bleu.corpus.bleu_from_stats` with ``smooth_method="none"`` and to
    Moses's ``BleuScorer::calculateScore``: 0 when some n-gram order has no match, else
    BP * exp(mean log p_n) with BP = exp(1 - r/c) for c < r.
    """
    log_p = 0.0
    for n in range(4):
        m = sums[2 + n]
        t = sums[6 + n]
        if m <= 0.0 or t <= 0.0:
            return 0.0
        log_p += np.log(m / t)
    log_p /= 4.0
    c = sums[0]
    r = sums[1]
    if c < r:
        if c <= 0.0:
            return 0.0
        log_p += 1.0 - r / c
    return np.exp(log_p)


@numba.njit(cache=True)
def additive_from_sums(sums: np.ndarray) -> float:
    """A decomposable gold score: the sum of per-hypothesis gains (Hopkins & May 2011, eq. 1)."""
    return sums[0]


@numba.njit(cache=True)
def chrf_from_sums(sums: np.ndarray, beta: float) -> float:
    """chrF (0-1) of one summed chrF statistics row (:func:`smtlib.bleu.chrf.chrf_from_rows`):
    precision and recall averaged over the orders with hypothesis and reference n-grams, then F-beta
    (Popović 2015; sacrebleu's ``_compute_f_score``)."""
    factor = beta * beta
    avg_prec = 0.0
    avg_rec = 0.0
    effective = 0
    for i in range(len(sums) // 3):
        n_hyp = sums[3 * i]
        n_ref = sums[3 * i + 1]
        if n_hyp > 0 and n_ref > 0:
            avg_prec += sums[3 * i + 2] / n_hyp
            avg_rec += sums[3 * i + 2] / n_ref
            effective += 1
    if effective == 0:
        return 0.0
    avg_prec /= effective
    avg_rec /= effective
    if avg_prec + avg_rec == 0:
        return 0.0
    return (1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec)


@numba.njit(cache=True)
def ter_from_sums(sums: np.ndarray) -> float:
    """TER (0-1, lower is better) of one summed ``[edits, reference length]`` row (sacrebleu's rule)."""
    if sums[1] > 0:
        return sums[0] / sums[1]
    return 1.0 if sums[0] > 0 else 0.0


@numba.njit(cache=True)
def metric_from_sums(sums: np.ndarray, spec: np.ndarray) -> float:
    """The score of one summed row under ``spec``: the weighted sum of its parts' corpus scores."""
    total = 0.0
    for p in range(spec.shape[0]):
        kind = int(spec[p, 0])
        part = sums[int(spec[p, 1]):int(spec[p, 2])]
        if kind == KIND_BLEU:
            value = bleu_none_from_sums(part)
        elif kind == KIND_ADDITIVE:
            value = part[0]
        elif kind == KIND_CHRF:
            value = chrf_from_sums(part, spec[p, 4])
        elif kind == KIND_TER:
            value = ter_from_sums(part)
        else:
            value = np.nan  # not a kind: a NaN score is never chosen
        total += spec[p, 3] * value
    return total


@numba.njit(cache=True)
def is_plain_bleu(spec: np.ndarray) -> bool:
    """True for the spec of BLEU alone with weight 1 (the kernels' own BLEU path)."""
    return spec.shape[0] == 1 and spec[0, 0] == KIND_BLEU and spec[0, 3] == 1.0


@numba.njit(cache=True)
def is_additive(spec: np.ndarray) -> bool:
    """True for the spec of the additive gold score."""
    return spec.shape[0] == 1 and spec[0, 0] == KIND_ADDITIVE


@dataclasses.dataclass(frozen=True)
class CorpusMetric:
    """Per-hypothesis statistics and the corpus score of their sum.

    Attributes
    ----------
    name
        ``bleu``, ``additive`` or the metric / mixture as given (``ter``, ``bleu:0.5,ter:-0.5``);
        written in the tuners' ``info``.
    kind
        The spec (:data:`BLEU`, :data:`ADDITIVE`, or a mixture's): which compiled score the line
        search uses.
    stats
        (N, W) float64, one row per pool hypothesis.
    score_sums
        A numba-compiled function: summed (W,) row -> corpus score (higher is better).
    sentence_scores
        (N,) sentence-level score of every hypothesis for the sentence-level tuners (PRO), or
        None when they compute it themselves from BLEU statistics.
    """

    name: str
    kind: np.ndarray
    stats: np.ndarray
    score_sums: Callable
    sentence_scores: np.ndarray | None = None

    def corpus_score(self, rows: np.ndarray) -> float:
        """Score of the hypotheses ``rows`` (one per sentence; -1 entries are skipped)."""
        rows = np.asarray(rows)
        rows = rows[rows >= 0]
        return float(self.score_sums(self.stats[rows].sum(axis=0) if len(rows) else np.zeros(self.stats.shape[1])))


def bleu_metric(stats: np.ndarray) -> CorpusMetric:
    """Corpus BLEU without smoothing over a pool's BLEU statistics (the default of every tuner)."""
    stats = np.ascontiguousarray(stats, dtype=np.float64)
    if stats.ndim != 2 or stats.shape[1] != STATS_WIDTH:
        raise ValueError(f"BLEU statistics must have shape (N, {STATS_WIDTH}), got {stats.shape}")
    return CorpusMetric("bleu", BLEU, stats, bleu_none_from_sums)


def additive_metric(gains: np.ndarray) -> CorpusMetric:
    """A decomposable metric: hypothesis j scores ``gains[j]`` and a corpus the sum of its choices.

    This is Hopkins & May's (2011, §3) gold function G(p) = sum_i g(i, p(i)); both the corpus
    score (MERT) and the sentence-level score (PRO, batch MIRA) are the gain itself.
    """
    gains = np.ascontiguousarray(gains, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(gains)):
        raise ValueError("gains must be finite")
    return CorpusMetric("additive", ADDITIVE, gains[:, None].copy(), additive_from_sums, sentence_scores=gains)


def mixture_metric(mixture: Mixture, stats: np.ndarray, bleu_sentence: Callable | None = None) -> CorpusMetric:
    """A metric or mixture of :mod:`smtlib.bleu.metrics` over its statistics (``mixture.stats``).

    The corpus score is :func:`metric_from_sums` (BLEU unsmoothed, as Moses ``mert`` optimises it;
    chrF and TER exactly as sacrebleu). ``sentence_scores`` is the weighted sum of the parts'
    sentence-level scores: sacrebleu's sentence chrF and TER, and for BLEU ``bleu_sentence(stats)``
    (the tuner's own sentence BLEU, e.g. PRO's ``moses-smoothed``), sacrebleu's ``sentence_bleu``
    when None.
    """
    stats = np.ascontiguousarray(stats, dtype=np.float64)
    spec = mixture.spec()
    if stats.ndim != 2 or stats.shape[1] != int(spec[-1, 2]):
        raise ValueError(f"{mixture.text} statistics must have shape (N, {int(spec[-1, 2])}), got {stats.shape}")
    sentence = np.zeros(len(stats))
    for (metric, weight), part in zip(mixture.parts, mixture.split(stats), strict=True):
        scores = bleu_sentence(part) if metric.name == "bleu" and bleu_sentence is not None else None
        sentence += weight * (metric.sentence(part) if scores is None else scores)

    def score_sums(sums: np.ndarray) -> float:
        return metric_from_sums(np.ascontiguousarray(sums, dtype=np.float64), spec)

    return CorpusMetric(mixture.text, spec, stats, score_sums, sentence_scores=sentence)
