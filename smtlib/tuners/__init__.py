"""Tuners: one module per optimizer, each registered (:mod:`smtlib.tuners.registry`) and a subclass of
its input kind's base class (:class:`~smtlib.tuners.base.KBestTuner`,
:class:`~smtlib.tuners.base.LatticeTuner`, :class:`~smtlib.tuners.base.OnlineTuner`).

Beside them: the shared machinery of several tuners, :mod:`~smtlib.tuners.corpus_metric` (what a
corpus scores), :mod:`~smtlib.tuners.line_search` (Och's exact line search; lattice MERT feeds it
envelopes from :mod:`smtlib.lattice.envelope`) and :mod:`~smtlib.tuners.hope_fear` (the linear-BLEU
hope/fear oracle of lb-mira and online MIRA). The data they read is :mod:`smtlib.kbest` and
:mod:`smtlib.lattice`.
"""

from smtlib._lazy import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    ".base": ("TuneResult", "Tuner", "KBestTuner", "LatticeTuner", "OnlineTuner"),
    ".registry": ("TUNERS", "get_tuner_class", "list_tuners"),
})
