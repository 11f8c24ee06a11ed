"""The metrics registry: BLEU, chrF, chrF++ and TER behind one interface, and their weighted mixtures.

Every metric separates per-hypothesis sufficient statistics (computed once per pool) from scoring
(sacrebleu's design): :meth:`Metric.stats` gives one row per hypothesis, :meth:`Metric.corpus`
scores a sum of rows exactly as sacrebleu's ``corpus_score``, :meth:`Metric.sentence` scores each
row as sacrebleu's ``sentence_score``, and :meth:`Metric.signature` is sacrebleu's signature
with ``impl:smtlib-<version>`` added. :data:`METRICS` (name -> class) is the one list of metric
names: ``smtlib score --metric``, ``smtlib tune --metric`` and the tuner registry read it.

==========  ==========================  ==========================================  ================
name        statistics (width)          corpus / sentence score                     better
==========  ==========================  ==========================================  ================
``bleu``    :mod:`smtlib.bleu.stats`    sacrebleu ``BLEU()``; sentence:             higher
            (10)                        ``sentence_bleu`` (exp, effective order)
``chrf``    :mod:`smtlib.bleu.chrf`     sacrebleu ``CHRF()``                        higher
            (18)
``chrf++``  :mod:`smtlib.bleu.chrf`     sacrebleu ``CHRF(word_order=2)``            higher
            (24)
``ter``     :mod:`smtlib.bleu.ter` (2)  sacrebleu ``TER()``                         lower
==========  ==========================  ==========================================  ================

A **mixture** (:func:`parse_mixture`, ``bleu:0.5,ter:-0.5``) is Moses's interpolated scorer
(``mert --sctype BLEU,TER --scconfig weights:...``): the weighted sum of its metrics' scores, each
0-1. TER enters as the error rate itself, so it needs a negative weight (Moses's ``TerScorer``
scores 1 - TER instead, a constant apart); a positive weight on TER, or a negative one on a
higher-is-better metric, is an error rather than a tuning run that rewards worse translations. A
single metric is the mixture of itself with weight +1 (higher is better) or -1 (TER).
"""

from __future__ import annotations

import abc
import dataclasses
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from smtlib.bleu.chrf import ChrfSettings, chrf_from_rows, compute_chrf_stats
from smtlib.bleu.stats import BleuSettings, compute_stats
from smtlib.bleu.ter import TerSettings, compute_ter_stats, ter_from_rows
from smtlib.errors import InputError
from smtlib.values import parse_number

#: compiled-score kinds of :mod:`smtlib.tuners.corpus_metric` (a metric's ``kind``)
KIND_BLEU, KIND_ADDITIVE, KIND_CHRF, KIND_TER = 0, 1, 2, 3


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _versions() -> str:
    import sacrebleu

    from smtlib import __version__

    return f"version:{sacrebleu.__version__}|impl:smtlib-{__version__}"


class Metric(abc.ABC):
    """One metric with its settings: statistics, corpus and sentence scores (0-1), signature."""

    name: ClassVar[str] = ""
    #: sacrebleu's name of the score (``BLEU``, ``chrF2``, ``chrF2++``, ``TER``)
    label: ClassVar[str] = ""
    higher_is_better: ClassVar[bool] = True
    #: compiled-score kind (:mod:`smtlib.tuners.corpus_metric`)
    kind: ClassVar[int] = KIND_BLEU
    #: the statistics column holding the reference length (scales kbmira's pseudo-document gain)
    length_column: ClassVar[int] = 1

    settings: Any

    @property
    @abc.abstractmethod
    def width(self) -> int:
        """Columns of a statistics row."""

    @abc.abstractmethod
    def stats(self, hypotheses: Sequence[str], sentence_ids, references: Sequence[Sequence[str]]) -> np.ndarray:
        """``(N, width)`` statistics of N hypotheses (sentence ids index the reference lines)."""

    @abc.abstractmethod
    def sentence(self, stats: np.ndarray) -> np.ndarray:
        """(N,) sentence-level scores (0-1) of statistics rows, as sacrebleu's ``sentence_score``."""

    @abc.abstractmethod
    def corpus(self, stats: np.ndarray) -> float:
        """Corpus score (0-1) of an ``(N, width)`` matrix (summed) or one summed row."""

    @abc.abstractmethod
    def signature(self, n_refs: int) -> str:
        """sacrebleu's signature of the score, with this implementation added."""

    @property
    def param(self) -> float:
        """The compiled score's parameter (chrF's beta; 0 otherwise)."""
        return 0.0

    @property
    def score_name(self) -> str:
        """sacrebleu's name of this score with these settings (:attr:`label` but for chrF's beta and
        word order: ``chrF3``, ``chrF2+``), as ``smtlib score`` writes it."""
        return self.label

    def _summed(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        if stats.shape[-1] != self.width:
            raise ValueError(f"{self.name} statistics have {self.width} columns, got {stats.shape[-1]}")
        return stats.reshape(-1, self.width).sum(axis=0)


@dataclasses.dataclass(frozen=True)
class Bleu(Metric):
    """BLEU (Papineni et al. 2002) with sacrebleu's defaults (:mod:`smtlib.bleu.corpus`)."""

    settings: BleuSettings = BleuSettings()
    name: ClassVar[str] = "bleu"
    label: ClassVar[str] = "BLEU"
    kind: ClassVar[int] = KIND_BLEU

    @property
    def width(self) -> int:
        return self.settings.width

    def stats(self, hypotheses, sentence_ids, references) -> np.ndarray:
        return compute_stats(hypotheses, sentence_ids, references, self.settings)

    def sentence(self, stats: np.ndarray) -> np.ndarray:
        from smtlib.bleu.variants import get_variant

        return get_variant("exp").score(np.atleast_2d(stats))

    def corpus(self, stats: np.ndarray) -> float:
        from smtlib.bleu.corpus import bleu_from_stats

        return bleu_from_stats(self._summed(stats))

    def signature(self, n_refs: int, sentence: bool = False) -> str:
        from smtlib.bleu.signature import BleuSignature
        from smtlib.bleu.variants import get_variant

        if sentence:
            return str(BleuSignature.for_variant(get_variant("exp"), self.settings, n_refs))
        return str(BleuSignature(self.settings, n_refs))


@dataclasses.dataclass(frozen=True)
class Chrf(Metric):
    """chrF (Popović 2015) with sacrebleu's defaults (:mod:`smtlib.bleu.chrf`)."""

    settings: ChrfSettings = ChrfSettings()
    name: ClassVar[str] = "chrf"
    label: ClassVar[str] = "chrF2"
    kind: ClassVar[int] = KIND_CHRF

    @property
    def width(self) -> int:
        return self.settings.width

    @property
    def param(self) -> float:
        return float(self.settings.beta)

    @property
    def score_name(self) -> str:
        return self.settings.name

    def stats(self, hypotheses, sentence_ids, references) -> np.ndarray:
        return compute_chrf_stats(hypotheses, sentence_ids, references, self.settings)

    def sentence(self, stats: np.ndarray) -> np.ndarray:
        return chrf_from_rows(stats, self.settings.beta, self.settings.eps_smoothing)

    def corpus(self, stats: np.ndarray) -> float:
        return float(chrf_from_rows(self._summed(stats), self.settings.beta, self.settings.eps_smoothing)[0])

    def signature(self, n_refs: int, sentence: bool = False) -> str:
        s = self.settings
        return (f"nrefs:{n_refs}|case:{'lc' if s.lowercase else 'mixed'}|eff:{_yes(not s.eps_smoothing)}"
                f"|nc:{s.char_order}|nw:{s.word_order}|space:{_yes(s.whitespace)}|{_versions()}")


@dataclasses.dataclass(frozen=True)
class ChrfPlusPlus(Chrf):
    """chrF++ (Popović 2017): chrF with word unigrams and bigrams, sacrebleu's ``CHRF(word_order=2)``."""

    settings: ChrfSettings = ChrfSettings(word_order=2)
    name: ClassVar[str] = "chrf++"
    label: ClassVar[str] = "chrF2++"


@dataclasses.dataclass(frozen=True)
class Ter(Metric):
    """TER (Snover et al. 2006) with sacrebleu's defaults (:mod:`smtlib.bleu.ter`); an error rate."""

    settings: TerSettings = TerSettings()
    name: ClassVar[str] = "ter"
    label: ClassVar[str] = "TER"
    higher_is_better: ClassVar[bool] = False
    kind: ClassVar[int] = KIND_TER

    @property
    def width(self) -> int:
        return 2

    def stats(self, hypotheses, sentence_ids, references) -> np.ndarray:
        return compute_ter_stats(hypotheses, sentence_ids, references, self.settings)

    def sentence(self, stats: np.ndarray) -> np.ndarray:
        return ter_from_rows(stats)

    def corpus(self, stats: np.ndarray) -> float:
        return float(ter_from_rows(self._summed(stats))[0])

    def signature(self, n_refs: int, sentence: bool = False) -> str:
        s = self.settings
        return (f"nrefs:{n_refs}|case:{'mixed' if s.case_sensitive else 'lc'}|tok:tercom|norm:{_yes(s.normalized)}"
                f"|punct:{_yes(not s.no_punct)}|asian:{_yes(s.asian_support)}|{_versions()}")


#: metric name -> class; the one list of metric names
METRICS: dict[str, type[Metric]] = {cls.name: cls for cls in (Bleu, Chrf, ChrfPlusPlus, Ter)}


@dataclasses.dataclass(frozen=True)
class MetricOptions:
    """Every setting a command can give the metrics (each metric takes its own).

    ``chrf_char_order``, ``chrf_beta``, ``chrf_whitespace`` and ``chrf_eps_smoothing`` apply to chrF
    and chrF++; ``chrf_word_order`` to chrF (None: each name's own, 0 for ``chrf`` and 2 for
    ``chrf++``, which is chrF with word order 2).
    """

    bleu: BleuSettings = BleuSettings()
    lowercase: bool = False
    ter: TerSettings = TerSettings()
    chrf_char_order: int = ChrfSettings.char_order
    chrf_word_order: int | None = None
    chrf_beta: int = ChrfSettings.beta
    chrf_whitespace: bool = False
    chrf_eps_smoothing: bool = False


def get_metric(name: str, options: MetricOptions = MetricOptions()) -> Metric:
    """The metric ``name`` (:data:`METRICS`) with the settings of ``options`` that apply to it."""
    if name not in METRICS:
        raise InputError(f"unknown metric {name!r}; choose from {', '.join(METRICS)} or a mixture like bleu:0.5,ter:-0.5")
    if name == "bleu":
        return Bleu(options.bleu)
    if name in ("chrf", "chrf++"):
        own = METRICS[name]().settings.word_order
        if name == "chrf++" and options.chrf_word_order not in (None, own):
            raise InputError(f"chrf++ is chrF with word order {own}; for word order {options.chrf_word_order} "
                             "use chrf with that word order")
        word_order = own if options.chrf_word_order is None else options.chrf_word_order
        return METRICS[name](ChrfSettings(char_order=options.chrf_char_order, word_order=word_order,
                                          beta=options.chrf_beta, lowercase=options.lowercase,
                                          whitespace=options.chrf_whitespace,
                                          eps_smoothing=options.chrf_eps_smoothing))
    return Ter(options.ter)


def metric_of_label(label: str) -> str | None:
    """The :data:`METRICS` name of a score named ``label`` by sacrebleu (``BLEU``, ``chrF2``, ``chrF3++``,
    ``TER``), None for an unknown label. chrF's label carries its beta (and a ``+`` per word order):
    a chrF label without ``+`` is ``chrf``, any other ``chrf++`` (the name of chrF with word n-grams)."""
    match = re.fullmatch(r"chrF(\d+)(\+*)", label)
    if match:
        return "chrf++" if match.group(2) else "chrf"
    return next((name for name, cls in METRICS.items() if cls.label == label), None)


@dataclasses.dataclass(frozen=True)
class Mixture:
    """A weighted sum of metrics (Moses's interpolated scorer); what the tuners maximise.

    Attributes
    ----------
    parts
        ``(metric, weight)`` pairs, in the order given.
    text
        The form it was given in (``bleu``, ``bleu:0.5,ter:-0.5``), for messages and reports.
    """

    parts: tuple[tuple[Metric, float], ...]
    text: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m, _ in self.parts)

    @property
    def is_bleu(self) -> bool:
        """Plain BLEU with weight 1: the tuners' own BLEU path."""
        return len(self.parts) == 1 and self.parts[0][0].name == "bleu" and self.parts[0][1] == 1.0

    def spec(self) -> np.ndarray:
        """``(M, 6)`` rows ``[kind, first column, end column, weight, parameter, length column]`` of
        the concatenated statistics (:meth:`stats`), for the compiled scores of
        :mod:`smtlib.tuners.corpus_metric`."""
        rows, start = [], 0
        for metric, weight in self.parts:
            rows.append([metric.kind, start, start + metric.width, weight, metric.param, start + metric.length_column])
            start += metric.width
        return np.array(rows, dtype=np.float64)

    def stats(self, hypotheses, sentence_ids, references) -> np.ndarray:
        """The parts' statistics side by side, ``(N, sum of widths)``."""
        return np.hstack([m.stats(hypotheses, sentence_ids, references) for m, _ in self.parts])

    def split(self, stats: np.ndarray) -> list[np.ndarray]:
        """The parts' statistics out of :meth:`stats`."""
        out, start = [], 0
        for metric, _ in self.parts:
            out.append(stats[..., start:start + metric.width])
            start += metric.width
        return out

    def corpus(self, stats: np.ndarray) -> float:
        """The weighted sum of the parts' corpus scores (sacrebleu's, 0-1)."""
        return float(sum(w * m.corpus(s) for (m, w), s in zip(self.parts, self.split(stats), strict=True)))

    def sentence(self, stats: np.ndarray) -> np.ndarray:
        """The weighted sum of the parts' sentence scores (sacrebleu's, 0-1)."""
        return sum(w * m.sentence(s) for (m, w), s in zip(self.parts, self.split(stats), strict=True))


def parse_mixture(text: str, options: MetricOptions = MetricOptions()) -> Mixture:
    """``bleu``, ``chrf``, ``chrf++``, ``ter`` or ``NAME:WEIGHT,NAME:WEIGHT,...`` as a :class:`Mixture`.

    Raises
    ------
    InputError
        For an unknown name, a weight that is not a number or is 0, a name given twice, or a
        weight whose sign rewards worse translations (TER positive, the others negative).
    """
    text = text.strip()
    if ":" not in text and "," not in text:
        metric = get_metric(text, options)
        return Mixture(((metric, 1.0 if metric.higher_is_better else -1.0),), text)
    parts: list[tuple[Metric, float]] = []
    for item in text.split(","):
        name, sep, weight_text = item.strip().partition(":")
        if not sep:
            raise InputError(f"metric mixture {text!r}: {item!r} has no weight (write NAME:WEIGHT, e.g. bleu:0.5,ter:-0.5)")
        metric = get_metric(name.strip(), options)
        weight = parse_number(weight_text.strip(), f"metric mixture {text!r}: the weight of {name.strip()}")
        if weight == 0:
            raise InputError(f"metric mixture {text!r}: {metric.name} has weight 0 (leave it out)")
        if (weight > 0) != metric.higher_is_better:
            better = "higher" if metric.higher_is_better else "lower"
            sign = "positive" if metric.higher_is_better else "negative"
            raise InputError(f"metric mixture {text!r}: {metric.name} is better when {better}, so its weight must be "
                             f"{sign} (e.g. bleu:0.5,ter:-0.5)")
        if metric.name in (m.name for m, _ in parts):
            raise InputError(f"metric mixture {text!r}: {metric.name} is given twice")
        parts.append((metric, weight))
    return Mixture(tuple(parts), text)
