"""BLEU: per-hypothesis sufficient statistics, corpus BLEU and named sentence-level variants.

The statistics vector of one hypothesis (see :mod:`smtlib.bleu.stats`) is the one sacrebleu uses::

    [hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4]

``m_n`` are clipped n-gram matches against the references, ``t_n`` hypothesis n-gram counts and
``ref_len`` the effective reference length (closest, shortest or average rule). Corpus BLEU sums
the vectors; every sentence-level variant (:mod:`smtlib.bleu.variants`) transforms them.
"""

from smtlib._lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("corpus_bleu", "corpus_bleu_from_stats"), "smtlib.bleu.corpus"),
    **dict.fromkeys(
        ("HYP_LEN", "MATCHES", "NGRAM_ORDER", "REF_LEN", "STATS_WIDTH", "TOTALS", "BleuSettings", "compute_stats"),
        "smtlib.bleu.stats",
    ),
    **dict.fromkeys(("VARIANTS", "get_variant"), "smtlib.bleu.variants"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
