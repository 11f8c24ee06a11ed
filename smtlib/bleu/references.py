"""Loading reference sets: one file per set, one segment per line, all of the same length.

A damaged reference file changes every BLEU computed with it, so the reader is strict: an empty
(or blank) line is an error -- a reference segment is never empty -- and so is a file whose line
count differs from the other reference files' or from the source's (when a command is given
both). Several files: the line count most of them share is taken as the right one, so the file
named in the error is the odd one out (with two files, the second). Count errors name the first
line that is missing or extra.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Sequence

from smtlib.errors import InputError
from smtlib.io import read_lines


def read_references(
    paths: Sequence[str | os.PathLike],
    *,
    source: str | os.PathLike | None = None,
    source_lines: int | None = None,
) -> list[list[str]]:
    """Read reference files (one per reference set).

    Parameters
    ----------
    paths
        The reference files.
    source, source_lines
        The source file the references belong to and its number of lines, when the command has one:
        every reference file must have as many lines.

    Raises
    ------
    InputError
        If no file is given, a file is missing, empty or has an empty line, or the files (or a file
        and the source) differ in length.
    """
    if not paths:
        raise InputError("no reference file given")
    sets = [read_lines(p, what="reference file") for p in paths]
    for path, lines in zip(paths, sets, strict=True):
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                raise InputError("empty reference line (a reference segment is never empty)", path, lineno)
    counts = collections.Counter(len(s) for s in sets)
    if len(counts) > 1:
        majority, seen = counts.most_common(1)[0]
        if seen * 2 <= len(sets):
            majority = len(sets[0])  # no majority: the first file decides
        for path, lines in zip(paths, sets, strict=True):
            if len(lines) != majority:
                other = next(p for p, s in zip(paths, sets, strict=True) if len(s) == majority)
                line = min(len(lines), majority) + 1
                raise InputError(f"has {len(lines)} lines but {os.fspath(other)} has {majority}", path, line)
    if source is not None and source_lines is not None and source_lines != len(sets[0]):
        line = min(source_lines, len(sets[0])) + 1
        raise InputError(f"has {len(sets[0])} lines but the source {os.fspath(source)} has {source_lines}", paths[0], line)
    return sets
