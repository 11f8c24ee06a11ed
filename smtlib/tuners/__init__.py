"""Tuners: one module per optimizer, each a :class:`~smtlib.tuners.base.Tuner` in the registry."""

from smtlib.tuners.base import TuneResult, Tuner
from smtlib.tuners.registry import TUNERS, get_tuner_class, list_tuners

__all__ = ["TUNERS", "TuneResult", "Tuner", "get_tuner_class", "list_tuners"]
