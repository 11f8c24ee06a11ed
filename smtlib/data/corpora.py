"""Where the experiments' corpora come from: a registry of files, checksums and public sources.

Every file is known by its *relative path* in a data directory laid out like ``../shared/data``
(``multi30k/tok/val.lc.norm.tok.fr.gz``, ...), by the URL it is published at and by the SHA-256 of
its **uncompressed** content. Hashing the content rather than the bytes on disk lets one checksum
cover both a local gzipped copy and the upstream file (plain or gzipped), so a user's local
mirror, a download and this machine's ``../shared/data`` are all checked the same way.

A file is located (:func:`locate`) in this order: the local data directory (``data_dir``, the
workflow's ``--config data_dir=DIR``), a download cache (``resources/downloads``), and finally a
download from its URL into the cache. Without a local copy and without network access the result is
one :class:`~smtlib.errors.InputError` that says which file is missing and how to provide it.

The language pairs (:data:`PAIRS`) name, for each experiment, which files are the training corpus,
the tuning (dev) set and the test sets, following Cherry & Foster (2012) §4.1 in spirit: Multi30k
task 1 stands in for the Hansard (fr-en, en-fr; val = dev, test_2016_flickr and test_2017_flickr =
the two test sets), small_parallel_enja for the NIST Zh-En setting (ja-en), and the OpenNMT WMT
sample (registered, checksummed, used by no pair now); de-en is Multi30k's German->English, the direction
of Simianer, Riezler & Dyer (2012) (``rules/simianer.smk``).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import os
import pathlib
import shutil
import tempfile
import urllib.error
import urllib.request

from smtlib.errors import InputError
from smtlib.io import new_file_mode

MULTI30K = "https://raw.githubusercontent.com/multi30k/dataset/a3d2e0d26b56f3846f66a952536ffed4e401d05a/data/task1/tok/"
ENJA = "https://raw.githubusercontent.com/odashi/small_parallel_enja/312408a11c5fbcbc09443bebb18121f7efdcd61e/"
OPENNMT = "https://raw.githubusercontent.com/OpenNMT/OpenNMT/3ab15e928a438be119e655dedb8416b1b4d62428/data/"
MOSES_REG = ("https://raw.githubusercontent.com/moses-smt/mosesdecoder/34452895f350bf097b21ee514a529a1dc542243c/"
             "scripts/regression-testing/tests/mert-moses-new-aggregate/")


@dataclasses.dataclass(frozen=True)
class DataFile:
    """One file of a corpus.

    Attributes
    ----------
    path
        Path relative to a data directory laid out like ``../shared/data``.
    url
        Where the file is published (plain or ``.gz``; a ``.gz`` URL is decompressed for the check).
    sha256
        SHA-256 of the uncompressed content.
    lines
        Number of lines of the uncompressed content.
    """

    path: str
    url: str
    sha256: str
    lines: int


def _multi30k(split: str, lang: str, sha: str, lines: int) -> DataFile:
    name = f"{split}.lc.norm.tok.{lang}"
    return DataFile(f"multi30k/tok/{name}.gz", MULTI30K + name, sha, lines)


def _enja(split: str, lang: str, sha: str, lines: int) -> DataFile:
    return DataFile(f"small_parallel_enja/{split}.{lang}.gz", f"{ENJA}{split}.{lang}", sha, lines)


def _opennmt(side: str, split: str, sha: str, lines: int) -> DataFile:
    name = f"{side}-{split}.txt"
    return DataFile(f"opennmt-wmt-ende/{name}.gz", OPENNMT + name, sha, lines)


#: every file the experiments use, by a short key "corpus/split.lang"
FILES: dict[str, DataFile] = {
    "multi30k/train.fr": _multi30k("train", "fr", "8fa41bb718412bcb7c5dfa58603842810a01543eae86a51279f9886b901266e1", 29000),
    "multi30k/train.en": _multi30k("train", "en", "08925f8e0572bcd5a006702fc5fe20e2d77c6917d4eebd576fc20de6693c2119", 29000),
    "multi30k/val.fr": _multi30k("val", "fr", "b303e301aa21fe7822a846b2b3fb2d5a1121ec807cd5b1d006fb7b2b5507168a", 1014),
    "multi30k/val.en": _multi30k("val", "en", "46573ce391ae227f1c72f873392436a20ef18e0a6d518098cfbd70b77c8572ec", 1014),
    "multi30k/test_2016_flickr.fr": _multi30k(
        "test_2016_flickr", "fr", "1463bd5960f9bfe098ec3cd752d3df0c49c84dc646fb518964a29232658cd836", 1000),
    "multi30k/test_2016_flickr.en": _multi30k(
        "test_2016_flickr", "en", "5b7f32627cf99eced828311b955dae9800bb52bc8b91cf8b6526829e605b29d2", 1000),
    "multi30k/test_2017_flickr.fr": _multi30k(
        "test_2017_flickr", "fr", "c0583117a47b31e8a6c6a97cfe8de153e462074668f4e994764fcc80b21d33b4", 1000),
    "multi30k/test_2017_flickr.en": _multi30k(
        "test_2017_flickr", "en", "c9d1dfd7a26add989382e534af235af9f0f658b2a30e7eb0efdaf142496ee54f", 1000),
    "multi30k/train.de": _multi30k("train", "de", "cb5a23529b65ec2061f1dc446192a9c37382b63cc75f81a0be59d34894b3a505", 29000),
    "multi30k/val.de": _multi30k("val", "de", "97232bd273eceb7207f689527386a97e4be2616b18ada47576bdaf96c8ae1f00", 1014),
    "multi30k/test_2016_flickr.de": _multi30k(
        "test_2016_flickr", "de", "c6a33d39d48f9f510de147651316cd9d918e09ad0219df734a2f16b6baccacc4", 1000),
    "multi30k/test_2017_flickr.de": _multi30k(
        "test_2017_flickr", "de", "02067e4a9402786a4fcb8c1b6f4307e4a5073ced64800abead5273b54f5f31f6", 1000),
    "enja/train.ja": _enja("train", "ja", "fc81a1434349ec98a449d7ae9cd2530057f689637684ecfed3501ea6a8a07ecc", 50000),
    "enja/train.en": _enja("train", "en", "148b05dcd28638fe20ee84f2b1127001c80982be352007dda241fb759adadc76", 50000),
    "enja/dev.ja": _enja("dev", "ja", "cd534f56b8639dc130f86a365e5ec0aa70042000bdd740a622fbbf8b6be4acca", 500),
    "enja/dev.en": _enja("dev", "en", "04a2673449770657fd5e3b963cb856be3130923212b6db8ac7eaeef18f06c041", 500),
    "enja/test.ja": _enja("test", "ja", "d37dc460a81b064e4106c8913eb11fa300da05cf3f58a7a5bbfec7e20947ddef", 500),
    "enja/test.en": _enja("test", "en", "45edb380749ec2b49cca7618fc5a7595fc9f791180672ba466b90c873a4aa8bf", 500),
    "opennmt/train.en": _opennmt("src", "train", "db668a7d798bddf21d1ab8fcb403efbc724ba01b70472ad30d1e2049fd46e12b", 10000),
    "opennmt/val.en": _opennmt("src", "val", "a32a3554fb6c1073b7ed8e0e43828e88ff35d2292e13b42503b479f43c69c782", 3000),
    "opennmt/test.en": _opennmt("src", "test", "5fde93388f630f7afd3208f24b4c68d3f992ddb15e0bc2491ee3b4f9ea44845b", 2737),
    "opennmt/train.de": _opennmt("tgt", "train", "fe1f824a189baa650eec46269e66eef07f7304ba7572598ebbe61c55eeff7d01", 10000),
    "opennmt/val.de": _opennmt("tgt", "val", "df700a3ffe2b4309af3bdaba9c6385b5e6fe647ac408e36759a136eef43959ed", 3000),
    "opennmt/test.de": _opennmt("tgt", "test", "d0de86aa401fea9734095fe694ac16f58371d09bcad7d86aef71776cacc80b1d", 2737),
}

_REPLAY_SUMS = {
    "data/run1.NBEST.out": "5b0724100955e54bf9ebf9b4493453b14cc2fcd2f3cc6f146a50f4ca407031a5",
    "data/run2.NBEST.out": "e9dd7797c9155b16ad39bd53a84024990e8e513c75f8fde8acc2b29273d83f51",
    "data/run3.NBEST.out": "a3e2fed60fab64fe1b8d939869e8c18c0deeae19da8a8df45f29ab06a3a8ad14",
    "data/run4.NBEST.out": "da0e92f67b7f704c8ab722d429a744477d70c8d8c12174036b1ca8ec4948c83b",
    "data/run5.NBEST.out": "e9c8534dfe813eea4c605831a1a32ac3bba8a9c82c184592d0009528f6b2da7e",
    "data/run6.NBEST.out": "ec023c315c88dd7ffea8f0b3e7756018bc168fc5168da699adc8e384ced226f3",
    "data/run7.NBEST.out": "1373a107c8cc005789bb98e9aa75a831815c0b267e1ed1972e9a3cec88510e7f",
    "data/run8.NBEST.out": "9c7488e9c2c3c45ca5f4ec713593234f85c7e33d100743ffae4f2a6111d9f5eb",
    "data/run9.NBEST.out": "fea41b9a69785dc3ee2d1c46018924d5eb62efbbfd44cda968b8da4e239cdad8",
    "data/run10.NBEST.out": "a1691a43ddd8c913705620da111b905f8cb745dd8befed514d160ea8392e03dc",
    "data/run11.NBEST.out": "95dc4ece845b1e3b48065de89cced832a41caa2e612b0169fc62cc0fb6d4d934",
    "data/run12.NBEST.out": "975bc650563078a56ac83c541c38ca664b65927620205218bbe7043aa901ae2e",
    "data/run13.NBEST.out": "33aead8168c648ff3ee61fad0dad61d7f0c676468c1500f93ac0a19822199d83",
    "data/run14.NBEST.out": "532f754d7b3a4a7eb72b3613bcb7406bd23b2a08334434605cbeb94d6b07341b",
    "reference.0": "9a43cb707e6a8ac3736c7095f0aa4f07eec60b1e2ef61aed1f52dcebf671314e",
    "reference.1": "84523f863a9234cd5c04ed3cf6178f41d4d5505393ca505aa450ea897c19f4d4",
    "reference.2": "39c1fc727659a61b7f19cbe0cce66890c65dde77d931d8e883f85be48e124cc4",
    "moses.ini": "16548874b69385109b668c5831bc52e11893b4a152964afaa5d9756863d09b2a",
    "truth/results.dat": "ad32ac179edd699c9cf509c77e97ab78e06184dcc2e4fa5daee856799f2504f3",
}
_REPLAY_LINES = {"reference.0": 5, "reference.1": 5, "reference.2": 5, "moses.ini": 60, "truth/results.dat": 99}
for _name, _sha in _REPLAY_SUMS.items():
    FILES[f"replay/{_name}"] = DataFile(
        f"moses-mert-nbest/regression/mert-moses-new-aggregate/{_name}.gz", MOSES_REG + _name, _sha,
        _REPLAY_LINES.get(_name, 1000))

#: number of recorded Moses iterations in the replay data (mert-moses-new-aggregate)
REPLAY_ITERATIONS = 14


@dataclasses.dataclass(frozen=True)
class Pair:
    """A translation direction: which registry files are train / dev / test, source and target.

    Attributes
    ----------
    src, tgt
        Language codes.
    train, dev
        ``(source key, target key)`` in :data:`FILES`.
    tests
        Test-set name -> ``(source key, target key)``.
    """

    src: str
    tgt: str
    train: tuple[str, str]
    dev: tuple[str, str]
    tests: dict[str, tuple[str, str]]


def _m30k(src: str, tgt: str) -> Pair:
    return Pair(src, tgt, (f"multi30k/train.{src}", f"multi30k/train.{tgt}"),
                (f"multi30k/val.{src}", f"multi30k/val.{tgt}"),
                {"test2016": (f"multi30k/test_2016_flickr.{src}", f"multi30k/test_2016_flickr.{tgt}"),
                 "test2017": (f"multi30k/test_2017_flickr.{src}", f"multi30k/test_2017_flickr.{tgt}")})


#: the language pairs of the experiments (Cherry & Foster's Fr-En, En-Fr; Ja-En for their Zh-En)
PAIRS: dict[str, Pair] = {
    "fr-en": _m30k("fr", "en"),
    "en-fr": _m30k("en", "fr"),
    "ja-en": Pair("ja", "en", ("enja/train.ja", "enja/train.en"), ("enja/dev.ja", "enja/dev.en"),
                  {"test": ("enja/test.ja", "enja/test.en")}),
    # Simianer, Riezler & Dyer (2012)'s direction, German->English, on Multi30k (rules/simianer.smk)
    "de-en": _m30k("de", "en"),
}


def get_pair(name: str) -> Pair:
    """The :class:`Pair` called ``name``; an unknown name is an :class:`InputError`."""
    if name not in PAIRS:
        raise InputError(f"unknown language pair {name!r} (known: {', '.join(sorted(PAIRS))})")
    return PAIRS[name]


def content_digest(path: str | os.PathLike) -> tuple[str, int]:
    """SHA-256 and line count of a file's uncompressed content (gzip is detected by its magic bytes)."""
    digest = hashlib.sha256()
    lines = 0
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    with opener(path, "rb") as fh:
        try:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
                lines += block.count(b"\n")
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read ({exc})", path) from None
    return digest.hexdigest(), lines


def verify(path: str | os.PathLike, entry: DataFile) -> None:
    """Raise :class:`InputError` unless ``path``'s content has ``entry``'s checksum."""
    sha, _ = content_digest(path)
    if sha != entry.sha256:
        raise InputError(f"checksum mismatch: content SHA-256 {sha}, expected {entry.sha256} "
                         f"(a different or corrupted copy of {entry.path})", path)


def _download(url: str, dest: pathlib.Path, timeout: float) -> None:
    """Fetch ``url`` into ``dest`` atomically (a partial download never takes the final name)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + dest.name + ".", dir=dest.parent)
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310
            shutil.copyfileobj(response, out)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def locate(key: str, *, data_dir: str | os.PathLike | None = None, cache: str | os.PathLike = "resources/downloads",
           download: bool = True, timeout: float = 60.0) -> pathlib.Path:
    """The path of a verified copy of the registry file ``key``.

    Looks in ``data_dir`` (a directory laid out like ``../shared/data``), then in ``cache``, then
    downloads into ``cache`` when ``download`` is true. Every copy is checked against the
    registry's content checksum.

    Raises
    ------
    InputError
        Unknown key, checksum mismatch, or no local copy and the download failed (e.g. offline).
    """
    if key not in FILES:
        raise InputError(f"unknown data file {key!r}")
    entry = FILES[key]
    if data_dir is not None:
        data_dir = pathlib.Path(data_dir)
        if not data_dir.is_dir():
            raise InputError("data_dir is not a directory (set --config data_dir=DIR to a copy laid out like "
                             "../shared/data, or leave it unset to download)", data_dir)
        local = data_dir / entry.path
        if local.is_file():
            verify(local, entry)
            return local
    cached = pathlib.Path(cache) / entry.path
    if cached.is_file():
        verify(cached, entry)
        return cached
    where = f"not under data_dir {os.fspath(data_dir)!r} and " if data_dir is not None else ""
    if not download:
        raise InputError(f"no local copy of {entry.path} ({where}not in the download cache {os.fspath(cache)!r}); "
                         "downloads are disabled")
    # the cache keeps the registry's layout, gzipped like the local copies; a plain download is gzipped
    tmp_plain = cached.with_name(cached.name + ".download")
    try:
        _download(entry.url, tmp_plain, timeout)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputError(f"no local copy of {entry.path} ({where}not in the download cache) and the download of "
                         f"{entry.url} failed ({reason}); without internet access, point the workflow at a local "
                         "copy laid out like ../shared/data with --config data_dir=DIR") from None
    try:
        with open(tmp_plain, "rb") as fh:
            is_gz = fh.read(2) == b"\x1f\x8b"
        if is_gz:
            os.replace(tmp_plain, cached)
        else:
            with open(tmp_plain, "rb") as src, gzip.GzipFile(cached.with_name(cached.name + ".tmp"), "wb", mtime=0) as gz:
                shutil.copyfileobj(src, gz)
            os.replace(cached.with_name(cached.name + ".tmp"), cached)
            os.unlink(tmp_plain)
        verify(cached, entry)
    except InputError:
        cached.unlink(missing_ok=True)
        raise
    return cached
