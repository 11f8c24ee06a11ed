"""The interface every tuner implements: one optimizer step on a k-best pool.

A tuner is constructed with all its hyper-parameters (defaults = the papers' settings) and a seed,
and ``fit(pool, init)`` returns new weights aligned with ``pool.feature_names``. The pool carries
its BLEU statistics (``pool.stats``, computed by the caller with the requested BLEU settings), the
hypotheses grouped by sentence (``pool.offsets``), dense and sparse features
(``pool.dense``/``pool.sparse``/``pool.features()``). A tuner never modifies the pool or ``init``.

Hyper-parameters are declared in ``defaults`` (name -> default value); the CLI's
``--set key=value`` converts strings to the default's type with :func:`smtlib.values.convert` (the
converter ``--param`` uses too; a typo is an error), so every hyper-parameter is settable.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from smtlib.errors import InputError, TuningError
from smtlib.progress import SILENT, Progress
from smtlib.values import convert

if TYPE_CHECKING:  # annotations only: importing the k-best reader (numba) costs start-up time
    from smtlib.kbest.pool import KBestPool


@dataclasses.dataclass
class TuneResult:
    """What a tuner returns.

    Attributes
    ----------
    weights
        New weights, aligned with ``pool.feature_names``.
    info
        Numbers worth logging (training BLEU, iterations, objective), JSON-serialisable.
    """

    weights: np.ndarray
    info: dict[str, Any] = dataclasses.field(default_factory=dict)


#: model-score differences at or below this tie (the decoder and rerank compare float64 sums)
TIE_SPREAD = 1e-9
#: ... unless the weights' direction itself ties every sentence (then there is nothing to rank)
_DIRECTION_SPREAD = 1e-6


def check_tuned_weights(method: str, weights: np.ndarray, step: str,
                        scores: Callable[[np.ndarray], np.ndarray] | None = None,
                        offsets: np.ndarray | None = None) -> None:
    """Raise :class:`TuningError` for weights no decoder can use, naming ``method`` and ``step``.

    Non-finite or all-zero weights, and weights so small that the model scores of the hypotheses of
    every sentence tie (Moses issue 189: weights near 1e-39; ModernMT issue 75: zero weights
    reported as a success): their largest within-sentence score difference on the input
    (``scores(w)`` per row, rows grouped by ``offsets``; a lattice: all its edges as one group) is
    at most :data:`TIE_SPREAD` while the same direction at unit scale separates hypotheses.
    """
    weights = np.asarray(weights, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(weights))
    if len(bad):
        raise TuningError(f"{method}, {step}: the tuned weights are not finite ({len(bad)} of {len(weights)} "
                          f"values are NaN or infinite)")
    top = float(np.abs(weights).max()) if len(weights) else 0.0
    if top == 0.0:
        raise TuningError(f"{method}, {step}: the tuned weights are all zero (the model would score every "
                          f"hypothesis 0)")
    if scores is None:
        return
    spread_unit = _largest_spread(scores(weights / top), offsets)
    spread = spread_unit * top
    if spread_unit > _DIRECTION_SPREAD and spread <= TIE_SPREAD:
        raise TuningError(f"{method}, {step}: the tuned weights are so small (largest |w| = {top:.3g}) that "
                          f"the model scores of every sentence's hypotheses tie (largest difference "
                          f"{spread:.3g})")


def _largest_spread(values: np.ndarray, offsets: np.ndarray | None) -> float:
    """The largest ``max - min`` of ``values`` within a group of ``offsets`` (one group if None)."""
    if len(values) == 0:
        return 0.0
    if offsets is None:
        return float(values.max() - values.min())
    offsets = np.asarray(offsets, dtype=np.int64)
    starts = offsets[:-1][np.diff(offsets) > 0]
    return float((np.maximum.reduceat(values, starts) - np.minimum.reduceat(values, starts)).max())


class Tuner(abc.ABC):
    """Base class: subclasses set ``name``, ``defaults``, a docstring citing their paper, and ``fit``."""

    name: ClassVar[str] = ""
    #: hyper-parameter -> default (bool, int, float or str); the type of the default is the type
    defaults: ClassVar[dict[str, Any]] = {}
    #: False for methods that cannot use sparse features (MERT)
    supports_sparse: ClassVar[bool] = True
    #: where epoch/iteration/restart lines go (silent unless a command sets a real reporter)
    progress: Progress = SILENT
    #: what a failed step is called in errors (the command sets its output file)
    step: str = "this step"

    def __init__(self, seed: int = 0, **params: Any) -> None:
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise InputError(
                f"{self.name}: unknown hyper-parameter(s) {sorted(unknown)}; known: {', '.join(sorted(self.defaults)) or 'none'}"
            )
        self.seed = int(seed)
        self.params: dict[str, Any] = {k: convert(k, v, self.defaults[k], self.name) for k, v in {**self.defaults, **params}.items()}

    def report(self, unit: str, index: int, total: int | None = None, **values: Any) -> None:
        """One progress line (rate-limited, stderr) for step ``index`` of ``total``; no effect on results."""
        self.progress.step(unit, index, total, **values)

    def report_score(self, unit: str, index: int, total: int | None, metric: str, score: float, best: float,
                     **values: Any) -> None:
        """:meth:`report` with a score and the best so far: BLEU (0-1) shown in percent as ``bleu=``."""
        scale = 100.0 if metric == "bleu" else 1.0
        self.report(unit, index, total, **values, **{metric: scale * score, "best": scale * best})

    def lbfgs_callback(self, total: int | None = None) -> Callable[[Any], None] | None:
        """A ``scipy.optimize.minimize`` callback reporting each iteration's objective (None when silent).

        scipy calls it after every iteration with the current ``intermediate_result``; it reads
        ``fun`` and returns nothing, so the optimisation is unchanged.
        """
        if self.progress is SILENT:
            return None
        count = [0]

        def callback(intermediate_result: Any) -> None:
            count[0] += 1
            self.report("iteration", count[0], total, objective=float(intermediate_result.fun))

        return callback

    def rng(self) -> np.random.Generator:
        """A fresh generator from the seed: fit() is a pure function of (pool, init, seed)."""
        return np.random.default_rng(self.seed)

    @abc.abstractmethod
    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        """New weights for ``pool`` starting from ``init`` (aligned with ``pool.feature_names``)."""

    def bleu_sentence(self, stats: np.ndarray) -> np.ndarray | None:
        """The tuner's own sentence-level BLEU of BLEU statistics rows, used for the BLEU part of a
        metric mixture's sentence scores (None: sacrebleu's ``sentence_bleu``)."""
        return None

    def corpus_metric(self, mixture, stats: np.ndarray):
        """The :class:`~smtlib.tuners.mert_metric.CorpusMetric` of a metric or mixture of
        :mod:`smtlib.bleu.metrics` over its statistics (``mixture.stats(...)``), for :meth:`__call__`
        (issue 25). Only tuners with a ``fit_metric`` (the registry's ``metrics="any"``) take one."""
        from smtlib.tuners.mert_metric import mixture_metric

        return mixture_metric(mixture, stats, self.bleu_sentence)

    def __call__(self, pool: KBestPool, init: np.ndarray, metric=None) -> TuneResult:
        """Validate, fit (toward ``metric``, a :class:`~smtlib.tuners.mert_metric.CorpusMetric`, when
        given: the tuner's ``fit_metric``), and check the result (finite, not all zero)."""
        if metric is not None and not hasattr(self, "fit_metric"):
            raise InputError(f"{self.name} tunes toward BLEU only")
        if pool.stats is None:
            raise ValueError("pool has no BLEU statistics: call pool.compute_stats(references) first")
        if pool.n_hypotheses == 0:
            raise InputError("the k-best pool is empty")
        init = np.asarray(init, dtype=np.float64)
        if init.shape != (len(pool.feature_names),):
            raise ValueError(f"init has shape {init.shape}, expected ({len(pool.feature_names)},)")
        if not self.supports_sparse and pool.has_sparse():
            raise InputError(f"{self.name} works on dense features only; the pool has {len(pool.sparse_names)} sparse features")
        try:
            result = self.fit(pool, init.copy()) if metric is None else self.fit_metric(pool, init.copy(), metric)
        finally:
            self.progress.finish()
        check_tuned_weights(self.name, result.weights, self.step, pool.model_scores, pool.offsets)
        return result
