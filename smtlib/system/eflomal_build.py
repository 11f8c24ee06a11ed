"""An eflomal binary whose alignments do not depend on the CPU it runs on.

eflomal's own build (its ``src/Makefile``, run by ``pip install eflomal``) compiles the sampler with
``-Ofast -march=native``: fast-math lets the compiler reassociate the sampler's float sums and fuse
multiply-adds, and ``-march=native`` chooses the vector width and instruction set of the machine that
installed it. The same corpus and seed then give other links on another CPU (measured in
``benchmarks/results/cpu_independence.md``: a ja-en system built with eflomal compiled for an AMD
Zen 3 and for this Intel CPU differ from the first alignment on), and every stage after it inherits
the difference.

The sampler needs no libm function (its ``exp``/``log`` are eflomal's own arithmetic approximations,
``simd_math_prims.h``), so compiled with IEEE semantics -- no fast-math, no FMA contraction
(``-ffp-contract=off``), the baseline instruction set of the architecture -- it computes the same
floats in the same order on every CPU and with every C compiler that honours those flags.

:func:`eflomal_binary` builds that binary once per user from eflomal's source distribution (the one
release pinned by :data:`SDIST_SHA256`, fetched from the package index or given as a file) and caches
it. ``SMTLIB_EFLOMAL`` names another binary to use instead (recorded in ``align.json``: such a
system is only as portable as that binary).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html.parser
import importlib.metadata
import io
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request

from smtlib.errors import InputError

#: The eflomal source releases whose build is known (sha256 of the sdist): a different source would
#: sample differently, so an unknown release is refused rather than built.
SDIST_SHA256 = {"2.0.0": "b71183dcf85bf4f59f44ef7a59f5268df1c17c0c8d8093f77b220025ffdba100"}
#: IEEE float semantics on the architecture's baseline instruction set (module docstring).
PORTABLE_CFLAGS = ("-O2", "-std=gnu99", "-fopenmp", "-fno-fast-math", "-ffp-contract=off", "-fexcess-precision=standard")
DEFAULT_INDEX = "https://pypi.org/simple"


class AlignerBuildError(InputError):
    """The portable eflomal could not be built (no compiler, no source, an unknown release, a bad
    ``SMTLIB_EFLOMAL``): one line and exit status 2, as for any setting the user gave."""


@dataclasses.dataclass(frozen=True)
class AlignerBinary:
    """The eflomal executable an alignment runs, and how it was made (for ``align.json``)."""

    path: pathlib.Path
    build: str  # "portable" (built here, CPU-independent) or "user" (SMTLIB_EFLOMAL)
    version: str
    sha256: str

    def describe(self) -> dict:
        """For ``align.json``: not the binary's digest, which differs between compilers that give
        the same alignments (the file's bytes must not depend on the machine)."""
        flags = " ".join(PORTABLE_CFLAGS) if self.build == "portable" else "unknown (SMTLIB_EFLOMAL)"
        return {"build": self.build, "version": self.version, "cflags": flags}


def _file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cache_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "smtlib"


def installed_version() -> str:
    try:
        return importlib.metadata.version("eflomal")
    except importlib.metadata.PackageNotFoundError:
        raise AlignerBuildError("eflomal is not installed (pip install 'smtlib[system]')") from None


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "a":
            self.hrefs.extend(value for name, value in attrs if name == "href" and value)


def _index_url() -> str:
    """The package index pip is configured with (PIP_INDEX_URL, then ``pip config``), else PyPI."""
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        try:
            done = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                                  capture_output=True, text=True, timeout=60)
            url = done.stdout.strip() if done.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            url = ""
    return (url or DEFAULT_INDEX).rstrip("/")


def fetch_sdist(version: str) -> bytes:
    """eflomal's source distribution for ``version``: ``SMTLIB_EFLOMAL_SDIST`` if set, else the index's.

    Raises
    ------
    AlignerBuildError
        If the release is not one of :data:`SDIST_SHA256`, cannot be fetched, or its digest differs.
    """
    expected = SDIST_SHA256.get(version)
    if expected is None:
        known = ", ".join(sorted(SDIST_SHA256))
        raise AlignerBuildError(f"eflomal {version} is installed; the portable build knows release(s) {known} "
                                f"(pip install 'eflomal=={max(SDIST_SHA256)}')")
    name = f"eflomal-{version}.tar.gz"
    local = os.environ.get("SMTLIB_EFLOMAL_SDIST")
    if local:
        data = pathlib.Path(local).read_bytes()
        where = local
    else:
        page_url = f"{_index_url()}/eflomal/"
        try:
            with urllib.request.urlopen(page_url, timeout=60) as response:
                parser = _Links()
                parser.feed(response.read().decode("utf-8", errors="replace"))
            matches = [h for h in parser.hrefs if urllib.parse.urlsplit(h).path.endswith("/" + name) or h.split("#")[0] == name]
            if not matches:
                raise AlignerBuildError(f"{page_url} does not list {name}")
            where = urllib.parse.urljoin(page_url, matches[0].split("#")[0])
            with urllib.request.urlopen(where, timeout=120) as response:
                data = response.read()
        except OSError as err:
            raise AlignerBuildError(f"cannot fetch {name} from {page_url} ({err}); download it and set "
                                    f"SMTLIB_EFLOMAL_SDIST=/path/to/{name}") from None
    got = hashlib.sha256(data).hexdigest()
    if got != expected:
        raise AlignerBuildError(f"{where}: sha256 {got}, expected {expected} for {name}")
    return data


def extract_source(sdist: bytes, into: pathlib.Path) -> pathlib.Path:
    """The C sources of an eflomal sdist written into ``into``; returns the path of ``eflomal.c``."""
    with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as archive:
        members = [m for m in archive.getmembers()
                   if m.isfile() and "/src/" in m.name and m.name.endswith((".c", ".h"))]
        for member in members:
            (into / pathlib.Path(member.name).name).write_bytes(archive.extractfile(member).read())
    if not (into / "eflomal.c").is_file():
        raise AlignerBuildError("the eflomal source distribution has no src/eflomal.c")
    return into / "eflomal.c"


def compile_eflomal(source: pathlib.Path, out: pathlib.Path, flags: tuple[str, ...] = PORTABLE_CFLAGS) -> None:
    """Compile ``eflomal.c`` (its other files beside it) into the executable ``out`` with ``flags``."""
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        raise AlignerBuildError("no C compiler (cc or gcc) to build eflomal")
    command = [compiler, *flags, "-o", str(out), str(source), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise AlignerBuildError(f"building eflomal failed: {' '.join(command)}\n{done.stderr[-2000:]}")


def eflomal_binary() -> AlignerBinary:
    """The eflomal executable to align with: ``SMTLIB_EFLOMAL`` if set, else the portable build.

    The portable build is made on first use (about 2 s with gcc, plus the sdist's download) under
    ``$XDG_CACHE_HOME/smtlib`` (default ``~/.cache/smtlib``) and reused; concurrent first uses end
    with the same file (each builds in its own directory and renames atomically).

    Raises
    ------
    AlignerBuildError
        If it cannot be built (see :func:`fetch_sdist`; no C compiler).
    """
    version = installed_version()
    user = os.environ.get("SMTLIB_EFLOMAL")
    if user:
        path = pathlib.Path(user)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise AlignerBuildError(f"SMTLIB_EFLOMAL={user} is not an executable file")
        return AlignerBinary(path, "user", version, _file_sha256(path))
    key = hashlib.sha256(f"{version}\0{SDIST_SHA256.get(version)}\0{' '.join(PORTABLE_CFLAGS)}".encode()).hexdigest()[:16]
    target = _cache_dir() / f"eflomal-{version}-portable-{key}" / "eflomal"
    if not target.is_file():
        sdist = fetch_sdist(version)
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            built = pathlib.Path(tmp) / "eflomal"
            compile_eflomal(extract_source(sdist, pathlib.Path(tmp)), built)
            os.replace(built, target)
    return AlignerBinary(target, "portable", version, _file_sha256(target))
