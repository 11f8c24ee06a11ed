"""Corpus BLEU from summed statistics, identical to sacrebleu's ``BLEU.compute_bleu``.

Papineni et al. (2002): BLEU = BP * exp(1/N * sum_n log p_n), p_n = matches_n / totals_n,
BP = exp(1 - r/c) if c < r else 1. The smoothing methods are sacrebleu's (Chen & Cherry 2014):
``none``, ``floor`` (method 1), ``add-k`` (method 2) and ``exp`` (method 3, mteval's), with
sacrebleu's conventions: no unigram-or-higher match at all gives 0, and ``effective_order`` stops at
the first order with no n-grams. Scores are 0-1 here; the CLI prints them 0-100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.stats import HYP_LEN, MATCHES, REF_LEN, TOTALS, BleuSettings, compute_stats

SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None}
_LOG_ZERO = -9999999999.0  # sacrebleu's my_log(0)


def bleu_from_stats(
    stats: np.ndarray,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
) -> float:
    """BLEU (0-1) of one statistics row, e.g. a corpus sum, exactly as sacrebleu computes it.

    The defaults are sacrebleu's ``BLEU()`` defaults (``exp`` smoothing, no effective order). The
    n-gram order is the row's: ``(len(stats) - 2) / 2`` (sacrebleu's ``max_ngram_order``).
    """
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]
    order = (len(stats) - 2) // 2
    correct = [float(x) for x in stats[2 : 2 + order]]
    total = [float(x) for x in stats[2 + order : 2 + 2 * order]]
    sys_len, ref_len = float(stats[HYP_LEN]), float(stats[REF_LEN])
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if not any(correct):
        return 0.0
    precisions = [0.0] * order
    smooth_mteval = 1.0
    eff_order = order
    for n in range(1, order + 1):
        if smooth_method == "add-k" and n > 1:
            correct[n - 1] += smooth_value
            total[n - 1] += smooth_value
        if total[n - 1] == 0:
            break
        if effective_order:
            eff_order = n
        if correct[n - 1] == 0:
            if smooth_method == "exp":
                smooth_mteval *= 2
                precisions[n - 1] = 1.0 / (smooth_mteval * total[n - 1])
            elif smooth_method == "floor":
                precisions[n - 1] = smooth_value / total[n - 1]
        else:
            precisions[n - 1] = correct[n - 1] / total[n - 1]
    logs = [math.log(p) if p > 0 else _LOG_ZERO for p in precisions[:eff_order]]
    return bp * math.exp(sum(logs) / eff_order)


def corpus_bleu_from_stats(stats: np.ndarray, **kwargs) -> float:
    """Corpus BLEU (0-1) of an ``(N, width)`` statistics matrix: sum, then score."""
    stats = np.asarray(stats, dtype=np.float64)
    return bleu_from_stats(stats.reshape(-1, stats.shape[-1]).sum(axis=0), **kwargs)


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    settings: BleuSettings = BleuSettings(),
    **kwargs,
) -> float:
    """Corpus BLEU (0-1) of aligned hypotheses and reference sets (one hypothesis per reference line).

    This is what every command prints: ``smtlib bleu`` on a file, ``rerank``, ``tune`` and
    ``kbest stats`` on the 1-best of the sentences a pool covers (the reference lines its ids
    choose, :func:`smtlib.bleu.references.covered_sentences`), with the same defaults
    (:class:`~smtlib.bleu.stats.BleuSettings`, ``exp`` smoothing, no effective order).
    """
    stats = compute_stats(hypotheses, np.arange(len(hypotheses)), references, settings)
    return corpus_bleu_from_stats(stats, **kwargs)


def log_bleu_and_gradient(stats_sum: np.ndarray, bp_smoothness: float = 0.0) -> tuple[float, np.ndarray]:
    """log BLEU of a (possibly fractional, expected) statistics sum and its gradient.

    Used by expected-BLEU training (xBLEU; Neubig & Watanabe 2016, Appendix A; Rosti et al. 2010):
    log BLEU = 1/4 sum_n (log m_n - log t_n) + min(0, 1 - r/c). The brevity term's kink is
    smoothed with a softplus of width ``bp_smoothness`` when it is positive.

    Returns
    -------
    value, gradient
        ``gradient`` has the layout of a statistics row.
    """
    grad = np.zeros_like(stats_sum, dtype=np.float64)
    m = np.maximum(stats_sum[MATCHES], 1e-12)
    t = np.maximum(stats_sum[TOTALS], 1e-12)
    value = float(np.mean(np.log(m) - np.log(t)))
    grad[MATCHES] = 0.25 / m
    grad[TOTALS] = -0.25 / t
    c = max(float(stats_sum[HYP_LEN]), 1e-12)
    r = float(stats_sum[REF_LEN])
    x = 1.0 - r / c
    if bp_smoothness > 0:
        # min(0, x) smoothed as -s * softplus(-x / s); its derivative is sigmoid(-x / s).
        z = -x / bp_smoothness
        value -= bp_smoothness * float(np.logaddexp(0.0, z))
        from scipy.special import expit  # here: scipy's import costs start-up time of every command

        dval_dx = float(expit(z))
    else:
        dval_dx = 1.0 if x < 0 else 0.0
        value += min(0.0, x)
    grad[HYP_LEN] = dval_dx * r / (c * c)
    grad[REF_LEN] = -dval_dx / c
    return value, grad
