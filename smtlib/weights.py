"""Weight vectors: reading and writing weights files, and moses.ini ``[weight]`` sections.

The weights file (``CONTRACT.md``) has one ``name value`` per line, ``#`` comments allowed. Each
value of a dense feature is named ``NAME_k`` with a 0-based ``k`` (``LM0_0``,
``TranslationModel0_0`` ... ``TranslationModel0_3``; old dialect ``d_0`` ... ``w_0``); sparse
features keep their own names. A feature missing from the file has weight 0.

In moses.ini the same weights are grouped per feature: ``TranslationModel0= 0.2 0.2 0.2 0.2``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines

_DENSE_VALUE = re.compile(r"^(?P<group>.+)_(?P<k>\d+)$")


def read_weights(path: str | os.PathLike) -> dict[str, float]:
    """Read a weights file into an ordered ``{name: value}`` dict.

    Raises
    ------
    InputError
        On a line that is not ``name value``, a value that is not a finite number, or a name
        given twice.
    """
    weights: dict[str, float] = {}
    for lineno, raw in enumerate(read_lines(path, what="weights file", allow_empty=True), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise InputError(f"expected 'name value', got {raw.strip()!r}", path, lineno)
        name, text = parts
        try:
            value = float(text)
        except ValueError:
            raise InputError(f"weight of {name!r} is not a number: {text!r}", path, lineno) from None
        if not math.isfinite(value):
            raise InputError(f"weight of {name!r} is not finite: {text!r}", path, lineno)
        if name in weights:
            raise InputError(f"feature {name!r} given twice", path, lineno)
        weights[name] = value
    return weights


def format_value(value: float) -> str:
    """A float as the shortest text that reads back to the same float."""
    text = repr(float(value))
    if text in ("0.0", "-0.0"):
        return "0"
    return text[:-2] if text.endswith(".0") else text


def write_weights(path: str | os.PathLike, weights: Mapping[str, float], *, header: str | None = None) -> None:
    """Write ``weights`` atomically, one ``name value`` per line, in the mapping's order."""
    with atomic_output(path) as out:
        if header:
            for line in header.splitlines():
                out.write(f"# {line}\n")
        for name, value in weights.items():
            if not math.isfinite(value):
                raise InputError(f"refusing to write a non-finite weight for {name!r}", path)
            out.write(f"{name} {format_value(value)}\n")


def weights_vector(weights: Mapping[str, float], names: Iterable[str]) -> np.ndarray:
    """The weights as an array aligned with ``names`` (a feature missing from ``weights`` is 0)."""
    return np.array([weights.get(name, 0.0) for name in names], dtype=np.float64)


def vector_to_weights(names: Iterable[str], values: np.ndarray) -> dict[str, float]:
    """``{name: value}`` for an array aligned with ``names``."""
    return {name: float(v) for name, v in zip(names, values, strict=True)}


def group_dense(weights: Mapping[str, float]) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Split weights into dense groups (``NAME_k`` with consecutive k from 0) and sparse ones."""
    candidates: dict[str, dict[int, float]] = {}
    for name, value in weights.items():
        match = _DENSE_VALUE.match(name)
        if match:
            candidates.setdefault(match["group"], {})[int(match["k"])] = value
    dense: dict[str, list[float]] = {}
    dense_names: set[str] = set()
    for group, values in candidates.items():
        if sorted(values) == list(range(len(values))):
            dense[group] = [values[k] for k in range(len(values))]
            dense_names.update(f"{group}_{k}" for k in range(len(values)))
    sparse = {name: value for name, value in weights.items() if name not in dense_names}
    return dense, sparse


def to_moses_ini(weights: Mapping[str, float]) -> str:
    """A moses.ini ``[weight]`` section for ``weights``.

    Dense groups are written ``NAME= v0 v1 ...``; sparse features are written one per line as
    ``name= value``, as Moses writes sparse weights inline.
    """
    dense, sparse = group_dense(weights)
    lines = ["[weight]"]
    lines += [f"{group}= " + " ".join(format_value(v) for v in values) for group, values in dense.items()]
    lines += [f"{name}= {format_value(v)}" for name, v in sparse.items()]
    return "\n".join(lines) + "\n"


#: old-style moses.ini sections (one value per line) and the n-best label of their feature
OLD_SECTIONS = {"weight-d": "d", "weight-l": "lm", "weight-t": "tm", "weight-w": "w", "weight-generation": "g", "weight-i": "I"}


def from_moses_ini(path: str | os.PathLike) -> dict[str, float]:
    """Read the weights of a moses.ini into smtlib names.

    Both dialects are read: the ``[weight]`` section (``NAME= v0 v1 ...``; a feature with several
    values becomes ``NAME_0 .. NAME_{n-1}``, a feature with one value ``NAME_0`` too unless its
    name contains ``_``, Moses's rule for sparse features) and the old sections ``[weight-d]``,
    ``[weight-l]``, ``[weight-t]``, ``[weight-w]`` with one value per line (``d_0`` ... ``w_0``, the
    names of the old n-best dialect).

    Raises
    ------
    InputError
        If the file has no weights or a value is not a number.
    """
    lines = read_lines(path, what="moses.ini")
    weights: dict[str, float] = {}
    section = None
    for lineno, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        if section in OLD_SECTIONS:
            label = OLD_SECTIONS[section]
            try:
                value = float(line)
            except ValueError:
                raise InputError(f"non-numeric weight in [{section}]: {line!r}", path, lineno) from None
            k = sum(1 for name in weights if name.rsplit("_", 1)[0] == label)
            weights[f"{label}_{k}"] = value
            continue
        if section != "weight":
            continue
        if "=" not in line:
            raise InputError(f"expected 'NAME= values' in [weight], got {line!r}", path, lineno)
        name, _, rest = line.partition("=")
        name = name.strip()
        try:
            values = [float(v) for v in rest.split()]
        except ValueError:
            raise InputError(f"non-numeric weight for {name!r}", path, lineno) from None
        if not values:
            raise InputError(f"no value for {name!r}", path, lineno)
        if len(values) == 1 and "_" in name:
            weights[name] = values[0]
        else:
            for k, value in enumerate(values):
                weights[f"{name}_{k}"] = value
    if not weights:
        raise InputError("no weights found ([weight] or [weight-*] sections)", path)
    return weights
