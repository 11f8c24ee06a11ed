"""The step between epochs of distributed pairwise-ranking SGD (Simianer, Riezler & Dyer 2012,
Algorithms 1-4) when each shard of each epoch is its own job (``smtlib sgd mix``/``choose``,
``rules/simianer.smk``); the shards' passes are :mod:`smtlib.tuners.sgd_decode`'s.

``sgd`` (Algorithm 1, one shard) and ``mixsgd`` (Algorithm 2)
    every shard continues from its own weights (``--next`` is not used); the returned vector after
    epoch t is (1/Z) Σ_z (1/t) Σ_{t'≤t} w_{z,t'} (Algorithm 1's average over epochs, mixed over shards).
``itermixsgd`` (Algorithm 3)
    v = (1/Z) Σ_z w_z, the start of every shard in the next epoch and the returned vector.
``iterselsgd`` (Algorithm 4)
    the K feature columns of W = [w_1 ... w_Z] with the largest ℓ2 norm are kept and averaged, the
    others set to 0 (ℓ1/ℓ2 joint selection). K: ``--k``, else ceil(``--k-fraction`` × D) (D: features
    with a non-zero weight in some shard; default 100,000 / 4.7M, the paper's share, Table 2), never
    fewer than the dense features (as :class:`smtlib.tuners.sgd.IterSelSGD`).

The shards' passes decode each sentence with the weights left by the sentences before it, as the
algorithms do (``smtlib sgd pass``, :mod:`smtlib.tuners.sgd_decode`).
"""

from __future__ import annotations

import numpy as np

from smtlib.errors import InputError
from smtlib.tuners.sgd import PAPER_K_FRACTION, select_columns, selected_count
from smtlib.weights import is_dense_name

ALGORITHMS = ("sgd", "mixsgd", "itermixsgd", "iterselsgd")


def stack_weights(weights: list[dict[str, float]]) -> tuple[list[str], np.ndarray]:
    """Feature names (dense first in file order, then sparse sorted) and the Z x D matrix W."""
    dense: dict[str, None] = {}
    sparse: set[str] = set()
    for w in weights:
        for name in w:
            if is_dense_name(name):
                dense.setdefault(name)
            else:
                sparse.add(name)
    names = list(dense) + sorted(sparse)
    index = {n: i for i, n in enumerate(names)}
    matrix = np.zeros((len(weights), len(names)))
    for z, w in enumerate(weights):
        for name, value in w.items():
            matrix[z, index[name]] = value
    return names, matrix



def mix_epoch(
    algorithm: str,
    shard_weights: list[dict[str, float]],
    state: dict | None,
    *,
    k: int = 0,
    k_fraction: float = PAPER_K_FRACTION,
) -> tuple[dict[str, float], dict[str, float], dict]:
    """One mixing step (see the module docstring): (returned vector, next start, new state)."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    if algorithm == "sgd" and len(shard_weights) != 1:
        raise InputError(f"sgd (Algorithm 1) has one shard, got {len(shard_weights)} shard weights")
    names, matrix = stack_weights(shard_weights)
    n_dense = sum(1 for n in names if is_dense_name(n))
    epoch = 1 if state is None else int(state["epoch"]) + 1
    info: dict = {"algorithm": algorithm, "epoch": epoch, "shards": len(shard_weights),
                  "features_in_shards": int(np.count_nonzero(np.any(matrix != 0, axis=0)))}
    if algorithm in ("sgd", "mixsgd"):
        mean = matrix.sum(axis=0) / len(shard_weights)
        total = dict(state["sum"]) if state else {}
        for name, value in zip(names, mean.tolist()):
            total[name] = total.get(name, 0.0) + value
        out = {name: value / epoch for name, value in total.items()}
        nxt: dict[str, float] = {}  # every shard goes on from its own weights
        info["sum"] = total
    elif algorithm == "itermixsgd":
        mean = matrix.sum(axis=0) / len(shard_weights)
        out = dict(zip(names, mean.tolist()))
        nxt = out
    else:
        if not (k >= 0 and 0.0 < k_fraction <= 1.0):
            raise InputError("iterselsgd: --k must be >= 0 and --k-fraction in (0, 1]")
        kept = selected_count(n_dense, info["features_in_shards"], k, k_fraction)
        columns = select_columns(matrix, kept)
        mean = np.zeros(len(names))
        mean[columns] = matrix[:, columns].sum(axis=0) / len(shard_weights)
        out = {names[c]: float(mean[c]) for c in columns.tolist()}
        for name in names[:n_dense]:
            out.setdefault(name, 0.0)
        nxt = out
        info["k"] = int(kept)
    info["nonzero_features"] = sum(1 for v in out.values() if v != 0.0)
    out = {n: v for n, v in out.items() if v != 0.0 or is_dense_name(n)}
    nxt = {n: v for n, v in nxt.items() if v != 0.0 or is_dense_name(n)}
    return out, nxt, info


def choose_epoch(bleus: list[float]) -> int:
    """1-based epoch of the best devtest BLEU; ties go to the earlier epoch."""
    if not bleus:
        raise InputError("no epoch to choose from")
    return int(np.argmax(np.asarray(bleus))) + 1
