"""Features held fixed (``--fixed``) and weight ranges (``--range``) for every tuner.

**Resolving names.** A name is a weight name of the pool (``LM0_0``, a sparse name, a Joshua name)
or a dense feature's name (``TranslationModel0``: every value of it), as mert-moses.pl's
``--activate-features`` (``tm_0,tm_4,d_0``) and ``--range tm:0..1`` name them. A name the pool
does not have is an error with "did you mean" (:func:`resolve`).

**MERT** respects both inside its search (:class:`smtlib.loop.bounded_mert.BoundedMert`): the fixed
features are never a search direction and keep their value in every random restart (mert-moses.pl's
``--activate-features``: "others are fixed to the starting values"); random restarts are drawn
inside the ranges (mert-moses.pl ``--range``, "min and max value for some features ... for random
generation") and, going further than Moses's ``mert`` (whose line search ignores the ranges), every
line search only considers the part of the line inside the box.

**Every other tuner** optimizes on a pool whose fixed features are folded into one feature
(:func:`fold_fixed`): its value on a hypothesis is the fixed features' contribution to the model
score, sum of w_f h_f over the fixed f, with starting weight 1. The tuner sees the model as the
decoder scores it and moves only the other weights and the fold's weight λ; dividing the result by λ
(:func:`unfold`) gives back a weight vector in which the fixed features have exactly their values
and every hypothesis keeps its ranking (a positive scale changes no argmax). Should the tuner
return λ <= 0 (it wants the fixed features' contribution reversed or off), the fixed weights are
written back unchanged without rescaling and the step's info says so. Ranges for these tuners are
applied by clipping the weights after the step (:func:`clip`), which ``smtlib loop --help`` says.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from smtlib.errors import InputError
from smtlib.kbest.format import FeatureGroup
from smtlib.kbest.pool import KBestPool
from smtlib.loop.options import RangeSpec
from smtlib.weights import closest_name

_DENSE_VALUE = re.compile(r"^(?P<group>.+)_(?P<k>\d+)$")


@dataclasses.dataclass(frozen=True)
class Box:
    """The constraints aligned with a pool's ``feature_names``: which weights are fixed, and their bounds."""

    fixed: np.ndarray  #: (D,) bool
    lower: np.ndarray  #: (D,) float64, -inf where unbounded
    upper: np.ndarray  #: (D,) float64, +inf where unbounded

    @property
    def free(self) -> np.ndarray:
        return ~self.fixed

    @property
    def has_fixed(self) -> bool:
        return bool(self.fixed.any())

    @property
    def has_ranges(self) -> bool:
        return bool(np.isfinite(self.lower).any() or np.isfinite(self.upper).any())

    @property
    def active(self) -> bool:
        """Whether there is any constraint at all."""
        return self.has_fixed or self.has_ranges

    @classmethod
    def none(cls, n: int) -> Box:
        return cls(np.zeros(n, dtype=bool), np.full(n, -np.inf), np.full(n, np.inf))


def _matches(pattern: str, names: Sequence[str]) -> list[int]:
    """Indices of ``names`` that ``pattern`` names: the name itself, or every value ``pattern_k`` of a dense feature."""
    exact = [i for i, n in enumerate(names) if n == pattern]
    if exact:
        return exact
    return [i for i, n in enumerate(names) if (m := _DENSE_VALUE.match(n)) and m["group"] == pattern]


def resolve(feature_names: Sequence[str], fixed: Sequence[str], ranges: Sequence[RangeSpec], *,
            what: str = "the decoder's n-best lists") -> Box:
    """The :class:`Box` of ``--fixed`` and ``--range`` over ``feature_names``.

    Raises
    ------
    InputError
        For a name that is no feature of ``feature_names`` (with the closest one).
    """
    names = list(feature_names)
    n = len(names)
    box = Box(np.zeros(n, dtype=bool), np.full(n, -np.inf), np.full(n, np.inf))
    for option, pattern in [("--fixed", p) for p in fixed] + [("--range", r.name) for r in ranges]:
        if not _matches(pattern, names):
            guess = closest_name(pattern, names)
            hint = f" (did you mean {guess!r}?)" if guess else ""
            raise InputError(f"{option} {pattern}: no feature of {what} has this name{hint}")
    for pattern in fixed:
        box.fixed[_matches(pattern, names)] = True
    for spec in ranges:
        rows = [i for i in _matches(spec.name, names) if not box.fixed[i]]  # a fixed weight stays as it is
        box.lower[rows] = spec.low
        box.upper[rows] = spec.high
    return box


def clip(weights: np.ndarray, box: Box) -> tuple[np.ndarray, list[int]]:
    """``weights`` clipped into the box (fixed features untouched) and the indices that moved."""
    clipped = np.where(box.fixed, weights, np.clip(weights, box.lower, box.upper))
    moved = np.flatnonzero(clipped != weights).tolist()
    return clipped, moved


def fold_fixed(pool: KBestPool, box: Box, current: np.ndarray) -> tuple[KBestPool, np.ndarray]:
    """The pool the tuners see when some features are fixed, and the starting weights on it.

    Its dense columns are the free dense features, then the fold (the fixed features' contribution
    ``sum_f current[f] h_f``); its sparse columns the free sparse features. Texts, statistics and
    sentence ranges are the pool's (the rows are the same hypotheses). Start: the free features'
    current weights, 1 for the fold.
    """
    n_dense = pool.dense.shape[1]
    fixed = box.fixed
    free_dense = np.flatnonzero(~fixed[:n_dense])
    free_sparse = np.flatnonzero(~fixed[n_dense:])
    fold = pool.model_scores(np.where(fixed, current, 0.0))
    dense = np.column_stack([pool.dense[:, free_dense], fold]) if pool.n_hypotheses else np.zeros((0, len(free_dense) + 1))
    sparse = sp.csr_matrix(pool.sparse[:, free_sparse]) if pool.sparse.shape[1] else pool.sparse
    sparse_names = [pool.sparse_names[i] for i in free_sparse]
    reduced = KBestPool(
        offsets=pool.offsets, texts=pool.texts, dense=np.ascontiguousarray(dense, dtype=np.float64),
        groups=(FeatureGroup("LoopFree", len(free_dense) + 1),), sparse=sparse, sparse_names=sparse_names,
        totals=pool.totals, extras=pool.extras, stats=pool.stats, stats_settings=pool.stats_settings,
        other_stats=dict(pool.other_stats),
    )
    start = np.concatenate([current[free_dense], [1.0], current[n_dense:][free_sparse]])
    return reduced, start


def unfold(result: np.ndarray, box: Box, current: np.ndarray, n_dense: int) -> tuple[np.ndarray, dict]:
    """Weights over the pool's features from a tuner's result on :func:`fold_fixed`'s pool.

    Returns the weights and what happened (``fold_weight``, and ``note`` when it was <= 0).
    """
    fixed = box.fixed
    free_dense = np.flatnonzero(~fixed[:n_dense])
    free_sparse = np.flatnonzero(~fixed[n_dense:]) + n_dense
    k = len(free_dense)
    lam = float(result[k])
    free_values = np.concatenate([result[:k], result[k + 1:]])
    info: dict = {"fold_weight": lam}
    if lam > 0:
        free_values = free_values / lam
    else:
        info["note"] = (f"the tuner gave the fixed features' combined weight {lam:.6g} <= 0: the fixed weights are kept "
                        "and the others are not rescaled")
    weights = current.astype(np.float64).copy()
    weights[np.concatenate([free_dense, free_sparse]).astype(np.int64)] = free_values
    return weights, info


def describe(box: Box, names: Sequence[str]) -> Mapping[str, object]:
    """The box as JSON for the step's info: fixed names and ranges."""
    return {
        "fixed": [names[i] for i in np.flatnonzero(box.fixed)],
        "ranges": {names[i]: [float(box.lower[i]), float(box.upper[i])]
                   for i in np.flatnonzero(np.isfinite(box.lower) | np.isfinite(box.upper))},
    }
