"""Mutation testing of the readers over real files (issue 11): damage must be an error or change nothing.

Every n-best, reference and weights file of ``../shared/data`` that the project reads, and a lattice
written by ``smtlib decode --lattice``, gets random single edits with a fixed seed:

==================  =============================================================================
``drop-sep``        remove one ``|||``
``dup-sep``         write one ``|||`` twice
``change-sep``      replace a separator: a ``|||`` (by ``||``, ``|``, ``| ||`` ...), a blank between
                    tokens of the id, features, total or header fields (by nothing, a tab, two
                    spaces, ``,``), a label end ``=``/``:`` (by the other); in reference text a space
                    by a tab, two spaces or a no-break space
``number``          a number of an id, features, total, weight or header field becomes ``nan``,
                    ``inf``, ``1e999``, text ...
``id-change``       a sentence id becomes another non-negative integer
``id-reorder``      the ids of two adjacent lines (lattice blocks) are swapped
``id-offset``       in an n-best file, every sentence id moves up by the same amount (a held-out
                    part of a list: ids that do not start at 0)
``id-gap``          in an n-best file, every line of one sentence is deleted (a pool with a gap)
``delete-field``    a ``|||``-separated field is removed with one separator; in weights and
                    moses.ini lines a token is removed; in the ``#features`` line a name
``utf8``            invalid UTF-8 bytes are inserted into a line
``truncate``        the file as stored (gzip) is cut at a random byte; k-best and lattice files are
                    also cut as plain text (``truncate-plain``)
``empty-line``      a line's content is deleted
``misspell``        in a weights file, one edit of a dense name's ``NAME`` part (a letter inserted,
                    deleted, replaced, or two swapped: ``tmm_1`` for ``tm_1``; issue 28), never
                    giving another name of the file; read against the pool without and with
                    sparse features, it must be rejected at its line either way
==================  =============================================================================

Each mutated file is read the way the project reads it (the pool with its references and their
BLEU statistics; the references with their pool or their source; the weights with the pool's
names; the lattices) and the outcome is one of:

* **rejected**: an :class:`~smtlib.errors.InputError` (exit status 2 in the CLI) naming the mutated
  file and the edited line -- or, for an id edit, the line after it when the message names the
  edited line (``sentence id 0 after 3 on line 17``: either line may be the wrong one);
* **identical**: the same parse as the original, value for value;
* **well-formed**: the edit produced another valid file that no reader can tell from a real one,
  decided by a rule that does not read the file -- an id moved to the neighbouring sentence keeping
  the ids in order; ids moved up together while the largest stays below the references' line count;
  a sentence's lines deleted; a plain k-best or lattice file cut exactly at a line (block) end; a
  weight line deleted from a ``name value`` weights file (``CONTRACT.md``: a missing weight is 0).
  The parse must then equal what the edit means (the reference line parser's pool; the weights
  without that name; the first lattices), and a pool's score (``Case.score``) must be sacrebleu's
  on exactly its sentences (:func:`smtlib.bleu.references.covered_sentences`);
* anything else is a failure: **silent** (a different parse), **wrong line** (an error naming
  another file or line), **crash** (another exception).
"""

from __future__ import annotations

import collections
import dataclasses
import gzip
import os
import pathlib
import re
import zlib
from collections.abc import Callable

import numpy as np

from smtlib.errors import InputError

SEP = re.compile(r"\|\|\|")
TOKEN = re.compile(r"[^ \t]+")
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
NOT_NUMBERS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e400", "abc", "1,5", "0x10", "1_0", "", "1.2.3",
               "--1", "1e", "+", ".", "\u22121", "\u0663", "x="]
BAD_SEPARATORS = ["||", "|", "| ||", "/||", "||||", "l||", "|| |"]
BLANK_REPLACEMENTS = ["", "\t", "  ", ",", ";"]
TEXT_SPACES = ["\t", "  ", "\u00a0"]
INVALID_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe2\x82", b"\x80", b"\xfe\xfe"]


# ------------------------------------------------------------------------------------------ files
@dataclasses.dataclass
class Case:
    """One real file and how the project reads it.

    ``read(path)`` reads a (mutated) copy at ``path`` the way the project does and returns a
    canonical parse (arrays, lists, dicts) or raises InputError.
    """

    name: str
    kind: str  # kbest | reference | moses-ini | weights | lattice
    path: pathlib.Path
    read: Callable[[pathlib.Path], object]
    n_refs: int | None = None  # k-best: number of reference lines (ids must be below it)
    reference_parse: Callable[[pathlib.Path], object] | None = None  # k-best: the line parser's reading
    #: k-best: (the BLEU of the pool's 1-best by total that the commands print, sacrebleu's on its sentences)
    score: Callable[[pathlib.Path], tuple[float, float]] | None = None


def pool_canonical(pool, stats=None) -> tuple:
    return (pool.offsets, pool.texts, pool.dense_names, pool.dense, pool.sparse_names, pool.sparse.indptr,
            pool.sparse.indices, pool.sparse.data, pool.totals, pool.extras, stats)


def kbest_reader(ref_paths: list[pathlib.Path], fast: bool = True) -> Callable:
    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import BleuSettings
    from smtlib.kbest.pool import _PoolBuilder

    refs = read_references(ref_paths)

    def read(path: pathlib.Path):
        builder = _PoolBuilder(fast=fast)
        builder.add_file(path)
        pool = builder.build(len(refs[0]), os.fspath(ref_paths[0]))
        return pool_canonical(pool, pool.compute_stats(refs, BleuSettings()))

    return read


def kbest_score(ref_paths: list[pathlib.Path]) -> Callable:
    """The pool's BLEU as every command prints it (the 1-best by the files' totals, on the sentences
    the rule covers) and sacrebleu's on the pool's sentence ids and their reference lines."""
    from sacrebleu.metrics import BLEU

    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import BleuSettings
    from smtlib.cli.common import pool_bleu
    from smtlib.kbest.pool import argmax_per_sentence, read_pool

    refs = read_references(ref_paths)

    def score(path: pathlib.Path) -> tuple[float, float]:
        pool = read_pool(path, n_sentences=len(refs[0]))
        best = argmax_per_sentence(np.where(np.isnan(pool.totals), -np.inf, pool.totals), pool.offsets)
        ours = 100 * pool_bleu(pool.texts, best, refs, pool.coverage(refs), BleuSettings())
        ids = np.flatnonzero(best >= 0).tolist()
        theirs = BLEU().corpus_score([pool.texts[best[s]] for s in ids], [[r[s] for s in ids] for r in refs]).score
        return ours, theirs

    return score


def reference_reader(ref_paths: list[pathlib.Path], index: int, *, nbest: pathlib.Path | None = None,
                     source: pathlib.Path | None = None) -> Callable:
    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import BleuSettings
    from smtlib.io import read_lines
    from smtlib.kbest.pool import read_pool

    source_lines = len(read_lines(source)) if source is not None else None

    def read(path: pathlib.Path):
        paths = list(ref_paths)
        paths[index] = path
        refs = read_references(paths, source=source, source_lines=source_lines)
        if nbest is None:
            return [line.split() for line in refs[index]]
        pool = read_pool(nbest, n_sentences=len(refs[0]))
        return pool_canonical(pool, pool.compute_stats(refs, BleuSettings()))

    return read


def ini_reader(path: pathlib.Path):
    from smtlib.weights import from_moses_ini

    return from_moses_ini(path)


def weights_reader(dense_names: list[str], has_sparse: bool = False) -> Callable:
    """Read a weights file and check its names against a pool's dense names (``has_sparse``: the
    pool also has sparse features, which the file need not name)."""
    from smtlib.weights import check_weight_names, read_weights

    def read(path: pathlib.Path):
        weights = read_weights(path)
        check_weight_names(weights, dense_names, has_sparse=has_sparse, what="the k-best pool")
        return dict(weights)

    return read


def lattice_reader(path: pathlib.Path):
    from smtlib.lattice.format import read_lattices

    return [(lat.sent_id, lat.n_nodes, lat.tails, lat.heads, lat.words, lat.dense, lat.sparse, lat.feature_names)
            for lat in read_lattices(path)]


#: n-best files and the references the project scores them with (paths relative to ../shared/data)
KBEST_REFERENCES = {
    "joshua-test-data/bn-en-hiero/output-classlm.gold.gz": [f"joshua-test-data/bn-en-hiero/reference.en.{k}.gz" for k in range(4)],
    "joshua-test-data/bn-en-hiero/output.gold.gz": [f"joshua-test-data/bn-en-hiero/reference.en.{k}.gz" for k in range(4)],
    "joshua-test-data/zh-en-zmert-10/cand_database.txt.gz": [f"joshua-test-data/zh-en-zmert-10/ref.{k}.gz" for k in range(4)],
    "moses-mert-nbest/example/NBEST.gz": [f"moses-mert-nbest/example/REF.{k}.gz" for k in range(3)],
    "moses-mert-nbest/test_scorer_data/nbest.out.gz": ["moses-mert-nbest/test_scorer_data/reference.txt.gz"],
    "moses-regtest-mert/mert.extractor-dups/data/nbest.gz": ["moses-regtest-mert/mert.extractor-dups/data/reference.gz"],
}
for _k in range(1, 6):
    KBEST_REFERENCES[f"moses-regtest-mert/mert.extractor-bin/data/nbest.{_k}.gz"] = [
        "moses-regtest-mert/mert.extractor-bin/data/reference.gz"]
for _run, _n in (("mert-moses-new", 7), ("mert-moses-new-aggregate", 14), ("mert-moses-new-nocase", 5)):
    for _k in range(1, _n + 1):
        KBEST_REFERENCES[f"moses-mert-nbest/regression/{_run}/data/run{_k}.NBEST.out.gz"] = [
            f"moses-mert-nbest/regression/{_run}/reference.{i}.gz" for i in range(3)]


def shared_cases(data: pathlib.Path, scratch: pathlib.Path, *, subset: bool = False) -> list[Case]:
    """Every n-best, reference and weights file of ``data`` the project reads (or a small subset)."""
    from smtlib.data.corpora import FILES, PAIRS
    from smtlib.kbest.pool import read_pool
    from smtlib.weights import from_moses_ini, write_weights

    cases: list[Case] = []
    kbest = dict(KBEST_REFERENCES)
    if subset:
        keep = ("joshua-test-data/bn-en-hiero/output.gold.gz", "joshua-test-data/zh-en-zmert-10/cand_database.txt.gz",
                "moses-mert-nbest/regression/mert-moses-new-aggregate/data/run1.NBEST.out.gz",
                "moses-regtest-mert/mert.extractor-bin/data/nbest.2.gz")
        kbest = {k: v for k, v in kbest.items() if k in keep}
    reference_sets: dict[tuple[str, ...], str] = {}
    for rel, refs in kbest.items():
        ref_paths = [data / r for r in refs]
        n_refs = None
        cases.append(Case(rel, "kbest", data / rel, kbest_reader(ref_paths), n_refs,
                          kbest_reader(ref_paths, fast=False), kbest_score(ref_paths)))
        reference_sets.setdefault(tuple(refs), rel)
    for case in cases:
        from smtlib.io import read_lines

        case.n_refs = len(read_lines(data / kbest[case.name][0]))
    for refs, rel in reference_sets.items():
        for index, ref in enumerate(refs):
            if subset and index > 0:
                continue
            cases.append(Case(ref, "reference", data / ref,
                              reference_reader([data / r for r in refs], index, nbest=data / rel)))
    # references of the experiments: the target side of every dev and test set, with its source
    seen: set[str] = set()
    pairs = list(PAIRS.values())[:1] if subset else list(PAIRS.values())
    for pair in pairs:
        for src_key, tgt_key in [pair.dev, *pair.tests.values()]:
            if FILES[tgt_key].path in seen:
                continue
            seen.add(FILES[tgt_key].path)
            src, tgt = data / FILES[src_key].path, data / FILES[tgt_key].path
            if src.exists() and tgt.exists():
                cases.append(Case(FILES[tgt_key].path, "reference", tgt, reference_reader([tgt], 0, source=src)))
            if subset:
                break
    # weights: the replay's moses.ini (read by `smtlib weights from-moses-ini`), and the weights file
    # the workflow makes of it (read by `smtlib tune` against the replay pool)
    inis = [f"moses-mert-nbest/regression/{run}/moses.ini.gz" for run in
            ("mert-moses-new-aggregate",) + (() if subset else ("mert-moses-new", "mert-moses-new-nocase"))]
    for rel in inis:
        cases.append(Case(rel, "moses-ini", data / rel, ini_reader))
    replay = data / "moses-mert-nbest/regression/mert-moses-new-aggregate"
    scratch.mkdir(parents=True, exist_ok=True)
    init = scratch / "replay.init.weights"
    write_weights(init, from_moses_ini(replay / "moses.ini.gz"), header="the replay's initial weights (from moses.ini)")
    names = read_pool(replay / "data/run1.NBEST.out.gz").dense_names
    cases.append(Case("replay.init.weights (from moses.ini)", "weights", init, weights_reader(names)))
    cases.append(Case("replay.init.weights (pool with sparse features)", "weights", init,
                      weights_reader(names, has_sparse=True)))
    return cases


def decode_lattice(out: pathlib.Path, *, model: pathlib.Path | None = None, weights: pathlib.Path | None = None,
                   source: pathlib.Path | None = None, n_sentences: int = 4) -> pathlib.Path:
    """A lattice file written by the decoder (``smtlib decode --lattice``), on a real or a toy model."""
    from smtlib.decoder.decoder import DecoderConfig
    from smtlib.decoder.driver import decode_file
    from smtlib.io import read_lines
    from smtlib.weights import write_weights

    out.parent.mkdir(parents=True, exist_ok=True)
    if model is None:
        from tests.support.decoder_toy import write_toy_model

        spec = write_toy_model(out.parent / "toy-model", "big", seed=5)
        model = out.parent / "toy-model"
        weights = out.parent / "toy.weights"
        write_weights(weights, {n: 0.2 for n in spec.dense_weight_names()})
        source = out.parent / "toy.src"
        source.write_text("f1 f2 f3\nf4 f5\nf6 f7 f8 f9\nf3 f1\n", encoding="utf-8")
    text = read_lines(source)[:n_sentences]
    inp = out.parent / "lattice.src"
    inp.write_text("\n".join(text) + "\n", encoding="utf-8")
    decode_file(model, weights, inp, lattice_out=out, config=DecoderConfig(k=10), progress=False)
    return out


# ------------------------------------------------------------------------------------------ edits
@dataclasses.dataclass
class Edit:
    kind: str
    line: int  # 1-based line of the mutated file the edit is on
    content: bytes | None = None  # the mutated file's decompressed content (None: ``raw`` is the file)
    raw: bytes | None = None  # the mutated file as stored (truncations of the gzip bytes)
    wellformed: bool = False  # the rule says the result is a valid file
    also: int | None = None  # a second line that may be named (the other line of an id edit)
    note: str = ""


def _fields(line: str) -> list[tuple[int, int]]:
    """(start, end) of each '|||'-separated field of a line."""
    spans, start = [], 0
    for m in SEP.finditer(line):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(line)))
    return spans


def _tokens(line: str, lo: int, hi: int) -> list[tuple[int, int]]:
    return [(m.start() + lo, m.end() + lo) for m in TOKEN.finditer(line[lo:hi])]


def _numeric_spans(kind: str, line: str) -> list[tuple[int, int]]:
    """Spans of the numbers a reader parses in one line of a file of ``kind``."""
    spans: list[tuple[int, int]] = []
    if kind in ("kbest", "lattice-edge"):
        fields = _fields(line)
        structural = [0, 2, 3] if kind == "kbest" else [0, 2, 3]
        for f in structural:
            if f >= len(fields):
                continue
            for s, e in _tokens(line, *fields[f]):
                token = line[s:e]
                if "=" in token[:-1]:  # name=value: the value
                    s = s + token.rindex("=") + 1
                    token = line[s:e]
                if NUMBER.fullmatch(token):
                    spans.append((s, e))
    else:
        for s, e in _tokens(line, 0, len(line.split("#", 1)[0])):
            token = line[s:e]
            if "=" in token[:-1]:
                s = s + token.rindex("=") + 1
                token = line[s:e]
            if NUMBER.fullmatch(token):
                spans.append((s, e))
    return spans


def _blank_spans(kind: str, line: str) -> list[tuple[int, int]]:
    if kind in ("kbest", "lattice-edge"):
        fields = _fields(line)
        out = []
        for f in (0, 2, 3):
            if f < len(fields):
                lo, hi = fields[f]
                out += [(m.start() + lo, m.end() + lo) for m in re.finditer(r"(?<=\S) (?=\S)", line[lo:hi])]
        return out
    return [(m.start(), m.end()) for m in re.finditer(r"(?<=\S) (?=\S)", line)]


def _replace(lines: list[str], i: int, s: int, e: int, text: str) -> list[str]:
    out = list(lines)
    out[i] = lines[i][:s] + text + lines[i][e:]
    return out


def _join(lines: list[str], trailing: bool) -> bytes:
    return ("\n".join(lines) + ("\n" if trailing else "")).encode("utf-8")


def line_kind(case_kind: str, line: str) -> str:
    if case_kind == "lattice":
        if line.startswith("SENTENCE"):
            return "lattice-header"
        if line.startswith("#"):
            return "lattice-meta"
        return "lattice-edge"
    return case_kind


def _kbest_ids(lines: list[str]) -> list[int | None]:
    ids = []
    for line in lines:
        head = line.split("|||", 1)[0].strip()
        ids.append(int(head) if head.isdigit() else None)
    return ids


KINDS = ("drop-sep", "dup-sep", "change-sep", "number", "id-change", "id-reorder", "id-offset", "id-gap",
         "delete-field", "utf8", "truncate", "truncate-plain", "empty-line", "misspell")


#: kinds whose edits draw from a generator of their own, so that every other kind's edits of a run
#: (and of every later case) are the ones the run made before they were added
OWN_STREAM = ("id-offset", "id-gap")


def applicable(case: Case) -> tuple[str, ...]:
    if case.kind == "kbest":
        return tuple(k for k in KINDS if k != "misspell")
    if case.kind == "lattice":
        return tuple(k for k in KINDS if k not in ("misspell", "id-offset", "id-gap"))
    if case.kind == "reference":
        return ("change-sep", "utf8", "truncate", "empty-line")
    if case.kind == "weights":
        return ("change-sep", "number", "delete-field", "utf8", "truncate", "empty-line", "misspell")
    return ("change-sep", "number", "delete-field", "utf8", "truncate", "empty-line")


def make_edit(case: Case, kind: str, lines: list[str], trailing: bool, stored: bytes, rng: np.random.Generator) -> Edit | None:
    """One random edit of ``kind`` (None when the file has no place for it)."""
    n = len(lines)
    if kind == "truncate":
        if stored[:2] != b"\x1f\x8b":
            return None
        cut = int(rng.integers(2, len(stored)))  # a cut file keeps gzip's two magic bytes
        raw = stored[:cut]
        prefix = _recoverable(raw)
        return Edit(kind, prefix.count(b"\n") + 1, raw=raw, note=f"gzip cut at byte {cut}/{len(stored)}")
    if kind == "truncate-plain":
        if case.kind not in ("kbest", "lattice"):
            return None
        content = _join(lines, trailing)
        cut = int(rng.integers(1, len(content)))
        data = content[:cut]
        at_end = data.endswith(b"\n")
        wellformed = at_end and (case.kind == "kbest" or _lattice_block_end(lines, data.count(b"\n")))
        return Edit(kind, data.count(b"\n") + 1, content=data, wellformed=wellformed, note=f"plain cut at byte {cut}")
    if kind in ("id-offset", "id-gap"):
        return _ids_edit(case, kind, lines, trailing, rng)
    if kind == "utf8":
        i = int(rng.integers(n))
        pos = int(rng.integers(len(lines[i]) + 1))
        bad = INVALID_UTF8[int(rng.integers(len(INVALID_UTF8)))]
        encoded = [line.encode("utf-8") for line in lines]
        encoded[i] = lines[i][:pos].encode("utf-8") + bad + lines[i][pos:].encode("utf-8")
        return Edit(kind, i + 1, content=b"\n".join(encoded) + (b"\n" if trailing else b""), note=repr(bad))
    if kind == "empty-line":
        i = int(rng.integers(n))
        wellformed = case.kind == "weights" and bool(lines[i].split("#", 1)[0].strip())
        return Edit(kind, i + 1, content=_join(_replace(lines, i, 0, len(lines[i]), ""), trailing), wellformed=wellformed,
                    note=f"was {lines[i][:40]!r}")
    order = rng.permutation(n)
    for i in order[: min(n, 200)]:
        i = int(i)
        line = lines[i]
        lk = line_kind(case.kind, line)
        edit = _line_edit(case, kind, lk, lines, i, rng)
        if edit is not None:
            edit.content = _join(edit.content, trailing)  # type: ignore[arg-type]
            return edit
    return None


def _ids_edit(case: Case, kind: str, lines: list[str], trailing: bool, rng) -> Edit | None:
    """Every id of an n-best file moved up by one amount (``id-offset``: well-formed while the largest
    id stays below the references' line count, else rejected at the first line beyond them), or every
    line of one sentence deleted (``id-gap``: well-formed)."""
    ids = _kbest_ids(lines)
    if None in ids or case.n_refs is None:
        return None
    if kind == "id-gap":
        distinct = sorted(set(ids))
        if len(distinct) < 2:
            return None
        gone = distinct[int(rng.integers(len(distinct)))]
        first = ids.index(gone)
        kept = [line for line, sid in zip(lines, ids, strict=True) if sid != gone]
        return Edit(kind, first + 1, content=_join(kept, trailing), wellformed=True, note=f"sentence {gone} deleted")
    offset = int(rng.integers(1, max(case.n_refs - max(ids), 1) + 3))  # below and beyond the references' end
    moved = [re.sub(r"^\s*\d+", str(sid + offset), line, count=1) for line, sid in zip(lines, ids, strict=True)]
    beyond = [i for i, sid in enumerate(ids) if sid + offset >= case.n_refs]
    line = beyond[0] + 1 if beyond else 1
    return Edit(kind, line, content=_join(moved, trailing), wellformed=not beyond, note=f"ids + {offset}")


def _line_edit(case: Case, kind: str, lk: str, lines: list[str], i: int, rng) -> Edit | None:
    line = lines[i]
    pick = lambda seq: seq[int(rng.integers(len(seq)))]  # noqa: E731
    if kind in ("drop-sep", "dup-sep"):
        seps = [(m.start(), m.end()) for m in SEP.finditer(line)]
        if not seps:
            return None
        s, e = pick(seps)
        return Edit(kind, i + 1, content=_replace(lines, i, s, e, "" if kind == "drop-sep" else "||| |||"))
    if kind == "change-sep":
        options = []
        if lk == "reference":
            options = [(m.start(), m.end(), pick(TEXT_SPACES)) for m in re.finditer(r"(?<=\S) (?=\S)", line)]
        else:
            options += [(m.start(), m.end(), pick(BAD_SEPARATORS)) for m in SEP.finditer(line)]
            options += [(s, e, pick(BLANK_REPLACEMENTS)) for s, e in _blank_spans(lk, line)]
            if lk == "kbest":
                lo, hi = _fields(line)[2] if len(_fields(line)) > 2 else (0, 0)
                options += [(s + len(line[s:e]) - 1, e, "=" if line[e - 1] == ":" else ":") for s, e in _tokens(line, lo, hi)
                            if line[e - 1] in "=:"]
        if not options:
            return None
        s, e, text = pick(options)
        return Edit(kind, i + 1, content=_replace(lines, i, s, e, text), note=f"{line[s:e]!r} -> {text!r}")
    if kind == "number":
        if lk in ("lattice-meta",):
            return None
        spans = _numeric_spans("lattice-edge" if lk == "lattice-edge" else lk, line)
        if lk == "lattice-header":
            spans = [(m.start(), m.end()) for m in re.finditer(r"\d+", line)]
        if not spans:
            return None
        s, e = pick(spans)
        text = pick(NOT_NUMBERS)
        return Edit(kind, i + 1, content=_replace(lines, i, s, e, text), note=f"{line[s:e]!r} -> {text!r}")
    if kind == "id-change":
        if case.kind == "kbest":
            ids = _kbest_ids(lines)
            if ids[i] is None:
                return None
            neighbours = [x for x in (ids[i - 1] if i else None, ids[i + 1] if i + 1 < len(ids) else None) if x is not None]
            choices = sorted({*neighbours, max(ids[i] - 1, 0), ids[i] + 1, int(rng.integers(0, max(x or 0 for x in ids) + 6))}
                             - {ids[i]})
            new = pick(choices)
            m = re.match(r"\s*\d+", line)
            new_ids = list(ids)
            new_ids[i] = new
            ordered = all(a is not None and b is not None and a <= b for a, b in zip(new_ids, new_ids[1:]))
            wellformed = ordered and case.n_refs is not None and new < case.n_refs
            return Edit(kind, i + 1, content=_replace(lines, i, 0, m.end(), str(new)), wellformed=wellformed, also=i + 2,
                        note=f"id {ids[i]} -> {new}")
        if lk == "lattice-header":
            m = re.match(r"SENTENCE (\d+)", line)
            old = int(m.group(1))
            new = pick(sorted({old + 1, max(old - 1, 0), old + 2} - {old}))
            return Edit(kind, i + 1, content=_replace(lines, i, m.start(1), m.end(1), str(new)), note=f"block id {old} -> {new}")
        return None
    if kind == "id-reorder":
        if case.kind == "kbest":
            if i + 1 >= len(lines):
                return None
            ids = _kbest_ids(lines)
            a, b = re.match(r"\s*\d+", lines[i]), re.match(r"\s*\d+", lines[i + 1])
            if ids[i] is None or ids[i + 1] is None or ids[i] == ids[i + 1]:
                return None
            out = _replace(lines, i, 0, a.end(), str(ids[i + 1]))
            out = _replace(out, i + 1, 0, b.end(), str(ids[i]))
            return Edit(kind, i + 1, content=out, also=i + 2, note=f"ids {ids[i]}, {ids[i + 1]} swapped")
        if lk == "lattice-header":
            later = [j for j in range(i + 1, len(lines)) if lines[j].startswith("SENTENCE")]
            if not later:
                return None
            j = later[0]
            a, b = re.match(r"SENTENCE (\d+)", lines[i]), re.match(r"SENTENCE (\d+)", lines[j])
            out = _replace(lines, i, a.start(1), a.end(1), b.group(1))
            out = _replace(out, j, b.start(1), b.end(1), a.group(1))
            return Edit(kind, i + 1, content=out, also=j + 1, note=f"block ids {a.group(1)}, {b.group(1)} swapped")
        return None
    if kind == "misspell":
        return _misspell(lines, i, rng)
    if kind == "delete-field":
        if lk in ("kbest", "lattice-edge"):
            fields = _fields(line)
            if len(fields) < 2:
                return None
            f = int(rng.integers(len(fields)))
            if f + 1 < len(fields):  # the field and the separator after it
                s, e = fields[f][0], fields[f + 1][0]
            else:  # the last field and the separator before it
                s, e = fields[f - 1][1], fields[f][1]
            return Edit(kind, i + 1, content=_replace(lines, i, s, e, ""), note=f"field {f + 1}")
        tokens = _tokens(line, 0, len(line))
        if lk == "lattice-meta" and not line.startswith("#features"):
            return None
        if lk == "lattice-meta":
            tokens = tokens[1:]
        if not tokens or (lk == "moses-ini" and line.lstrip().startswith(("#", "["))) or (
                lk == "weights" and line.lstrip().startswith("#")):
            return None
        s, e = pick(tokens)
        if s > 0 and line[s - 1] == " ":
            s -= 1
        elif e < len(line) and line[e] == " ":
            e += 1
        return Edit(kind, i + 1, content=_replace(lines, i, s, e, ""), note=f"token {line[s:e]!r}")
    return None


def _misspell(lines: list[str], i: int, rng) -> Edit | None:
    """One edit of the ``NAME`` part of the dense name ``NAME_k`` on weights line ``i`` (None if the
    line has none, or every try gives a name of the file)."""
    m = re.match(r"(\s*)([^\s#]+)_(\d+)(?=\s)", lines[i])
    if m is None:
        return None
    taken = {line.split("#", 1)[0].split()[0].lower() for line in lines if line.split("#", 1)[0].split()}
    group, k = m.group(2), m.group(3)
    letters = "abcdefghijklmnopqrstuvwxyz"
    for _ in range(20):
        op = ("insert", "delete", "replace", "swap")[int(rng.integers(4))]
        p = int(rng.integers(len(group) + (op == "insert")))
        if op == "insert":
            new = group[:p] + letters[int(rng.integers(26))] + group[p:]
        elif op == "delete":
            new = group[:p] + group[p + 1:]
        elif op == "replace":
            new = group[:p] + letters[int(rng.integers(26))] + group[p + 1:]
        else:
            if p + 1 >= len(group):
                continue
            new = group[:p] + group[p + 1] + group[p] + group[p + 2:]
        if new != group and f"{new}_{k}".lower() not in taken:
            return Edit("misspell", i + 1, content=_replace(lines, i, m.start(2), m.end(2), new),
                        note=f"{group}_{k} -> {new}_{k} ({op})")
    return None


def _lattice_block_end(lines: list[str], n_kept: int) -> bool:
    """True if the first ``n_kept`` lines of a lattice file end with a complete block."""
    return n_kept >= 2 and (n_kept == len(lines) or lines[n_kept].startswith("SENTENCE"))


def _recoverable(raw: bytes) -> bytes:
    """What a gzip reader can decompress from a cut gzip file (independently of smtlib.io)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        return d.decompress(raw)
    except zlib.error:
        return b""


# ------------------------------------------------------------------------------------------ running
def same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype.kind == "f":
            return bool(np.array_equal(a, b, equal_nan=True)) and bool(np.array_equal(np.signbit(a), np.signbit(b)))
        return bool(np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return (a == b and np.signbit(a) == np.signbit(b)) or (a != a and b != b)
    return type(a) is type(b) and a == b


def _expected_wellformed(case: Case, edit: Edit, original, mutated_path: pathlib.Path, lines: list[str]):
    """What a well-formed edit means, computed without the reader under test."""
    if case.kind == "kbest":
        return case.reference_parse(mutated_path)
    if case.kind == "weights":
        name = lines[edit.line - 1].split()[0]
        return {k: v for k, v in original.items() if k != name}
    if case.kind == "lattice":
        blocks = sum(1 for line in lines[: edit.content.count(b"\n")] if line.startswith("SENTENCE"))
        return original[:blocks]
    raise AssertionError(case.kind)


@dataclasses.dataclass
class Outcome:
    case: str
    kind: str
    result: str  # rejected | identical | wellformed | silent | wrong-line | crash | false-rejection
    detail: str = ""


def run_case(case: Case, work: pathlib.Path, rng: np.random.Generator, per_kind: int,
             cli_sample: Callable[[Case, pathlib.Path, Edit, InputError], str | None] | None = None,
             kinds: tuple[str, ...] | None = None) -> list[Outcome]:
    """Apply ``per_kind`` random edits of every applicable kind (of ``kinds``, if given) to ``case``;
    classify each outcome."""
    from smtlib.io import read_bytes

    stored = case.path.read_bytes()
    content = read_bytes(case.path)
    text = content.decode("utf-8")
    trailing = text.endswith("\n")
    lines = text.split("\n")
    if trailing:
        lines.pop()
    original = case.read(case.path)
    gz = stored[:2] == b"\x1f\x8b"
    outcomes: list[Outcome] = []
    work.mkdir(parents=True, exist_ok=True)
    for kind in applicable(case):
        if kinds is not None and kind not in kinds:
            continue
        draw = rng
        if kind in OWN_STREAM:  # from the run's seed and the case, without drawing from ``rng``
            entropy = rng.bit_generator.seed_seq.entropy
            draw = np.random.default_rng([entropy, zlib.crc32(f"{case.name} {kind}".encode())])
        for _ in range(per_kind):
            edit = make_edit(case, kind, lines, trailing, stored, draw)
            if edit is None:
                continue
            as_gzip = edit.raw is not None or (gz and kind != "truncate-plain")
            mutated = work / (case.path.name if as_gzip else case.path.name.removesuffix(".gz"))
            if edit.raw is not None:
                mutated.write_bytes(edit.raw)
            elif gz and kind != "truncate-plain":
                mutated.write_bytes(gzip.compress(edit.content, mtime=0))
            else:
                mutated.write_bytes(edit.content)
            outcomes.append(_classify(case, edit, mutated, original, lines, cli_sample))
    return outcomes


def _classify(case, edit, mutated, original, lines, cli_sample) -> Outcome:
    where = f"{case.name} {edit.kind} line {edit.line} ({edit.note})"
    try:
        parsed = case.read(mutated)
    except InputError as exc:
        if edit.wellformed:
            return Outcome(case.name, edit.kind, "false-rejection", f"{where}: {exc}")
        named_file = exc.path is not None and os.path.samefile(exc.path, mutated)
        right_line = exc.line == edit.line or (edit.also is not None and exc.line == edit.also and
                                               (edit.kind == "id-reorder" or f"line {edit.line}" in exc.message))
        if named_file and right_line:
            detail = cli_sample(case, mutated, edit, exc) if cli_sample else None
            if detail:
                return Outcome(case.name, edit.kind, "wrong-line", f"{where}: CLI: {detail}")
            return Outcome(case.name, edit.kind, "rejected")
        return Outcome(case.name, edit.kind, "wrong-line", f"{where}: {exc}")
    except Exception as exc:  # noqa: BLE001 - every other exception is a finding
        return Outcome(case.name, edit.kind, "crash", f"{where}: {type(exc).__name__}: {exc}")
    if same(parsed, original):
        return Outcome(case.name, edit.kind, "identical")
    if edit.wellformed:
        expected = _expected_wellformed(case, edit, original, mutated, lines)
        if not same(parsed, expected):
            return Outcome(case.name, edit.kind, "silent", f"{where}: parse differs from what the edit means")
        if case.score is not None:
            ours, theirs = case.score(mutated)
            if abs(ours - theirs) > 1e-9:
                return Outcome(case.name, edit.kind, "silent", f"{where}: BLEU {ours} printed, sacrebleu on the "
                                                               f"pool's sentences {theirs}")
        return Outcome(case.name, edit.kind, "wellformed", where)
    return Outcome(case.name, edit.kind, "silent", where)


def summarize(outcomes: list[Outcome]) -> dict[str, collections.Counter]:
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for o in outcomes:
        by_kind[o.kind][o.result] += 1
        by_kind["all"][o.result] += 1
    return by_kind


FAILURES = ("silent", "wrong-line", "crash", "false-rejection")
