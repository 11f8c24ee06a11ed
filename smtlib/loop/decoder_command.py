"""The decoder command of ``smtlib loop``: its template, running it on shards, and joining their n-best lists.

**Template.** ``--decoder`` is one shell command line, run by ``/bin/sh`` in the current directory
(as mert-moses.pl runs its decoder: pipes and redirections work, and relative paths in a moses.ini
stay relative to where the loop was started), with placeholders:

==================  ===============================================================================
``{input}``         the source file to translate (a shard of it with ``--jobs``); without it, the
                    source is the command's standard input
``{nbest}``         the n-best file the decoder must write (plain text or gzip); without it, the
                    n-best list is the command's standard output
``{k}``             the n-best size (``--k``)
``{ini}``           a moses.ini with the iteration's weights (``--init`` must be a moses.ini)
``{weights}``       a weights file, ``name value`` per line
``{weights_args}``  ``-weight-overwrite 'NAME= v ...'`` (and ``-weight-file F`` for sparse weights),
                    mert-moses.pl's command-line weights (:mod:`smtlib.loop.decoder_weights`)
==================  ===============================================================================

Paths are shell-quoted. ``{{`` and ``}}`` are literal braces; any other ``{word}`` is an error (a
misspelt placeholder would otherwise reach the decoder as text). A command must use at least one of
``{ini}``, ``{weights}``, ``{weights_args}``: a decoder that never sees the weights cannot be tuned.

**Shards** (``--jobs N``, as mert-moses.pl's ``--jobs`` through moses-parallel.pl): the source is
split into N consecutive parts of nearly equal size (the first ones one line longer), the decoder
runs on all of them at once, and their n-best lists are joined in order with each sentence id moved
by its shard's first line (:func:`join_nbest`). Every list, also with one shard, goes through the
same renumbering, so the joined file is byte for byte the same for every N whenever the decoder
translates a sentence the same way whatever else is in its input. A shard's id must be below its
line count, and its last line must end with a line end (else the output was cut).

**Failures.** A command that exits with a non-zero status (or is killed by a signal) is an
:class:`~smtlib.errors.InputError` with the tail of its standard error; the full standard error of
every shard is in the log file the caller names (``decoder.log``). The caller prefixes the
iteration.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence

from smtlib.errors import InputError
from smtlib.io import LOOP_COMPRESSLEVEL, atomic_output, read_bytes

#: the placeholders a decoder command may use
PLACEHOLDERS = ("input", "nbest", "k", "ini", "weights", "weights_args")
#: the placeholders that pass the weights (at least one is required)
WEIGHT_PLACEHOLDERS = ("ini", "weights", "weights_args")
_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
#: lines of the decoder's standard error shown in an error message
TAIL_LINES = 3


@dataclasses.dataclass(frozen=True)
class DecoderTemplate:
    """A parsed ``--decoder`` command line (see the module docstring)."""

    text: str
    used: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> DecoderTemplate:
        """Check the placeholders of ``text``.

        Raises
        ------
        InputError
            For an empty command, an unknown ``{word}``, or no weights placeholder.
        """
        if not text.strip():
            raise InputError("--decoder: the decoder command is empty")
        used = set()
        for match in _FIELD.finditer(text):
            name = match.group(1)
            if name is None:
                continue
            if name not in PLACEHOLDERS:
                known = " ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                raise InputError(f"--decoder: unknown placeholder {{{name}}} (known: {known}; write {{{{ and }}}} "
                                 "for literal braces)")
            used.add(name)
        if not used & set(WEIGHT_PLACEHOLDERS):
            raise InputError("--decoder: the command passes no weights to the decoder: use {ini} (a moses.ini), "
                             "{weights} (a weights file) or {weights_args} (-weight-overwrite '...')")
        return cls(text, frozenset(used))

    def expand(self, values: Mapping[str, str]) -> str:
        """The command line with every placeholder replaced by ``values[name]`` (already quoted)."""

        def replace(match: re.Match) -> str:
            token = match.group(0)
            if token == "{{":
                return "{"
            if token == "}}":
                return "}"
            return values[match.group(1)]

        return _FIELD.sub(replace, self.text)


def shard_bounds(n_lines: int, jobs: int) -> list[tuple[int, int]]:
    """``(first line, end line)`` of each non-empty shard: ``jobs`` consecutive parts of nearly equal size."""
    jobs = max(1, min(jobs, n_lines)) if n_lines else 1
    size, extra = divmod(n_lines, jobs)
    bounds, start = [], 0
    for j in range(jobs):
        end = start + size + (1 if j < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


@dataclasses.dataclass(frozen=True)
class Shard:
    """One run of the decoder: its lines of the source and its files."""

    index: int
    first: int
    end: int
    input: str
    nbest: str
    log: str


def decode(template: DecoderTemplate, source_lines: Sequence[str], scratch: str | os.PathLike, values: Mapping[str, str],
           k: int, jobs: int, log_path: str | os.PathLike) -> list[Shard]:
    """Run the decoder on ``jobs`` shards of ``source_lines`` at once; the shards, their n-best lists written.

    ``scratch`` holds each shard's source, n-best list and standard error; ``log_path`` receives the
    standard error of every shard (headed by its shard when there are several), written atomically
    once all have ended.

    Raises
    ------
    InputError
        When a shard's command exits with a non-zero status or is killed (the first such shard,
        with the tail of its standard error), or writes no n-best file.
    """
    scratch = os.fspath(scratch)
    os.makedirs(scratch, exist_ok=True)
    shards = []
    for j, (first, end) in enumerate(shard_bounds(len(source_lines), jobs)):
        shard = Shard(j, first, end, os.path.join(scratch, f"shard{j}.in"), os.path.join(scratch, f"shard{j}.nbest"),
                      os.path.join(scratch, f"shard{j}.log"))
        with atomic_output(shard.input) as fh:
            fh.writelines(line + "\n" for line in source_lines[first:end])
        for stale in (shard.nbest, shard.log):
            if os.path.lexists(stale):
                os.unlink(stale)
        shards.append(shard)
    processes: list[subprocess.Popen] = []
    opened = []
    try:
        for shard in shards:
            command = template.expand({**values, "input": shlex.quote(shard.input), "nbest": shlex.quote(shard.nbest),
                                       "k": str(k)})
            stdin = open(shard.input, "rb") if "input" not in template.used else subprocess.DEVNULL
            stdout = open(shard.nbest, "wb") if "nbest" not in template.used else subprocess.DEVNULL
            stderr = open(shard.log, "wb")
            opened += [f for f in (stdin, stdout, stderr) if f is not subprocess.DEVNULL]
            processes.append(subprocess.Popen(command, shell=True, stdin=stdin, stdout=stdout, stderr=stderr))
        codes = [p.wait() for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:  # interrupted: do not leave decoders running
                p.kill()
                p.wait()
        for f in opened:
            f.close()
    _join_logs(shards, log_path)
    for shard, code in zip(shards, codes, strict=True):
        if code != 0:
            raise InputError(_failure(shard, code, len(shards), log_path))
    for shard in shards:
        if not os.path.exists(shard.nbest):
            raise InputError(f"the decoder wrote no n-best list ({shard.nbest} does not exist; does the command write "
                             "to {nbest}?)")
    return shards


def _join_logs(shards: Sequence[Shard], log_path: str | os.PathLike) -> None:
    with atomic_output(log_path, binary=True) as out:
        for shard in shards:
            if len(shards) > 1:
                out.write(f"# shard {shard.index + 1} of {len(shards)}: source lines {shard.first + 1}-{shard.end}\n"
                          .encode())
            with open(shard.log, "rb") as fh:
                out.write(fh.read())


def _failure(shard: Shard, code: int, n_shards: int, log_path: str | os.PathLike) -> str:
    """One line: how the command ended, where its standard error is, and its last lines."""
    if code < 0:
        try:
            how = f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
    else:
        how = f"exited with status {code}"
    which = f" on shard {shard.index + 1} of {n_shards}" if n_shards > 1 else ""
    with open(shard.log, "rb") as fh:
        text = fh.read().decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    tail = " | ".join(lines[-TAIL_LINES:])
    if len(tail) > 400:
        tail = "..." + tail[-397:]
    return f"the decoder {how}{which} (its standard error is in {os.fspath(log_path)}): {tail or '(nothing on stderr)'}"


def join_nbest(shards: Sequence[Shard], out: str | os.PathLike) -> None:
    """Join the shards' n-best lists into ``out`` (gzip), each id moved by its shard's first line.

    Every line is rewritten as ``ID`` + what follows the id field (from the first ``|||`` on), the id
    being the shard's id plus the shard's first line: the same bytes whatever the number of shards.

    Raises
    ------
    InputError
        For a line whose id is not a non-negative integer or not below the shard's line count, or a
        shard whose last line has no line end, naming the shard's file and line.
    """
    with atomic_output(out, binary=True, compresslevel=LOOP_COMPRESSLEVEL) as fh:
        for shard in shards:
            data = read_bytes(shard.nbest, what="n-best list")
            if data and not data.endswith(b"\n"):
                raise InputError("the last line has no line end (was the decoder's output cut?)", shard.nbest,
                                 data.count(b"\n") + 1)
            size = shard.end - shard.first
            lines = data.split(b"\n")[:-1] if data else []
            for lineno, line in enumerate(lines, 1):
                head, sep, rest = line.partition(b"|||")
                text = head.strip(b" \t")
                if not sep or not text.isdigit():
                    shown = head.strip().decode("utf-8", errors="replace")
                    what = "no '|||' separator" if not sep else f"sentence id {shown!r} is not a non-negative integer"
                    raise InputError(what, shard.nbest, lineno)
                sentence = int(text)
                if sentence >= size:
                    span = f"lines {shard.first + 1}-{shard.end} of the source" if len(shards) > 1 else "the source"
                    raise InputError(f"sentence id {sentence} is beyond the {size} sentence(s) of {span} given to the "
                                     "decoder (ids are 0-based)", shard.nbest, lineno)
                fh.write(str(sentence + shard.first).encode() + b" " + sep + rest + b"\n")
