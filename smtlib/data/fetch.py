"""Write one language pair's corpora as plain line-aligned text files for the workflow.

``fetch_pair`` locates the files of a :class:`~smtlib.data.corpora.Pair` (local copy, cache or
download, each checked against its content checksum) and writes, atomically, into ``out``::

    train.src train.tgt          part "train": the training corpus
    dev.src dev.ref              part "dev": the tuning set (Cherry & Foster's "dev")
    test.NAME.src test.NAME.ref  part "test.NAME": each test set
    PART.manifest.json           where each file of a part came from, its checksum and line counts

``parts`` selects what to write (default: everything), so that a workflow rule can produce one
part with fixed output names.

``limits`` keeps only the first N lines of a part (``train``, ``dev``, ``test``): the quick
configuration's few dozen sentences. Taking a prefix rather than a random sample keeps the
files identical for any seed and lets a reader check them with ``head``.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil

from smtlib.data.corpora import FILES, get_pair, locate
from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines

PARTS = ("train", "dev", "test")  # the keys of ``limits``


def _copy_lines(src: pathlib.Path, dest: pathlib.Path, limit: int | None) -> int:
    lines = read_lines(src, what="corpus file")
    if limit is not None:
        lines = lines[:limit]
    with atomic_output(dest) as out:
        for line in lines:
            out.write(line + "\n")
    return len(lines)


def part_names(pair: str) -> list[str]:
    """The parts of a pair: ``train``, ``dev`` and ``test.NAME`` for each test set."""
    return ["train", "dev"] + [f"test.{name}" for name in sorted(get_pair(pair).tests)]


def fetch_pair(pair: str, out: str | os.PathLike, *, data_dir: str | os.PathLike | None = None,
               cache: str | os.PathLike = "resources/downloads", download: bool = True,
               limits: dict[str, int | None] | None = None, parts: list[str] | None = None) -> dict:
    """Locate, verify and write the corpora of ``pair`` (the given ``parts``) into ``out``.

    Returns the manifests, part -> manifest.

    Raises
    ------
    InputError
        Unknown pair, a limit below 1, a missing file that cannot be downloaded, a checksum mismatch.
    """
    spec = get_pair(pair)
    limits = dict(limits or {})
    for part, value in limits.items():
        if part not in PARTS:
            raise InputError(f"unknown part {part!r} in limits (expected one of {PARTS})")
        if value is not None and value < 1:
            raise InputError(f"limit for {part} must be at least 1, got {value}")
    known = part_names(pair)
    parts = known if parts is None else list(parts)
    for part in parts:
        if part not in known:
            raise InputError(f"unknown part {part!r} of {pair} (expected one of {known})")
    out = pathlib.Path(out)
    jobs: list[tuple[str, str, str]] = []  # (part, output name, registry key)
    if "train" in parts:
        jobs += [("train", "train.src", spec.train[0]), ("train", "train.tgt", spec.train[1])]
    if "dev" in parts:
        jobs += [("dev", "dev.src", spec.dev[0]), ("dev", "dev.ref", spec.dev[1])]
    for name, (s, t) in sorted(spec.tests.items()):
        if f"test.{name}" in parts:
            jobs += [(f"test.{name}", f"test.{name}.src", s), (f"test.{name}", f"test.{name}.ref", t)]
    # locate everything first: a missing file fails the step before anything is written
    located = {key: locate(key, data_dir=data_dir, cache=cache, download=download) for _, _, key in jobs}
    manifests = {}
    for part in parts:
        limit = limits.get(part.split(".")[0])
        manifest = {"pair": pair, "src": spec.src, "tgt": spec.tgt, "part": part, "limit": limit, "files": {}}
        for _, name, key in (j for j in jobs if j[0] == part):
            n = _copy_lines(located[key], out / name, limit)
            manifest["files"][name] = {"key": key, "from": os.fspath(located[key]), "url": FILES[key].url,
                                       "sha256": FILES[key].sha256, "lines_upstream": FILES[key].lines, "lines": n}
        counts = {f["lines"] for f in manifest["files"].values()}
        if len(counts) != 1:
            raise InputError(f"{part} files of {pair} are not line-aligned: {sorted(counts)} lines")
        with atomic_output(out / f"{part}.manifest.json") as fh:
            json.dump(manifest, fh, indent=2, sort_keys=True)
            fh.write("\n")
        manifests[part] = manifest
    return manifests


def copied_name(key: str) -> str:
    """File name of registry key ``corpus/a/b`` once copied: ``a_b.gz`` (the corpus prefix dropped)."""
    return key.split("/", 1)[1].replace("/", "_") + ".gz"


def copy_files(keys: list[str], out_dir: str | os.PathLike | None, *, outputs: list | None = None,
               data_dir: str | os.PathLike | None = None, cache: str | os.PathLike = "resources/downloads",
               download: bool = True) -> list[pathlib.Path]:
    """Copy verified registry files, gzipped as stored, to ``outputs`` (one per key) or else to
    ``out_dir/copied_name(key)`` (atomically)."""
    located = [locate(key, data_dir=data_dir, cache=cache, download=download) for key in keys]
    if outputs is None:
        outputs = [pathlib.Path(out_dir) / copied_name(key) for key in keys]
    written = []
    for dest, src in zip(map(pathlib.Path, outputs), located):
        with open(src, "rb") as fh_in, atomic_output(dest, binary=True, compress=False) as fh_out:
            shutil.copyfileobj(fh_in, fh_out)
        written.append(dest)
    return written
