"""BLEU against a background pseudo-document: the gain function of batch MIRA's hope and fear.

Cherry & Foster (2012), Algorithm 1, score hypotheses by the BLEU of a decayed pseudo-document of
earlier 1-best statistics plus the hypothesis's own (Chiang et al. 2008, §3.1), as Moses's
``sentenceLevelBackgroundBleu`` does; kb-MIRA (``smtlib.tuners.kbmira``) and the lattice oracle of
lb-MIRA and online MIRA (``smtlib.tuners.hope_fear``) share this one definition.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def background_bleu(stats_row, bg, scale_ref):
    """BLEU of ``bg + stats_row`` (rows in :mod:`smtlib.bleu.stats`'s layout), times its reference
    length when ``scale_ref``.

    log BLEU = 1/4 sum_n log((m_n + B_m_n) / (t_n + B_t_n)) + min(0, 1 - r / c) over the summed
    row, c the summed unigram count (0 when c = 0 and r > 0).
    """
    ratio = 1.0
    for n in range(4):
        ratio *= (stats_row[2 + n] + bg[2 + n]) / (stats_row[6 + n] + bg[6 + n])
    value = np.sqrt(np.sqrt(ratio))
    c = stats_row[6] + bg[6]
    r = stats_row[1] + bg[1]
    if c < r:
        value *= np.exp(1.0 - r / c) if c > 0 else 0.0
    if scale_ref:
        value *= r
    return value
