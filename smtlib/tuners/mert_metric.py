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
when the adapter is used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numba
import numpy as np

from smtlib.bleu.stats import STATS_WIDTH

BLEU = 0  #: metric kind: corpus BLEU of summed statistics rows
ADDITIVE = 1  #: metric kind: sum of per-hypothesis gains


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


@dataclasses.dataclass(frozen=True)
class CorpusMetric:
    """Per-hypothesis statistics and the corpus score of their sum.

    Attributes
    ----------
    name
        ``bleu`` or ``additive``; written in the tuners' ``info``.
    kind
        :data:`BLEU` or :data:`ADDITIVE`: which compiled score the line search uses.
    stats
        (N, W) float64, one row per pool hypothesis.
    score_sums
        A numba-compiled function: summed (W,) row -> corpus score (higher is better).
    sentence_scores
        (N,) sentence-level score of every hypothesis for the sentence-level tuners (PRO), or
        None when they compute it themselves from BLEU statistics.
    """

    name: str
    kind: int
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
