"""The one BLEU signature: the text printed next to every BLEU score, naming what changes its value.

Every command that prints a BLEU score (``bleu``, ``bleu --sentence``, ``rerank``, ``tune``,
``kbest stats``) prints :class:`BleuSignature` next to it, in sacrebleu's signature format with the
reference-length rule and this implementation added::

    nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|reflen:closest|version:2.6.0|impl:smtlib-0.1.0

``smooth`` is the corpus smoothing method, with its value in brackets for ``floor`` and ``add-k``
(sacrebleu's ``floor[0.10]``), or, for a sentence-level variant (:mod:`smtlib.bleu.variants`), the
variant's name with every parameter (``bleu+1[value=1]``, ``moses-smoothed[smoothing=1,bp_smooth=no]``);
``eff`` is the effective-order setting (a variant parameter for the sentence-level variants that have
one). A largest n-gram order other than sacrebleu's 4 (sacrebleu's ``max_ngram_order``, which its
own signature does not show) adds ``ngram:N`` after ``reflen``. Two scores with equal signatures
were computed the same way.
"""

from __future__ import annotations

import dataclasses
import functools

from smtlib.bleu.stats import NGRAM_ORDER, BleuSettings


def format_parameter(value) -> str:
    """A parameter value as signatures print it: ``yes``/``no``, the shortest float text, or the text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


@functools.cache
def _sacrebleu_version() -> str:
    """sacrebleu's version, from its package metadata: importing sacrebleu costs a short command 0.13 s."""
    from importlib.metadata import version

    return version("sacrebleu")


@dataclasses.dataclass(frozen=True)
class BleuSignature:
    """Everything that determines a BLEU score, and its one text form (see the module docstring).

    Attributes
    ----------
    settings
        Tokenizer, case and reference-length rule.
    n_refs
        Number of reference sets.
    smooth
        Corpus smoothing method (``exp``, sacrebleu's default), or a sentence-level variant's
        description from :meth:`~smtlib.bleu.variants.SentenceBleu.smooth_field`.
    smooth_value
        The value of ``floor`` / ``add-k`` corpus smoothing (None: the method's default).
    effective_order
        sacrebleu's effective order (off for corpus BLEU by default).
    """

    settings: BleuSettings
    n_refs: int
    smooth: str = "exp"
    smooth_value: float | None = None
    effective_order: bool = False

    @classmethod
    def for_variant(cls, variant, settings: BleuSettings, n_refs: int) -> BleuSignature:
        """The signature of sentence-level scores of ``variant`` (a :class:`~smtlib.bleu.variants.SentenceBleu`)."""
        return cls(settings, n_refs, variant.smooth_field(), None, bool(variant.params.get("effective_order", False)))

    def __str__(self) -> str:
        from smtlib import __version__

        from smtlib.bleu.corpus import SMOOTH_DEFAULTS

        smooth = self.smooth
        value = self.smooth_value if self.smooth_value is not None else SMOOTH_DEFAULTS.get(smooth)
        if value is not None:
            smooth += f"[{value:.2f}]"
        fields = [
            f"nrefs:{self.n_refs}",
            f"case:{'lc' if self.settings.lowercase else 'mixed'}",
            f"eff:{'yes' if self.effective_order else 'no'}",
            f"tok:{self.settings.tokenize}",
            f"smooth:{smooth}",
            f"reflen:{self.settings.ref_length}",
            *([f"ngram:{self.settings.max_ngram_order}"] if self.settings.max_ngram_order != NGRAM_ORDER else []),
            f"version:{_sacrebleu_version()}",
            f"impl:smtlib-{__version__}",
        ]
        return "|".join(fields)
