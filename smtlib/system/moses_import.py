"""A Moses system as an smtlib model directory: ``smtlib train import-moses --ini moses.ini --out DIR``.

So that a Moses user can tune and decode their own phrase-based system with our tools (``smtlib
decode --model DIR``, or ``--backend moses --moses-ini moses.ini`` to keep Moses as the decoder).
``DIR/model.yaml`` points at the Moses files (absolute paths; ``copy`` copies them into ``DIR``),
except phrase tables that need converting, and ``DIR/default.weights`` holds the ini's weights in our
names.

What is read (anything else is an :class:`~smtlib.errors.InputError` naming the feature):

* **One phrase table** (``PhraseDictionaryMemory``, a text table, plain or gzip) with ``4 * T``
  scores. ``T = 1`` is used as it is (``TranslationModel0``). ``T > 1`` is taken as ``T`` merged tables
  (the layout of :mod:`smtlib.system.moses_export`'s merged table) and split into
  ``phrase-table.K.gz`` (``TranslationModelK``), a pair whose four scores of table ``K`` are all
  ``1e-7`` being left out of that table: our decoder's merge gives it exactly those scores back, so
  the model is the same. Several phrase tables (Moses's alternative decoding paths, each option from
  one table) are a different model from our merge and are rejected; so are binary tables
  (``PhraseDictionaryCompact``, ``ProbingPT``, ``PhraseDictionaryOnDisk``) and other score counts.
  A sixth field of sparse features makes the model ``big``; their names must contain ``_``.
* ``LexicalReordering`` of a 6-valued phrase-based ``msd-bidirectional-fe`` type (``wbe-`` or
  ``phrase-``, ``allff``) with a text table; at most one.
* ``KENLM`` language models as ARPA files (plain or gzip); KenLM's binary format cannot be read.
* ``WordPenalty`` and ``Distortion`` (required: our decoder always has them); ``UnknownWordPenalty``
  is accepted and dropped (our decoder passes unknown words through without a penalty, the same for
  every hypothesis of a sentence). ``PhrasePenalty`` and every other feature are rejected: our
  decoder's feature layout (:class:`smtlib.decoder.model.Layout`) does not have them.
* Feature names must be ours (``TranslationModelK``, ``LMK``, ``LexicalReordering0``,
  ``WordPenalty0``, ``Distortion0``; Moses's ``train-model.perl`` writes these), so that k-best
  lines and weights files use the same names with either decoder.

The dense features are ordered as ``smtlib train`` orders them (``TranslationModel0 LM0
WordPenalty0 Distortion0``, then ``TranslationModelK LMK`` for K >= 1, then ``LexicalReordering0``).
Input text: Moses expects it prepared (tokenized, truecased or lowercased) by the user's pipeline,
so the model says ``tokenized_input`` and does not lowercase unless ``lowercase`` is given. The
ini's distortion limit and table limit are reported (``smtlib decode`` takes them as options).
"""

from __future__ import annotations

import math
import os
import pathlib
import re
import shutil
from collections.abc import Iterator

from smtlib.errors import InputError
from smtlib.io import open_text, write_lines
from smtlib.system.feature_sets import describe as describe_feature_set
from smtlib.system.modeldir import DEFAULT_WEIGHTS, MISSING_LOGPROB, Component, ModelSpec, write_model_spec
from smtlib.system.moses_ini import FeatureMap, MosesFeature, MosesIni
from smtlib.weights import write_weights

_OUR_NAME = re.compile(r"^(TranslationModel\d+|LM\d+|WordPenalty0|Distortion0|LexicalReordering0)$")
_READ_TYPES = ("PhraseDictionaryMemory", "LexicalReordering", "KENLM", "WordPenalty", "Distortion",
               "UnknownWordPenalty")
KENLM_BINARY_MAGIC = b"mmap lm http://kheafield.com/code"


def _existing(path: str, ini: MosesIni, feat: MosesFeature) -> pathlib.Path:
    """The file a feature's ``path=`` names (or ``path.gz``, as Moses tries), resolved."""
    if not path:
        raise InputError(f"{feat.name} has no path=", ini.path, feat.line)
    p = pathlib.Path(path)
    for candidate in (p, pathlib.Path(path + ".gz")):
        if candidate.is_file():
            return candidate.resolve()
    raise InputError(f"{feat.name}: file {path} not found (relative paths are relative to the directory "
                     "Moses runs in, as for Moses)", ini.path, feat.line)


def arpa_order(path: pathlib.Path, name: str) -> int:
    """The n-gram order of an ARPA file (from its ``\\data\\`` header)."""
    with open(path, "rb") as fh:
        if KENLM_BINARY_MAGIC in fh.read(64):
            raise InputError(f"{name} is a KenLM binary file: smtlib reads ARPA language models only (keep the "
                             "ARPA file that build_binary was given)", path)
    order = 0
    with open_text(path, what="language model") as fh:
        for line in fh:
            line = line.strip()
            if line.startswith("ngram ") and "=" in line:
                order = max(order, int(line[6:].split("=")[0]))
            elif line.startswith("\\1-grams"):
                break
    if not order:
        raise InputError(f"{name}: not an ARPA file (no \\data\\ header)", path)
    return order


def _rows(path: pathlib.Path, n_tables: int, info: dict) -> Iterator[tuple[list[str], list[str]]]:
    """``(fields, scores)`` of each line of a Moses phrase table with ``4 * n_tables`` scores, checked;
    ``info`` gets the longest source phrase and whether there are sparse features."""
    info.update(longest=0, sparse=False)
    with open_text(path, what="phrase table") as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split(" ||| ")
            if len(fields) < 3:
                if not line.strip():
                    continue
                raise InputError("not a Moses phrase-table line (fewer than 3 fields)", path, lineno)
            scores = fields[2].split()
            if len(scores) != 4 * n_tables:
                raise InputError(f"expected {4 * n_tables} scores, got {len(scores)}", path, lineno)
            info["longest"] = max(info["longest"], len(fields[0].split()))
            if len(fields) > 5 and fields[5].strip():
                info["sparse"] = True
                bad = [n for n in fields[5].split()[::2] if "_" not in n]
                if bad:
                    raise InputError(f"sparse feature name {bad[0]!r} has no '_' (smtlib's rule for sparse names, "
                                     "as Moses's n-best readers)", path, lineno)
            yield fields, scores


def _split_table(path: pathlib.Path, n_tables: int, t: int, info: dict, chunk: int = 100_000
                 ) -> Iterator[list[str]]:
    """Lines of table ``t`` of a merged Moses table (see the module doc), in chunks."""
    missing_value = math.exp(MISSING_LOGPROB)
    part: list[str] = []
    for fields, scores in _rows(path, n_tables, info):
        blocks = [scores[4 * k : 4 * k + 4] for k in range(n_tables)]
        present = [any(abs(float(v) - missing_value) > 1e-9 * missing_value for v in b) for b in blocks]
        if not any(present):
            present[0] = True
        if present[t]:
            rest = fields[3:5]
            if len(fields) > 5 and present.index(True) == t:  # the sparse field once, in the first table
                rest = fields[3:]
            part.append(" ||| ".join([fields[0], fields[1], " ".join(blocks[t]), *rest]))
            if len(part) >= chunk:
                yield part
                part = []
    if part:
        yield part


def _check_name(feat: MosesFeature, ini: MosesIni) -> None:
    if not _OUR_NAME.match(feat.name):
        raise InputError(f"feature {feat.name} ({feat.type}): smtlib needs the names TranslationModelK, LMK, "
                         "LexicalReordering0, WordPenalty0, Distortion0 (rename it in the moses.ini)",
                         ini.path, feat.line)


def import_moses(ini_path: str | os.PathLike, out_dir: str | os.PathLike, *, copy: bool = False,
                 source_lang: str = "und", target_lang: str = "und", lowercase: bool = False) -> dict:
    """Write the model directory ``out_dir`` for the Moses system of ``ini_path`` (see the module doc).

    Returns a summary: feature set, dense features, the ini's distortion and table limits, what was
    converted or dropped.

    Raises
    ------
    InputError
        On a feature, table or language model smtlib cannot read, naming it.
    """
    ini = MosesIni.read(ini_path)
    out = pathlib.Path(out_dir)
    tables = [f for f in ini.features if f.is_phrase_table]
    for feat in ini.features:
        if feat.type not in _READ_TYPES:
            what = ("a binary phrase table" if feat.is_phrase_table else
                    "not a feature of smtlib's decoder (smtlib.decoder.model.Layout)")
            raise InputError(f"feature {feat.name} of type {feat.type}: {what}", ini.path, feat.line)
    if len(tables) != 1:
        raise InputError(f"{len(tables)} phrase tables: smtlib reads one (several Moses tables are alternative "
                         "decoding paths, each option from one table; smtlib merges tables by phrase pair, which is "
                         "another model: merge them into one table of 4 scores per table)", ini.path)
    table = tables[0]
    if table.count % 4 or not table.count:
        raise InputError(f"{table.name} has {table.count} scores: smtlib reads 4 per table (p(f|e) lex(f|e) p(e|f) "
                         "lex(e|f)), or 4*T for T merged tables", ini.path, table.line)
    if ini.sections.get("mapping", ["0 T 0"]) != ["0 T 0"] or ini.sections.get("input-factors", ["0"]) != ["0"]:
        raise InputError("only [input-factors] 0 and [mapping] 0 T 0 (one factor, one decoding path) are read",
                         ini.path)
    for feat in ini.features:
        if feat.type != "UnknownWordPenalty":
            _check_name(feat, ini)
    n_tables = table.count // 4
    if n_tables > 1 and table.name != "TranslationModel0":
        raise InputError(f"{table.name}: a merged table of {n_tables} must be named TranslationModel0", ini.path,
                         table.line)
    reordering = [f for f in ini.features if f.type == "LexicalReordering"]
    if len(reordering) > 1:
        raise InputError("more than one LexicalReordering: smtlib reads one", ini.path, reordering[1].line)
    for feat in reordering:
        parts = feat.params.get("type", "").split("-")
        if (feat.count != 6 or "msd" not in parts or "bidirectional" not in parts or "fe" not in parts
                or "hier" in parts or "collapseff" in parts):
            raise InputError(f"{feat.name}: type {feat.params.get('type')} — smtlib reads the 6-valued "
                             "phrase-based msd-bidirectional-fe (e.g. wbe-msd-bidirectional-fe-allff)",
                             ini.path, feat.line)
    lms = [f for f in ini.features if f.type == "KENLM"]
    if not lms:
        raise InputError("no KENLM language model", ini.path)
    for required in ("WordPenalty", "Distortion"):
        if not any(f.type == required for f in ini.features):
            raise InputError(f"no {required} feature: smtlib's decoder always has one", ini.path)
    out.mkdir(parents=True, exist_ok=True)

    def place(feat: MosesFeature, source: pathlib.Path) -> str:
        if not copy:
            return str(source)
        dest = out / f"{feat.name}{''.join(source.suffixes[-2:]) or ''}"
        shutil.copyfile(source, dest)
        return dest.name

    table_path = _existing(table.params.get("path", ""), ini, table)
    info: dict = {}
    if n_tables == 1:
        for _ in _rows(table_path, 1, info):
            pass
        phrase_tables = [Component(table.name, place(table, table_path), description=f"Moses table {table_path}")]
    else:
        for t in range(n_tables):  # one pass per table: simple, and reading is cheap next to gzip writing
            write_lines(out / f"phrase-table.{t}.gz", _split_table(table_path, n_tables, t, info))
        phrase_tables = [Component(f"TranslationModel{t}", f"phrase-table.{t}.gz",
                                   description=f"scores {4 * t}..{4 * t + 3} of the Moses table {table_path}")
                         for t in range(n_tables)]
    longest, sparse = info["longest"], info["sparse"]
    language_models = []
    for feat in lms:
        path = _existing(feat.params.get("path", ""), ini, feat)
        order = arpa_order(path, feat.name)
        language_models.append(Component(feat.name, place(feat, path), order=order, description=f"Moses LM {path}"))
    reorder = [Component(f.name, place(f, _existing(f.params.get("path", ""), ini, f)),
                         description=f"Moses {f.params.get('type')} table") for f in reordering]
    tm_names = [c.name for c in phrase_tables]
    lm_names = [c.name for c in language_models]
    dense = [("TranslationModel0", 4)] if "TranslationModel0" in tm_names else []
    dense += [("LM0", 1)] if "LM0" in lm_names else []
    dense += [("WordPenalty0", 1), ("Distortion0", 1)]
    others = sorted({int(n[16:]) for n in tm_names if n != "TranslationModel0"} | {int(n[2:]) for n in lm_names
                                                                                   if n != "LM0"})
    for k in others:
        dense += [(f"TranslationModel{k}", 4)] if f"TranslationModel{k}" in tm_names else []
        dense += [(f"LM{k}", 1)] if f"LM{k}" in lm_names else []
    dense += [(f.name, 6) for f in reordering]
    feature_set = describe_feature_set(len(phrase_tables), len(language_models), bool(reordering), sparse)
    spec = ModelSpec(source_lang=source_lang, target_lang=target_lang, feature_set=feature_set, lowercase=lowercase,
                     tokenized_input=True, max_phrase_length=max(longest, 1), dense_features=dense,
                     phrase_tables=phrase_tables, language_models=language_models, reordering=reorder,
                     sparse_templates=[], tokenizer="")
    fmap = FeatureMap.build(dense, tm_names, ini, sparse=sparse)
    write_weights(out / DEFAULT_WEIGHTS, fmap.smtlib_weights(ini.weights),
                  header=f"the weights of {pathlib.Path(ini_path).resolve()}")
    write_model_spec(out, spec)
    limits = [f.params.get("table-limit") for f in tables]
    return {"model": str(out), "feature_set": feature_set, "dense_features": [list(d) for d in dense],
            "phrase_tables_split": n_tables if n_tables > 1 else 0, "max_phrase_length": spec.max_phrase_length,
            "dropped": fmap.ignored, "distortion_limit": (ini.sections.get("distortion-limit") or ["6"])[0],
            "table_limit": limits[0] if limits[0] is not None else "20 (Moses's default)"}


__all__ = ["arpa_order", "import_moses"]
