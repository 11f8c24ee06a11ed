"""Loading reference sets: one file per set, one segment per line."""

from __future__ import annotations

import os
from collections.abc import Sequence

from smtlib.errors import InputError
from smtlib.io import read_lines


def read_references(paths: Sequence[str | os.PathLike]) -> list[list[str]]:
    """Read reference files; all must have the same number of lines.

    Raises
    ------
    InputError
        If no file is given, a file is missing or empty, or the files differ in length.
    """
    if not paths:
        raise InputError("no reference file given")
    sets = [read_lines(p, what="reference file") for p in paths]
    for path, lines in zip(paths[1:], sets[1:], strict=True):
        if len(lines) != len(sets[0]):
            raise InputError(f"has {len(lines)} lines but {paths[0]} has {len(sets[0])}", path)
    return sets
