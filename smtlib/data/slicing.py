"""Slicing decoder output to a subset of its sentences: k-best lists, 1-best files, lattices.

A dev sub-sample (Cherry & Foster 2012, §4.3) is a subset of the dev set, and the decoder's output
for a sentence depends only on the sentence, the model and the weights; so the first decode of a
tuning run, which always uses the initial weights, is shared: the full dev set is decoded once and
each sub-sample's files are cut from it. Slicing keeps the sentences listed in an ids file (0-based
line ids of the full set, one per line, as ``smtlib data subsample --out-ids`` writes them), in the
ids file's order, and renumbers them 0, 1, ... as if the sub-sample had been decoded directly:
everything but the sentence id is copied byte for byte.

* k-best lists (Moses n-best): a line's id is the number before the first ``|||``.
* 1-best files: line i is sentence i.
* lattices (:mod:`smtlib.lattice.format`): the header lines are kept, each ``SENTENCE i ...``
  block is kept whole with its id renumbered.
"""

from __future__ import annotations

import os

from smtlib.errors import InputError
from smtlib.io import LOOP_COMPRESSLEVEL, atomic_output, open_text, read_lines


def read_ids(path: str | os.PathLike) -> list[int]:
    """The ids of an ids file: distinct non-negative integers, one per line.

    Raises
    ------
    InputError
        On a line that is not a non-negative integer, a repeated id or an empty file.
    """
    ids: list[int] = []
    seen: set[int] = set()
    for lineno, line in enumerate(read_lines(path, what="ids file"), 1):
        text = line.strip()
        if not text.isdigit():
            raise InputError(f"sentence id {text!r} is not a non-negative integer", path, lineno)
        value = int(text)
        if value in seen:
            raise InputError(f"sentence id {value} is listed twice", path, lineno)
        seen.add(value)
        ids.append(value)
    return ids


def _renumber(ids: list[int], ids_path, blocks: dict[int, list[str]], largest: int, what: str) -> list[str]:
    out: list[str] = []
    for position, sentence in enumerate(ids):
        if sentence > largest:
            raise InputError(f"sentence id {sentence} is beyond the {what}'s last sentence ({largest})", ids_path,
                             position + 1)
        out += blocks.get(sentence, [])
    return out


def slice_kbest(path: str | os.PathLike, ids: list[int], out: str | os.PathLike, *, ids_path=None) -> int:
    """Write the k-best lines of the sentences ``ids``, renumbered by their position; returns lines written.

    Raises
    ------
    InputError
        On a line without ``ID |||``, or an id beyond the file's largest sentence id.
    """
    position = {sentence: p for p, sentence in enumerate(ids)}
    blocks: dict[int, list[str]] = {}
    largest = -1
    with open_text(path, what="k-best file") as fh:
        for lineno, line in enumerate(fh, 1):
            head, sep, rest = line.partition("|||")
            number = head.strip()
            if not sep or not number.isdigit():
                raise InputError("expected 'ID ||| hypothesis ||| features ...'", path, lineno)
            sentence = int(number)
            largest = max(largest, sentence)
            p = position.get(sentence)
            if p is not None:
                blocks.setdefault(sentence, []).append(head.replace(number, str(p), 1) + sep + rest)
    lines = _renumber(ids, ids_path, blocks, largest, "k-best file")
    with atomic_output(out, compresslevel=LOOP_COMPRESSLEVEL) as fh:
        fh.writelines(lines)
    return len(lines)


def slice_lines(path: str | os.PathLike, ids: list[int], out: str | os.PathLike, *, ids_path=None) -> int:
    """Write lines ``ids`` of a one-line-per-sentence file (e.g. 1-best output); returns lines written."""
    lines = read_lines(path, what="1-best file", allow_empty=True)
    blocks = {i: [line + "\n"] for i, line in enumerate(lines)}
    selected = _renumber(ids, ids_path, blocks, len(lines) - 1, "1-best file")
    with atomic_output(out) as fh:
        fh.writelines(selected)
    return len(selected)


def slice_lattices(path: str | os.PathLike, ids: list[int], out: str | os.PathLike, *, ids_path=None) -> int:
    """Write the header and the lattice blocks of ``ids``, renumbered; returns blocks written.

    Raises
    ------
    InputError
        On an edge line before the first ``SENTENCE`` line, a malformed ``SENTENCE`` line, or an id
        beyond the file's largest sentence id.
    """
    position = {sentence: p for p, sentence in enumerate(ids)}
    header: list[str] = []
    blocks: dict[int, list[str]] = {}
    current: list[str] | None = None
    largest = -1
    with open_text(path, what="lattice file") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("SENTENCE "):
                parts = line.split(" ", 2)
                if len(parts) < 3 or not parts[1].isdigit():
                    raise InputError("expected 'SENTENCE ID NODES n EDGES m'", path, lineno)
                sentence = int(parts[1])
                largest = max(largest, sentence)
                p = position.get(sentence)
                current = None if p is None else blocks.setdefault(sentence, [])
                if current is not None:
                    current.append(f"SENTENCE {p} {parts[2]}")
            elif largest < 0:
                if not line.startswith("#"):
                    raise InputError("edge line before the first SENTENCE line", path, lineno)
                header.append(line)
            elif current is not None:
                current.append(line)
    lines = _renumber(ids, ids_path, blocks, largest, "lattice file")
    with atomic_output(out, compresslevel=LOOP_COMPRESSLEVEL) as fh:
        fh.writelines(header)
        fh.writelines(lines)
    return sum(1 for sentence in ids if sentence in blocks)
