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
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from smtlib.errors import InputError
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


class Tuner(abc.ABC):
    """Base class: subclasses set ``name``, ``defaults``, a docstring citing their paper, and ``fit``."""

    name: ClassVar[str] = ""
    #: hyper-parameter -> default (bool, int, float or str); the type of the default is the type
    defaults: ClassVar[dict[str, Any]] = {}
    #: False for methods that cannot use sparse features (MERT)
    supports_sparse: ClassVar[bool] = True
    #: where epoch/iteration/restart lines go (silent unless a command sets a real reporter)
    progress: Progress = SILENT

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

    def __call__(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        """Validate, fit, and check the result (finite, not all zero)."""
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
            result = self.fit(pool, init.copy())
        finally:
            self.progress.finish()
        if not np.all(np.isfinite(result.weights)):
            raise FloatingPointError(f"{self.name} produced non-finite weights")
        if not np.any(result.weights):
            warnings.warn(f"{self.name} produced all-zero weights; keeping the initial weights", stacklevel=2)
            result = TuneResult(init.copy(), {**result.info, "fallback": "all-zero weights, kept init"})
        return result
