"""The Moses n-best line format, its dialects, and the layout every line of a file must share.

A line is ``ID ||| hypothesis ||| features ||| total`` with optional further fields (word
alignment, segmentation), which are kept verbatim. Four dialects of the features field are read:

=============  ==========================================================================
``moses``      groups ``Name= v1 v2 ...``: a dense feature with one or more values, named
               ``Name_0``, ``Name_1`` ... (``TranslationModel0= a b c d``, ``LM0= x``); and
               sparse features ``name= v``: one value and a name containing ``_`` (Moses's rule,
               ``mert/Data.cpp``), kept under their own name (``WT_ovat~have``)
``moses-old``  the old Moses labels ``d: v ... lm: v tm: v ... w: v``, named the same way
               (``d_0`` ... ``w_0``); no sparse features
``joshua``     ``name=value`` tokens, one feature each, kept under their own name
               (``tm_pt_0``). Joshua leaves out a feature that did not fire (value 0), so lines
               differ in their feature sets
``zmert``      Z-MERT's unlabeled values (a field of numbers only), one group named ``F``
               (``F_0``, ``F_1`` ...), in the order of Z-MERT's params.txt; no total field
=============  ==========================================================================

**One layout per file.** The dialect, the number of ``|||``-separated fields, whether the total is
there, and (except for Joshua) the dense features -- their names, value counts and order -- are
decided once per file (:func:`decide_layout`) from its first line, and every line must agree;
sparse features may differ from line to line. A line that does not fit is an
:class:`~smtlib.errors.InputError` naming the file and line. So that a damaged *first* line is the
one reported (and not every line after it), the layout is that of line 1 unless lines 2 and 3
agree with each other and not with line 1: a two-of-three vote, still one decision per file.
In the Joshua dialect a feature name must occur on at least two lines of a file (a name seen
once is taken for a typo); a file of one line is exempt.

**Grammar.** Fields are separated by ``|||``; a run of four or more ``|`` is an error (which three are
the separator?). Ids are 0-based sentence numbers written with ASCII digits. Tokens of the id,
features and total fields are separated by ASCII blanks (space, tab, CR, VT, FF); numbers follow
the grammar of :mod:`smtlib.values` (``nan``, ``inf``, ``1e999``, ``1_0`` and ``0x10`` are errors).
The hypothesis is free text; runs of whitespace in it
are collapsed to one space. Dense values are stored in a matrix, sparse ones in a CSR matrix.

**Writing.** :func:`format_line` writes every line, with one of two printings of its numbers:
:data:`EXACT` for lines that were read (``smtlib kbest merge``/``convert``), :data:`DECODED` for the
lines the decoder produces and the lattice tuners' aggregated paths. The decoder, which prints each
value once for both its text and its rounded value, joins the fields with :func:`features_field`
and :func:`kbest_line`, the two parts :func:`format_line` is made of.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from smtlib.errors import InputError
from smtlib.values import parse_number as number
from smtlib.weights import format_value

SEPARATOR = "|||"
UNLABELED = "F"  #: group name for Z-MERT's unlabeled feature values
DIALECTS = ("moses", "moses-old", "joshua", "zmert")
_LABEL_END = {"moses": "=", "moses-old": ":"}
#: token separators inside the id, features and total fields
BLANKS = " \t\r\x0b\x0c"
_TOKEN = re.compile(r"[^ \t\r\x0b\x0c]+")
_ID = re.compile(r"[0-9]+")


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


def layout_key(groups: tuple[FeatureGroup, ...]) -> tuple[tuple[str, int], ...]:
    """What must agree between files: dense labels and value counts in order (not the syntax)."""
    return tuple((g.label, g.size) for g in groups)


def describe_groups(groups: tuple[FeatureGroup, ...]) -> str:
    """``d(7) lm(1) tm(5) w(1)``, for messages."""
    return " ".join(f"{g.label}({g.size})" for g in groups) or "none"


@dataclasses.dataclass(frozen=True)
class FileLayout:
    """What every line of one k-best file shares (see the module docstring).

    Attributes
    ----------
    dialect
        One of :data:`DIALECTS`.
    n_fields
        Number of ``|||``-separated fields of every line (3 for Z-MERT, 4 for Moses and Joshua,
        more with alignment fields).
    has_total
        Whether the fourth field holds a number on every line (else it is blank on every line).
    groups
        The dense features in order (empty for Joshua, whose lines differ in their features).
    line
        The line the layout was taken from (1, or 2 when the vote overruled line 1).
    """

    dialect: str
    n_fields: int
    has_total: bool
    groups: tuple[FeatureGroup, ...]
    line: int = 1

    def describe(self) -> str:
        total = "with" if self.has_total else "without"
        features = "" if self.dialect == "joshua" else f", dense features {describe_groups(self.groups)}"
        return f"{self.dialect} dialect, {self.n_fields} fields {total} a total{features}"


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


def tokens(field: str) -> list[str]:
    """Blank-separated tokens of an id, features or total field."""
    return _TOKEN.findall(field)


def token_kind(token: str) -> str:
    """``=`` / ``:`` (a label), ``joshua`` (``name=value``) or ``value``."""
    last = token[-1]
    if last == "=" or last == ":":
        return last
    if "=" in token:
        return "joshua"
    return "value"


def infer_dialect(field: str, path=None, lineno=None) -> str:
    """The dialect a features field is written in.

    Raises
    ------
    InputError
        If the field is empty or mixes the syntax of several dialects.
    """
    kinds = {token_kind(t) for t in tokens(field)}
    if not kinds:
        raise InputError("the features field is empty", path, lineno)
    labels = kinds - {"value"}
    if len(labels) > 1:
        names = {"=": "Moses 'Name= v'", ":": "old Moses 'name: v'", "joshua": "Joshua 'name=v'"}
        raise InputError(f"the features field mixes {' and '.join(sorted(names[k] for k in labels))} syntax", path, lineno)
    if not labels:
        return "zmert"
    return {"=": "moses", ":": "moses-old", "joshua": "joshua"}[labels.pop()]


def parse_features(field: str, dialect: str, path=None, lineno=None) -> tuple[tuple[FeatureGroup, ...], tuple[float, ...], tuple]:
    """Parse a features field written in ``dialect`` into dense groups, dense values and sparse pairs.

    Raises
    ------
    InputError
        On a token of another dialect, a value without a feature name, a feature without a value
        or given twice, or a value that is not a finite number.
    """
    items = tokens(field)
    if not items:
        raise InputError("the features field is empty", path, lineno)
    if dialect == "zmert":
        for t in items:
            if token_kind(t) != "value":
                raise InputError(f"feature token {t!r} in a file of unlabeled (Z-MERT) values", path, lineno)
        values = tuple(number(t, "feature value", path, lineno) for t in items)
        return (FeatureGroup(UNLABELED, len(values), "="),), values, ()
    if dialect == "joshua":
        return _parse_joshua(items, path, lineno)
    return _parse_labelled(items, _LABEL_END[dialect], path, lineno)


def _parse_joshua(items: list[str], path, lineno):
    groups: list[FeatureGroup] = []
    dense: list[float] = []
    seen: set[str] = set()
    for token in items:
        if token_kind(token) != "joshua":
            raise InputError(f"token {token!r} is not 'name=value' (Joshua's syntax, as the file's first line)", path, lineno)
        name, _, text = token.partition("=")
        if not name:
            raise InputError(f"empty feature name in {token!r}", path, lineno)
        if name in seen:
            raise InputError(f"feature {name!r} appears twice", path, lineno)
        seen.add(name)
        groups.append(FeatureGroup(name, 1, "joshua"))
        dense.append(number(text, f"feature value of {name!r}:", path, lineno))
    return tuple(groups), tuple(dense), ()


def _parse_labelled(items: list[str], style: str, path, lineno):
    groups: list[FeatureGroup] = []
    dense: list[float] = []
    sparse: list[tuple[str, float]] = []
    seen: set[str] = set()
    label: str | None = None
    values: list[float] = []
    other = ":" if style == "=" else "="
    syntax = {"=": "Moses 'Name= v'", ":": "old Moses 'name: v'"}

    def close() -> None:
        if label is None:
            return
        if not values:
            raise InputError(f"feature {label!r} has no value", path, lineno)
        if label in seen:
            raise InputError(f"feature {label!r} appears twice", path, lineno)
        seen.add(label)
        if style == "=" and len(values) == 1 and "_" in label:
            sparse.append((label, values[0]))
        else:
            groups.append(FeatureGroup(label, len(values), style))
            dense.extend(values)

    for token in items:
        kind = token_kind(token)
        if kind == style:
            close()
            label, values = token[:-1], []
            if not label:
                raise InputError(f"empty feature name in {token!r}", path, lineno)
        elif kind == other:
            raise InputError(f"label {token!r} is in {syntax[other]} syntax; the file is in {syntax[style]} syntax", path, lineno)
        elif kind == "joshua":
            raise InputError(f"token {token!r} is Joshua's 'name=value' syntax; the file is in {syntax[style]} syntax", path, lineno)
        elif label is None:
            raise InputError(f"feature value {token!r} has no feature name before it", path, lineno)
        else:
            values.append(number(token, f"feature value of {label!r}:", path, lineno))
    close()
    return tuple(groups), tuple(dense), tuple(sparse)


def _sentence_id(field: str, path, lineno) -> int:
    text = field.strip(BLANKS)
    if _ID.fullmatch(text) is None:
        raise InputError(f"sentence id {text!r} is not a non-negative integer", path, lineno)
    return int(text)


def _total(field: str, path, lineno) -> float | None:
    items = tokens(field)
    if not items:
        return None
    if len(items) > 1:
        raise InputError(f"total score {field.strip(BLANKS)!r} is not one number", path, lineno)
    return number(items[0], "total score", path, lineno)


def parse_line(line: str, path=None, lineno=None, layout: FileLayout | None = None, *, dialect: str | None = None) -> ParsedLine:
    """Parse one n-best line, against its file's ``layout`` when given.

    Without a layout the line is read on its own: the dialect is ``dialect`` or inferred from the
    features field, and any number (at least three) of fields is accepted.

    Raises
    ------
    InputError
        On a malformed line, or a line that does not fit ``layout`` (field count, total, dialect,
        dense features).
    """
    if "||||" in line:
        raise InputError("'||||' is ambiguous: which three '|' are the separator?", path, lineno)
    fields = line.rstrip("\n").split(SEPARATOR)
    if layout is not None and len(fields) != layout.n_fields:
        raise InputError(
            f"expected {layout.n_fields} '|||'-separated fields (as line {layout.line}), found {len(fields)}", path, lineno
        )
    if len(fields) < 3:
        raise InputError(f"expected 'ID ||| hypothesis ||| features ||| total', found {len(fields)} field(s)", path, lineno)
    sentence_id = _sentence_id(fields[0], path, lineno)
    text = " ".join(fields[1].split())
    file_dialect = layout.dialect if layout is not None else dialect or infer_dialect(fields[2], path, lineno)
    groups, dense, sparse = parse_features(fields[2], file_dialect, path, lineno)
    if layout is not None and file_dialect != "joshua" and layout_key(groups) != layout_key(layout.groups):
        raise InputError(_layout_difference(groups, layout), path, lineno)
    total = _total(fields[3], path, lineno) if len(fields) >= 4 else None
    if layout is not None and layout.n_fields >= 4 and (total is not None) != layout.has_total:
        if total is None:
            raise InputError(f"the total score is missing (line {layout.line} has one)", path, lineno)
        raise InputError(f"a total score where line {layout.line} has none", path, lineno)
    extra = SEPARATOR.join(fields[4:]).strip() if len(fields) > 4 else None
    return ParsedLine(sentence_id, text, groups, dense, sparse, total, extra)


def _layout_difference(groups: tuple[FeatureGroup, ...], layout: FileLayout) -> str:
    """What differs between a line's dense features and its file's, in a few words."""
    expected = layout.groups
    for k, (found, want) in enumerate(zip(groups, expected, strict=False)):
        if found.label != want.label:
            return (f"dense feature {k + 1} is {found.label!r} where line {layout.line} has {want.label!r} "
                    f"(dense features must be the same on every line: {describe_groups(expected)})")
        if found.size != want.size:
            return f"dense feature {found.label!r} has {found.size} value(s) where line {layout.line} has {want.size}"
    if len(groups) < len(expected):
        return f"dense feature {expected[len(groups)].label!r} of line {layout.line} is missing"
    return f"dense feature {groups[len(expected)].label!r} is not on line {layout.line} ({describe_groups(expected)})"


def line_layout(line: str, dialect: str | None = None) -> FileLayout | None:
    """The layout a single line implies, or None when the line cannot be read on its own."""
    try:
        parsed = parse_line(line, dialect=dialect)
        fields = line.split(SEPARATOR)
        found = dialect or infer_dialect(fields[2])
    except InputError:
        return None
    has_total = parsed.total is not None
    groups = () if found == "joshua" else parsed.groups
    return FileLayout(found, len(fields), has_total, groups)


def decide_layout(first_lines: list[str], path=None, dialect: str | None = None) -> FileLayout:
    """The layout of a file from its first (up to three) lines: line 1's, unless 2 and 3 outvote it.

    Raises
    ------
    InputError
        If ``dialect`` is not one of :data:`DIALECTS`, or line 1 cannot be read and lines 2 and 3
        do not agree on a layout (the error is line 1's own).
    """
    if dialect is not None and dialect not in DIALECTS:
        raise InputError(f"unknown k-best dialect {dialect!r} (choose from {', '.join(DIALECTS)})")
    candidates = [line_layout(line, dialect) for line in first_lines[:3]]
    first = candidates[0]
    second = candidates[1] if len(candidates) > 1 else None
    third = candidates[2] if len(candidates) > 2 else None
    if second is not None and second == third and first != second:
        return dataclasses.replace(second, line=2)
    if first is None:
        parse_line(first_lines[0], path, 1, dialect=dialect)  # raises line 1's own error
        raise InputError("cannot tell the file's dialect from line 1", path, 1)
    return first


# ------------------------------------------------------------------------------------------ writing
# One writer of the line (kbest_line, features_field); what differs between the files is only how the
# numbers are printed, and both printings are part of files compared byte for byte:
# * EXACT, lines that were read and are written again (smtlib kbest merge/convert, pools): the shortest
#   text that reads back to the same double, so nothing read is changed;
# * DECODED, the lines smtlib decode writes and the lattice tuners' aggregated paths: dense and sparse
#   values with 6 significant digits (Moses's precision), the total with 10.
@dataclasses.dataclass(frozen=True)
class NumberPrinting:
    """How a k-best line prints its feature values and its total."""

    value: Callable[[float], str]
    total: Callable[[float], str]


EXACT = NumberPrinting(format_value, format_value)
DECODED = NumberPrinting("{:.6g}".format, "{:.10g}".format)


def features_field(groups: Sequence[FeatureGroup | tuple[str, int]], value_texts: Sequence[str],
                   sparse_texts: Iterable[tuple[str, str]]) -> str:
    """The features field from the printed values: each dense group in order, then ``name= v`` per
    sparse feature.

    A group is a :class:`FeatureGroup` (its style: Moses ``Name= v ...``, old Moses ``name: v ...``,
    Joshua ``name=v``) or a ``(label, size)`` pair, written in Moses's style.
    """
    parts = [f"{name}= {text}" for name, text in sparse_texts]
    if groups:
        try:
            template = _dense_template(tuple(groups))
        except TypeError:  # groups given as lists, which a cache cannot key on: made for this call
            template = _dense_template.__wrapped__(tuple(groups))
        parts.insert(0, template.format(*value_texts))
    return " ".join(parts)


@functools.lru_cache(maxsize=64)
def _dense_template(groups: tuple[FeatureGroup | tuple[str, int], ...]) -> str:
    """The dense part of :func:`features_field` as a format string with one numbered field per
    printed value: a decoder writes a hundred lines per sentence with the same groups, and one
    ``str.format`` per line costs a fraction of joining each group anew."""
    parts = []
    col = 0
    for group in groups:
        label, size, style = (group.label, group.size, group.style) if isinstance(group, FeatureGroup) else (*group, "=")
        label = label.replace("{", "{{").replace("}", "}}")
        if style == "joshua":
            parts.append(f"{label}={{{col}}}")
        else:
            parts.append(f"{label}{style} " + " ".join(f"{{{k}}}" for k in range(col, col + size)))
        col += size
    return " ".join(parts)


def kbest_line(sent_id: int, hyp: str, features: str, total_text: str, extra: str | None = None) -> str:
    """One Moses n-best line from its printed fields: ``ID ||| hyp ||| features ||| total [||| extra]``."""
    line = f"{sent_id} ||| {hyp} ||| {features} ||| {total_text}"
    return line if extra is None else f"{line} ||| {extra}"


def format_line(sent_id: int, hyp: str, groups: Sequence[FeatureGroup | tuple[str, int]], dense,
                sparse: Iterable[tuple[str, float]], total: float | None, printing: NumberPrinting,
                extra: str | None = None) -> str:
    """One n-best line from its values, printed by ``printing`` (no total: an empty total field)."""
    value = printing.value
    features = features_field(groups, [value(v) for v in np.asarray(dense, dtype=np.float64).tolist()],
                              [(name, value(v)) for name, v in sparse])
    return kbest_line(sent_id, hyp, features, "" if total is None else printing.total(total), extra)
