"""Moses text formats: phrase tables, reordering tables, and a moses.ini for a model directory.

The model directory already holds Moses-format tables (:mod:`smtlib.system.modeldir`), so exporting
is writing a ``moses.ini`` that points at them (by absolute path, or at copies with ``--copy``) with
the weights:

* ``PhraseDictionaryMemory`` per phrase table (4 features, Moses's column order), each on its own
  decoding path (``[mapping] 0 T 0`` / ``1 T 1``): a translation option comes from one table, as
  with two tables in Moses;
* ``LexicalReordering`` of type ``wbe-msd-bidirectional-fe-allff`` (6 features) for medium/big;
* ``KENLM`` per language model, ``Distortion``, ``WordPenalty`` and ``UnknownWordPenalty``;
* ``[weight]`` from an smtlib weights file (:func:`smtlib.weights.to_moses_ini`), or the hand-set
  defaults of :func:`default_weights` (those of Moses's ``train-model.perl``).

Phrase-table lines are sorted by source and then target phrase (byte order, as ``LC_ALL=C sort``).
"""

from __future__ import annotations

import gzip
import os
import pathlib
import queue
import shutil
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from smtlib.io import atomic_output
from smtlib.system.modeldir import ModelSpec, component_path, read_model_spec
from smtlib.weights import format_value, to_moses_ini


def open_gzip_output(raw, path: str | os.PathLike, compresslevel: int = 1):
    """A gzip writer over an atomic binary handle when ``path`` ends in .gz (mtime 0: reproducible).

    Level 1: tables are written once and read once per decoder start; level 6 takes 3x the time
    for about 25 % less space.
    """
    if os.fspath(path).endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=compresslevel)
    return raw


def write_lines(path: str | os.PathLike, lines: Sequence[str] | Iterable[list[str]], chunk: int = 100_000) -> None:
    """Write lines atomically, gzip-compressed when ``path`` ends in .gz.

    ``lines`` is a sequence of lines or an iterable of chunks (lists of lines, e.g. from
    :func:`phrase_table_chunks`). Compression runs in a second thread (zlib releases the GIL), so it
    overlaps with formatting the next chunk.
    """
    if isinstance(lines, Sequence):
        seq = lines
        chunks: Iterable[Sequence[str]] = (seq[k : k + chunk] for k in range(0, len(seq), chunk))
    else:
        chunks = lines
    with atomic_output(path, binary=True, compress=False) as raw:
        out = open_gzip_output(raw, path)
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
            if out is not raw:
                out.close()
        if failure:
            raise failure[0]


def format_column(values: np.ndarray, spec: str = ".7g") -> list[str]:
    """Each value as text, formatting every distinct value once (relative frequencies repeat a lot)."""
    uniq, inverse = np.unique(values, return_inverse=True)
    text = np.array([format(v, spec) for v in uniq.tolist()], dtype=object)
    return text[inverse.reshape(-1)].tolist()


def _columns(matrix: np.ndarray, spec: str = ".7g") -> list[str]:
    return list(map(" ".join, zip(*(format_column(matrix[:, k], spec) for k in range(matrix.shape[1])))))


def phrase_table_lines(
    src: Sequence[str],
    tgt: Sequence[str],
    scores: np.ndarray,
    align: Sequence[str],
    counts: np.ndarray,
    sparse: Sequence[str] | None = None,
) -> list[str]:
    """Moses phrase-table lines ``src ||| tgt ||| 4 scores ||| align ||| c(e) c(f) c(f,e) [||| sparse]``.

    ``counts`` columns are c(e), c(f), c(f, e).
    """
    fields = [src, tgt, _columns(scores), align, _columns(counts, "d")]
    if sparse is not None:
        fields.append(sparse)
    return list(map(" ||| ".join, zip(*fields)))


def phrase_table_chunks(src, tgt, scores, align, counts, sparse=None, chunk: int = 100_000) -> Iterator[list[str]]:
    """:func:`phrase_table_lines` in chunks of ``chunk`` lines (formatted lazily)."""
    for k in range(0, len(src), chunk):
        part = slice(k, k + chunk)
        yield phrase_table_lines(
            src[part], tgt[part], scores[part], align[part], counts[part], None if sparse is None else sparse[part]
        )


def reordering_table_lines(src: Sequence[str], tgt: Sequence[str], probs: np.ndarray) -> list[str]:
    """Moses msd-bidirectional-fe lines ``src ||| tgt ||| m s d m s d``."""
    return list(map(" ||| ".join, zip(src, tgt, _columns(probs))))


def reordering_table_chunks(src, tgt, probs, chunk: int = 100_000) -> Iterator[list[str]]:
    """:func:`reordering_table_lines` in chunks of ``chunk`` lines (formatted lazily)."""
    for k in range(0, len(src), chunk):
        yield reordering_table_lines(src[k : k + chunk], tgt[k : k + chunk], probs[k : k + chunk])


def default_weights(spec: ModelSpec) -> dict[str, float]:
    """Hand-set starting weights (Moses ``train-model.perl``'s defaults), in smtlib names.

    LM 0.5, each TM score 0.2, distortion 0.3, each reordering feature 0.3, word penalty -1; a second
    LM or TM gets the same values; sparse features start at 0 (absent).
    """
    defaults = {"TranslationModel": 0.2, "LM": 0.5, "WordPenalty": -1.0, "Distortion": 0.3, "LexicalReordering": 0.3}
    weights: dict[str, float] = {}
    for name, count in spec.dense_features:
        base = name.rstrip("0123456789")
        for k in range(count):
            weights[f"{name}_{k}"] = defaults[base]
    return weights


def moses_ini(spec: ModelSpec, paths: Mapping[str, str], weights: Mapping[str, float], distortion_limit: int = 6) -> str:
    """The text of a moses.ini for ``spec`` with component files at ``paths`` (name -> path)."""
    lines = ["# moses.ini written by smtlib train export-moses", "[input-factors]", "0", "", "[mapping]"]
    lines += [f"{k} T {k}" for k in range(len(spec.phrase_tables))]
    lines += ["", "[distortion-limit]", str(distortion_limit), "", "[feature]", "UnknownWordPenalty", "WordPenalty"]
    for pt in spec.phrase_tables:
        lines.append(
            f"PhraseDictionaryMemory name={pt.name} num-features=4 path={paths[pt.name]} "
            f"input-factor=0 output-factor=0 table-limit=20"
        )
    for rt in spec.reordering:
        lines.append(
            f"LexicalReordering name={rt.name} num-features=6 type=wbe-msd-bidirectional-fe-allff "
            f"input-factor=0 output-factor=0 path={paths[rt.name]}"
        )
    lines.append("Distortion")
    for lm in spec.language_models:
        lines.append(f"KENLM name={lm.name} factor=0 path={paths[lm.name]} order={lm.order}")
    full = {"UnknownWordPenalty0_0": 1.0, **{k: v for k, v in weights.items()}}
    lines += ["", to_moses_ini(full).rstrip("\n")]
    return "\n".join(lines) + "\n"


def export_moses(
    model_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    weights: Mapping[str, float] | None = None,
    *,
    copy: bool = False,
    distortion_limit: int = 6,
) -> pathlib.Path:
    """Write ``OUT/moses.ini`` for the model in ``model_dir``; returns its path.

    With ``copy`` the tables are copied next to it (a self-contained Moses directory); otherwise the
    ini points at the model's own files by absolute path.
    """
    spec = read_model_spec(model_dir)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    for comp in spec.phrase_tables + spec.reordering + spec.language_models:
        src = component_path(model_dir, comp).resolve()
        if copy:
            dest = out / comp.path
            shutil.copyfile(src, dest)
            src = dest.resolve()
        paths[comp.name] = str(src)
    if weights is None:
        weights = default_weights(spec)
    with atomic_output(out / "moses.ini") as fh:
        fh.write(moses_ini(spec, paths, weights, distortion_limit))
    return out / "moses.ini"


__all__ = [
    "default_weights",
    "export_moses",
    "format_value",
    "moses_ini",
    "phrase_table_chunks",
    "phrase_table_lines",
    "reordering_table_chunks",
    "reordering_table_lines",
    "write_lines",
]
