"""Expected BLEU statistics over a k-best distribution (minimum risk, xBLEU).

With p(e|f) proportional to exp(scale * w·h(e)) over each sentence's hypotheses, the expected
statistics row of a sentence is sum_e p(e|f) stats(e): ``segment_sum(probs[:, None] * stats, offsets)``
with ``probs = segment_softmax(scale * scores, offsets)``. Summed over sentences and scored with
:func:`smtlib.bleu.corpus.log_bleu_and_gradient` this is the xBLEU objective of Rosti et al. (2010)
and Neubig & Watanabe (2016, §5.3 and Appendix A); averaged sentence-level expected BLEU is the
minimum-risk objective of Smith & Eisner (2006) as used by Cherry & Foster (2012, §2.4).
"""

from __future__ import annotations

import numpy as np


def segment_softmax(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(N,) softmax of ``scores`` within each ``offsets`` range (stable; empty ranges allowed)."""
    scores = np.asarray(scores, dtype=np.float64)
    sizes = np.diff(offsets)
    nonempty = sizes > 0
    maxima = np.zeros(len(sizes))
    if nonempty.any():
        maxima[nonempty] = np.maximum.reduceat(scores, offsets[:-1][nonempty])
    shifted = np.exp(scores - np.repeat(maxima, sizes))
    sums = np.zeros(len(sizes))
    if nonempty.any():
        sums[nonempty] = np.add.reduceat(shifted, offsets[:-1][nonempty])
    return shifted / np.repeat(np.where(sums > 0, sums, 1.0), sizes)


def segment_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of ``values`` rows within each ``offsets`` range (zeros for empty ranges)."""
    values = np.asarray(values, dtype=np.float64)
    sizes = np.diff(offsets)
    out = np.zeros((len(sizes),) + values.shape[1:])
    nonempty = sizes > 0
    if nonempty.any():
        out[nonempty] = np.add.reduceat(values, offsets[:-1][nonempty], axis=0)
    return out

