"""One optimizer step of ``smtlib loop`` on the pool: runs, a starting method, constraints, interpolation.

A step (:func:`tune_step`) on the iteration's pool, from the weights the decoder used (``w_prev``):

1. **Runs** (``--runs R``): R optimizer runs, run r with seed ``seed + 1000 (it - 1) + r``
   (:func:`run_seed`; like mert-moses.pl's ``--predictable-seeds``, ``run * 1000``, the seed changes
   with the iteration so that MERT's random restarts differ, and a rerun gets the same seeds).
2. In each run, **a starting method** first (``--start-from pro``): its weights are where the
   method starts, mert-moses.pl's ``--pro-starting-point`` (PRO, then MERT from PRO's weights).
   Deviation: mert-moses.pl also hands MERT one extra dimension, the merged sparse features' weight;
   here MERT is dense-only and a pool with sparse features is an error, so there is none.
3. The method itself (any tuner of :mod:`smtlib.tuners.registry`; the lattice and
   decoder-in-the-loop methods take their step on the k-best pool, which every tuner has), with the
   features held fixed and the ranges of :mod:`smtlib.loop.constraints`: inside MERT's search
   (:class:`~smtlib.loop.bounded_mert.BoundedMert`), by folding the fixed features and clipping
   after the step for the others.
4. **Averaging**: the R runs' weight vectors are averaged feature by feature (the arithmetic mean of
   the weights as each run returns them; MERT and PRO return weights on one scale, the L1 norm of 1
   and of ``w_prev`` respectively, and the other tuners start from ``w_prev`` with the same
   hyper-parameters, so the runs agree in scale; ranges hold for the mean, which lies between the
   runs' values; fixed features keep their value). ``optimized`` is this mean.
5. **Historic interpolation** (``--historic-interpolation A``, 0 = off): ``w = A·optimized +
   (1 - A)·w_prev``, mert-moses.pl's rule (its ``$newweights[$i] = A * $newweights[$i] + (1 - A) *
   $historic_weights[$i]``: A is the share of the newly optimized weights, "factor [0;1] given to
   current weights"), the Ψ of Hopkins & May (2011, §5.4.3). Deviation: mert-moses.pl interpolates
   only from its fourth iteration on; here every iteration does, the first one with the initial
   weights. The result is the next iteration's weights.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from smtlib.kbest.pool import KBestPool
from smtlib.loop.bounded_mert import BoundedMert
from smtlib.loop.constraints import Box, clip, describe, fold_fixed, unfold
from smtlib.tuners.registry import get_tuner_class


@dataclasses.dataclass(frozen=True)
class StepSettings:
    """What a step is asked: the method and its settings (``--set``, raw text), the seed, the options."""

    method: str
    params: Mapping[str, str] = dataclasses.field(default_factory=dict)
    seed: int = 0
    runs: int = 1
    start_from: str | None = None
    historic_interpolation: float = 0.0
    #: the metric or mixture to tune toward (:func:`smtlib.bleu.metrics.parse_mixture`); None: BLEU
    mixture: object | None = None
    #: the ``start_from`` method's settings (``--start-set``, raw text)
    start_params: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class StepResult:
    """``optimized``: the runs' mean; ``weights``: after historic interpolation (the next weights)."""

    optimized: np.ndarray
    weights: np.ndarray
    info: dict


def run_seed(seed: int, iteration: int, run: int) -> int:
    """The seed of run ``run`` (0-based) of iteration ``iteration`` (1-based): ``seed + 1000 (it - 1) + run``."""
    return seed + 1000 * (iteration - 1) + run


def make_tuner(method: str, params: Mapping[str, str], seed: int, box: Box):
    """The tuner of ``method`` (MERT with constraints: :class:`BoundedMert`)."""
    if method == "mert" and box.active:
        tuner = BoundedMert(seed=seed, **params)
        tuner.box = box
        return tuner
    return get_tuner_class(method)(seed=seed, **params)


def _metric(tuner, pool: KBestPool, mixture, references):
    if mixture is None or mixture.is_bleu:
        return None
    return tuner.corpus_metric(mixture, pool.metric_stats(mixture, references))


def one_run(method: str, params: Mapping[str, str], seed: int, pool: KBestPool, start: np.ndarray, box: Box,
            mixture, references: Sequence[Sequence[str]], step: str) -> tuple[np.ndarray, dict]:
    """One run of ``method`` from ``start`` under the constraints: the weights over ``pool.feature_names``
    and the run's info (the tuner's own, its seed, and what the constraints did)."""
    tuner = make_tuner(method, params, seed, box)
    tuner.step = step
    folded = box.has_fixed and not isinstance(tuner, BoundedMert)
    target, init = fold_fixed(pool, box, start) if folded else (pool, start)
    result = tuner(target, init, _metric(tuner, target, mixture, references))
    weights = np.asarray(result.weights, dtype=np.float64)
    info = {"method": method, "seed": seed, **result.info}
    if folded:
        weights, fold_info = unfold(weights, box, start, pool.dense.shape[1])
        info.update(fold_info)
    if box.has_ranges and not isinstance(tuner, BoundedMert):
        weights, moved = clip(weights, box)
        info["clipped"] = [pool.feature_names[i] for i in moved]
    return weights, info


def tune_step(pool: KBestPool, references: Sequence[Sequence[str]], current: np.ndarray, box: Box,
              settings: StepSettings, iteration: int,
              score: Callable[[np.ndarray], float] | None = None) -> StepResult:
    """One step of the loop (see the module docstring) from ``current`` (over ``pool.feature_names``).

    ``score(weights)`` (e.g. the pool BLEU, 0-1) is recorded in the info for every run when given.

    Raises
    ------
    InputError
        For bad hyper-parameters or a method that cannot tune the pool (MERT on sparse features).
    TuningError
        For a run whose weights no decoder can use (:func:`smtlib.tuners.base.check_tuned_weights`).
    """
    current = np.asarray(current, dtype=np.float64)
    runs, infos = [], []
    for r in range(settings.runs):
        seed = run_seed(settings.seed, iteration, r)
        start = current
        info: dict = {"run": r + 1, "seed": seed}
        where = f"the step of iteration {iteration}" + (f", run {r + 1} of {settings.runs}" if settings.runs > 1 else "")
        if settings.start_from is not None:
            start, start_info = one_run(settings.start_from, settings.start_params, seed, pool, current, box, settings.mixture,
                                        references, f"{where} (--start-from {settings.start_from})")
            info["start_from"] = {**start_info, "weights": dict(zip(pool.feature_names, map(float, start), strict=True))}
            if score is not None:
                info["start_from"]["pool_score"] = score(start)
        weights, method_info = one_run(settings.method, settings.params, seed, pool, start, box, settings.mixture,
                                       references, where)
        info["tuner"] = method_info
        info["weights"] = dict(zip(pool.feature_names, map(float, weights), strict=True))
        if score is not None:
            info["pool_score"] = score(weights)
        runs.append(weights)
        infos.append(info)
    optimized = np.mean(np.vstack(runs), axis=0) if len(runs) > 1 else runs[0]
    a = settings.historic_interpolation
    weights = a * optimized + (1.0 - a) * current if 0.0 < a < 1.0 else optimized
    info = {"method": settings.method, "runs": infos, "averaged_runs": settings.runs,
            "historic_interpolation": a, "constraints": describe(box, pool.feature_names)}
    return StepResult(optimized, weights, info)
