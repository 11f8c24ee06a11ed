"""moses.ini files: the sections a phrase-based Moses system uses, and how its features line up with ours.

Moses (``moses`` and ``moses2``) reads a ``moses.ini`` of sections ``[name]`` followed by lines; the
ones that describe a phrase-based system are ``[feature]`` (one feature function per line: ``Type
key=value ...``), ``[weight]`` (``Name= v0 v1 ...``), ``[input-factors]``, ``[mapping]`` and
``[distortion-limit]``. :class:`MosesIni` reads them (keeping every other section as it is) and
writes them back, with new weights or new feature parameters.

A feature's name is its ``name=`` parameter, else its type followed by a per-type counter
(``WordPenalty0``, ``Distortion0``), as Moses names them. Its number of values is ``num-features=``,
else the type's fixed count (1 for the penalties, distortion and a language model; 6 for an
``msd-bidirectional-fe`` lexicalized reordering).

:class:`FeatureMap` lines up the dense features of a Moses system with those of an smtlib model
(``model.yaml``'s ``dense_features``, in k-best order):

* a Moses feature with the same name and number of values as ours is that feature;
* a Moses phrase table with ``4 * T`` scores, where the smtlib model has ``T`` phrase tables, is
  the merged table of :mod:`smtlib.system.moses_export`: its values are ours, table after table;
* ``UnknownWordPenalty0`` has no counterpart (our decoder passes unknown words through without a
  penalty: :mod:`smtlib.decoder.model`) and is held at weight 0; every hypothesis of a sentence has
  the same value, so this changes no ranking, only the printed model scores;
* sparse features that Moses reads from a phrase table's sixth field are named ``TABLE_name`` in
  its n-best lists and weights (the table's name, ``_``, the name in the table); ours are ``name``.

Anything else (a Moses feature our decoder lacks, such as ``PhrasePenalty0``, or a dense feature of
the model that the ini lacks) is an :class:`~smtlib.errors.InputError` naming it.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping

import numpy as np

from smtlib.errors import InputError
from smtlib.io import read_lines
from smtlib.weights import format_value, parse_weight_line

#: number of values of the feature types whose count is fixed
FIXED_COUNTS = {"WordPenalty": 1, "UnknownWordPenalty": 1, "PhrasePenalty": 1, "Distortion": 1, "KENLM": 1}
#: feature types that are phrase tables
PHRASE_TABLE_TYPES = ("PhraseDictionaryMemory", "PhraseDictionaryCompact", "PhraseDictionaryOnDisk", "ProbingPT",
                      "PhraseDictionaryGroup")
#: the section order of a written moses.ini
SECTION_ORDER = ("input-factors", "mapping", "distortion-limit", "feature", "weight")


def reordering_count(kind: str) -> int:
    """Number of values of a ``LexicalReordering`` of type ``kind`` (e.g. ``wbe-msd-bidirectional-fe-allff``).

    Orientations: ``msd`` 3, ``monotonicity`` 2, ``leftright`` 2; ``bidirectional`` doubles them;
    ``collapseff`` collapses each direction to one value.
    """
    parts = kind.split("-")
    per = 3 if "msd" in parts else 2 if ("monotonicity" in parts or "leftright" in parts) else 0
    if not per:
        raise ValueError(f"unknown lexicalized reordering type {kind!r}")
    if "collapseff" in parts:
        per = 1
    return per * (2 if "bidirectional" in parts else 1)


@dataclasses.dataclass
class MosesFeature:
    """One line of ``[feature]``: ``Type key=value ...``."""

    type: str
    params: dict[str, str]
    name: str
    count: int
    line: int = 0  #: line in the moses.ini (0 when written here)

    @property
    def is_phrase_table(self) -> bool:
        return self.type in PHRASE_TABLE_TYPES

    def text(self) -> str:
        return " ".join([self.type, *(f"{k}={v}" for k, v in self.params.items())])


def parse_feature_line(text: str, counters: dict[str, int], path: str | os.PathLike = "moses.ini",
                       lineno: int = 0) -> MosesFeature:
    """A ``[feature]`` line; ``counters`` (type -> features of that type so far) names unnamed ones."""
    parts = text.split()
    kind, params = parts[0], {}
    for item in parts[1:]:
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"feature parameter {item!r} is not key=value", path, lineno)
        params[key] = value
    index = counters.get(kind, 0)
    counters[kind] = index + 1
    name = params.get("name", f"{kind}{index}")
    if "num-features" in params:
        try:
            count = int(params["num-features"])
        except ValueError:
            raise InputError(f"{name}: num-features is not a number", path, lineno) from None
    elif kind in FIXED_COUNTS:
        count = FIXED_COUNTS[kind]
    elif kind == "LexicalReordering":
        try:
            count = reordering_count(params.get("type", ""))
        except ValueError as exc:
            raise InputError(f"{name}: {exc}", path, lineno) from None
    else:
        raise InputError(f"feature {name!r} of type {kind} has no num-features", path, lineno)
    return MosesFeature(kind, params, name, count, lineno)


@dataclasses.dataclass
class MosesIni:
    """A moses.ini: its sections (other than ``[feature]`` and ``[weight]``) as lines, its features and weights."""

    sections: dict[str, list[str]]
    features: list[MosesFeature]
    weights: dict[str, list[float]]
    path: str = "moses.ini"

    @classmethod
    def read(cls, path: str | os.PathLike) -> MosesIni:
        """Read a moses.ini.

        Raises
        ------
        InputError
            On an old-style ini (``[ttable-file]``, ``[weight-t]``: convert it with Moses's
            ``convert-moses-ini-v2-to-v1``'s inverse first), a feature line that is not ``Type
            key=value ...``, a weight line that is not ``Name= values`` or names no feature with that
            many values, or two features with the same name.
        """
        lines = read_lines(path, what="moses.ini")
        sections: dict[str, list[str]] = {}
        features: list[MosesFeature] = []
        weights: dict[str, list[float]] = {}
        weight_lines: dict[str, int] = {}
        counters: dict[str, int] = {}
        section = None
        for lineno, raw in enumerate(lines, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                if section in ("ttable-file", "lmodel-file", "weight-t", "weight-l", "weight-d", "weight-w"):
                    raise InputError(f"old-style moses.ini section [{section}]: only the [feature]/[weight] "
                                     "format (Moses 2.1 and later) is read", path, lineno)
                sections.setdefault(section, [])
                continue
            if section is None:
                raise InputError(f"line outside any [section]: {line!r}", path, lineno)
            if section == "feature":
                feat = parse_feature_line(line, counters, path, lineno)
                if any(f.name == feat.name for f in features):
                    raise InputError(f"two features named {feat.name!r}", path, lineno)
                features.append(feat)
            elif section == "weight":
                name, values = parse_weight_line(line, path, lineno)
                if name in weights:
                    raise InputError(f"weight {name!r} given twice", path, lineno)
                weights[name] = values
                weight_lines[name] = lineno
            else:
                sections[section].append(line)
        sections.pop("feature", None)
        sections.pop("weight", None)
        by_name = {f.name: f for f in features}
        for name, values in weights.items():
            feat = by_name.get(name)
            if feat is not None and len(values) != feat.count:
                raise InputError(f"{name} has {feat.count} values but {len(values)} weights", path,
                                 weight_lines[name])
        return cls(sections, features, weights, os.fspath(path))

    def feature(self, name: str) -> MosesFeature | None:
        return next((f for f in self.features if f.name == name), None)

    def text(self, header: str = "") -> str:
        """The ini as text: the kept sections, ``[feature]`` and ``[weight]`` (sparse weights one per line)."""
        out = [f"# {line}" for line in header.splitlines()]
        order = [s for s in SECTION_ORDER if s in self.sections] + [s for s in self.sections if s not in SECTION_ORDER]
        for section in order:
            if section in ("feature", "weight"):
                continue
            out += [f"[{section}]", *self.sections[section], ""]
        out += ["[feature]", *(f.text() for f in self.features), "", "[weight]"]
        out += [f"{name}= " + " ".join(format_value(v) for v in values) for name, values in self.weights.items()]
        return "\n".join(out) + "\n"

    def with_weights(self, weights: Mapping[str, list[float]]) -> MosesIni:
        """A copy with ``[weight]`` replaced."""
        return dataclasses.replace(self, weights={k: list(v) for k, v in weights.items()},
                                   features=[dataclasses.replace(f, params=dict(f.params)) for f in self.features],
                                   sections={k: list(v) for k, v in self.sections.items()})


_SPARSE_SAFE = re.compile(r"^\S+$")
_DENSE_VALUE = re.compile(r"^(?P<group>.+)_(?P<k>\d+)$")


@dataclasses.dataclass
class FeatureMap:
    """How the dense and sparse features of a Moses system line up with those of an smtlib model.

    Attributes
    ----------
    groups
        The smtlib model's dense features ``[(NAME, count), ...]`` in k-best order.
    pieces
        Moses feature name -> ``[(smtlib NAME, first value in the Moses feature, count), ...]``.
    moses_counts
        Moses feature name -> number of values, in the ini's order.
    ignored
        Moses features without a counterpart, held at weight 0 (see the module doc).
    sparse_tables
        Names of the Moses phrase tables whose sixth field the smtlib model reads as sparse features.
    """

    groups: list[tuple[str, int]]
    pieces: dict[str, list[tuple[str, int, int]]]
    moses_counts: dict[str, int]
    ignored: list[str]
    sparse_tables: list[str]

    @classmethod
    def build(cls, groups: list[tuple[str, int]], phrase_tables: list[str], ini: MosesIni,
              sparse: bool = False) -> FeatureMap:
        """Line up ``ini``'s features with an smtlib model's ``groups`` (``phrase_tables``: its TM names).

        Raises
        ------
        InputError
            On a Moses feature with no counterpart or a dense feature of the model the ini lacks.
        """
        ours = dict(groups)
        pieces: dict[str, list[tuple[str, int, int]]] = {}
        ignored: list[str] = []
        covered: set[str] = set()
        tm_total = sum(ours[name] for name in phrase_tables)
        for feat in ini.features:
            if feat.name in ours and ours[feat.name] == feat.count and feat.name not in covered:
                pieces[feat.name] = [(feat.name, 0, feat.count)]
                covered.add(feat.name)
            elif (feat.is_phrase_table and len(phrase_tables) > 1 and feat.count == tm_total
                  and not covered.intersection(phrase_tables)):
                offset = 0
                pieces[feat.name] = []
                for name in phrase_tables:
                    pieces[feat.name].append((name, offset, ours[name]))
                    offset += ours[name]
                covered.update(phrase_tables)
            elif feat.type == "UnknownWordPenalty":
                ignored.append(feat.name)
            else:
                raise InputError(f"Moses feature {feat.name} ({feat.type}, {feat.count} value(s)) has no counterpart "
                                 f"in the smtlib model (dense features: "
                                 f"{', '.join(f'{n} ({c})' for n, c in groups)})", ini.path, feat.line or None)
        missing = [name for name, _ in groups if name not in covered]
        if missing:
            raise InputError(f"the moses.ini has no feature for the model's {', '.join(missing)}", ini.path)
        tables = [f.name for f in ini.features if f.is_phrase_table] if sparse else []
        return cls(list(groups), pieces, {f.name: f.count for f in ini.features}, ignored, tables)

    @property
    def dense_names(self) -> list[str]:
        """``NAME_k`` of the smtlib model's dense values, in k-best order."""
        return [f"{n}_{k}" for n, c in self.groups for k in range(c)]

    # -------------------------------------------------------------- weights
    def moses_weights(self, weights: Mapping[str, float]) -> dict[str, list[float]]:
        """smtlib weights (``NAME_k`` and sparse names) as a ``[weight]`` section's ``{Name: values}``.

        A dense value missing from ``weights`` is 0; ignored features get 0; a sparse weight ``name``
        becomes ``TABLE_name`` for every phrase table that carries sparse features.
        """
        out: dict[str, list[float]] = {}
        dense_names = {f"{n}_{k}" for n, c in self.groups for k in range(c)}
        for mname, count in self.moses_counts.items():
            values = [0.0] * count
            for name, offset, n in self.pieces.get(mname, []):
                for k in range(n):
                    values[offset + k] = float(weights.get(f"{name}_{k}", 0.0))
            out[mname] = values
        groups = dict(self.groups)
        for name, value in weights.items():
            if name in dense_names:
                continue
            dense = _DENSE_VALUE.match(name)
            if dense and dense["group"] in groups:
                raise InputError(f"weight {name!r}: {dense['group']} has {groups[dense['group']]} value(s)")
            if not self.sparse_tables or not _SPARSE_SAFE.match(name) or "_" not in name:
                raise InputError(f"weight {name!r} names no feature of this model")
            for table in self.sparse_tables:
                out[f"{table}_{name}"] = [float(value)]
        return out

    def smtlib_weights(self, moses_weights: Mapping[str, list[float]]) -> dict[str, float]:
        """A ``[weight]`` section's ``{Name: values}`` in our names (dense in k-best order, then sparse).

        Ignored features are dropped; a sparse ``TABLE_name`` becomes ``name``.

        Raises
        ------
        InputError
            On a weight for no feature of the map, or a dense feature with the wrong number of values.
        """
        out: dict[str, float] = {}
        dense: dict[str, float] = {}
        sparse: dict[str, float] = {}
        for mname, values in moses_weights.items():
            if mname in self.ignored:
                continue
            if mname in self.pieces:
                if len(values) != self.moses_counts[mname]:
                    raise InputError(f"{mname} has {self.moses_counts[mname]} values but {len(values)} weights")
                for name, offset, n in self.pieces[mname]:
                    for k in range(n):
                        dense[f"{name}_{k}"] = values[offset + k]
                continue
            table = next((t for t in self.sparse_tables if mname.startswith(t + "_")), None)
            if table is None or len(values) != 1:
                raise InputError(f"weight {mname!r} names no feature of the moses.ini")
            short = mname[len(table) + 1 :]
            sparse[short] = sparse.get(short, 0.0) + values[0]
        for name, count in self.groups:
            for k in range(count):
                out[f"{name}_{k}"] = dense.get(f"{name}_{k}", 0.0)
        out.update(sparse)
        return out

    # -------------------------------------------------------------- n-best values
    def convert(self, dense: Mapping[str, list[float]], sparse: Mapping[str, float]
                ) -> tuple[np.ndarray, dict[str, float]]:
        """A Moses n-best line's features as the smtlib model's dense vector (k-best order) and sparse dict.

        Raises
        ------
        ValueError
            On a dense feature that the map does not know or with the wrong number of values, or a
            sparse feature not from a phrase table.
        """
        cols: dict[str, int] = {}
        col = 0
        for name, count in self.groups:
            cols[name] = col
            col += count
        vec = np.zeros(col)
        for mname, values in dense.items():
            if mname in self.ignored:
                continue
            if mname not in self.pieces:
                raise ValueError(f"unknown Moses feature {mname!r}")
            if len(values) != self.moses_counts[mname]:
                raise ValueError(f"{mname} has {len(values)} values, expected {self.moses_counts[mname]}")
            for name, offset, n in self.pieces[mname]:
                vec[cols[name] : cols[name] + n] = values[offset : offset + n]
        out_sparse: dict[str, float] = {}
        for name, value in sparse.items():
            table = next((t for t in self.sparse_tables if name.startswith(t + "_")), None)
            if table is None:
                raise ValueError(f"sparse feature {name!r} comes from no phrase table of the model")
            short = name[len(table) + 1 :]
            out_sparse[short] = out_sparse.get(short, 0.0) + value
        return vec, out_sparse


__all__ = ["FeatureMap", "MosesFeature", "MosesIni", "parse_feature_line", "reordering_count"]
