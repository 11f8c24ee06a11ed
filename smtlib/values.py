"""Text to values, one way for the whole project: numbers in files, and ``--set``/``--param`` options.

Numbers. Every number read from a file (k-best features and totals, weights, lattices, moses.ini)
follows one grammar, ``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?``, and must be finite.
Python's ``float`` also accepts ``nan``, ``inf``, ``1_000`` and surrounding blanks; none of these
is a number here, so a damaged value is an error instead of a silent NaN.

Options. ``--set key=value`` (tuners) and ``--param key=value`` (sentence-BLEU variants) convert
the text to the type of the parameter's default with :func:`convert`: ``bool`` accepts
``true/false/yes/no/on/off/1/0`` (any case) and nothing else, ``int`` an optionally signed integer,
``float`` a number by the grammar above or ``inf``/``-inf``, ``str`` any text. A typo is an error
naming the parameter, never a silent ``False`` or a truncated value.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from typing import Any

from smtlib.errors import InputError

NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INTEGER = re.compile(r"[+-]?[0-9]+")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def parse_number(text: str, what: str = "value", path=None, line: int | None = None) -> float:
    """``text`` as a finite float, by the grammar of the module docstring.

    Raises
    ------
    InputError
        ``"{what} '{text}' is not a number"`` (or ``"is not finite"``), naming ``path`` and ``line``.
    """
    if NUMBER.fullmatch(text) is None:
        try:
            finite = math.isfinite(float(text))
        except ValueError:
            finite = True
        raise InputError(f"{what} {text!r} is not {'a number' if finite else 'finite'}", path, line)
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"{what} {text!r} is not finite", path, line)
    return value


def parse_bool(text: str, what: str = "value") -> bool:
    """``true/yes/on/1`` or ``false/no/off/0`` (any case); anything else is an InputError."""
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InputError(f"{what}={text!r}: expected a boolean ({'/'.join(_TRUE)} or {'/'.join(_FALSE)})")


def convert(name: str, value: Any, default: Any, owner: str = "") -> Any:
    """An option value (``--set``/``--param`` text, or a Python value) as the type of ``default``.

    Parameters
    ----------
    name
        The parameter's name, for messages.
    value
        Text from the command line, or a value given in Python (checked, not converted, except
        that an ``int`` is accepted for a ``float`` parameter).
    default
        The parameter's default; its type is the parameter's type.
    owner
        Who has the parameter (a tuner or variant name), for messages.

    Raises
    ------
    InputError
        If the value does not fit the type.
    """
    what = f"{owner}: {name}" if owner else name
    if isinstance(default, bool):
        if isinstance(value, str):
            return parse_bool(value, what)
        if value is True or value is False or (isinstance(value, numbers.Integral) and value in (0, 1)):
            return bool(value)
        if type(value).__name__ == "bool_":  # numpy's booleans
            return bool(value)
        raise InputError(f"{what}={value!r}: expected a boolean")
    if isinstance(default, int):
        if isinstance(value, str):
            if INTEGER.fullmatch(value.strip()) is None:
                raise InputError(f"{what}={value!r}: expected an integer")
            return int(value)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, numbers.Real) and float(value).is_integer():
            return int(value)
        raise InputError(f"{what}={value!r}: expected an integer")
    if isinstance(default, float):
        if isinstance(value, str):
            text = value.strip()
            if text.lower() in ("inf", "+inf", "-inf"):
                return float(text)
            if NUMBER.fullmatch(text) is None:
                raise InputError(f"{what}={value!r}: expected a number")
            return float(text)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
            raise InputError(f"{what}={value!r}: expected a number")
        return float(value)
    if isinstance(default, str) and not isinstance(value, str):
        raise InputError(f"{what}={value!r}: expected text")
    return value


def integer_at_least(minimum: int) -> Callable[[str], int]:
    """An ``argparse`` option type: an integer of at least ``minimum``, else argparse's usage error."""
    import argparse

    expected = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"

    def parse(text: str) -> int:
        if not INTEGER.fullmatch(text.strip()) or int(text) < minimum:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return int(text)

    return parse


def positive_float(text: str) -> float:
    """An ``argparse`` option type: a finite number above 0, else argparse's usage error."""
    import argparse

    value = float(text) if NUMBER.fullmatch(text.strip()) else math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text!r}")
    return value
