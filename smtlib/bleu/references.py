"""Loading reference sets: one file per set, one segment per line, all of the same length.

A damaged reference file changes every BLEU computed with it, so the reader is strict: an empty
(or blank) line is an error -- a reference segment is never empty -- and so is a file whose line
count differs from the other reference files' or from the source's (when a command is given
both). Several files: the line count most of them share is taken as the right one, so the file
named in the error is the odd one out (with two files, the second). Count errors name the first
line that is missing or extra.

References and a pool (issue 28). Sentence ids are line numbers of the references, so a k-best
pool (or lattice set) whose largest sentence id + 1 is below the references' line count scores
reference lines it has no hypothesis for -- every such line is an empty hypothesis, and the BLEU
of the whole falls towards 0 (Moses's ``test_scorer_data``: 100 sentences, 2,000 reference lines).
:func:`references_for_pool` makes that an error unless the command is asked (``--refs-prefix``) to
score only the first lines, one per sentence of the pool. A sentence id missing in the middle of
the pool is not affected: its reference line is scored against an empty hypothesis, as
``smtlib rerank`` writes an empty line for it.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Sequence

import numpy as np

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


#: the option that makes a command score only the references' first lines (:func:`references_for_pool`)
REFS_PREFIX_OPTION = "--refs-prefix"


def references_for_pool(
    references: Sequence[Sequence[str]],
    paths: Sequence[str | os.PathLike],
    n_sentences: int,
    *,
    prefix: bool = False,
    what: str = "the k-best pool",
) -> Sequence[Sequence[str]]:
    """The references of a pool's sentences: all of them, or (``prefix``) their first ``n_sentences`` lines.

    Parameters
    ----------
    references
        The reference sets (:func:`read_references`), all of the same length.
    paths
        Their files, for the message.
    n_sentences
        The pool's largest sentence id + 1 (ids without hypotheses in the middle count).
    prefix
        Score only the first ``n_sentences`` lines (the command's ``--refs-prefix``) instead of
        failing when there are more.
    what
        The pool, for the message (``"the k-best pool"``, ``"the lattice set"``).

    Raises
    ------
    InputError
        If the references have more lines than ``n_sentences`` and ``prefix`` is false: at the
        first reference line the pool has no sentence for, naming the line count and the pool's.
    """
    n_lines = len(references[0]) if references else 0
    if n_lines <= n_sentences:  # fewer: a sentence id beyond the references, which the readers report
        return references
    if not prefix:
        ids = f" (ids 0 to {n_sentences - 1})" if n_sentences else ""
        raise InputError(
            f"has {n_lines} lines but {what} has {n_sentences} sentences{ids}: give one reference line per sentence, "
            f"or {REFS_PREFIX_OPTION} to score only the first {n_sentences} lines", paths[0], n_sentences + 1)
    return [list(ref[:n_sentences]) for ref in references]


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
