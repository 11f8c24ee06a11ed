"""Moses text formats, and a Moses system that Moses scores exactly as ``smtlib decode`` does.

The table writers (:func:`phrase_table_lines`, :func:`reordering_table_lines`, and :func:`smtlib.io.write_lines`)
are used by ``smtlib train`` to write a model directory's Moses-format tables
(:mod:`smtlib.system.modeldir`). :func:`export_moses` turns a model directory into a Moses system,
``OUT/moses.ini`` and ``OUT/phrase-table.gz``, that Moses scores as our decoder
(:mod:`smtlib.decoder.model`) does:

* **One merged phrase table.** Our decoder merges its phrase tables by phrase pair, a pair missing
  from a table getting probability ``1e-7`` (:data:`~smtlib.system.modeldir.MISSING_LOGPROB`) for all
  four of that table's scores, and applies the table limit to the merged options. Moses given the
  tables as separate decoding paths (``[mapping] 0 T 0 / 1 T 1``) scores each option with one table
  only, so the export writes one ``PhraseDictionaryMemory`` named ``TranslationModel0`` with ``4 * T``
  scores per line (TM0's four, then TM1's, ...), the missing ones written as ``1e-07``. The table
  limit is the ``table-limit=`` of that line (Moses rejects ``-ttable-limit`` on its command line).
  (Moses's ``PhraseDictionaryGroup`` would merge in the decoder, but floors a missing score at -100,
  and ``moses2`` lacks it.)
* **Sparse features** (``big``) stay in the sixth field; Moses reads them there and names them
  ``TranslationModel0_name``. A name given twice for a pair (in two tables) is written once with the
  values summed, as our decoder adds them (Moses would keep the last). Other feature sets drop the
  field (a ``medium`` model may share ``big``'s table file; our decoder ignores the field there).
* **Lexicalized reordering**: Moses's text table is keyed by the source and target phrase with outer
  spaces trimmed, as ours; a pair without an entry scores 0 in both. The model's table is used as
  it is (``wbe-msd-bidirectional-fe-allff``, 6 values).
* **Unknown words** pass through untranslated in both; Moses's ``UnknownWordPenalty0`` gets weight 0
  (our decoder has no such feature, and the penalty is the same for every hypothesis of a sentence).
  Both language models score an unknown target word as the ARPA file's ``<unk>``.
* ``KENLM`` per language model (reading the ARPA file), ``Distortion``, ``WordPenalty``.
* **Weights** are mapped by :class:`~smtlib.system.moses_ini.FeatureMap`: ``TranslationModelK_j``
  becomes value ``4K + j`` of the merged table, other dense names are Moses's own, a sparse weight
  ``name`` becomes ``TranslationModel0_name``.

Measured on Multi30k val (medium, 1,014 sentences): see ``benchmarks/moses.py``.
"""


from __future__ import annotations

import heapq
import math
import os
import pathlib
import shutil
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output, open_text, write_lines
from smtlib.system.modeldir import MISSING_LOGPROB, ModelSpec, component_path, read_model_spec
from smtlib.system.moses_ini import FeatureMap, MosesIni, parse_feature_line
from smtlib.weights import format_value


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


#: the probability written for a pair missing from one of the merged tables: ln of it is our decoder's
MISSING_PROBABILITY = format(math.exp(MISSING_LOGPROB), ".7g")
MERGED_TABLE = "TranslationModel0"


class _Unsorted(Exception):
    """A phrase table is not sorted by (source, target): merge in memory instead."""


def _table_rows(path: pathlib.Path, keep_sparse: bool, check_order: bool = True
                ) -> Iterator[tuple[tuple[str, str], list[str], str, str, str]]:
    """``((src, tgt), scores, align, counts, sparse)`` of each line of a Moses phrase table.

    Raises ``_Unsorted`` (when ``check_order``) if the pairs are not in increasing order.
    """
    prev: tuple[str, str] | None = None
    with open_text(path, what="phrase table") as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split(" ||| ")
            if len(fields) < 3:
                if not line.strip():
                    continue
                raise InputError("not a Moses phrase-table line (fewer than 3 fields)", path, lineno)
            key = (fields[0], fields[1].strip())
            if not key[1]:
                raise InputError("empty target phrase", path, lineno)
            if prev is not None and key <= prev:
                if key == prev:
                    raise InputError(f"phrase pair {key[0]!r} -> {key[1]!r} given twice", path, lineno)
                if check_order:
                    raise _Unsorted(path)
            prev = key
            scores = fields[2].split()
            if len(scores) != 4:
                raise InputError(f"expected 4 phrase scores, got {len(scores)}", path, lineno)
            yield (key, scores, fields[3].strip() if len(fields) > 3 else "",
                   fields[4].strip() if len(fields) > 4 else "",
                   fields[5].strip() if keep_sparse and len(fields) > 5 else "")


def _sum_sparse(fields: list[str]) -> str:
    """Several sparse fields of one pair as one, each name once with its values summed."""
    total: dict[str, float] = {}
    for text in fields:
        parts = text.split()
        for name, value in zip(parts[::2], parts[1::2], strict=False):
            total[name] = total.get(name, 0.0) + float(value)
    return " ".join(f"{name} {format_value(v)}" for name, v in total.items())


def _tag(rows: Iterator, t: int) -> Iterator:
    for row in rows:
        yield row[0], t, row


def merged_table_chunks(paths: Sequence[pathlib.Path], keep_sparse: bool, presorted: bool = True,
                        chunk: int = 100_000, stats: dict | None = None) -> Iterator[list[str]]:
    """Lines of the merged phrase table (see the module doc), in chunks, sorted by (source, target).

    With ``presorted`` the tables are streamed and merged (``_Unsorted`` if one is not sorted);
    otherwise each is read and sorted in memory first. ``stats`` (if given) receives the number of
    pairs written and of pairs per table.
    """
    if presorted:
        streams = [_table_rows(p, keep_sparse) for p in paths]
    else:
        streams = [iter(sorted(_table_rows(p, keep_sparse, check_order=False), key=lambda r: r[0])) for p in paths]
    tagged = [_tag(stream, t) for t, stream in enumerate(streams)]
    n = len(paths)
    missing = [MISSING_PROBABILITY] * 4
    out: list[str] = []
    written = 0
    per_table = [0] * n
    group: list = []

    def flush() -> None:
        nonlocal written
        rows: list = [None] * n
        for _, t, row in group:
            rows[t] = row
            per_table[t] += 1
        first = next(r for r in rows if r is not None)
        scores = " ".join(" ".join(r[1] if r is not None else missing) for r in rows)
        align = next((r[2] for r in rows if r is not None and r[2]), "")
        counts = next((r[3] for r in rows if r is not None and r[3]), "")
        line = f"{first[0][0]} ||| {first[0][1]} ||| {scores} ||| {align} ||| {counts}"
        if keep_sparse:
            sparse = [r[4] for r in rows if r is not None and r[4]]
            if sparse:
                line += " ||| " + (sparse[0] if len(sparse) == 1 and len(set(sparse[0].split()[::2])) * 2 == len(
                    sparse[0].split()) else _sum_sparse(sparse))
        out.append(line)
        written += 1

    for item in heapq.merge(*tagged, key=lambda x: x[0]):
        if group and item[0] != group[0][0]:
            flush()
            group.clear()
            if len(out) >= chunk:
                yield out
                out = []
        group.append(item)
    if group:
        flush()
    if out:
        yield out
    if stats is not None:
        stats.update(pairs=written, pairs_per_table=per_table)


def write_merged_table(model_dir: str | os.PathLike, spec: ModelSpec, out_path: str | os.PathLike) -> dict:
    """Write the merged phrase table of a model to ``out_path`` (.gz to compress); returns its sizes."""
    paths = [component_path(model_dir, c) for c in spec.phrase_tables]
    keep_sparse = spec.sparse
    stats: dict = {}
    try:
        write_lines(out_path, merged_table_chunks(paths, keep_sparse, stats=stats))
    except _Unsorted:
        write_lines(out_path, merged_table_chunks(paths, keep_sparse, presorted=False, stats=stats))
    return stats


def export_ini(spec: ModelSpec, paths: Mapping[str, str], weights: Mapping[str, float], *,
               distortion_limit: int = 6, table_limit: int = 20) -> MosesIni:
    """The moses.ini of an exported model: ``paths`` maps ``phrase-table`` and component names to files."""
    counters: dict[str, int] = {}
    lines = [
        "UnknownWordPenalty",
        "WordPenalty",
        f"PhraseDictionaryMemory name={MERGED_TABLE} num-features={4 * len(spec.phrase_tables)} "
        f"path={paths['phrase-table']} input-factor=0 output-factor=0 table-limit={table_limit}",
    ]
    for rt in spec.reordering:
        lines.append(f"LexicalReordering name={rt.name} num-features=6 type=wbe-msd-bidirectional-fe-allff "
                     f"input-factor=0 output-factor=0 path={paths[rt.name]}")
    lines.append("Distortion")
    for lm in spec.language_models:
        lines.append(f"KENLM name={lm.name} factor=0 path={paths[lm.name]} order={lm.order}")
    features = [parse_feature_line(text, counters) for text in lines]
    sections = {"input-factors": ["0"], "mapping": ["0 T 0"], "distortion-limit": [str(distortion_limit)]}
    ini = MosesIni(sections, features, {})
    fmap = feature_map(spec, ini)
    return ini.with_weights(fmap.moses_weights(weights))


def feature_map(spec: ModelSpec, ini: MosesIni) -> FeatureMap:
    """The :class:`FeatureMap` between ``ini`` and the model described by ``spec``."""
    return FeatureMap.build(list(spec.dense_features), [c.name for c in spec.phrase_tables], ini,
                            sparse=spec.sparse)


def export_moses(
    model_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    weights: Mapping[str, float] | None = None,
    *,
    copy: bool = False,
    distortion_limit: int = 6,
    table_limit: int = 20,
) -> pathlib.Path:
    """Write ``OUT/moses.ini`` and ``OUT/phrase-table.gz`` for the model in ``model_dir``; returns the ini's path.

    The merged phrase table is always written (see the module doc); the reordering table and the
    language models are referenced by absolute path, or copied next to the ini with ``copy``.
    ``weights`` (smtlib names) default to :func:`default_weights`.
    """
    spec = read_model_spec(model_dir)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if weights is None:
        weights = default_weights(spec)
    table = out / "phrase-table.gz"
    stats = write_merged_table(model_dir, spec, table)
    paths: dict[str, str] = {"phrase-table": str(table.resolve())}
    for comp in spec.reordering + spec.language_models:
        src = component_path(model_dir, comp).resolve()
        if copy:
            dest = out / pathlib.Path(comp.path).name
            shutil.copyfile(src, dest)
            src = dest.resolve()
        paths[comp.name] = str(src)
    ini = export_ini(spec, paths, weights, distortion_limit=distortion_limit, table_limit=table_limit)
    header = (f"moses.ini written by smtlib train export-moses from {pathlib.Path(model_dir).resolve()}\n"
              f"{MERGED_TABLE} merges the phrase tables {' '.join(c.name for c in spec.phrase_tables)} "
              f"({stats['pairs']} pairs; per table {stats['pairs_per_table']}; a pair missing from a table "
              f"has probability {MISSING_PROBABILITY} for its scores there)")
    with atomic_output(out / "moses.ini") as fh:
        fh.write(ini.text(header))
    return out / "moses.ini"


__all__ = [
    "MISSING_PROBABILITY",
    "default_weights",
    "export_ini",
    "export_moses",
    "feature_map",
    "format_value",
    "merged_table_chunks",
    "phrase_table_chunks",
    "phrase_table_lines",
    "reordering_table_chunks",
    "reordering_table_lines",
    "write_merged_table",
]
