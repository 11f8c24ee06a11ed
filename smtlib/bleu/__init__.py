"""BLEU: per-hypothesis sufficient statistics, corpus BLEU and named sentence-level variants.

The statistics vector of one hypothesis (see :mod:`smtlib.bleu.stats`) is the one sacrebleu uses::

    [hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4]

``m_n`` are clipped n-gram matches against the references, ``t_n`` hypothesis n-gram counts and
``ref_len`` the effective reference length (closest, shortest or average rule). Corpus BLEU sums
the vectors; every sentence-level variant (:mod:`smtlib.bleu.variants`) transforms them.
"""

from smtlib.bleu.corpus import corpus_bleu, corpus_bleu_from_stats
from smtlib.bleu.stats import (
    HYP_LEN,
    MATCHES,
    NGRAM_ORDER,
    REF_LEN,
    STATS_WIDTH,
    TOTALS,
    BleuSettings,
    compute_stats,
)
from smtlib.bleu.variants import VARIANTS, get_variant

__all__ = [
    "HYP_LEN",
    "MATCHES",
    "NGRAM_ORDER",
    "REF_LEN",
    "STATS_WIDTH",
    "TOTALS",
    "VARIANTS",
    "BleuSettings",
    "compute_stats",
    "corpus_bleu",
    "corpus_bleu_from_stats",
    "get_variant",
]
