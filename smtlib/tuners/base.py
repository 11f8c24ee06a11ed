"""The tuner contract, one base class per input kind, and the one check of a step's result.

Every tuner is constructed with all its hyper-parameters (defaults = the papers' settings) and a
seed (:class:`Tuner`). What a step reads decides its kind (the registry's
:data:`~smtlib.tuners.registry.INPUT_KINDS`, which ``smtlib tune`` dispatches on):

* :class:`KBestTuner` (``kbest``): ``fit(pool, init)`` on a k-best pool;
* :class:`LatticeTuner` (``lattice``: lb-mert, lb-mira): ``fit_lattices(ls, refs, init)`` on a
  :class:`~smtlib.lattice.lattice_set.LatticeSet`, plus the paths it found for the next
  iteration (:attr:`LatticeTuner.new_paths`);
* :class:`OnlineTuner` (``online``: online MIRA): ``run_shard`` decodes one shard's sentences with
  the decoder in the loop, ``mix_shards`` mixes the shards' results.

Every tuner, whatever its kind, also takes a step on a k-best pool (``fit``, run through
:meth:`Tuner.__call__`): a pool is a lattice set whose lattices are bundles of whole paths, and
the search space of online MIRA's Algorithm 1 can be replaced by the pool's hypotheses; the tuners'
common tests rely on it. The kinds' entry points for a command (:meth:`Tuner.__call__`,
:meth:`LatticeTuner.tune_lattices`, :meth:`OnlineTuner.mix_shards`) end with the same check of the
weights they return (:meth:`Tuner.check_result`: :func:`check_tuned_weights`).

``fit`` returns new weights aligned with ``pool.feature_names``. The pool carries its BLEU
statistics (``pool.stats``, computed by the caller with the requested BLEU settings), the
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
    from smtlib.lattice.lattice_set import LatticeSet
    from smtlib.lattice.stats import LatticeReferences


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
    every sentence tie (moses-smt/mosesdecoder#189: weights near 1e-39; modernmt/modernmt#75: zero weights
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
    """What every tuner has: subclasses (through their kind's base class) set ``name``, ``defaults``,
    a docstring citing their paper, and ``fit`` (a step on a k-best pool)."""

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
        """The :class:`~smtlib.tuners.corpus_metric.CorpusMetric` of a metric or mixture of
        :mod:`smtlib.bleu.metrics` over its statistics (``mixture.stats(...)``), for :meth:`__call__`
        Only tuners with a ``fit_metric`` (the registry's ``metrics="any"``) take one."""
        from smtlib.tuners.corpus_metric import mixture_metric

        return mixture_metric(mixture, stats, self.bleu_sentence)

    def __call__(self, pool: KBestPool, init: np.ndarray, metric=None) -> TuneResult:
        """Validate, fit (toward ``metric``, a :class:`~smtlib.tuners.corpus_metric.CorpusMetric`, when
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
        self.check_result(result.weights, pool.model_scores, pool.offsets)
        return result

    def check_result(self, weights: np.ndarray, scores: Callable[[np.ndarray], np.ndarray] | None = None,
                     offsets: np.ndarray | None = None, what: str = "") -> None:
        """The check every kind's step ends with (:func:`check_tuned_weights`, naming this tuner and
        :attr:`step`, followed by ``what``): ``scores``/``offsets`` are the input's model scores as a
        function of the weights and their groups (None: only finite and not all zero)."""
        step = f"{self.step} ({what})" if what else self.step
        check_tuned_weights(self.name, weights, step, scores, offsets)


class KBestTuner(Tuner):
    """A tuner that reads a k-best pool (the ``kbest`` kind): ``fit(pool, init)`` is its whole contract."""


class LatticeTuner(Tuner):
    """A tuner that reads lattices (the ``lattice`` kind: lb-mert, lb-mira).

    Subclasses implement :meth:`fit_lattices` and :attr:`new_paths`; on a k-best pool (:meth:`fit`)
    every hypothesis is a whole-path edge that carries the pool's statistics.
    """

    #: threads a step may use (``smtlib tune --jobs``); never a hyper-parameter: results do not depend on it
    threads: int = 1

    @abc.abstractmethod
    def fit_lattices(self, ls: LatticeSet, refs: LatticeReferences, init: np.ndarray) -> TuneResult:
        """New weights for the lattice set ``ls`` (aligned with ``ls.all_feature_names``) from ``init``."""

    @property
    @abc.abstractmethod
    def new_paths(self) -> list[tuple[int, np.ndarray]]:
        """``(sentence, global edge ids)`` of the lattice paths the last fit found that the next
        iteration aggregates (``smtlib tune --paths-out``)."""

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        """:meth:`fit_lattices` on a k-best pool: every hypothesis a whole path with the pool's statistics."""
        from smtlib.lattice.lattice_set import lattice_set_from_pool
        from smtlib.lattice.stats import empty_references

        return self.fit_lattices(lattice_set_from_pool(pool), empty_references(pool.n_sentences), init)

    def tune_lattices(self, ls: LatticeSet, refs: LatticeReferences, init: np.ndarray) -> TuneResult:
        """Fit on the lattices and check the result (every edge of the lattices as one group of scores)."""
        init = np.asarray(init, dtype=np.float64)
        if init.shape != (len(ls.all_feature_names),):
            raise ValueError(f"init has shape {init.shape}, expected ({len(ls.all_feature_names)},)")
        try:
            result = self.fit_lattices(ls, refs, init.copy())
        finally:
            self.progress.finish()
        self.check_result(result.weights, ls.edge_scores)
        return result


class OnlineTuner(Tuner):
    """A tuner with the decoder in its loop (the ``online`` kind: online MIRA).

    One epoch is :meth:`run_shard` for every shard (each decodes its sentences with the weights it
    updates), then :meth:`mix_shards`; the workflow runs each shard as a job of its own.
    """

    @abc.abstractmethod
    def run_shard(self, model_dir, sources: list[str], references: list[list[str]], init: dict[str, float],
                  shard: int, *, settings, bg=None, decoder_options: dict | None = None) -> dict:
        """One epoch of one shard from the weights ``init``; a JSON-serialisable result for :meth:`mix_shards`."""

    @abc.abstractmethod
    def mix_epoch(self, shards: list[dict], previous: dict | None) -> dict:
        """The epoch's mixture of the shards' results (``previous``: the last epoch's), with its
        ``average`` and ``mixed`` weights as name -> value maps."""

    def mix_shards(self, shards: list[dict], previous: dict | None = None) -> dict:
        """:meth:`mix_epoch`, then the check of both weight vectors it gives (no input to score them on)."""
        mixed = self.mix_epoch(shards, previous)
        for key in ("average", "mixed"):
            self.check_result(np.array(list(mixed[key].values())), what=f"{key} weights")
        return mixed


#: the base class of each input kind (:data:`smtlib.tuners.registry.INPUT_KINDS`); the registry names
#: a tuner's kind without importing it, and a test checks that every registered class has its kind's base
KIND_BASES: dict[str, type[Tuner]] = {"kbest": KBestTuner, "lattice": LatticeTuner, "online": OnlineTuner}
