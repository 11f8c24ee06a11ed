"""Paired approximate randomization test for corpus BLEU differences (Noreen 1989; Riezler & Maxwell
2005), the significance test of Simianer, Riezler & Dyer (2012), §5.1.

Two systems translate the same test sentences. Under the null hypothesis the two outputs of each
sentence are exchangeable, so each of ``trials`` shuffles swaps the two systems' statistics rows of
every sentence with probability 1/2 and recomputes both corpus BLEUs; the p-value is
(c + 1) / (trials + 1) with c the number of shuffles whose absolute BLEU difference is at least the
observed one (Riezler & Maxwell 2005, §3: the "+1" counts the observed assignment, so p > 0).

Sentence statistics are the rows of :func:`smtlib.bleu.stats.compute_stats`, so the BLEU is the one
every command prints (sacrebleu's). Shuffles are drawn from ``numpy.random.default_rng(seed)`` in
blocks; the result depends only on the inputs, ``trials`` and ``seed``.
"""

from __future__ import annotations

import numpy as np

from smtlib.bleu.corpus import bleu_from_stats
from smtlib.errors import InputError


def approximate_randomization(
    stats_a: np.ndarray, stats_b: np.ndarray, *, trials: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """(observed BLEU(a) - BLEU(b) in percent, p-value) of the paired test.

    ``stats_a`` and ``stats_b`` are ``(N, STATS_WIDTH)`` statistics rows of the two systems' outputs
    of the same N sentences, row i of both for sentence i.
    """
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise InputError(f"the two systems' statistics differ in shape: {a.shape} vs {b.shape}")
    if trials < 1:
        raise InputError(f"trials must be >= 1, got {trials}")
    observed = 100 * (bleu_from_stats(a.sum(axis=0)) - bleu_from_stats(b.sum(axis=0)))
    rng = np.random.default_rng(seed)
    diff = b - a  # swapping sentence i moves (b_i - a_i) from b's sum to a's
    sum_a, sum_b = a.sum(axis=0), b.sum(axis=0)
    at_least = 0
    block = 256
    done = 0
    while done < trials:
        n = min(block, trials - done)
        swap = rng.random((n, len(a))) < 0.5
        moved = swap.astype(np.float64) @ diff
        for k in range(n):
            shuffled = 100 * (bleu_from_stats(sum_a + moved[k]) - bleu_from_stats(sum_b - moved[k]))
            if abs(shuffled) >= abs(observed) - 1e-12:
                at_least += 1
        done += n
    return observed, (at_least + 1) / (trials + 1)
