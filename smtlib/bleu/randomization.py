"""Paired approximate randomization tests for corpus-level metric differences (Noreen 1989;
Riezler & Maxwell 2005): the significance test of Simianer, Riezler & Dyer (2012), §5.1, and of
``smtlib compare`` (Clark et al. 2011, §4).

Two systems translate the same test sentences. Under the null hypothesis the two outputs of each
sentence are exchangeable, so each of ``trials`` shuffles swaps the two systems' statistics rows of
every sentence with probability 1/2 and rescores both pseudo-systems; a shuffle counts when its
absolute score difference reaches the observed one. With optimizer replicas
(:mod:`smtlib.bleu.replicas`) the rows are (sentence, replica) pairs: sentence i of replica r of one
system is exchanged with sentence i of replica r of the other.

p-value conventions (``ties``):

``count``
    Riezler & Maxwell (2005, §3): p = (c + 1) / (trials + 1) with c the shuffles whose difference is
    *at least* the observed one; the "+1" counts the observed assignment, so p > 0. Two identical
    systems tie on every shuffle and get p = 1.
``strict``
    MultEval's (Clark et al. 2011; ``StratifiedApproximateRandomizationTest``) and sacrebleu's
    ``--paired-ar``: the same formula, but c counts only shuffles whose difference is *larger* than
    the observed one. Two identical systems never exceed their zero difference: p = 1 / (trials + 1),
    printed 0.00 (MultEval's README: "a p-value of zero, since shuffling hypotheses between the
    systems produces no change").

Sentence statistics are additive rows (e.g. :func:`smtlib.bleu.stats.compute_stats`), so each
shuffle is one matrix product: the swapped rows move ``b_i - a_i`` from one sum to the other.
Shuffles are drawn from ``numpy.random.default_rng(seed)`` in blocks; the result depends only on the
inputs, ``trials`` and ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from smtlib.bleu.corpus import bleu_from_stats
from smtlib.errors import InputError

TIES = ("count", "strict")
_BLOCK = 256


def paired_randomization(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    score: Callable[[np.ndarray], np.ndarray],
    *,
    trials: int = 10_000,
    seed: int = 0,
    ties: str = "count",
) -> tuple[np.ndarray, np.ndarray]:
    """Observed score differences and p-values of the paired test, for several metrics at once.

    Parameters
    ----------
    stats_a, stats_b
        ``(M, W)`` additive statistics rows of the two systems, row i of both for the same item
        (a sentence, or a sentence of one optimizer replica).
    score
        Maps ``(K, W)`` summed statistics to ``(K, P)`` scores, one column per metric. Every metric
        sees the same shuffles (as in MultEval).
    trials
        Number of shuffles.
    seed
        Seed of ``numpy.random.default_rng``.
    ties
        ``count`` (Riezler & Maxwell) or ``strict`` (MultEval, sacrebleu); see the module docstring.

    Returns
    -------
    observed, p
        ``(P,)`` arrays: score(a) - score(b) and the two-sided p-value of each metric.
    """
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise InputError(f"the two systems' statistics differ in shape: {a.shape} vs {b.shape}")
    if trials < 1:
        raise InputError(f"trials must be >= 1, got {trials}")
    if ties not in TIES:
        raise InputError(f"unknown tie convention {ties!r} (choose from {', '.join(TIES)})")
    sum_a, sum_b = a.sum(axis=0), b.sum(axis=0)
    observed = (score(sum_a[None]) - score(sum_b[None]))[0]
    bound = np.abs(observed)
    tol = 1e-12 * np.maximum(1.0, bound)  # sums are exact; this only guards last-bit noise
    rng = np.random.default_rng(seed)
    diff = b - a  # swapping row i moves (b_i - a_i) from b's sum to a's
    counted = np.zeros(len(bound), dtype=np.int64)
    done = 0
    while done < trials:
        n = min(_BLOCK, trials - done)
        swap = rng.random((n, len(a))) < 0.5
        moved = swap.astype(np.float64) @ diff
        shuffled = np.abs(score(sum_a + moved) - score(sum_b - moved))
        hit = shuffled >= bound - tol if ties == "count" else shuffled > bound + tol
        counted += hit.sum(axis=0)
        done += n
    return observed, (counted + 1) / (trials + 1)


def bleu_scores(sums: np.ndarray) -> np.ndarray:
    """``(K, 1)`` corpus BLEU (0-1) of ``(K, STATS_WIDTH)`` summed statistics rows."""
    return np.array([[bleu_from_stats(row)] for row in sums])


def approximate_randomization(
    stats_a: np.ndarray, stats_b: np.ndarray, *, trials: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """(observed BLEU(a) - BLEU(b) in percent, p-value) of the paired test on corpus BLEU, with
    Riezler & Maxwell's p-value (``ties="count"``).

    ``stats_a`` and ``stats_b`` are ``(N, STATS_WIDTH)`` statistics rows of the two systems' outputs
    of the same N sentences, row i of both for sentence i.
    """
    observed, p = paired_randomization(stats_a, stats_b, bleu_scores, trials=trials, seed=seed)
    return 100 * float(observed[0]), float(p[0])
