"""Reading reference sets, and the one rule for which reference lines a score covers.

A damaged reference file changes every BLEU computed with it, so the reader is strict: an empty
(or blank) line is an error -- a reference segment is never empty -- and so is a file whose line
count differs from the other reference files' or from the source's (when a command is given
both). Several files: the line count most of them share is taken as the right one, so the file
named in the error is the odd one out (with two files, the second). Count errors name the first
line that is missing or extra.

**Which sentences a score covers** (:func:`covered_sentences`, called by every command that prints
a score). Sentence ids are 0-based reference line numbers. A k-best pool or a lattice set scores
exactly the sentences it has hypotheses for, as Moses's ``mert`` does: its ids select the
reference lines, so a pool of ids 50-99 (the held-out half of a 100-sentence n-best list) is scored
on reference lines 51-100, and a pool with a gap leaves the gap's lines out; references may have
more lines than the pool. A file with one hypothesis per line (a 1-best output, a source) has the
ids 0, 1, ...: it must have as many lines as the references, unless the command is asked
(``--refs-prefix``) to score the references' first lines only. An id beyond the references is an
error either way. Every printed score says what it covers (:class:`Coverage`: ``50 sentences of
100 reference lines``).
"""

from __future__ import annotations

import collections
import dataclasses
import os
from collections.abc import Sequence

import numpy as np

from smtlib.errors import InputError
from smtlib.io import read_lines


def read_segments(path: str | os.PathLike, *, what: str, allow_empty: bool = False) -> list[str]:
    """The lines of a file of segments to score (references, hypotheses), as :func:`smtlib.io.read_lines`.

    Raises
    ------
    InputError
        Also for a file that starts with a UTF-8 byte-order mark: it would be scored as part of the
        first word of the first segment (sacrebleu keeps it), changing BLEU with nothing to show.
    """
    lines = read_lines(path, what=what, allow_empty=allow_empty)
    if lines and lines[0].startswith("\ufeff"):
        raise InputError("starts with a UTF-8 byte-order mark (U+FEFF), which would be scored as part of the first "
                         "word: save the file as UTF-8 without it", path, 1)
    return lines


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
        If no file is given, a file is missing, empty, has an empty line or starts with a byte-order
        mark, or the files (or a file and the source) differ in length.
    """
    if not paths:
        raise InputError("no reference file given")
    sets = [read_segments(p, what="reference file") for p in paths]
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


#: the option that lets a file of hypotheses be scored against the first lines of longer references
REFS_PREFIX_OPTION = "--refs-prefix"


@dataclasses.dataclass(frozen=True)
class Coverage:
    """The sentences a corpus score covers (:func:`covered_sentences`).

    Attributes
    ----------
    ids
        The sentence ids scored, ascending: reference line numbers (0-based).
    n_lines
        The references' line count.
    """

    ids: np.ndarray
    n_lines: int

    @property
    def n_sentences(self) -> int:
        return len(self.ids)

    @property
    def complete(self) -> bool:
        """Every reference line is scored."""
        return self.n_sentences == self.n_lines

    def __str__(self) -> str:
        """``50 sentences of 100 reference lines``."""
        n, m = self.n_sentences, self.n_lines
        return f"{n} sentence{'' if n == 1 else 's'} of {m} reference line{'' if m == 1 else 's'}"

    def info(self) -> dict:
        """The counts as JSON fields: ``{"sentences": 50, "reference_lines": 100}``."""
        return {"sentences": self.n_sentences, "reference_lines": self.n_lines}

    def references(self, references: Sequence[Sequence[str]]) -> list[list[str]]:
        """The covered lines of each reference set, in id order."""
        ids = self.ids.tolist()
        return [[ref[i] for i in ids] for ref in references]

    def pick(self, by_id: Sequence[str]) -> list[str]:
        """The covered entries of a list indexed by sentence id (e.g. the 1-best line of each id)."""
        return [by_id[i] for i in self.ids.tolist()]


def covered_sentences(
    ids: np.ndarray | Sequence[int],
    references: Sequence[Sequence[str]] | int,
    *,
    what: str = "the k-best pool",
    path: str | os.PathLike | None = None,
    lines: bool = False,
    prefix: bool = False,
) -> Coverage:
    """The sentences a score of ``what`` against ``references`` covers: the one rule of every command.

    Parameters
    ----------
    ids
        The sentence ids that have hypotheses (in any order, repeated or not): a pool's or lattice
        set's ids, or ``range(n)`` for a file of n lines (``lines``).
    references
        The reference sets (:func:`read_references`) or their line count.
    what, path
        What is scored and its file, for the messages.
    lines
        ``what`` is a file whose line i is sentence i (a 1-best output, a source): it must have one
        line per reference line, unless ``prefix``.
    prefix
        With ``lines``, a file with fewer lines than the references covers their first lines (the
        command's ``--refs-prefix``).

    Raises
    ------
    InputError
        For an id beyond the references (a negative id too), or a ``lines`` file whose line count
        differs from the references' (fewer lines only without ``prefix``).
    """
    n_lines = references if isinstance(references, int) else (len(references[0]) if references else 0)
    ids = np.unique(np.asarray(ids, dtype=np.int64))
    if lines:
        n = len(ids)
        if n > n_lines:
            raise InputError(f"has {n} lines but the references have {n_lines}", path, n_lines + 1)
        if n < n_lines and not prefix:
            raise InputError(f"has {n} lines but the references have {n_lines} (give one line per reference line, "
                             f"or {REFS_PREFIX_OPTION} to score the first {n} reference lines)", path, n + 1)
        return Coverage(ids, n_lines)
    if len(ids) and ids[0] < 0:
        raise InputError(f"{what} has the negative sentence id {int(ids[0])}", path)
    if len(ids) and ids[-1] >= n_lines:
        raise InputError(f"{what} has sentence id {int(ids[-1])}, beyond the references ({n_lines} lines, "
                         f"ids 0 to {n_lines - 1})", path)
    return Coverage(ids, n_lines)


def check_sentence_ids(sentence_ids, hypotheses, references) -> tuple[np.ndarray, int]:
    """The checks every statistics function makes: equal reference sets, one sentence id per
    hypothesis, each with a reference line. Returns (sentence ids as int64, number of sentences)."""
    if not references:
        raise InputError("no references given")
    n_sent = len(references[0])
    for r, ref_set in enumerate(references):
        if len(ref_set) != n_sent:
            raise InputError(f"reference set {r + 1} has {len(ref_set)} segments, the first has {n_sent}")
    sentence_ids = np.asarray(sentence_ids, dtype=np.int64)
    if len(sentence_ids) != len(hypotheses):
        raise InputError(f"{len(hypotheses)} hypotheses but {len(sentence_ids)} sentence ids")
    if len(sentence_ids) and (sentence_ids.min() < 0 or sentence_ids.max() >= n_sent):
        bad = int(sentence_ids.max() if sentence_ids.max() >= n_sent else sentence_ids.min())
        raise InputError(f"sentence id {bad} has no reference (references have {n_sent} segments)")
    return sentence_ids, n_sent


def interleaved(references: Sequence[Sequence[str]], n_sent: int) -> list[str]:
    """Every reference segment in the order the statistics kernels read them: reference ``r`` of
    sentence ``s`` is segment ``s * len(references) + r``."""
    return [ref_set[s] for s in range(n_sent) for ref_set in references]
