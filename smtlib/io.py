"""File helpers shared by every command: transparent gzip, exact error lines, atomic writes.

Reading. Every input is UTF-8 text, plain or gzip-compressed (recognised by its magic bytes, not
its name). :func:`read_bytes` / :func:`read_text` / :func:`read_lines` read a whole file;
:func:`open_text` streams it line by line. Whatever the path, a damaged input is one
:class:`~smtlib.errors.InputError` naming the file and the real 1-based line:

* bytes that are not UTF-8: the line holding the first bad byte (counted in the whole file, not in
  the decoder's current chunk);
* a gzip stream that ends early (a truncated file) or is corrupt: the first line that is not
  complete, i.e. the line after the last newline that could be recovered.

Writing. A failing command must leave no partial output file (``CONTRACT.md``), so every output goes
through :func:`atomic_output`: it writes to a temporary file in the destination directory and
renames it over the destination only when the ``with`` block ends without an exception. The file
gets the mode a plain ``open(path, "w")`` would give it (``0o666`` less the umask, :func:`new_file_mode`),
not the private ``0o600`` of the temporary file.
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import itertools
import json
import os
import queue
import sys
import tempfile
import threading
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from smtlib.errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"


def _check_path(path: str, what: str) -> None:
    if not os.path.exists(path):
        raise InputError(f"{what} not found", path)
    if os.path.isdir(path):
        raise InputError(f"{what} is a directory", path)


def _raw_bytes(path: str, what: str) -> bytes:
    """The bytes of ``path`` as stored (``-`` is standard input)."""
    if path == "-":
        return sys.stdin.buffer.read()
    _check_path(path, what)
    with open(path, "rb") as fh:
        return fh.read()


def _gunzip(data: bytes, path: str) -> bytes:
    """Decompress every gzip member of ``data``; a truncated or corrupt stream is an InputError.

    The error names the first line that is not complete: one more than the number of newlines
    in the data that could be decompressed before the damage.
    """
    parts: list[bytes] = []
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        rest = view[offset:]
        if bytes(rest[:2]) != _GZIP_MAGIC:
            if not any(rest):  # zero padding after the last member, as gzip(1) accepts
                break
            raise InputError("unexpected bytes after the gzip data (a damaged file?)", path, _next_line(parts))
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            parts.append(decompressor.decompress(rest))
        except zlib.error as exc:
            raise InputError(f"gzip data is corrupt ({exc})", path, _next_line(parts)) from None
        if not decompressor.eof:
            raise InputError("gzip data ends early: the file is truncated", path, _next_line(parts))
        offset = len(data) - len(decompressor.unused_data)
    return b"".join(parts)


def _next_line(parts: list[bytes]) -> int:
    """1-based number of the line after the last complete one in ``parts`` (the first incomplete)."""
    return sum(p.count(b"\n") for p in parts) + 1


def read_bytes(path: str | os.PathLike, *, what: str = "file") -> bytes:
    """The whole content of a plain or gzip file (``-``: standard input), decompressed.

    Raises
    ------
    InputError
        If the file does not exist, is a directory, or its gzip data is truncated or corrupt.
    """
    path = os.fspath(path)
    data = _raw_bytes(path, what)
    return _gunzip(data, path) if data[:2] == _GZIP_MAGIC else data


def utf8_error_line(data: bytes, start: int) -> int:
    """1-based line of the byte at ``start`` of ``data`` (the first byte that is not UTF-8)."""
    return data.count(b"\n", 0, start) + 1


def decode_utf8(data: bytes, path: str | os.PathLike) -> str:
    """``data`` as text; the first byte that is not UTF-8 is an InputError at its real line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 ({exc.reason})", path, utf8_error_line(data, exc.start)) from None


def read_text(path: str | os.PathLike, *, what: str = "file") -> str:
    """The whole content of a plain or gzip UTF-8 file as one string (see :func:`read_bytes`)."""
    return decode_utf8(read_bytes(path, what=what), path)


def read_lines(path: str | os.PathLike, *, what: str = "file", allow_empty: bool = False) -> list[str]:
    """All lines of a text file without their line ends (``\\n`` or ``\\r\\n``).

    Raises
    ------
    InputError
        On a missing file, bytes that are not UTF-8 or a truncated gzip stream (at the real line),
        or (unless ``allow_empty``) an empty file.
    """
    text = read_text(path, what=what)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines and not allow_empty:
        raise InputError(f"{what} is empty", path)
    return lines


# -- streaming ------------------------------------------------------------------------------------
_handler_ids = itertools.count()


class _CheckedGzip(gzip.GzipFile):
    """A gzip reader whose truncation and corruption errors are InputErrors at the real line."""

    def __init__(self, fileobj, path: str) -> None:
        super().__init__(fileobj=fileobj, mode="rb")
        self._smtlib_path = path

    def _fail(self, exc: Exception):
        # Re-decompress from the start to find the line where the data stops (a fatal path).
        try:
            read_bytes(self._smtlib_path)
        except InputError as error:
            raise error from None
        raise InputError(f"gzip data is unreadable ({exc})", self._smtlib_path) from None

    def read(self, size=-1):
        try:
            return super().read(size)
        except (EOFError, OSError, zlib.error) as exc:
            self._fail(exc)

    def read1(self, size=-1):
        try:
            return super().read1(size)
        except (EOFError, OSError, zlib.error) as exc:
            self._fail(exc)

    def peek(self, n):
        try:
            return super().peek(n)
        except (EOFError, OSError, zlib.error) as exc:
            self._fail(exc)


def _utf8_handler(path: str, data: bytes | None):
    """A codec error handler that turns the first bad byte into an InputError at its real line."""

    def handler(exc: UnicodeDecodeError):
        content = data if data is not None else read_bytes(path)
        try:
            content.decode("utf-8")
        except UnicodeDecodeError as full:
            raise InputError(f"not valid UTF-8 ({full.reason})", path, utf8_error_line(content, full.start)) from None
        raise InputError(f"not valid UTF-8 ({exc.reason})", path) from None

    name = f"smtlib-utf8-{next(_handler_ids)}"
    codecs.register_error(name, handler)
    return name


def open_text(path: str | os.PathLike, *, what: str = "file") -> IO[str]:
    """Open a plain or gzip-compressed UTF-8 text file for reading, line by line (``-``: stdin).

    Decoding and gzip errors raise :class:`InputError` naming the real 1-based line (the file is
    read again from the start to find it, so the normal path pays nothing for it).

    Raises
    ------
    InputError
        If the file does not exist or is a directory.
    """
    path = os.fspath(path)
    if path == "-":
        data = read_bytes(path, what=what)  # standard input cannot be read twice: keep it
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=_utf8_handler(path, data), newline="\n")
    _check_path(path, what)
    raw = open(path, "rb")
    # peek() does not consume, so pipes and process substitutions work too.
    stream: IO[bytes] = _CheckedGzip(raw, path) if raw.peek(2)[:2] == _GZIP_MAGIC else raw
    return io.TextIOWrapper(stream, encoding="utf-8", errors=_utf8_handler(path, None), newline="\n")



def read_json(path: str | os.PathLike, what: str = "JSON file") -> dict:
    """A JSON file; a missing file or a syntax error is an :class:`InputError` naming ``path`` (and the line)."""
    try:
        with open_text(path, what=what) as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} is not JSON ({exc.msg})", path, exc.lineno) from None


def write_json(path: str | os.PathLike, data) -> None:
    """``data`` as indented JSON, written atomically."""
    with atomic_output(path) as fh:
        json.dump(data, fh, indent=1)

def link_or_copy(source: str | os.PathLike, dest: str | os.PathLike) -> None:
    """Hard-link ``source`` to ``dest`` (a copy where hard links are impossible), replacing ``dest``
    atomically: a reader sees the old file or the new one, never a partial copy."""
    import shutil

    dest = os.fspath(dest)
    tmp = os.path.join(os.path.dirname(dest), ".tmp-" + os.path.basename(dest))
    if os.path.lexists(tmp):
        os.unlink(tmp)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, dest)


# -- writing --------------------------------------------------------------------------------------
def current_umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux: /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not atomic, but nothing else sets it here)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: ``0o666`` less the umask (``0o644`` under 022).

    :func:`tempfile.mkstemp` creates its file ``0o600`` whatever the umask; a file written through
    a temporary one is given this mode before it takes its final name.
    """
    return 0o666 & ~current_umask()


#: gzip level of the tuning loop's k-best and lattice files (``smtlib decode``, ``smtlib kbest slice``)
#: and of the lattice tuners' aggregated paths (``--paths-out``): each is written once and read once
#: or twice. Level 9 cost 0.13 s CPU per 150 sentences' 100-best list (3.3 MB), a tenth of a
#: cube-pruning decode; level 1 costs 0.02 s for 30 % more bytes.
LOOP_COMPRESSLEVEL = 1

@contextlib.contextmanager
def atomic_output(
    path: str | os.PathLike, *, binary: bool = False, compress: bool | None = None, compresslevel: int = 9
) -> Iterator[IO]:
    """Write ``path`` atomically: all of it or nothing.

    Parameters
    ----------
    path
        Destination. ``-`` writes to standard output (not atomic, by nature).
    binary
        Yield a binary handle instead of a UTF-8 text handle.
    compress
        gzip the output; by default when ``path`` ends in ``.gz``.
    compresslevel
        gzip level (9, gzip's default; 1 for large files written once and read once).
    """
    path = os.fspath(path)
    if path == "-":
        yield sys.stdout.buffer if binary else sys.stdout
        return
    if compress is None:
        compress = path.endswith(".gz")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + ".", dir=directory)
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as raw:
            # mtime=0 keeps gzip output bit-identical across runs.
            stream: IO[bytes] = (
                gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=compresslevel) if compress else raw
            )
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


def write_lines(path: str | os.PathLike, lines: Sequence[str] | Iterable[list[str]], chunk: int = 100_000) -> None:
    """Write lines atomically, gzip-compressed (level 1) when ``path`` ends in .gz.

    ``lines`` is a sequence of lines or an iterable of chunks (lists of lines). Compression runs in a
    second thread (zlib releases the GIL), so it overlaps with formatting the next chunk. Level 1:
    the system's tables are written once and read once per build; level 6 takes 3x the time for
    about 25 % less space.
    """
    if isinstance(lines, Sequence):
        seq = lines
        chunks: Iterable[Sequence[str]] = (seq[k : k + chunk] for k in range(0, len(seq), chunk))
    else:
        chunks = lines
    with atomic_output(path, binary=True, compresslevel=1) as out:
        pending: queue.Queue = queue.Queue(maxsize=2)
        failure: list[BaseException] = []

        def consume() -> None:
            while (data := pending.get()) is not None:
                if not failure:
                    try:
                        out.write(data)
                    except BaseException as exc:  # re-raised in the producer
                        failure.append(exc)

        worker = threading.Thread(target=consume, daemon=True)
        worker.start()
        try:
            for part in chunks:
                if failure:
                    break
                if len(part):
                    pending.put(("\n".join(part) + "\n").encode("utf-8"))
        finally:
            pending.put(None)
            worker.join()
        if failure:
            raise failure[0]
