"""Tuner registry: method name -> ``module:Class``. A new tuner is one module plus one line here.

Entries are imported lazily, so listing methods does not import every optimizer.
"""

from __future__ import annotations

import importlib

from smtlib.errors import InputError

TUNERS: dict[str, str] = {
    # -- group A: MERT, batch MIRA, PRO -----------------------------------------------------------
    "mert": "smtlib.tuners.mert:Mert",
    "kbmira": "smtlib.tuners.kbmira:KbMira",
    "pro": "smtlib.tuners.pro:Pro",
    "lbmert": "smtlib.tuners.lbmert:LbMert",
    "lbmira": "smtlib.tuners.lbmira:LbMira",
    "mira": "smtlib.tuners.mira:OnlineMira",
    # -- group B: MR, latent SVM, corpus-level MIRA, survey optimizers -----------------------------
    "mr": "smtlib.tuners.mr:MinimumRisk",
    "svm": "smtlib.tuners.svm:LatentSVM",
    "cmira": "smtlib.tuners.cmira:CorpusMira",
    "softmax": "smtlib.tuners.softmax:SoftmaxLoss",
    "perceptron": "smtlib.tuners.perceptron:AveragedPerceptron",
    "arow": "smtlib.tuners.arow:Arow",
    "linreg": "smtlib.tuners.linreg:LinearRegression",
    "xbleu": "smtlib.tuners.xbleu:ExpectedBleu",
    "rampion": "smtlib.tuners.rampion:RampLoss",
    # -- group C: pairwise-ranking SGD family (Simianer et al. 2012) --------------------------------
    "sgd": "smtlib.tuners.sgd:PairwiseSGD",
    "mixsgd": "smtlib.tuners.sgd:MixSGD",
    "itermixsgd": "smtlib.tuners.sgd:IterMixSGD",
    "iterselsgd": "smtlib.tuners.sgd:IterSelSGD",
}


def list_tuners() -> list[str]:
    return list(TUNERS)


def get_tuner_class(name: str):
    """The tuner class registered as ``name``."""
    if name not in TUNERS:
        raise InputError(f"unknown tuning method {name!r}; choose from {', '.join(TUNERS) or '(none registered)'}")
    module_name, _, class_name = TUNERS[name].partition(":")
    return getattr(importlib.import_module(module_name), class_name)
