"""Weight vectors: weights files, the one check of weight names, and moses.ini ``[weight]`` sections.

The weights file (``CONTRACT.md``) has one ``name value`` per line, ``#`` comments and blank lines
allowed. Each value of a dense feature is named ``NAME_k`` with a 0-based ``k`` (``LM0_0``,
``TranslationModel0_0`` ... ``TranslationModel0_3``; old dialect ``d_0`` ... ``w_0``); sparse
features keep their own names.

Every command that reads weights checks their names against its input -- the k-best pool for
``tune`` and ``rerank``, the model for ``decode``, the moses.ini for ``weights to-moses-ini`` --
with :func:`check_weight_names`, the one rule (``CONTRACT.md``, "weights"):

* a dense value of the input (``NAME_k`` with ``NAME`` a dense feature there and ``k`` in range)
  is its weight; a dense value missing from the file has weight 0;
* any other name is a sparse weight if it is a valid sparse name: it contains ``_`` (Moses's rule)
  and is not shaped like a dense value, i.e. not ``NAME_k`` with ``NAME`` a dense feature of the
  input (``k`` out of range), a dense feature's name in another case (``lm0_0``), or one of
  Moses's dense feature families (``TranslationModel1_0``, ``LM1_0``, ``d_0`` ..., see
  :data:`DENSE_FAMILY`) that the input does not have;
* a valid sparse name that matches no feature of the input (``tmm_1`` for ``tm_1``,
  ``TranslatonModel0_1``, ``Distorsion0_0``: accepted silently, they would be sparse weights that never fire) is
  accepted only where the input has sparse features, since a tuned weights file legitimately
  carries sparse features that another pool, lattice set or the sentences at hand do not fire
  (a weights file of a Big system read against the k-best pool of another iteration); and even
  there not when it is within :func:`typo_distance` of a dense value of the input. So: the input
  has no sparse features -> every name must be a dense value of it; it has some -> an unknown
  name is a sparse weight (0 where it never fires) unless it looks like a misspelt dense name. What
  "has sparse features" means per input: a k-best pool or lattice set, a sparse name in it; a
  model, its feature set is sparse (Big, Overfit); a moses.ini, always (Moses reads sparse weights
  for features the file does not list);
* anything else is an :class:`~smtlib.errors.InputError` at the name's line, naming the closest
  known name ("did you mean").

In moses.ini the same weights are grouped per feature: ``TranslationModel0= 0.2 0.2 0.2 0.2``.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines
from smtlib.values import INTEGER, parse_number

_DENSE_VALUE = re.compile(r"^(?P<group>.+)_(?P<k>\d+)$")
#: names of Moses's (and this project's) dense features, new and old dialect: ``NAME_k`` with such
#: a NAME always names a dense value, never a sparse feature
DENSE_FAMILY = re.compile(
    r"(?:TranslationModel|LM|WordPenalty|PhrasePenalty|Distortion|LexicalReordering|UnknownWordPenalty|OpSequenceModel)"
    r"[0-9]+|d|lm|tm|w|g|I"
)


def is_dense_name(name: str) -> bool:
    """A dense value name (``LM0_0``, ``TranslationModel1_3``), as opposed to a sparse feature."""
    match = _DENSE_VALUE.match(name)
    return bool(match) and DENSE_FAMILY.fullmatch(match.group("group")) is not None


class WeightsFile(dict):
    """``{name: value}`` as read from a weights file, with the file's path and each name's line."""

    def __init__(self, items=(), *, path: str | os.PathLike | None = None, lines: Mapping[str, int] | None = None):
        super().__init__(items)
        self.path = None if path is None else os.fspath(path)
        self.lines = dict(lines or {})


def read_weights(path: str | os.PathLike) -> WeightsFile:
    """Read a weights file into an ordered ``{name: value}`` dict (with each name's line).

    Raises
    ------
    InputError
        On a line that is not ``name value``, a value that is not a finite number
        (:mod:`smtlib.values`), or a name given twice.
    """
    weights = WeightsFile(path=path)
    for lineno, raw in enumerate(read_lines(path, what="weights file", allow_empty=True), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise InputError(f"expected 'name value', got {raw.strip()!r}", path, lineno)
        name, text = parts
        value = parse_number(text, f"weight of {name!r}:", path, lineno)
        if name in weights:
            raise InputError(f"feature {name!r} given twice (first on line {weights.lines[name]})", path, lineno)
        weights[name] = value
        weights.lines[name] = lineno
    return weights


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name``, or None when nothing is close.

    Case is ignored, and a dense value ``NAME_k`` is compared both whole and as ``NAME`` (so
    ``lm0`` is closest to ``LM0_0``); ties go to the longer common prefix, then to the first known.
    """
    target = name.lower()
    best, best_key = None, (0.5, -1)
    for candidate in known:
        lowered = candidate.lower()
        match = _DENSE_VALUE.match(lowered)
        ratio = difflib.SequenceMatcher(None, target, lowered).ratio()
        if match:
            ratio = max(ratio, difflib.SequenceMatcher(None, target, match["group"]).ratio())
        prefix = len(os.path.commonprefix([target, lowered]))
        if (ratio, prefix) > best_key:
            best, best_key = candidate, (ratio, prefix)
    return best


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): insertions, deletions,
    substitutions and transpositions of adjacent characters each cost 1.

    With ``limit``, a distance above it may come back as ``limit + 1`` (the alignment stops once
    two rows in a row exceed it: every later cell builds on one of them plus a non-negative cost).
    """
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if limit is not None and min(current) > limit and min(previous) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def typo_distance(dense_name: str) -> int:
    """How many edits from ``dense_name`` an unknown weight name counts as its misspelling:
    1 for short names (``tm_1``, ``LM0_0``), 2 from 8 characters on (``Distortion0_0``)."""
    return 1 if len(dense_name) < 8 else 2


def closest_dense(name: str, dense_names: Iterable[str]) -> tuple[str, int] | None:
    """The dense name ``name`` most likely misspells (case ignored) and the edits between them, or
    None when no dense name is within its :func:`typo_distance`."""
    best = None
    lowered = name.lower()
    for dense in dense_names:
        # every edit changes the length by at most one: a name further off in length than the
        # typo distance cannot be within it (a weights file of 10^5 template features is checked
        # against the model's dense names in a blink, not in seconds of alignments)
        limit = typo_distance(dense)
        if abs(len(lowered) - len(dense)) > limit:
            continue
        distance = edit_distance(lowered, dense.lower(), limit=limit)
        if distance <= limit and (best is None or distance < best[1]):
            best = (dense, distance)
    return best


def check_weight_names(
    weights: Mapping[str, float],
    dense_names: Sequence[str],
    *,
    sparse_names: Iterable[str] = (),
    has_sparse: bool | None = None,
    what: str = "the input",
    path: str | os.PathLike | None = None,
) -> None:
    """Check the names of ``weights`` against an input's features, by the rule of the module docstring.

    Parameters
    ----------
    weights
        Names and values; a :class:`WeightsFile` also gives the path and line of each name.
    dense_names
        The input's dense value names in order (``NAME_k``, or Joshua's plain names).
    sparse_names
        Sparse feature names the input is known to have (a set or a mapping is used as it is).
    has_sparse
        Whether the input has sparse features (default: ``sparse_names`` is not empty); when it
        has none, every name must be a dense value of it.
    what
        The input, for messages (``"the k-best pool"``, ``"the medium model"``).
    path
        The weights file, when ``weights`` is a plain dict.

    Raises
    ------
    InputError
        At the first offending name's line: a name that is neither a dense value of the input
        nor a valid sparse name, or a sparse name the input lacks where it has no sparse features
        or the name is a misspelt dense value.
    """
    path = getattr(weights, "path", None) or path
    lines = getattr(weights, "lines", {})
    # a set or a name -> position map is used as it is (a model's million names are not copied per check)
    sparse_known = sparse_names if isinstance(sparse_names, (AbstractSet, Mapping)) else set(sparse_names)
    if has_sparse is None:
        has_sparse = bool(sparse_known)
    dense = set(dense_names)
    sizes: dict[str, int] = {}
    for name in dense_names:
        match = _DENSE_VALUE.match(name)
        if match:
            sizes[match["group"]] = max(sizes.get(match["group"], 0), int(match["k"]) + 1)
    lower_dense = {n.lower(): n for n in dense_names}
    lower_groups = {g.lower(): g for g in sizes}

    def fail(name: str, problem: str, suggestion: str | None = None) -> None:
        hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
        raise InputError(f"weight {name!r} {problem}{hint}", path, lines.get(name))

    for name in weights:
        if name in dense:
            continue
        match = _DENSE_VALUE.match(name)
        group = match["group"] if match else None
        if group in sizes:
            last = sizes[group] - 1
            fail(name, f"is out of range: dense feature {group!r} of {what} has values {group}_0 .. {group}_{last}",
                 closest_name(name, dense_names))
        if name.lower() in lower_dense:
            fail(name, f"differs in case from a dense feature of {what}", lower_dense[name.lower()])
        if group is not None and group.lower() in lower_groups:
            fail(name, f"differs in case from dense feature {lower_groups[group.lower()]!r} of {what}",
                 closest_name(name, dense_names))
        if group is not None and DENSE_FAMILY.fullmatch(group):
            fail(name, f"names a value of dense feature {group!r}, which {what} does not have",
                 closest_name(name, dense_names))
        if "_" not in name:
            fail(name, f"is neither a dense feature value of {what} nor a sparse feature name (sparse names contain '_')",
                 closest_name(name, list(dense_names) + sorted(sparse_known)))
        if name in sparse_known:
            continue
        if not has_sparse:
            typo = closest_dense(name, dense_names)
            suggestion = typo[0] if typo else closest_name(name, dense_names)
            if suggestion is None and dense_names:
                suggestion = min(dense_names, key=lambda d: edit_distance(name.lower(), d.lower()))
            fail(name, f"is not a feature of {what}, which has no sparse features", suggestion)
        typo = closest_dense(name, dense_names)
        if typo is not None:
            edits = "one edit" if typo[1] == 1 else f"{typo[1]} edits"
            fail(name, f"is not a feature of {what} and is {edits} from its dense value {typo[0]!r}", typo[0])


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


# -- moses.ini ------------------------------------------------------------------------------------
#: old-style moses.ini sections (one value per line) and the n-best label of their feature
OLD_SECTIONS = {"weight-d": "d", "weight-l": "lm", "weight-t": "tm", "weight-w": "w", "weight-generation": "g", "weight-i": "I"}
#: old-style definition sections and the weight section whose size they give
_DEFINITIONS = {"ttable-file": "weight-t", "distortion-file": "weight-d", "lmodel-file": "weight-l"}


def _definition_count(section: str, line: str, path, lineno: int) -> int:
    """How many weights one line of an old definition section adds to its weight section.

    ``[ttable-file]``: ``[type] input-factors output-factors n-scores path`` (n-scores weights);
    ``[distortion-file]``: ``factors type n-scores path`` (n-scores weights, besides the one
    distance weight); ``[lmodel-file]``: ``type factor order path`` (one weight).
    """
    parts = line.split()
    if section == "lmodel-file":
        if len(parts) != 4 or INTEGER.fullmatch(parts[2]) is None:
            raise InputError(f"expected 'type factor order path' in [{section}], got {line!r}", path, lineno)
        return 1
    wanted = {"ttable-file": (4, 5), "distortion-file": (4,)}[section]
    if len(parts) not in wanted or INTEGER.fullmatch(parts[-2]) is None or int(parts[-2]) < 1:
        form = "[type] input-factors output-factors n-scores path" if section == "ttable-file" else "factors type n-scores path"
        raise InputError(f"expected '{form}' in [{section}], got {line!r}", path, lineno)
    return int(parts[-2])


def parse_weight_line(line: str, path: str | os.PathLike, lineno: int) -> tuple[str, list[float]]:
    """One line of a moses.ini ``[weight]`` section, ``NAME= v0 v1 ...``: the name and its values.

    The one reader of that line (:func:`from_moses_ini` and :class:`smtlib.system.moses_ini.MosesIni`
    use it). Values follow :mod:`smtlib.values` (finite numbers only).

    Raises
    ------
    InputError
        If the line has no ``=``, no name, no value, or a value that is not a finite number.
    """
    name, sep, rest = line.partition("=")
    name = name.strip()
    if not sep or not name:
        raise InputError(f"expected 'NAME= values' in [weight], got {line!r}", path, lineno)
    values = [parse_number(v, f"weight of {name!r}:", path, lineno) for v in rest.split()]
    if not values:
        raise InputError(f"no value for {name!r}", path, lineno)
    return name, values


def from_moses_ini(path: str | os.PathLike) -> dict[str, float]:
    """Read the weights of a moses.ini into smtlib names.

    Both dialects are read: the ``[weight]`` section (``NAME= v0 v1 ...``; a feature with several
    values becomes ``NAME_0 .. NAME_{n-1}``, a feature with one value ``NAME_0`` too unless its
    name contains ``_``, Moses's rule for sparse features) and the old sections ``[weight-d]``,
    ``[weight-l]``, ``[weight-t]``, ``[weight-w]`` with one value per line (``d_0`` ... ``w_0``, the
    names of the old n-best dialect).

    Checks, so that a damaged file is an error rather than other weights: numbers follow
    :mod:`smtlib.values`; an empty line between an old weight section's header and one of its values
    is an error (at the empty line); the number of values of ``[weight-t]``, ``[weight-d]`` and ``[weight-l]``
    must be what ``[ttable-file]``, ``[distortion-file]`` (plus one distance weight) and
    ``[lmodel-file]`` declare, and the values of ``NAME=`` in ``[weight]`` what ``num-features=``
    declares in ``[feature]`` (when it does); a bare number in a definition section is an error (a
    missing ``[weight-*]`` header: reported at the empty line above it when there is one).

    Raises
    ------
    InputError
        If the file has no weights or breaks one of the checks above.
    """
    lines = read_lines(path, what="moses.ini")
    weights: dict[str, float] = {}
    section: str | None = None
    header_line: dict[str, int] = {}
    old_values: dict[str, list[int]] = {}  # old weight section -> lines of its values
    declared: dict[str, int] = {}  # old weight section -> weights its definitions declare
    features: dict[str, int | None] = {}  # [feature] name -> num-features
    feature_counts: dict[str, int] = {}
    blank_since_value = 0
    for lineno, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            if not raw.strip() and section in OLD_SECTIONS:
                blank_since_value = lineno  # the last empty line after the header or a value of this section
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise InputError(f"malformed section header {line!r}", path, lineno)
            section = line[1:-1].strip()
            header_line.setdefault(section, lineno)
            blank_since_value = 0
            continue
        if section in OLD_SECTIONS:
            if blank_since_value:
                raise InputError(f"empty line inside [{section}]: its values must be on consecutive lines", path,
                                 blank_since_value)
            label = OLD_SECTIONS[section]
            value = parse_number(line, f"weight in [{section}]:", path, lineno)
            values = old_values.setdefault(section, [])
            weights[f"{label}_{len(values)}"] = value
            values.append(lineno)
            continue
        if section in _DEFINITIONS:
            if len(line.split()) == 1 and _is_number(line):
                blank = lineno - 1 if lineno > 1 and not lines[lineno - 2].strip() else lineno
                raise InputError(f"a bare number in [{section}] (line {lineno}): is a [weight-*] section header missing?",
                                 path, blank)
            target = _DEFINITIONS[section]
            declared[target] = declared.get(target, 0) + _definition_count(section, line, path, lineno)
            continue
        if section == "feature":
            parts = line.split()
            params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            kind = parts[0]
            name = params.get("name") or f"{kind}{feature_counts.get(kind, 0)}"
            feature_counts[kind] = feature_counts.get(kind, 0) + 1
            count = params.get("num-features")
            if count is not None and INTEGER.fullmatch(count) is None:
                raise InputError(f"num-features of {name!r} is not an integer: {count!r}", path, lineno)
            features[name] = int(count) if count is not None else None
            continue
        if section != "weight":
            continue
        name, values = parse_weight_line(line, path, lineno)
        expected = features.get(name)
        if expected is not None and len(values) != expected:
            raise InputError(f"{name!r} has {len(values)} weights but [feature] declares num-features={expected}", path, lineno)
        names = [name] if len(values) == 1 and "_" in name else [f"{name}_{k}" for k in range(len(values))]
        for n, value in zip(names, values, strict=True):
            if n in weights:
                raise InputError(f"weight {n!r} given twice", path, lineno)
            weights[n] = value
    if "weight-d" in declared:
        declared["weight-d"] += 1  # the distance-based distortion weight
    if "weight-w" in header_line:
        declared.setdefault("weight-w", 1)  # the word penalty: one weight
    for target, count in declared.items():
        found = old_values.get(target, [])
        if target in header_line and len(found) != count:
            where = (found[-1] + 1) if found else header_line[target] + 1
            raise InputError(f"[{target}] (line {header_line[target]}) has {len(found)} value(s); the model's definitions "
                             f"need {count}", path, where)
    if not weights:
        raise InputError("no weights found ([weight] or [weight-*] sections)", path)
    return weights


def update_moses_ini(path: str | os.PathLike, weights: Mapping[str, float]) -> str:
    """The text of the moses.ini ``path`` with its weights replaced by ``weights``, in the file's dialect.

    The names of ``weights`` are checked against the file (:func:`check_weight_names`). Old
    sections (``[weight-d]``, ``[weight-l]``, ``[weight-t]``, ``[weight-w]`` ..., one value per line)
    get their new values in place, line by line (comments and layout kept), and no ``[weight]``
    section is added: one file, one set of weights. A ``[weight]`` section is rewritten where it is
    (appended when the file has neither): every dense feature of the file, in the file's order, then
    the sparse weights (:func:`to_moses_ini`). A dense value missing from ``weights`` is written 0
    (``CONTRACT.md``: a missing weight is 0). An old-dialect file without a ``[weight]`` section has
    no place for sparse weights, so for it a name that is not one of its dense values is an error.

    Raises
    ------
    InputError
        On a damaged moses.ini (:func:`from_moses_ini`) or a name the check rejects.
    """
    current = from_moses_ini(path)  # checks the file; its names in file order
    lines = read_lines(path, what="moses.ini")
    present = {ln.split("#", 1)[0].strip()[1:-1].strip() for ln in lines if ln.split("#", 1)[0].strip().startswith("[")}
    old_labels = {label for section, label in OLD_SECTIONS.items() if section in present}
    is_old = {n for n in current if (m := _DENSE_VALUE.match(n)) and m["group"] in old_labels}
    dense, _ = group_dense({n: v for n, v in current.items() if n not in is_old})
    new_dense = [f"{g}_{k}" for g, values in dense.items() for k in range(len(values))]
    has_weight_section = "weight" in present or not old_labels
    check_weight_names(weights, [n for n in current if n in is_old] + new_dense, has_sparse=has_weight_section,
                       what=f"the moses.ini {os.fspath(path)}")
    section_text = to_moses_ini({**{n: weights.get(n, 0.0) for n in new_dense},
                                 **{n: v for n, v in weights.items() if n not in is_old and n not in new_dense}})
    out: list[str] = []
    section = None
    counts: dict[str, int] = {}
    written = False
    for raw in lines:
        code = raw.split("#", 1)[0]
        stripped = code.strip()
        if stripped.startswith("["):
            section = stripped[1:-1].strip()
            if section == "weight":
                out.extend(section_text.rstrip("\n").split("\n"))
                out.append("")
                written = True
                continue
        elif section == "weight":
            continue  # the old [weight] section's lines (its values, comments, blank lines)
        elif section in OLD_SECTIONS and stripped:
            k = counts.get(section, 0)
            counts[section] = k + 1
            value = format_value(weights.get(f"{OLD_SECTIONS[section]}_{k}", 0.0))
            start = len(code) - len(code.lstrip())
            raw = raw[:start] + value + raw[start + len(stripped):]
        out.append(raw)
    if has_weight_section and not written:
        while out and not out[-1].strip():
            out.pop()
        out += ([""] if out else []) + section_text.rstrip("\n").split("\n")
    return "\n".join(out) + "\n"


def _is_number(text: str) -> bool:
    try:
        parse_number(text)
    except InputError:
        return False
    return True
