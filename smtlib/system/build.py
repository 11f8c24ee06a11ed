"""The system-building pipeline, stage by stage (Moses's ``train-model.perl``).

Every stage reads and writes the files it is given, and only those, so that a workflow can run them
one by one (``smtlib train prepare|align|phrases|reordering|lm|assemble``) and declare exactly what
each reads and writes. A file has one writer: no stage rewrites another stage's output.
:func:`build` runs them all in a work directory under the default names of :class:`WorkFiles`
(also what ``smtlib train STAGE --work WORK`` fills in) and records the time of each stage in
``DIR/build.json``.

=============  =======================================  ============================================
stage          reads                                    writes (default name in WORK)
=============  =======================================  ============================================
prepare        the parallel corpus                      ``corpus.src``, ``corpus.tgt`` (tokenized,
                                                        lowercased, cleaned), ``prepare.json``
align          ``corpus.src``, ``corpus.tgt``           ``align.fwd``, ``align.rev`` (eflomal),
                                                        ``aligned.<heuristic>``, ``align.json``
phrases K      ``corpus.*``, one ``aligned.<h>``        ``phrase-table.K.gz``, ``phrases.K.json``
                                                        (+ ``reordering-table.K.gz`` if asked)
reordering K   ``corpus.*``, ``aligned.<h>``,           ``reordering-table.K.gz`` (same pairs as
               ``phrases.K.json``                       ``phrase-table.K.gz``), ``reordering.K.json``
lm K           ``corpus.tgt`` or other text (and then   ``lm.K.arpa.gz``, ``lm.K.json``
               ``prepare.json`` for lowercasing)
assemble       ``prepare.json``, ``align.json``, the    the model directory
               tables and LMs with their JSON           (:mod:`smtlib.system.modeldir`); the
                                                        ``smtlib train assemble`` command then
                                                        writes its compiled form ``DIR/compiled.bin``
=============  =======================================  ============================================

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
import time
from collections.abc import Callable

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output, link_or_copy, read_lines, write_lines
from smtlib.system import align as align_mod
from smtlib.system import corpus as corpus_mod
from smtlib.system.extract import collect_pairs, encode_corpus, extract_occurrences, mask_to_text
from smtlib.system.lm import NGramLM
from smtlib.system.feature_sets import feature_set as lookup_feature_set
from smtlib.system.modeldir import DEFAULT_WEIGHTS, Component, ModelSpec, write_model_spec
from smtlib.system.moses_export import default_weights, phrase_table_chunks, reordering_table_chunks
from smtlib.system.reordering import orientation_priors, reordering_scores
from smtlib.system.score import lexical_table, score_pairs, table_limit
from smtlib.system.sparse import TEMPLATES, learn_vocabulary, render, sparse_features
from smtlib.weights import write_weights

DEFAULT_TM0_SYMMETRIZATION = "grow-diag-final-and"
DEFAULT_TM1_SYMMETRIZATION = "union"
#: translations kept per source phrase when a phrase table is written (the decoder keeps fewer per
#: sentence: smtlib.decoder.settings.DECODER_TABLE_LIMIT)
PHRASE_TABLE_LIMIT = 100


def _write_json(path: pathlib.Path, data: dict) -> None:
    with atomic_output(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=False)
        fh.write("\n")


def _need(path: str | os.PathLike, stage: str) -> pathlib.Path:
    """``path`` as a :class:`~pathlib.Path`, or an error naming the stage that writes it."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise InputError(f"missing {path.name}: run 'smtlib train {stage}' first", path)
    return path


def _read_json(path: str | os.PathLike, stage: str) -> dict:
    return json.loads(_need(path, stage).read_text(encoding="utf-8"))


@dataclasses.dataclass(frozen=True)
class WorkFiles:
    """The file names every stage uses inside a work directory (``--work DIR``; :func:`build`).

    The stages themselves take explicit paths; these names are only the defaults that ``smtlib
    train STAGE --work DIR`` and ``smtlib train build`` fill in.
    """

    work: pathlib.Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "work", pathlib.Path(self.work))

    @property
    def corpus_src(self) -> pathlib.Path:
        return self.work / "corpus.src"

    @property
    def corpus_tgt(self) -> pathlib.Path:
        return self.work / "corpus.tgt"

    @property
    def prepare_info(self) -> pathlib.Path:
        return self.work / "prepare.json"

    @property
    def forward(self) -> pathlib.Path:
        return self.work / "align.fwd"

    @property
    def reverse(self) -> pathlib.Path:
        return self.work / "align.rev"

    @property
    def align_info(self) -> pathlib.Path:
        return self.work / "align.json"

    def aligned(self, symmetrization: str) -> pathlib.Path:
        return self.work / f"aligned.{align_mod.canonical_symmetrization(symmetrization)}"

    def phrase_table(self, index: int) -> pathlib.Path:
        return self.work / f"phrase-table.{index}.gz"

    def phrases_info(self, index: int) -> pathlib.Path:
        return self.work / f"phrases.{index}.json"

    def reordering_table(self, index: int) -> pathlib.Path:
        return self.work / f"reordering-table.{index}.gz"

    def reordering_info(self, index: int) -> pathlib.Path:
        return self.work / f"reordering.{index}.json"

    def lm(self, index: int) -> pathlib.Path:
        return self.work / f"lm.{index}.arpa.gz"

    def lm_info(self, index: int) -> pathlib.Path:
        return self.work / f"lm.{index}.json"


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
    *,
    corpus_src: str | os.PathLike,
    corpus_tgt: str | os.PathLike,
    prepare_info: str | os.PathLike,
    src_lang: str,
    tgt_lang: str,
    tokenize: str = "auto",
    lowercase: bool = True,
    max_length: int = 80,
    max_ratio: float = 9.0,
) -> dict:
    """Read, tokenize, lowercase and clean a pair; write ``corpus_src``/``corpus_tgt`` and the
    counts to ``prepare_info``."""
    s_lines, t_lines = corpus_mod.read_parallel(src, tgt)
    s_out, t_out, report = corpus_mod.prepare_corpus(
        s_lines, t_lines, src_lang=src_lang, tgt_lang=tgt_lang, tokenize=tokenize, lowercase=lowercase,
        max_length=max_length, max_ratio=max_ratio, src_path=src,
    )
    write_lines(corpus_src, s_out)
    write_lines(corpus_tgt, t_out)
    info = {
        "source": os.fspath(src), "target": os.fspath(tgt), "src_lang": src_lang, "tgt_lang": tgt_lang,
        "tokenizer": corpus_mod.SACREMOSES if report.tokenized_here else "", **report.to_dict(),
    }
    _write_json(pathlib.Path(prepare_info), info)
    return info


def _load_corpus(corpus_src: str | os.PathLike, corpus_tgt: str | os.PathLike) -> tuple[list[str], list[str]]:
    return read_lines(_need(corpus_src, "prepare")), read_lines(_need(corpus_tgt, "prepare"))


# -- stage 2 -----------------------------------------------------------------------------------
def stage_align(
    corpus_src: str | os.PathLike,
    corpus_tgt: str | os.PathLike,
    *,
    forward: str | os.PathLike,
    reverse: str | os.PathLike,
    aligned: dict[str, str | os.PathLike],
    align_info: str | os.PathLike,
    seed: int = 0,
    threads: int = 2,
) -> dict:
    """eflomal in both directions (``forward``, ``reverse``), then each symmetrization of
    ``aligned`` (heuristic name -> file)."""
    src, tgt = _load_corpus(corpus_src, corpus_tgt)
    targets = {align_mod.canonical_symmetrization(name): path for name, path in aligned.items()}
    fwd, rev, deterministic, aligner = align_mod.run_eflomal(src, tgt, seed=seed, threads=threads)
    write_lines(forward, fwd)
    write_lines(reverse, rev)
    src_len, tgt_len = align_mod.sentence_lengths(src), align_mod.sentence_lengths(tgt)
    f_links = align_mod.Links.from_lines(fwd, src_len, tgt_len, forward)
    r_links = align_mod.Links.from_lines(rev, src_len, tgt_len, reverse)
    links = {}
    for name, path in targets.items():
        sym = align_mod.symmetrize(f_links, r_links, src_len, tgt_len, name)
        write_lines(path, sym.to_lines())
        links[name] = int(len(sym.src))
    info = {"aligner": "eflomal model 3", "eflomal": aligner, "seed": seed, "deterministic": deterministic, "links": links,
            "links_forward": int(len(f_links.src)), "links_reverse": int(len(r_links.src))}
    _write_json(pathlib.Path(align_info), info)
    return info


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
    limit: int = PHRASE_TABLE_LIMIT,
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
    corpus_src: str | os.PathLike,
    corpus_tgt: str | os.PathLike,
    aligned: str | os.PathLike,
    *,
    phrase_table: str | os.PathLike,
    phrases_info: str | os.PathLike,
    reordering_table: str | os.PathLike | None = None,
    symmetrization: str = DEFAULT_TM0_SYMMETRIZATION,
    sparse: bool = False,
    max_length: int = 7,
    limit: int = PHRASE_TABLE_LIMIT,
    timings: dict | None = None,
) -> dict:
    """Phrase table ``phrase_table`` from the alignment ``aligned`` (made with ``symmetrization``,
    recorded in ``phrases_info``), and the reordering table ``reordering_table`` from the same
    extraction when it is given."""
    name = align_mod.canonical_symmetrization(symmetrization)
    src, tgt = _load_corpus(corpus_src, corpus_tgt)
    aligned_lines = read_lines(_need(aligned, f"align --symmetrize {name}"), allow_empty=True)
    info = build_phrase_tables(
        src, tgt, aligned_lines, phrase_table=phrase_table, reordering_table=reordering_table, sparse=sparse,
        max_length=max_length, limit=limit, alignment_path=aligned, timings=timings,
    )
    info.update(symmetrization=name, sparse=sparse, reordering=reordering_table is not None)
    _write_json(pathlib.Path(phrases_info), info)
    return info


def phrases_symmetrization(phrases_info: str | os.PathLike) -> str:
    """The alignment a phrase table was extracted from (its ``phrases.K.json``)."""
    return _read_json(phrases_info, "phrases")["symmetrization"]


def stage_reordering(
    corpus_src: str | os.PathLike,
    corpus_tgt: str | os.PathLike,
    aligned: str | os.PathLike,
    phrases_info: str | os.PathLike,
    *,
    reordering_table: str | os.PathLike,
    reordering_info: str | os.PathLike,
    timings: dict | None = None,
) -> dict:
    """``reordering_table`` for the pairs of the phrase table that ``phrases_info`` describes (same
    alignment, phrase length and table limit); its sizes go to ``reordering_info`` (the phrase
    table's own ``phrases_info`` is left as its stage wrote it)."""
    pinfo = _read_json(phrases_info, "phrases")
    src, tgt = _load_corpus(corpus_src, corpus_tgt)
    name = pinfo["symmetrization"]
    aligned_lines = read_lines(_need(aligned, f"align --symmetrize {name}"), allow_empty=True)
    info = build_phrase_tables(
        src, tgt, aligned_lines, phrase_table=None, reordering_table=reordering_table,
        max_length=pinfo["max_phrase_length"], limit=pinfo["table_limit"], alignment_path=aligned,
        timings=timings,
    )
    info.update(symmetrization=name)
    _write_json(pathlib.Path(reordering_info), info)
    return info


# -- stage 5 -----------------------------------------------------------------------------------
def lm_text(
    *,
    corpus_tgt: str | os.PathLike | None = None,
    text: str | os.PathLike | None = None,
    prepare_info: str | os.PathLike | None = None,
    lowercase: bool | None = None,
) -> tuple[list[str], str]:
    """The training text of an LM and how to name it: the prepared target side ``corpus_tgt``, or
    other target-language ``text`` (lowercased when ``lowercase``; by default as the prepared corpus
    of ``prepare_info``, none given: not lowercased)."""
    if (corpus_tgt is None) == (text is None):
        raise InputError("the LM needs either the prepared target side or a --text, not both")
    if text is None:
        return read_lines(_need(corpus_tgt, "prepare")), "target side of the training corpus"
    lines = read_lines(text, what="LM text")
    if lowercase is None:
        lowercase = bool(_read_json(prepare_info, "prepare")["lowercase"]) if prepare_info is not None else False
    if lowercase:
        lines = [line.lower() for line in lines]
    return lines, os.fspath(text)


def stage_lm(
    *,
    lm: str | os.PathLike,
    lm_info: str | os.PathLike,
    order: int = 4,
    corpus_tgt: str | os.PathLike | None = None,
    text: str | os.PathLike | None = None,
    prepare_info: str | os.PathLike | None = None,
    lowercase: bool | None = None,
) -> dict:
    """``lm``: MKN n-gram model of the prepared target side ``corpus_tgt`` or of ``text`` (see
    :func:`lm_text`); its sizes and discounts go to ``lm_info``."""
    lines, source = lm_text(corpus_tgt=corpus_tgt, text=text, prepare_info=prepare_info, lowercase=lowercase)
    model = NGramLM(lines, order)
    model.write_arpa(lm)
    info = {"order": order, "text": source, "sentences": model.n_sentences, "tokens": model.n_tokens,
            "ngrams": model.ngram_counts(), "discounts": [list(t.discounts) for t in model.tables],
            "discount_fallback_orders": model.fallback_orders}
    _write_json(pathlib.Path(lm_info), info)
    return info


# -- stage 6 -----------------------------------------------------------------------------------
def stage_assemble(
    out: str | os.PathLike,
    *,
    feature_set: str,
    prepare_info: str | os.PathLike,
    phrase_tables: list[str | os.PathLike],
    phrases_infos: list[str | os.PathLike],
    lms: list[str | os.PathLike],
    lm_infos: list[str | os.PathLike],
    reordering_table: str | os.PathLike | None = None,
    align_info: str | os.PathLike | None = None,
    count_bins: str | None = None,
) -> ModelSpec:
    """Collect the components of ``feature_set`` into the model directory ``out``.

    ``phrase_tables`` (with their ``phrases_infos``) and ``lms`` (with their ``lm_infos``) are
    TranslationModel0[, TranslationModel1] and LM0[, LM1]; ``reordering_table`` is
    LexicalReordering0 (sets with reordering); ``prepare_info`` gives the languages and the
    preprocessing, ``align_info`` (optional) the alignment seed for the descriptions.

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
    out = pathlib.Path(out)
    prep = _read_json(prepare_info, "prepare")
    align = _read_json(align_info, "align") if align_info is not None else {}
    n_tm, n_lm = fs.translation_models, fs.language_models
    if (len(phrase_tables), len(phrases_infos), len(lms), len(lm_infos)) != (n_tm, n_tm, n_lm, n_lm):
        raise InputError(
            f"the {feature_set} feature set takes {n_tm} phrase table(s) with their info and {n_lm} LM(s) with "
            f"their info, got {len(phrase_tables)}, {len(phrases_infos)}, {len(lms)} and {len(lm_infos)}"
        )
    tms, lms_, rts = [], [], []
    sources: dict[str, tuple[str | os.PathLike, str]] = {}  # component -> (file, the stage writing it)
    max_len = 7
    for k in range(n_tm):
        p = _read_json(phrases_infos[k], f"phrases --index {k}")
        if fs.sparse and k == 0 and not p.get("sparse"):
            raise InputError(f"the {feature_set} feature set needs phrase-table.0 built with --sparse", phrases_infos[k])
        max_len = max(max_len, p["max_phrase_length"]) if k else p["max_phrase_length"]
        desc = (f"phrases up to {p['max_phrase_length']} words from eflomal (seed {align.get('seed', '?')}) "
                f"alignments symmetrized with {p['symmetrization']}; {p['pairs_written']} pairs "
                f"(table limit {p['table_limit'] or 'none'}); scores p(f|e) lex(f|e) p(e|f) lex(e|f)")
        if k == 1:
            desc += "; a second alignment of the same corpus, standing in for the forced-alignment TM of Cherry & Foster 2012 §4.2"
        if fs.sparse and k == 0:
            desc += "; sixth field: sparse features " + ", ".join(TEMPLATES)
            if count_bins == "exact":
                desc += " (count-bin: one feature per joint count, the over-fitting set of Cherry & Foster 2012 §5.1)"
        tms.append(Component(f"TranslationModel{k}", f"phrase-table.{k}.gz", None, desc))
        sources[tms[-1].name] = (phrase_tables[k], f"phrases --index {k}")
    for k in range(n_lm):
        info = _read_json(lm_infos[k], f"lm --index {k}")
        desc = f"{info['order']}-gram interpolated modified Kneser-Ney LM of the {info['text']} ({info['tokens']} tokens)"
        lms_.append(Component(f"LM{k}", f"lm.{k}.arpa.gz", info["order"], desc))
        sources[lms_[-1].name] = (lms[k], f"lm --index {k}")
    if fs.reordering:
        if reordering_table is None or not pathlib.Path(reordering_table).is_file():
            raise InputError(f"the {feature_set} feature set needs reordering-table.0: run 'smtlib train reordering "
                             "--index 0'", reordering_table)
        rts.append(Component("LexicalReordering0", "reordering-table.0.gz", None,
                             "msd-bidirectional-fe (word-based orientations), Moses smoothing 0.5, pairs of TranslationModel0"))
        sources[rts[-1].name] = (reordering_table, "reordering --index 0")
    dense = fs.dense_features()
    spec = ModelSpec(
        source_lang=prep["src_lang"], target_lang=prep["tgt_lang"], feature_set=feature_set,
        lowercase=bool(prep["lowercase"]), tokenized_input=not prep["tokenizer"], max_phrase_length=max_len,
        dense_features=dense, phrase_tables=tms, language_models=lms_, reordering=rts,
        sparse_templates=([t if t != "count-bin" or count_bins == "paper" else "count-bin-exact" for t in TEMPLATES]
                          if fs.sparse else []), tokenizer=prep["tokenizer"],
    )
    out.mkdir(parents=True, exist_ok=True)
    for comp in tms + lms_ + rts:
        source = _need(*sources[comp.name])
        if count_bins == "exact" and comp.name == "TranslationModel0":
            from smtlib.system.sparse import exact_count_table

            exact_count_table(source, out / comp.path)
            continue
        link_or_copy(source, out / comp.path)
    write_weights(out / DEFAULT_WEIGHTS, default_weights(spec), header="hand-set starting weights (Moses train-model.perl defaults)")
    write_model_spec(out, spec)
    return spec


def assemble_inputs(files: WorkFiles, feature_set: str) -> dict:
    """The inputs of :func:`stage_assemble` for ``feature_set`` under the default names in WORK
    (``align.json`` only when it is there: it only names the alignment seed)."""
    fs = lookup_feature_set(feature_set)
    return {
        "prepare_info": files.prepare_info,
        "align_info": files.align_info if files.align_info.is_file() else None,
        "phrase_tables": [files.phrase_table(k) for k in range(fs.translation_models)],
        "phrases_infos": [files.phrases_info(k) for k in range(fs.translation_models)],
        "lms": [files.lm(k) for k in range(fs.language_models)],
        "lm_infos": [files.lm_info(k) for k in range(fs.language_models)],
        "reordering_table": files.reordering_table(0) if fs.reordering else None,
    }


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
    table_limit: int = PHRASE_TABLE_LIMIT
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

    files = WorkFiles(work)
    corpus = (files.corpus_src, files.corpus_tgt)
    t_all = time.perf_counter()
    timed("prepare", stage_prepare, src, tgt, corpus_src=files.corpus_src, corpus_tgt=files.corpus_tgt,
          prepare_info=files.prepare_info, src_lang=options.src_lang, tgt_lang=options.tgt_lang,
          tokenize=options.tokenize, lowercase=options.lowercase, max_length=options.max_length,
          max_ratio=options.max_ratio)
    syms = (DEFAULT_TM0_SYMMETRIZATION, tm1_sym)[:fs.translation_models]
    timed("align", stage_align, *corpus, forward=files.forward, reverse=files.reverse,
          aligned={name: files.aligned(name) for name in syms}, align_info=files.align_info, seed=options.seed,
          threads=options.threads)
    sub: dict = {}
    first = "phrases0+reordering" if fs.reordering else "phrases0"
    timed(first, stage_phrases, *corpus, files.aligned(syms[0]), phrase_table=files.phrase_table(0),
          phrases_info=files.phrases_info(0), reordering_table=files.reordering_table(0) if fs.reordering else None,
          symmetrization=syms[0], sparse=fs.sparse, max_length=options.max_phrase_length, limit=options.table_limit,
          timings=sub)
    report["stages"][first]["parts"] = {k: round(v, 3) for k, v in sub.items()}
    for k in range(1, fs.translation_models):
        timed(f"phrases{k}", stage_phrases, *corpus, files.aligned(syms[k]), phrase_table=files.phrase_table(k),
              phrases_info=files.phrases_info(k), symmetrization=syms[k], max_length=options.max_phrase_length,
              limit=options.table_limit)
    for k in range(fs.language_models):
        text = options.lm1_text if k else None
        source = {"text": text, "prepare_info": files.prepare_info} if text else {"corpus_tgt": files.corpus_tgt}
        timed(f"lm{k}", stage_lm, lm=files.lm(k), lm_info=files.lm_info(k),
              order=options.lm1_order if k else options.lm_order, **source)
    spec = timed("assemble", lambda: stage_assemble(
        out, feature_set=options.feature_set, **assemble_inputs(files, options.feature_set)
    ).to_dict())
    report["stages"]["assemble"]["result"] = {"model": os.fspath(out), "dense": spec["dense_features"]}
    if compile_model is not None:
        timed("compile", compile_model, out)
    report["total_seconds"] = round(time.perf_counter() - t_all, 3)
    report["peak_memory_mib"] = round(peak_memory_mib(), 1)
    _write_json(out / "build.json", report)
    return report
