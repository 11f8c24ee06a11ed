"""Oracle selection: the hypotheses of a k-best pool with (approximately) the highest corpus BLEU.

Corpus BLEU does not decompose over sentences, so the exact oracle is intractable in general; we
use the usual greedy coordinate ascent (as in Moses's and cdec's oracle tools): start from the
best hypothesis per sentence by sentence-level BLEU+1, then repeatedly replace each sentence's
choice by the one that maximises corpus BLEU with the others fixed, until no change.
:func:`metric_oracle_indices` does the same for chrF, chrF++ and TER, from their
sentence scores.
"""

from __future__ import annotations

import numpy as np

from smtlib.bleu.corpus import bleu_from_stats
from smtlib.bleu.variants import get_variant
from smtlib.kbest.pool import argmax_per_sentence


def _greedy_corpus_ascent(choice: np.ndarray, stats: np.ndarray, offsets: np.ndarray, corpus_scores,
                          max_passes: int) -> np.ndarray:
    """From ``choice`` (a row per sentence, -1 for none), change one sentence's choice at a time to the
    row that most raises the corpus score of the summed statistics (``corpus_scores``: rows of summed
    statistics -> their scores, higher better), for at most ``max_passes`` passes."""
    present = choice >= 0
    if not present.any():
        return choice
    total = stats[choice[present]].sum(axis=0)
    for _ in range(max_passes):
        changed = False
        for s in np.flatnonzero(present):
            lo, hi = offsets[s], offsets[s + 1]
            if hi - lo < 2:
                continue
            base = total - stats[choice[s]]
            scores = corpus_scores(base[None, :] + stats[lo:hi])  # the corpus score of each choice
            best = lo + int(np.argmax(scores))
            if best != choice[s] and scores[best - lo] > scores[choice[s] - lo]:
                choice[s] = best
                total = base + stats[best]
                changed = True
        if not changed:
            break
    return choice


def oracle_indices(stats: np.ndarray, offsets: np.ndarray, max_passes: int = 5) -> np.ndarray:
    """(S,) row of the oracle hypothesis of each sentence (-1 for a sentence without any)."""
    choice = argmax_per_sentence(get_variant("bleu+1").score(stats), offsets)

    def corpus_bleu(rows):
        return np.array([bleu_from_stats(row, smooth_method="none") for row in rows])

    return _greedy_corpus_ascent(choice, stats, offsets, corpus_bleu, max_passes)


def metric_oracle_indices(metric, stats: np.ndarray, offsets: np.ndarray, max_passes: int = 5) -> np.ndarray:
    """:func:`oracle_indices` for a metric of :mod:`smtlib.bleu.metrics` (higher chrF, lower TER):
    start from the best sentence score, then the same greedy corpus ascent on summed statistics."""
    sign = 1.0 if metric.higher_is_better else -1.0
    choice = argmax_per_sentence(sign * metric.sentence(stats), offsets)
    return _greedy_corpus_ascent(choice, stats, offsets, lambda rows: sign * metric.sentence(rows), max_passes)
