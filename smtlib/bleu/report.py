"""The JSON report of a corpus BLEU: score, signature, coverage, lengths and n-gram counts.

It is what ``smtlib bleu`` prints in corpus mode and what ``smtlib sgd restore`` checks a record
against, so both build it here.
"""

from __future__ import annotations

import numpy as np

from smtlib.bleu.corpus import bleu_from_stats
from smtlib.bleu.signature import BleuSignature
from smtlib.bleu.stats import BleuSettings


def corpus_report(stats: np.ndarray, settings: BleuSettings, n_refs: int, coverage: dict, smooth_method: str = "exp",
                  smooth_value: float | None = None) -> dict:
    """The JSON object ``smtlib bleu`` prints in corpus mode (and ``smtlib sgd restore`` checks), from
    the sentences' statistics (:func:`~smtlib.bleu.stats.compute_stats`): score, signature, the
    coverage (``Coverage.info()``), the lengths and the n-gram counts and totals."""
    total = stats.sum(axis=0)
    order = settings.max_ngram_order
    score = bleu_from_stats(total, smooth_method=smooth_method, smooth_value=smooth_value)
    return {
        "name": "BLEU",
        "score": round(100 * score, 10),
        "signature": str(BleuSignature(settings, n_refs, smooth_method, smooth_value)),
        **coverage,
        "sys_len": int(total[0]),
        "ref_len": float(total[1]) if total[1] % 1 else int(total[1]),
        "counts": [int(x) for x in total[2 : 2 + order]],
        "totals": [int(x) for x in total[2 + order : 2 + 2 * order]],
    }
