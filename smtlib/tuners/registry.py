"""Tuner registry: method name -> where its class lives, what it reads, its one-line summary.

A new tuner is one module plus one entry here. The registry is the one owner of these facts
(``smtlib tune --list``, the workflow's method constraints and its config check in
``rules/common.smk`` read them from here), and nothing in it imports an optimizer: listing methods
stays fast.
"""

from __future__ import annotations

import difflib
import importlib
from typing import NamedTuple

from smtlib.errors import InputError

#: what a tuner reads: a k-best pool, lattices (lbmert, lbmira) or the decoder itself (online MIRA)
INPUT_KINDS = ("kbest", "lattice", "online")


#: an :class:`Entry`'s ``metrics`` for a tuner that takes any metric or mixture (it has ``fit_metric``)
ANY_METRIC = "any"


class Entry(NamedTuple):
    """``target`` is ``module:Class``; ``kind`` one of :data:`INPUT_KINDS`; ``summary`` for ``--list``;
    ``metrics`` what ``--metric`` it takes: :data:`ANY_METRIC` (every metric of
    :mod:`smtlib.bleu.metrics` and their mixtures), or ``bleu`` with the reason after a colon."""

    target: str
    kind: str
    summary: str
    metrics: str = "bleu"


_LATTICE_BLEU = "bleu: it scores lattice paths with BLEU statistics counted on the lattice's edges"


TUNERS: dict[str, Entry] = {
    # -- group A: MERT, batch MIRA, PRO -----------------------------------------------------------
    "mert": Entry("smtlib.tuners.mert:Mert", "kbest",
                  "k-best MERT: Och (2003) exact line search along the coordinate axes, 20 random restarts.",
                  ANY_METRIC),
    "kbmira": Entry("smtlib.tuners.kbmira:KbMira", "kbest",
                  "Batch k-best MIRA, Cherry & Foster (2012) Algorithm 1: J=30, C=0.01, pseudo-corpus decay 0.999.",
                  ANY_METRIC),
    "pro": Entry("smtlib.tuners.pro:Pro", "kbest",
                  "PRO, Hopkins & May (2011): Γ=5000 sampled pairs, Ξ=50 kept, maxent classifier, Ψ=1 (no interpolation, as Moses).",
                  ANY_METRIC),
    "lbmert": Entry("smtlib.tuners.lbmert:LbMert", "lattice",
                  "Lattice MERT (Macherey et al. 2008): exact line search over every lattice path, 20 random restarts.",
                  _LATTICE_BLEU),
    "lbmira": Entry("smtlib.tuners.lbmira:LbMira", "lattice",
                  "Batch lattice MIRA, Cherry & Foster (2012) Algorithm 1 on lattices: J=30, C=0.01, decay 0.999.",
                  "bleu: its hope and fear are found in the lattice with a linear BLEU gain"),
    "mira": Entry("smtlib.tuners.mira:OnlineMira", "online",
                  "Online MIRA, decoder in the loop, iterative parameter mixing over 8 shards (McDonald et al. 2010).",
                  "bleu: the decoder in its loop scores hypotheses with BLEU only"),
    # -- group B: MR, latent SVM, corpus-level MIRA, survey optimizers -----------------------------
    "mr": Entry("smtlib.tuners.mr:MinimumRisk", "kbest",
                  'Minimum risk (expected sentence BLEU) with SGD; Cherry & Foster (2012) §2.4, §4 "mr".',
                  ANY_METRIC),
    "svm": Entry("smtlib.tuners.svm:LatentSVM", "kbest",
                  "Latent structured SVM with an oracle set of maximal interpolated BLEU; Cherry & Foster (2012) §3.2.",
                  ANY_METRIC),
    "cmira": Entry("smtlib.tuners.cmira:CorpusMira", "kbest",
                  "Corpus-level MIRA with exact corpus-BLEU losses; Tan et al. (2013) Algorithm 1.",
                  ANY_METRIC),
    "softmax": Entry("smtlib.tuners.softmax:SoftmaxLoss", "kbest",
                  "Log-linear likelihood of the oracle set with L-BFGS and L2; Neubig & Watanabe (2016) §3.2, §5.2.",
                  ANY_METRIC),
    "perceptron": Entry("smtlib.tuners.perceptron:AveragedPerceptron", "kbest",
                  "Averaged structured perceptron toward the sentence-BLEU oracle; Neubig & Watanabe (2016) §6.2.",
                  ANY_METRIC),
    "arow": Entry("smtlib.tuners.arow:Arow", "kbest",
                  "AROW (diagonal covariance) on hope/fear pairs with a BLEU-difference margin; Neubig & Watanabe (2016) §6.4.",
                  ANY_METRIC),
    "linreg": Entry("smtlib.tuners.linreg:LinearRegression", "kbest",
                  "Least-squares regression of (sentence-centred) model scores on sentence BLEU; Neubig & Watanabe (2016) §3.6.",
                  ANY_METRIC),
    "xbleu": Entry("smtlib.tuners.xbleu:ExpectedBleu", "kbest",
                  "Expected corpus BLEU from expected sufficient statistics (xBLEU), L-BFGS; Rosti et al. (2010), survey App. A.",
                  ANY_METRIC),
    "rampion": Entry("smtlib.tuners.rampion:RampLoss", "kbest",
                  "Ramp loss (hope/fear difference) by CCCP with an exact structured-SVM step; Gimpel & Smith (2012).",
                  ANY_METRIC),
    # -- group C: pairwise-ranking SGD family (Simianer et al. 2012) --------------------------------
    "sgd": Entry("smtlib.tuners.sgd:PairwiseSGD", "kbest",
                  "Pairwise-ranking perceptron SGD on the whole pool (Simianer et al. 2012, Algorithm 1).",
                  ANY_METRIC),
    "mixsgd": Entry("smtlib.tuners.sgd:MixSGD", "kbest",
                  "Pairwise-ranking SGD on random shards, weights mixed after training (Simianer et al. 2012, Algorithm 2).",
                  ANY_METRIC),
    "itermixsgd": Entry("smtlib.tuners.sgd:IterMixSGD", "kbest",
                  "Pairwise-ranking SGD on shards, mixed after every epoch (Simianer et al. 2012, Algorithm 3).",
                  ANY_METRIC),
    "iterselsgd": Entry("smtlib.tuners.sgd:IterSelSGD", "kbest",
                  "Iterative mixing with l1/l2 joint feature selection (Simianer et al. 2012, Algorithm 4).",
                  ANY_METRIC),
}


def list_tuners() -> list[str]:
    return list(TUNERS)


def _entry(name: str) -> Entry:
    if name not in TUNERS:
        guess = difflib.get_close_matches(name, list(TUNERS), n=1)
        hint = f" (did you mean {guess[0]!r}?)" if guess else ""
        raise InputError(f"unknown tuning method {name!r}{hint}; choose from {', '.join(TUNERS) or '(none registered)'}")
    return TUNERS[name]


def input_kind(name: str) -> str:
    """What tuner ``name`` reads: ``kbest``, ``lattice`` or ``online`` (without importing it)."""
    return _entry(name).kind


def summary(name: str) -> str:
    """The one-line description ``smtlib tune --list`` prints."""
    return _entry(name).summary


def metrics(name: str) -> tuple[str, ...]:
    """The metric names ``smtlib tune name --metric`` takes (mixtures of them too, where more than bleu)."""
    spec = _entry(name).metrics
    if spec == ANY_METRIC:
        from smtlib.bleu.metrics import METRICS

        return tuple(METRICS)
    return (spec.partition(":")[0],)


def check_metric(name: str, mixture_names: tuple[str, ...]) -> None:
    """Raise :class:`InputError` (one line) if tuner ``name`` cannot tune toward these metrics."""
    spec = _entry(name).metrics
    if spec != ANY_METRIC and tuple(mixture_names) != ("bleu",):
        only, _, why = spec.partition(":")
        raise InputError(f"{name} tunes toward {only.upper()} only ({why.strip()}); --metric {','.join(mixture_names)} "
                         f"is for {', '.join(m for m in TUNERS if TUNERS[m].metrics == ANY_METRIC)}")


def get_tuner_class(name: str):
    """The tuner class registered as ``name``."""
    module_name, _, class_name = _entry(name).target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)
