"""BLEU: per-hypothesis sufficient statistics, corpus BLEU and named sentence-level variants.

The statistics vector of one hypothesis (see :mod:`smtlib.bleu.stats`) is the one sacrebleu uses::

    [hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4]

``m_n`` are clipped n-gram matches against the references, ``t_n`` hypothesis n-gram counts and
``ref_len`` the effective reference length (closest, shortest or average rule); with another
largest order N (sacrebleu's ``max_ngram_order``) the vector has N matches and N totals. Corpus BLEU
sums the vectors; every sentence-level variant (:mod:`smtlib.bleu.variants`) transforms them.
Which sentences a corpus score covers is one rule, :func:`smtlib.bleu.references.covered_sentences`.

chrF / chrF++ (:mod:`smtlib.bleu.chrf`) and TER (:mod:`smtlib.bleu.ter`) have their own statistics
in the same style; :mod:`smtlib.bleu.metrics` puts the four behind one interface and mixes them.
"""

from smtlib._lazy import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    ".corpus": ("corpus_bleu", "corpus_bleu_from_stats"),
    ".stats": ("HYP_LEN", "MATCHES", "NGRAM_ORDER", "REF_LEN", "STATS_WIDTH", "TOTALS", "BleuSettings", "compute_stats"),
    ".variants": ("VARIANTS", "get_variant"),
    ".chrf": ("ChrfSettings", "compute_chrf_stats", "chrf_from_stats", "corpus_chrf"),
    ".ter": ("TerSettings", "compute_ter_stats", "ter_from_stats", "corpus_ter"),
    ".metrics": ("METRICS", "get_metric", "parse_mixture"),
})
