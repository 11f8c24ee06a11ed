"""The system-building pipeline, stage by stage, in a work directory (Moses's ``train-model.perl``).

Every stage reads and writes fixed file names in ``WORK`` so that a workflow can run them one by one
(``smtlib train prepare|align|phrases|reordering|lm|assemble``); :func:`build` runs them all and
records the time of each stage in ``WORK/build.json`` and ``DIR/build.json``.

=====================  ==========================================================================
stage                  writes (in WORK)
=====================  ==========================================================================
prepare                ``corpus.src``, ``corpus.tgt`` (tokenized, lowercased, cleaned), ``prepare.json``
align                  ``align.fwd``, ``align.rev`` (eflomal), ``aligned.<heuristic>``, ``align.json``
phrases K              ``phrase-table.K.gz`` (+ ``reordering-table.K.gz`` with ``reordering``), ``phrases.K.json``
reordering K           ``reordering-table.K.gz`` (same pairs as ``phrase-table.K.gz``)
lm K                   ``lm.K.arpa.gz``, ``lm.K.json``
assemble               the model directory (:mod:`smtlib.system.modeldir`); the ``smtlib train
                       assemble`` command then writes its compiled form ``DIR/compiled.bin``
=====================  ==========================================================================

Where the components of each feature set come from (Cherry & Foster 2012, §4.2):

``TranslationModel0``
    phrases up to 7 words from eflomal alignments (both directions) symmetrized with
    grow-diag-final-and (Koehn 2003's *diag-and*, the paper's heuristic), Koehn 2003 scores.
``LM0``
    a 4-gram interpolated modified Kneser-Ney model of the target side of the training corpus (the
    paper's Small LM for En/Fr: "a 4-gram trained on the target half of the parallel [corpus]").
``TranslationModel1`` (medium, big)
    the paper's second En/Fr TM comes from a *different alignment of the same corpus* (forced
    decoding, Wuebker et al. 2010). Forced decoding needs a decoder and a trained system, so we take
    the other cheap, different alignment: the same eflomal directional links symmetrized with
    ``union`` (default; ``--tm1-symmetrization`` chooses another). Union alignments are denser, so
    their phrase pairs are shorter and fewer (1.14M vs 1.21M on Multi30k fr-en) and their lexical
    weights differ; the tuner gets a second, correlated but not identical, estimate of each pair.
    The two tables' pair sets differ, as the paper's two TMs do.
``LM1`` (medium, big)
    the paper's second LM is trained on more monolingual data; with none at hand by default, LM1 is
    a *bigram* model of the same target text (``--lm1-order``): a smoother, lower-order estimate
    that the tuner can trade against the 4-gram. ``--lm1-text FILE`` trains it on other target-language
    text instead (then the paper's setting: more data, ``--lm1-order 4``).
``LexicalReordering0`` (medium, big)
    msd-bidirectional-fe from the TM0 extraction (:mod:`smtlib.system.reordering`).
big
    the sparse templates of Table 3 (:mod:`smtlib.system.sparse`) as the sixth field of
    TranslationModel0's table.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import resource
import shutil
import time
from collections.abc import Callable

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines, write_lines
from smtlib.system import align as align_mod
from smtlib.system import corpus as corpus_mod
from smtlib.system.extract import collect_pairs, encode_corpus, extract_occurrences, mask_to_text
from smtlib.system.lm import NGramLM
from smtlib.system.feature_sets import feature_set as lookup_feature_set
from smtlib.system.modeldir import Component, ModelSpec, write_model_spec
from smtlib.system.moses_export import default_weights, phrase_table_chunks, reordering_table_chunks
from smtlib.system.reordering import orientation_priors, reordering_scores
from smtlib.system.score import lexical_table, score_pairs, table_limit
from smtlib.system.sparse import TEMPLATES, learn_vocabulary, render, sparse_features
from smtlib.weights import write_weights

DEFAULT_TM0_SYMMETRIZATION = "grow-diag-final-and"
DEFAULT_TM1_SYMMETRIZATION = "union"
DEFAULT_TABLE_LIMIT = 100


def _write_json(path: pathlib.Path, data: dict) -> None:
    with atomic_output(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=False)
        fh.write("\n")


def _read_json(path: pathlib.Path, stage: str) -> dict:
    if not path.is_file():
        raise InputError(f"missing {path.name}: run 'smtlib train {stage}' first", path)
    return json.loads(path.read_text(encoding="utf-8"))


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (eflomal), seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_memory_mib() -> float:
    """Peak resident memory of this process and its finished children, MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0


# -- stage 1 -----------------------------------------------------------------------------------
def stage_prepare(
    src: str | os.PathLike,
    tgt: str | os.PathLike,
    work: str | os.PathLike,
    *,
    src_lang: str,
    tgt_lang: str,
    tokenize: str = "auto",
    lowercase: bool = True,
    max_length: int = 80,
    max_ratio: float = 9.0,
) -> dict:
    """Read, tokenize, lowercase and clean a pair; write ``corpus.src``/``corpus.tgt``."""
    work = pathlib.Path(work)
    s_lines, t_lines = corpus_mod.read_parallel(src, tgt)
    s_out, t_out, report = corpus_mod.prepare_corpus(
        s_lines, t_lines, src_lang=src_lang, tgt_lang=tgt_lang, tokenize=tokenize, lowercase=lowercase,
        max_length=max_length, max_ratio=max_ratio, src_path=src,
    )
    work.mkdir(parents=True, exist_ok=True)
    write_lines(work / "corpus.src", s_out)
    write_lines(work / "corpus.tgt", t_out)
    info = {
        "source": os.fspath(src), "target": os.fspath(tgt), "src_lang": src_lang, "tgt_lang": tgt_lang,
        "tokenizer": corpus_mod.SACREMOSES if report.tokenized_here else "", **report.to_dict(),
    }
    _write_json(work / "prepare.json", info)
    return info


def _load_corpus(work: pathlib.Path) -> tuple[list[str], list[str], dict]:
    info = _read_json(work / "prepare.json", "prepare")
    return read_lines(work / "corpus.src"), read_lines(work / "corpus.tgt"), info


# -- stage 2 -----------------------------------------------------------------------------------
def stage_align(
    work: str | os.PathLike,
    *,
    symmetrizations: tuple[str, ...] = (DEFAULT_TM0_SYMMETRIZATION, DEFAULT_TM1_SYMMETRIZATION),
    seed: int = 0,
    threads: int = 2,
) -> dict:
    """eflomal in both directions, then each requested symmetrization -> ``aligned.<name>``."""
    work = pathlib.Path(work)
    src, tgt, _ = _load_corpus(work)
    names = [align_mod.canonical_symmetrization(s) for s in symmetrizations]
    fwd, rev, deterministic = align_mod.run_eflomal(src, tgt, seed=seed, threads=threads)
    write_lines(work / "align.fwd", fwd)
    write_lines(work / "align.rev", rev)
    src_len, tgt_len = align_mod.sentence_lengths(src), align_mod.sentence_lengths(tgt)
    f_links = align_mod.Links.from_lines(fwd, src_len, tgt_len, work / "align.fwd")
    r_links = align_mod.Links.from_lines(rev, src_len, tgt_len, work / "align.rev")
    links = {}
    for name in dict.fromkeys(names):
        sym = align_mod.symmetrize(f_links, r_links, src_len, tgt_len, name)
        write_lines(work / f"aligned.{name}", sym.to_lines())
        links[name] = int(len(sym.src))
    info = {"aligner": "eflomal model 3", "seed": seed, "deterministic": deterministic, "links": links,
            "links_forward": int(len(f_links.src)), "links_reverse": int(len(r_links.src))}
    _write_json(work / "align.json", info)
    return info


def symmetrize_existing(work: str | os.PathLike, name: str) -> None:
    """Write ``aligned.<name>`` from ``align.fwd``/``align.rev`` when it is missing."""
    work = pathlib.Path(work)
    name = align_mod.canonical_symmetrization(name)
    if (work / f"aligned.{name}").is_file():
        return
    src, tgt, _ = _load_corpus(work)
    src_len, tgt_len = align_mod.sentence_lengths(src), align_mod.sentence_lengths(tgt)
    if not (work / "align.fwd").is_file():
        raise InputError("missing align.fwd: run 'smtlib train align' first", work)
    f_links = align_mod.Links.from_lines(read_lines(work / "align.fwd", allow_empty=True), src_len, tgt_len, work / "align.fwd")
    r_links = align_mod.Links.from_lines(read_lines(work / "align.rev", allow_empty=True), src_len, tgt_len, work / "align.rev")
    write_lines(work / f"aligned.{name}", align_mod.symmetrize(f_links, r_links, src_len, tgt_len, name).to_lines())


# -- stage 3/4 ---------------------------------------------------------------------------------
def _phrase_strings(vocab: np.ndarray, tokens: np.ndarray, offsets: np.ndarray, sent, start, length, ids):
    """Spell each distinct phrase id once.

    Returns
    -------
    strings, rank
        An object array aligned with ``ids``, and each phrase's rank in byte order of the spelled
        phrases. The rank comes from sorting word-rank rows: word-by-word order equals string order
        because the separating space sorts below every printable character (tokens holding control
        characters below U+0020 could sort differently; the table is still complete and valid).
    """
    uniq, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    words = vocab[tokens].tolist()  # the corpus's words (list slices are cheaper than array slices)
    pos = offsets[sent[first]] + start[first]
    lens = length[first]
    spelled = np.array([" ".join(words[p : p + n]) for p, n in zip(pos.tolist(), lens.tolist())], dtype=object)
    word_rank = np.empty(len(vocab), dtype=np.int64)
    word_rank[np.argsort(vocab.astype(str), kind="stable")] = np.arange(len(vocab))
    width = int(lens.max()) if len(lens) else 0
    rows = np.full((len(uniq), width), -1, dtype=np.int64)
    for k in range(width):
        has = lens > k
        rows[has, k] = word_rank[tokens[pos[has] + k]]
    order = np.lexsort(rows.T[::-1]) if width else np.arange(len(uniq))
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    return spelled[inverse], rank[inverse]


def build_phrase_tables(
    src_lines: list[str],
    tgt_lines: list[str],
    aligned_lines: list[str],
    *,
    phrase_table: str | os.PathLike | None,
    reordering_table: str | os.PathLike | None = None,
    sparse: bool = False,
    max_length: int = 7,
    limit: int = DEFAULT_TABLE_LIMIT,
    alignment_path: str | os.PathLike | None = None,
    timings: dict | None = None,
) -> dict:
    """Extract, score, limit and write a phrase table and/or its reordering table.

    Returns sizes (occurrences, distinct pairs, pairs written) and the sparse template sizes.
    """
    t0 = time.perf_counter()
    corpus = encode_corpus(src_lines, tgt_lines)
    links = align_mod.Links.from_lines(aligned_lines, corpus.src_len, corpus.tgt_len, alignment_path)
    occ = extract_occurrences(corpus, links, max_length)
    pairs = collect_pairs(corpus, occ, max_length)
    t_extract = time.perf_counter()
    lex = lexical_table(corpus, links)
    scores = score_pairs(corpus, pairs, lex)
    keep = table_limit(pairs, scores, limit)
    kept = pairs.select(keep)
    kept_scores = scores.matrix()[keep]
    src_str, s_rank = _phrase_strings(
        corpus.src_vocab, corpus.src, corpus.src_off, kept.rep_sent, kept.rep_f_start, kept.rep_f_len, kept.src_id
    )
    tgt_str, t_rank = _phrase_strings(
        corpus.tgt_vocab, corpus.tgt, corpus.tgt_off, kept.rep_sent, kept.rep_e_start, kept.rep_e_len, kept.tgt_id
    )
    # Moses order: source phrase, then target phrase, in byte (= code point) order.
    order = np.lexsort((t_rank, s_rank))
    src_str, tgt_str = src_str[order].tolist(), tgt_str[order].tolist()
    info: dict = {
        "occurrences": int(len(occ)), "distinct_pairs": int(len(pairs)), "pairs_written": int(len(keep)),
        "source_phrases": int(len(np.unique(pairs.src_id))), "table_limit": limit, "max_phrase_length": max_length,
    }
    t_score = time.perf_counter()
    if phrase_table is not None:
        mask_text: dict[int, str] = {}
        masks = kept.mask[order].tolist()
        align_field = [mask_text.get(m) or mask_text.setdefault(m, mask_to_text(m)) for m in masks]
        counts = np.column_stack([kept.tgt_count, kept.src_count, kept.joint])[order]
        sparse_field = None
        if sparse:
            vocab = learn_vocabulary(corpus, pairs, max_length)
            offsets, codes = sparse_features(corpus, kept, vocab)
            fields = render(codes, offsets, vocab.names)
            sparse_field = [fields[k] for k in order.tolist()]
            fired = np.unique(codes)
            info["sparse_features_fired"] = {
                t: int(n) for t, n in zip(TEMPLATES, _per_template(fired, vocab))
            }
        write_lines(phrase_table, phrase_table_chunks(src_str, tgt_str, kept_scores[order], align_field, counts, sparse_field))
    t_write = time.perf_counter()
    if reordering_table is not None:
        probs = reordering_scores(kept, priors=orientation_priors(pairs))[order]
        write_lines(reordering_table, reordering_table_chunks(src_str, tgt_str, probs))
    t_end = time.perf_counter()
    if timings is not None:
        timings.update(
            extract=t_extract - t0, score=t_score - t_extract, write_phrase_table=t_write - t_score,
            reordering=t_end - t_write,
        )
    return info


def _per_template(fired: np.ndarray, vocab) -> list[int]:
    cb, wp, lb = vocab.code_layout()
    bounds = [0, cb, wp, lb, len(vocab.names)]
    return [int(np.count_nonzero((fired >= bounds[k]) & (fired < bounds[k + 1]))) for k in range(4)]


def stage_phrases(
    work: str | os.PathLike,
    *,
    index: int = 0,
    symmetrization: str = DEFAULT_TM0_SYMMETRIZATION,
    sparse: bool = False,
    reordering: bool = False,
    max_length: int = 7,
    limit: int = DEFAULT_TABLE_LIMIT,
    timings: dict | None = None,
) -> dict:
    """Phrase table ``phrase-table.K.gz`` from ``aligned.<symmetrization>`` (and the reordering
    table from the same extraction with ``reordering``)."""
    work = pathlib.Path(work)
    name = align_mod.canonical_symmetrization(symmetrization)
    symmetrize_existing(work, name)
    src, tgt, _ = _load_corpus(work)
    aligned = read_lines(work / f"aligned.{name}", allow_empty=True)
    info = build_phrase_tables(
        src, tgt, aligned, phrase_table=work / f"phrase-table.{index}.gz",
        reordering_table=(work / f"reordering-table.{index}.gz") if reordering else None, sparse=sparse,
        max_length=max_length, limit=limit, alignment_path=work / f"aligned.{name}", timings=timings,
    )
    info.update(symmetrization=name, sparse=sparse, reordering=reordering)
    _write_json(work / f"phrases.{index}.json", info)
    return info


def stage_reordering(work: str | os.PathLike, *, index: int = 0, timings: dict | None = None) -> dict:
    """``reordering-table.K.gz`` for the pairs of ``phrase-table.K.gz`` (same extraction settings)."""
    work = pathlib.Path(work)
    pinfo = _read_json(work / f"phrases.{index}.json", "phrases")
    src, tgt, _ = _load_corpus(work)
    name = pinfo["symmetrization"]
    aligned = read_lines(work / f"aligned.{name}", allow_empty=True)
    info = build_phrase_tables(
        src, tgt, aligned, phrase_table=None, reordering_table=work / f"reordering-table.{index}.gz",
        max_length=pinfo["max_phrase_length"], limit=pinfo["table_limit"], alignment_path=work / f"aligned.{name}",
        timings=timings,
    )
    pinfo["reordering"] = True
    _write_json(work / f"phrases.{index}.json", pinfo)
    return info


# -- stage 5 -----------------------------------------------------------------------------------
def stage_lm(work: str | os.PathLike, *, index: int = 0, order: int = 4, text: str | os.PathLike | None = None,
             lowercase: bool | None = None) -> dict:
    """``lm.K.arpa.gz``: MKN n-gram model of ``text`` (default: the prepared target side)."""
    work = pathlib.Path(work)
    if text is None:
        lines = read_lines(work / "corpus.tgt") if (work / "corpus.tgt").is_file() else None
        if lines is None:
            raise InputError("missing corpus.tgt: run 'smtlib train prepare' first or give --text", work)
        source = "target side of the training corpus"
    else:
        lines = read_lines(text, what="LM text")
        if lowercase is None:
            prep = work / "prepare.json"
            lowercase = json.loads(prep.read_text())["lowercase"] if prep.is_file() else False
        if lowercase:
            lines = [line.lower() for line in lines]
        source = os.fspath(text)
    lm = NGramLM(lines, order)
    lm.write_arpa(work / f"lm.{index}.arpa.gz")
    info = {"order": order, "text": source, "sentences": lm.n_sentences, "tokens": lm.n_tokens,
            "ngrams": lm.ngram_counts(), "discounts": [list(t.discounts) for t in lm.tables],
            "discount_fallback_orders": lm.fallback_orders}
    _write_json(work / f"lm.{index}.json", info)
    return info


# -- stage 6 -----------------------------------------------------------------------------------
def _link_or_copy(src: pathlib.Path, dest: pathlib.Path) -> None:
    tmp = dest.with_name(".tmp-" + dest.name)
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)


def stage_assemble(work: str | os.PathLike, out: str | os.PathLike, *, feature_set: str,
                   count_bins: str | None = None) -> ModelSpec:
    """Collect the components of ``feature_set`` from WORK into the model directory ``out``.

    What each set collects is its entry in :data:`smtlib.system.feature_sets.FEATURE_SETS`.
    ``count_bins`` overrides the set's: ``"exact"`` (sparse sets only) writes TranslationModel0's
    table with one count feature per joint count instead of the 11 bins: the over-fitting set of
    Cherry & Foster (2012), §5.1 (:func:`smtlib.system.sparse.exact_count_table`).
    """
    fs = lookup_feature_set(feature_set)
    count_bins = fs.count_bins if count_bins is None else count_bins
    if count_bins not in ("paper", "exact"):
        raise InputError(f"count_bins must be 'paper' or 'exact', got {count_bins!r}")
    if count_bins == "exact" and not fs.sparse:
        raise InputError(f"exact count bins (the over-fitting set) need a feature set with sparse features, "
                         f"not {feature_set}")
    work, out = pathlib.Path(work), pathlib.Path(out)
    prep = _read_json(work / "prepare.json", "prepare")
    align_info = _read_json(work / "align.json", "align") if (work / "align.json").is_file() else {}
    n_tm, n_lm = fs.translation_models, fs.language_models
    tms, lms, rts = [], [], []
    max_len = 7
    for k in range(n_tm):
        p = _read_json(work / f"phrases.{k}.json", f"phrases --index {k}")
        if fs.sparse and k == 0 and not p.get("sparse"):
            raise InputError(f"the {feature_set} feature set needs phrase-table.0 built with --sparse", work / "phrases.0.json")
        max_len = max(max_len, p["max_phrase_length"]) if k else p["max_phrase_length"]
        desc = (f"phrases up to {p['max_phrase_length']} words from eflomal (seed {align_info.get('seed', '?')}) "
                f"alignments symmetrized with {p['symmetrization']}; {p['pairs_written']} pairs "
                f"(table limit {p['table_limit'] or 'none'}); scores p(f|e) lex(f|e) p(e|f) lex(e|f)")
        if k == 1:
            desc += "; a second alignment of the same corpus, standing in for the forced-alignment TM of Cherry & Foster 2012 §4.2"
        if fs.sparse and k == 0:
            desc += "; sixth field: sparse features " + ", ".join(TEMPLATES)
            if count_bins == "exact":
                desc += " (count-bin: one feature per joint count, the over-fitting set of Cherry & Foster 2012 §5.1)"
        tms.append(Component(f"TranslationModel{k}", f"phrase-table.{k}.gz", None, desc))
    for k in range(n_lm):
        info = _read_json(work / f"lm.{k}.json", f"lm --index {k}")
        desc = f"{info['order']}-gram interpolated modified Kneser-Ney LM of the {info['text']} ({info['tokens']} tokens)"
        lms.append(Component(f"LM{k}", f"lm.{k}.arpa.gz", info["order"], desc))
    if fs.reordering:
        p0 = _read_json(work / "phrases.0.json", "phrases --index 0")
        if not p0.get("reordering"):
            raise InputError(f"the {feature_set} feature set needs reordering-table.0: run 'smtlib train reordering --index 0'", work)
        rts.append(Component("LexicalReordering0", "reordering-table.0.gz", None,
                             "msd-bidirectional-fe (word-based orientations), Moses smoothing 0.5, pairs of TranslationModel0"))
    dense = fs.dense_features()
    spec = ModelSpec(
        source_lang=prep["src_lang"], target_lang=prep["tgt_lang"], feature_set=feature_set,
        lowercase=bool(prep["lowercase"]), tokenized_input=not prep["tokenizer"], max_phrase_length=max_len,
        dense_features=dense, phrase_tables=tms, language_models=lms, reordering=rts,
        sparse_templates=([t if t != "count-bin" or count_bins == "paper" else "count-bin-exact" for t in TEMPLATES]
                          if fs.sparse else []), tokenizer=prep["tokenizer"],
    )
    out.mkdir(parents=True, exist_ok=True)
    for comp in tms + lms + rts:
        source = work / comp.path
        if not source.is_file():
            raise InputError(f"missing {comp.path}: its stage has not run", work)
        if count_bins == "exact" and comp.name == "TranslationModel0":
            from smtlib.system.sparse import exact_count_table

            exact_count_table(source, out / comp.path)
            continue
        _link_or_copy(source, out / comp.path)
    write_weights(out / "weights.init", default_weights(spec), header="hand-set starting weights (Moses train-model.perl defaults)")
    write_model_spec(out, spec)
    return spec


# -- everything --------------------------------------------------------------------------------
@dataclasses.dataclass
class BuildOptions:
    """Options of :func:`build` (the ``smtlib train build`` flags)."""

    src_lang: str
    tgt_lang: str
    feature_set: str = "medium"
    tokenize: str = "auto"
    lowercase: bool = True
    max_length: int = 80
    max_ratio: float = 9.0
    max_phrase_length: int = 7
    table_limit: int = DEFAULT_TABLE_LIMIT
    lm_order: int = 4
    lm1_order: int = 2
    lm1_text: str | None = None
    tm1_symmetrization: str = DEFAULT_TM1_SYMMETRIZATION
    seed: int = 0
    threads: int = 2


def build(
    src: str | os.PathLike,
    tgt: str | os.PathLike,
    out: str | os.PathLike,
    options: BuildOptions,
    *,
    work: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
    compile_model: Callable[[pathlib.Path], dict] | None = None,
) -> dict:
    """Run every stage and assemble the model directory; returns the build report (times, sizes).

    ``compile_model`` (``smtlib.decoder.compiled.compile_model``, passed in by the command so that
    this layer does not import the decoder) is run on the model directory as a last stage.
    """
    fs = lookup_feature_set(options.feature_set)
    out = pathlib.Path(out)
    work = pathlib.Path(work) if work is not None else out / "work"
    tm1_sym = align_mod.canonical_symmetrization(options.tm1_symmetrization)
    report: dict = {"options": dataclasses.asdict(options), "stages": {}}

    def timed(name: str, fn, *args, **kwargs):
        if log:
            log(f"{name}: started")
        t, cpu = time.perf_counter(), cpu_seconds()
        result = fn(*args, **kwargs)
        report["stages"][name] = {
            "seconds": round(time.perf_counter() - t, 3), "cpu_seconds": round(cpu_seconds() - cpu, 3), "result": result,
        }
        if log:
            log(f"{name}: done in {report['stages'][name]['seconds']:.1f} s ({report['stages'][name]['cpu_seconds']:.1f} s CPU)")
        return result

    t_all = time.perf_counter()
    timed("prepare", stage_prepare, src, tgt, work, src_lang=options.src_lang, tgt_lang=options.tgt_lang,
          tokenize=options.tokenize, lowercase=options.lowercase, max_length=options.max_length,
          max_ratio=options.max_ratio)
    syms = (DEFAULT_TM0_SYMMETRIZATION, tm1_sym)[:fs.translation_models]
    timed("align", stage_align, work, symmetrizations=syms, seed=options.seed, threads=options.threads)
    sub: dict = {}
    first = "phrases0+reordering" if fs.reordering else "phrases0"
    timed(first, stage_phrases, work, index=0, symmetrization=syms[0], sparse=fs.sparse, reordering=fs.reordering,
          max_length=options.max_phrase_length, limit=options.table_limit, timings=sub)
    report["stages"][first]["parts"] = {k: round(v, 3) for k, v in sub.items()}
    for k in range(1, fs.translation_models):
        timed(f"phrases{k}", stage_phrases, work, index=k, symmetrization=syms[k],
              max_length=options.max_phrase_length, limit=options.table_limit)
    for k in range(fs.language_models):
        timed(f"lm{k}", stage_lm, work, index=k, order=options.lm1_order if k else options.lm_order,
              text=options.lm1_text if k else None)
    spec = timed("assemble", lambda: stage_assemble(work, out, feature_set=options.feature_set).to_dict())
    report["stages"]["assemble"]["result"] = {"model": os.fspath(out), "dense": spec["dense_features"]}
    if compile_model is not None:
        timed("compile", compile_model, out)
    report["total_seconds"] = round(time.perf_counter() - t_all, 3)
    report["peak_memory_mib"] = round(peak_memory_mib(), 1)
    _write_json(out / "build.json", report)
    return report
