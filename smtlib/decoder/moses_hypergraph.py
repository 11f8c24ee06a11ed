"""Moses search hypergraphs read as lattices (the format of Moses's batch MIRA ``--hgdir`` and ``hgdecode``).

The format ("Kenneth's hypergraph", cdec's ``target_graph``), as Moses's ``mert/Hypergraph.cpp`` reads it::

    # target ||| features ||| source-covered
    V E
    # node 0                      (lines starting with '#' between vertices are comments)
    1                             (the number of incoming edges of vertex 0)
    <s> |||  ||| 0                (an edge: target tokens, features, source words covered)
    # node 1
    1
    [0] the  ||| OpSequenceModel0_1=-3.35 ... WT_@-@~the=1.000000 ||| 1
    ...

Vertices are listed bottom-up (children before parents), the last one is the root. A target token
``[i]`` refers to vertex ``i``; every edge of a phrase-based search graph has at most one, first, so
the hypergraph is a lattice: vertex ``v`` becomes node ``v + 1``, a new node 0 is the start (the tail
of the edges without a child, i.e. ``<s>``'s) and the root is the goal. The boundary words ``<s>`` and
``</s>`` are dropped from the edges' words (Moses's hope/fear BLEU skips them too:
``HgBleuScorer`` ignores boundary words). An edge with two children (a real hypergraph, e.g. from a
syntax-based system) or a child that is not the first token is an error.

Features are ``name=value``. Dense feature values are named ``Name_k`` by Moses with ``k`` from 1 (one
value: just ``Name``); here they become ``Name_{k-1}`` (``Name_0``), the names of ``CONTRACT.md``.
Which names are dense is decided by the dense weights file when one is given (its ``Name=`` lines),
else by the form ``<letters><digits>`` optionally followed by ``_<digits>`` (Moses's feature-function
names); everything else is sparse and keeps its name. :func:`read_moses_weights` reads Moses's dense
(``Name= value``, one line per value) and sparse (``name value``) weights files in the same names.
"""

from __future__ import annotations

import os
import re

import numpy as np

from smtlib.lattice.format import Lattice
from smtlib.errors import InputError
from smtlib.io import open_text

HEADER = "# target ||| features ||| source-covered"
BOUNDARY = ("<s>", "</s>")
_DENSE_FORM = re.compile(r"^(?P<name>[A-Za-z]+\d+)(?:_(?P<k>\d+))?$")


def read_moses_weights(dense_path: str | os.PathLike, sparse_path: str | os.PathLike | None = None) -> dict[str, float]:
    """Moses's ``hgdecode``/``kbmira`` weights files as ``{NAME_k: value}`` (0-based ``k``)."""
    weights: dict[str, float] = {}
    counts: dict[str, int] = {}
    with open_text(dense_path, what="dense weights file") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2 or not parts[0].endswith("="):
                raise InputError("expected 'Name= value'", dense_path, lineno)
            name = parts[0][:-1]
            k = counts.get(name, 0)
            counts[name] = k + 1
            try:
                weights[f"{name}_{k}"] = float(parts[1])
            except ValueError:
                raise InputError(f"not a number: {parts[1]!r}", dense_path, lineno) from None
    if sparse_path is not None:
        with open_text(sparse_path, what="sparse weights file") as fh:
            for lineno, line in enumerate(fh, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 2:
                    raise InputError("expected 'name value'", sparse_path, lineno)
                try:
                    weights[parts[0]] = float(parts[1])
                except ValueError:
                    raise InputError(f"not a number: {parts[1]!r}", sparse_path, lineno) from None
    return weights


def dense_names_of_weights(dense_path: str | os.PathLike) -> set[str]:
    """The Moses names (``Name`` or ``Name_k``, 1-based) of the dense values a weights file lists."""
    counts: dict[str, int] = {}
    with open_text(dense_path, what="dense weights file") as fh:
        for line in fh:
            parts = line.split()
            if parts and parts[0].endswith("="):
                counts[parts[0][:-1]] = counts.get(parts[0][:-1], 0) + 1
    names = set()
    for name, n in counts.items():
        names.add(name)
        names.update(f"{name}_{k}" for k in range(1, n + 1))
    return names


def _our_name(moses_name: str) -> str:
    m = _DENSE_FORM.match(moses_name)
    if m is None:
        return moses_name
    k = m.group("k")
    return f"{m.group('name')}_{int(k) - 1 if k is not None else 0}"


def read_moses_hypergraph(path: str | os.PathLike, sent_id: int = 0, *, dense_names: set[str] | None = None) -> Lattice:
    """One Moses search hypergraph file as a :class:`Lattice` (see the module docstring).

    Parameters
    ----------
    dense_names
        Moses names of the dense feature values (:func:`dense_names_of_weights`); default: by form.

    Raises
    ------
    InputError
        On a malformed file (naming the line) or a hypergraph that is not a lattice.
    """

    def is_dense(name: str) -> bool:
        if dense_names is not None:
            return name in dense_names
        return _DENSE_FORM.match(name) is not None

    with open_text(path, what="Moses hypergraph") as fh:
        lines = fh.read().split("\n")
    if not lines or lines[0].rstrip() != HEADER:
        raise InputError(f"not a Moses hypergraph (first line should be {HEADER!r})", path, 1)
    pos = 1

    def next_line(skip_comments: bool = True) -> tuple[int, str]:
        nonlocal pos
        while pos < len(lines):
            line = lines[pos]
            pos += 1
            if skip_comments and line.startswith("#"):
                continue
            return pos, line
        raise InputError("file ends early", path, pos)

    lineno, line = next_line()
    try:
        n_vertices, n_edges = (int(x) for x in line.split())
    except ValueError:
        raise InputError("expected 'vertices edges'", path, lineno) from None
    tails, heads, words, features = [], [], [], []
    dense_order: dict[str, int] = {}
    for v in range(n_vertices):
        lineno, line = next_line()
        try:
            count = int(line)
        except ValueError:
            raise InputError("expected the number of edges of a vertex", path, lineno) from None
        for _ in range(count):
            lineno, line = next_line(skip_comments=False)
            fields = line.split(" ||| ")
            if len(fields) != 3:
                raise InputError("edge must be 'target ||| features ||| source-covered'", path, lineno)
            tokens = fields[0].split()
            children = [i for i, t in enumerate(tokens) if t.startswith("[") and t.endswith("]")]
            if len(children) > 1:
                raise InputError("an edge with several children: a hypergraph, not a lattice", path, lineno)
            if children and children[0] != 0:
                raise InputError("the child vertex must be the first target token for a lattice", path, lineno)
            if children:
                try:
                    child = int(tokens[0][1:-1])
                except ValueError:
                    raise InputError(f"bad non-terminal {tokens[0]!r}", path, lineno) from None
                if not 0 <= child < v:
                    raise InputError(f"edge of vertex {v} refers to vertex {child} (not bottom-up)", path, lineno)
                tail = child + 1
                tokens = tokens[1:]
            else:
                tail = 0
            feats: dict[str, float] = {}
            for item in fields[1].split():
                name, sep, value = item.rpartition("=")
                if not sep or not name:
                    raise InputError(f"feature must be name=value, got {item!r}", path, lineno)
                try:
                    feats[name] = feats.get(name, 0.0) + float(value)
                except ValueError:
                    raise InputError(f"not a number: {value!r}", path, lineno) from None
                if is_dense(name):
                    dense_order.setdefault(_our_name(name), len(dense_order))
            tails.append(tail)
            heads.append(v + 1)
            words.append(tuple(t for t in tokens if t not in BOUNDARY))
            features.append(feats)
    if len(tails) != n_edges:
        raise InputError(f"the header says {n_edges} edges, the file has {len(tails)}", path, 2)
    names = sorted(dense_order, key=dense_order.get)
    col = {n: i for i, n in enumerate(names)}
    dense = np.zeros((len(tails), len(names)))
    sparse: list[dict[str, float]] = []
    for e, feats in enumerate(features):
        sp: dict[str, float] = {}
        for name, value in feats.items():
            if is_dense(name):
                dense[e, col[_our_name(name)]] = value
            elif value != 0.0:
                sp[name] = value
        sparse.append(sp)
    tails_a = np.array(tails, dtype=np.int64)
    heads_a = np.array(heads, dtype=np.int64)
    order = np.lexsort((tails_a, heads_a))  # our format: sorted by head, then tail (stable)
    return Lattice(sent_id, n_vertices + 1, tails_a[order], heads_a[order], [words[i] for i in order.tolist()],
                   dense[order], [sparse[i] for i in order.tolist()], names)
