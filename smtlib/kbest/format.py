"""The Moses n-best line format and its dialects.

A line is ``ID ||| hypothesis ||| features ||| total`` with optional further fields (word
alignment, segmentation), which are kept verbatim. The features field holds, in order:

* Moses groups ``Name= v1 v2 ...``: a dense feature with one or more values, named ``Name_0``,
  ``Name_1`` ... (``TranslationModel0= a b c d``, ``LM0= x``);
* the old Moses dialect ``d: v ... lm: v tm: v ... w: v`` (labels end in ``:``), named the same way
  (``d_0`` ... ``w_0``);
* Moses sparse features ``name= v``: one value and a name containing ``_`` (Moses's own rule in
  ``mert/Data.cpp``), kept under their own name (``WT_ovat~have``);
* Joshua's ``name=value`` tokens, one feature each, kept under their own name (``tm_pt_0``);
* Z-MERT's unlabeled values (a field of numbers only), read as one group named ``F``
  (``F_0``, ``F_1`` ...), in the order of Z-MERT's params.txt.

Ids are 0-based sentence numbers. Dense values are stored in a matrix, sparse ones in a CSR matrix.
"""

from __future__ import annotations

import dataclasses
import math

from smtlib.errors import InputError

SEPARATOR = "|||"
UNLABELED = "F"  #: group name for Z-MERT's unlabeled feature values


@dataclasses.dataclass(frozen=True)
class FeatureGroup:
    """A dense feature as written in a k-best line.

    Attributes
    ----------
    label
        ``TranslationModel0``, ``d`` (old dialect) or a Joshua name.
    size
        Number of values.
    style
        ``=`` (Moses ``Name= v ...``), ``:`` (old Moses ``name: v ...``) or ``joshua`` (``name=v``).
    """

    label: str
    size: int
    style: str = "="

    def column_names(self) -> list[str]:
        if self.style == "joshua":
            return [self.label]
        return [f"{self.label}_{k}" for k in range(self.size)]

    def render(self, values) -> str:
        from smtlib.weights import format_value

        if self.style == "joshua":
            return f"{self.label}={format_value(values[0])}"
        return f"{self.label}{self.style} " + " ".join(format_value(v) for v in values)


@dataclasses.dataclass
class ParsedLine:
    """One parsed n-best line."""

    sentence_id: int
    text: str
    groups: tuple[FeatureGroup, ...]  #: dense groups, in line order
    dense: tuple[float, ...]  #: their values, concatenated
    sparse: tuple[tuple[str, float], ...]  #: sparse (name, value) pairs, in line order
    total: float | None
    extra: str | None  #: fields after the total, verbatim (joined by ``|||``)


def _number(token: str, path, lineno) -> float:
    try:
        value = float(token)
    except ValueError:
        raise InputError(f"feature value {token!r} is not a number", path, lineno) from None
    if not math.isfinite(value):
        raise InputError(f"feature value {token!r} is not finite", path, lineno)
    return value


def parse_features(field: str, path=None, lineno=None) -> tuple[tuple[FeatureGroup, ...], tuple[float, ...], tuple]:
    """Parse a features field into dense groups, dense values and sparse pairs."""
    groups: list[FeatureGroup] = []
    dense: list[float] = []
    sparse: list[tuple[str, float]] = []
    seen: set[str] = set()
    label: str | None = None
    style = "="
    values: list[float] = []

    def close() -> None:
        if label is None:
            return
        if not values:
            raise InputError(f"feature {label!r} has no value", path, lineno)
        if label in seen:
            raise InputError(f"feature {label!r} appears twice", path, lineno)
        seen.add(label)
        if len(values) == 1 and "_" in label and style == "=":
            sparse.append((label, values[0]))
        else:
            groups.append(FeatureGroup(label, len(values), style))
            dense.extend(values)

    tokens = field.split()
    if tokens and not any(t[-1] in "=:" or "=" in t for t in tokens):
        # Z-MERT candidate files: values only, named by position.
        values = [_number(t, path, lineno) for t in tokens]
        return (FeatureGroup(UNLABELED, len(values), "="),), tuple(values), ()
    for token in tokens:
        last = token[-1]
        if last == "=" or last == ":":
            close()
            label, style, values = token[:-1], last, []
            if not label:
                raise InputError(f"empty feature name in {token!r}", path, lineno)
        elif "=" in token and not token[0].isdigit() and token[0] not in "-+.":
            close()
            label = None
            name, _, text = token.partition("=")
            if name in seen:
                raise InputError(f"feature {name!r} appears twice", path, lineno)
            seen.add(name)
            groups.append(FeatureGroup(name, 1, "joshua"))
            dense.append(_number(text, path, lineno))
        else:
            if label is None:
                raise InputError(f"feature value {token!r} has no feature name before it", path, lineno)
            values.append(_number(token, path, lineno))
    close()
    return tuple(groups), tuple(dense), tuple(sparse)


def parse_line(line: str, path=None, lineno=None) -> ParsedLine:
    """Parse one n-best line.

    Raises
    ------
    InputError
        On fewer than three fields, a bad id, a bad feature token, a NaN or infinite value, or a
        total that is not a number.
    """
    fields = line.rstrip("\n").rstrip("\r").split(SEPARATOR)
    if len(fields) < 3:
        raise InputError(f"expected 'ID ||| hypothesis ||| features ||| total', found {len(fields)} field(s)", path, lineno)
    id_text = fields[0].strip()
    if not id_text.isdigit():
        raise InputError(f"sentence id {id_text!r} is not a non-negative integer", path, lineno)
    text = " ".join(fields[1].split())
    groups, dense, sparse = parse_features(fields[2], path, lineno)
    total = None
    if len(fields) >= 4 and fields[3].strip():
        try:
            total = float(fields[3])
        except ValueError:
            raise InputError(f"total score {fields[3].strip()!r} is not a number", path, lineno) from None
        if not math.isfinite(total):
            raise InputError(f"total score {fields[3].strip()!r} is not finite", path, lineno)
    extra = SEPARATOR.join(fields[4:]).strip() if len(fields) > 4 else None
    return ParsedLine(int(id_text), text, groups, dense, sparse, total, extra)


def render_line(sentence_id: int, text: str, groups, dense_values, sparse, total: float | None, extra: str | None) -> str:
    """One n-best line in Moses's format (``extra`` fields appended verbatim)."""
    from smtlib.weights import format_value

    parts = []
    pos = 0
    for group in groups:
        parts.append(group.render(dense_values[pos : pos + group.size]))
        pos += group.size
    parts += [f"{name}= {format_value(value)}" for name, value in sparse]
    line = f"{sentence_id} ||| {text} ||| {' '.join(parts)} ||| {'' if total is None else format_value(total)}"
    if extra is not None:
        line += f" ||| {extra}"
    return line
