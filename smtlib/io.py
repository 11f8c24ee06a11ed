"""File helpers shared by every command: transparent gzip, atomic writes, line reading.

A failing command must leave no partial output file (``CONTRACT.md``), so every output goes
through :func:`atomic_output`: it writes to a temporary file in the destination directory and
renames it over the destination only when the ``with`` block ends without an exception.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from collections.abc import Iterator
from typing import IO

from smtlib.errors import InputError


def is_gzip(path: str | os.PathLike) -> bool:
    """True if ``path`` starts with the gzip magic bytes (the name is not trusted)."""
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def open_text(path: str | os.PathLike, *, what: str = "file") -> IO[str]:
    """Open a plain or gzip-compressed UTF-8 text file for reading.

    Raises
    ------
    InputError
        If the file does not exist or is a directory.
    """
    path = os.fspath(path)
    if path == "-":
        import sys

        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="strict")
    if not os.path.exists(path):
        raise InputError(f"{what} not found", path)
    if os.path.isdir(path):
        raise InputError(f"{what} is a directory", path)
    raw = open(path, "rb")
    # peek() does not consume, so pipes and process substitutions work too.
    if raw.peek(2)[:2] == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw, mode="rb"), encoding="utf-8", errors="strict", newline="\n")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="\n")


def read_lines(path: str | os.PathLike, *, what: str = "file", allow_empty: bool = False) -> list[str]:
    """All lines of a text file without their line ends.

    Raises
    ------
    InputError
        On a missing file, bytes that are not UTF-8, or (unless ``allow_empty``) an empty file.
    """
    lines: list[str] = []
    with open_text(path, what=what) as fh:
        lineno = 0
        try:
            for lineno, line in enumerate(fh, 1):  # noqa: B007 - lineno used in the error
                lines.append(line.rstrip("\n").rstrip("\r"))
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 ({exc.reason})", path, lineno + 1) from None
    if not lines and not allow_empty:
        raise InputError(f"{what} is empty", path)
    return lines


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, *, binary: bool = False, compress: bool | None = None) -> Iterator[IO]:
    """Write ``path`` atomically: all of it or nothing.

    Parameters
    ----------
    path
        Destination. ``-`` writes to standard output (not atomic, by nature).
    binary
        Yield a binary handle instead of a UTF-8 text handle.
    compress
        gzip the output; by default when ``path`` ends in ``.gz``.
    """
    path = os.fspath(path)
    if path == "-":
        import sys

        yield sys.stdout.buffer if binary else sys.stdout
        return
    if compress is None:
        compress = path.endswith(".gz")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + ".", dir=directory)
    try:
        with os.fdopen(fd, "wb") as raw:
            # mtime=0 keeps gzip output bit-identical across runs.
            stream: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if compress else raw
            try:
                if binary:
                    yield stream
                else:
                    text = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
                    yield text
                    text.flush()
                    text.detach()
            finally:
                if compress:
                    stream.close()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
