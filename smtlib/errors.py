"""The exception types a command turns into one line on stderr.

Every command catches :class:`InputError` at the top, prints its one-line message on stderr and
exits with status 2 (see ``CONTRACT.md``). Library code raises it instead of ``assert`` or a bare
``ValueError`` wherever the cause is a file or an option the user gave. :class:`TuningError` is a
tuning step whose result is unusable (exit status 1): the input was valid, the method failed on it.
"""

from __future__ import annotations

import os


class InputError(Exception):
    """Bad input: a malformed file, a mismatched id, a missing reference, a bad option value.

    Parameters
    ----------
    message
        What is wrong, in a few words.
    path
        The file the problem is in, if any.
    line
        1-based line number within ``path``, if there is one.
    """

    def __init__(self, message: str, path: str | os.PathLike | None = None, line: int | None = None):
        self.message = message
        self.path = None if path is None else os.fspath(path)
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        return where + self.message


class TuningError(Exception):
    """A tuning step produced weights no decoder can use: non-finite, all zero, or so small that the
    model scores of every sentence's hypotheses tie. The message names the method and the step."""
