"""Lexicalized reordering, ``msd-bidirectional-fe`` (Koehn et al. 2005; Tillmann 2004; Moses).

Six features per phrase pair: the probabilities that the pair is monotone (m), swapped (s) or
discontinuous (d) with respect to the previous target phrase, and the same three with respect to the
next one, conditioned on both phrases (``fe``). Orientations are the word-based ones counted during
extraction (:mod:`smtlib.system.extract`).

Smoothing is Moses's default (``lexical-reordering/score`` with ``-smooth 0.5``): with the corpus-wide
relative frequency P(o) of each orientation over all extracted occurrences, and c(o) the count of
orientation o for the pair,

    p(o | f, e) = (c(o) + 0.5 * P(o)) / (sum_o' c(o') + 0.5)

computed separately for the previous- and next-phrase distributions.
"""

from __future__ import annotations

import numpy as np

from smtlib.system.extract import PhrasePairs

FEATURE_NAMES = ("mono_prev", "swap_prev", "disc_prev", "mono_next", "swap_next", "disc_next")


def orientation_priors(pairs: PhrasePairs) -> tuple[np.ndarray, np.ndarray]:
    """Corpus-wide relative frequencies of m/s/d, previous and next (over all occurrences)."""
    prev = pairs.orient_prev.sum(axis=0).astype(np.float64)
    nxt = pairs.orient_next.sum(axis=0).astype(np.float64)
    return prev / max(prev.sum(), 1.0), nxt / max(nxt.sum(), 1.0)


def reordering_scores(
    pairs: PhrasePairs, smoothing: float = 0.5, priors: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """The ``(n, 6)`` msd-bidirectional-fe probabilities of every pair.

    Parameters
    ----------
    smoothing
        Weight of the prior (Moses's ``-smooth``, default 0.5).
    priors
        The orientation priors; by default those of ``pairs`` itself (pass the priors of the full
        pair set when scoring a subset, so that a table limit does not change the smoothing).
    """
    p_prev, p_next = orientation_priors(pairs) if priors is None else priors
    out = np.empty((len(pairs), 6))
    for k, (counts, prior) in enumerate(((pairs.orient_prev, p_prev), (pairs.orient_next, p_next))):
        counts = counts.astype(np.float64)
        out[:, 3 * k : 3 * k + 3] = (counts + smoothing * prior) / (counts.sum(axis=1, keepdims=True) + smoothing)
    return out
