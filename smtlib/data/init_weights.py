"""Initial weights of a tuning run (Cherry & Foster 2012, §4.2).

"Feature weights are initialized to 1.0 for each of the TM, LM and distortion penalty features.
All other weights are initialized to 0.0." The dense features come from the model directory's
``model.yaml`` (``smtlib train``); a feature family whose name (without its trailing index, e.g.
``TranslationModel`` for ``TranslationModel1``) is in ``ones`` gets 1.0 for every value, every
other dense value 0.0, and sparse features are left out (a missing weight is 0).
"""

from __future__ import annotations

import os
import re

from smtlib.errors import InputError
from smtlib.weights import write_weights

#: the families set to 1.0 by Cherry & Foster §4.2 ("TM, LM and distortion penalty")
PAPER_ONES = ("TranslationModel", "LM", "Distortion")


def family(name: str) -> str:
    """``TranslationModel1`` -> ``TranslationModel``: a feature's name without its trailing index."""
    return re.sub(r"\d+$", "", name)


def initial_weights(dense_features: list[tuple[str, int]], ones: tuple[str, ...] = PAPER_ONES) -> dict[str, float]:
    """``NAME_k -> 1.0`` for the families in ``ones``, ``0.0`` for every other dense value."""
    weights: dict[str, float] = {}
    for name, size in dense_features:
        if size < 1:
            raise InputError(f"dense feature {name!r} has {size} values")
        value = 1.0 if family(name) in ones else 0.0
        for k in range(size):
            weights[f"{name}_{k}"] = value
    return weights


def write_initial_weights(model_dir: str | os.PathLike, out: str | os.PathLike,
                          ones: tuple[str, ...] = PAPER_ONES) -> dict[str, float]:
    """Write the initial weights of the model in ``model_dir`` to ``out`` (atomically) and return them."""
    from smtlib.system.modeldir import read_model_spec

    spec = read_model_spec(model_dir)
    weights = initial_weights([(str(n), int(s)) for n, s in spec.dense_features], ones)
    write_weights(out, weights, header=f"initial weights (Cherry & Foster 2012, 4.2): 1.0 for {', '.join(ones)}; "
                                       "0.0 for the rest")
    return weights
