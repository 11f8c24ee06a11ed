"""Build a phrase-based system from a parallel corpus, all at once or stage by stage.

All at once::

    smtlib train build --src train.fr --tgt train.en --src-lang fr --tgt-lang en \\
        --feature-set medium --out models/fr-en-medium [--lm-order 4] [--seed 1] [--threads 2]

Stage by stage (what a workflow runs). Every stage takes the files it reads and writes as options;
``--work W`` fills in each one not given with its name in W (the names ``build`` uses), so that::

    smtlib train prepare  --src F --tgt E --src-lang fr --tgt-lang en --work W
    smtlib train align    --work W --symmetrize grow-diag-final-and union --seed 1
    smtlib train phrases  --work W --index 0 --symmetrization grow-diag-final-and --reordering [--sparse]
    smtlib train phrases  --work W --index 1 --symmetrization union
    smtlib train reordering --work W --index 0      (only if 'phrases --index 0' ran without --reordering)
    smtlib train lm       --work W --index 0 --order 4
    smtlib train lm       --work W --index 1 --order 2
    smtlib train assemble --work W --feature-set medium --out DIR

is the same as (reads -> writes)::

    prepare    --src F --tgt E -> --corpus-src W/corpus.src --corpus-tgt W/corpus.tgt --prepare-info W/prepare.json
    align      --corpus-src --corpus-tgt -> --forward W/align.fwd --reverse W/align.rev
               --aligned W/aligned.grow-diag-final-and W/aligned.union (one per --symmetrize) --align-info W/align.json
    phrases    --corpus-src --corpus-tgt --aligned W/aligned.H -> --phrase-table W/phrase-table.K.gz
               --phrases-info W/phrases.K.json [--reordering-table W/reordering-table.K.gz]
    reordering --corpus-src --corpus-tgt --aligned --phrases-info W/phrases.K.json
               -> --reordering-table W/reordering-table.K.gz --reordering-info W/reordering.K.json
    lm         --corpus-tgt W/corpus.tgt (or --text T [--prepare-info W/prepare.json]) -> --lm W/lm.K.arpa.gz
               --lm-info W/lm.K.json
    assemble   --prepare-info --align-info --phrase-table P0 [P1] --phrases-info J0 [J1] --lm L0 [L1]
               --lm-info I0 [I1] [--reordering-table R0] -> --out DIR

Other commands::

    smtlib train compile  --model DIR    (only for a model directory without DIR/compiled.bin)
    smtlib train export-moses --model DIR --out DIR/moses [--weights W]
    smtlib train import-moses --ini moses.ini --out DIR [--copy]

Feature sets (Cherry & Foster 2012, §4.2; the table of ``smtlib/system/feature_sets.py``): small =
TM0 (4) + LM0 + word penalty + distortion (7); medium = small + TM1 (4) + LM1 + lexicalized
reordering (6) = 18; big = medium + the sparse templates tgt-unal, count-bin, word-pair,
length-bin; overfit = big with one count feature per joint count (§5.1). Where TM1 and LM1 come from: see
``smtlib/system/build.py`` (TM1: union symmetrization of the same alignments; LM1: a bigram of the
target side, or --lm1-text). ``assemble`` (and so ``build``) also writes DIR/compiled.bin, the
binary form the decoder memory-maps instead of reading the text tables (``smtlib.decoder.compiled``);
``compile`` writes it for a model directory made another way or changed by hand. Bad input (mismatched line counts, an empty corpus, bytes that are not
UTF-8) exits with status 2 and one line naming the file.
"""

from __future__ import annotations

import argparse
import json
import sys

from smtlib.errors import InputError
from smtlib.system.feature_sets import FEATURE_SETS
from smtlib.values import integer_at_least


def _feature_set_help() -> str:
    """``small (7 features), medium (18), ...`` from the feature-set table."""
    return ", ".join(f"{fs.name} ({sum(n for _, n in fs.dense_features())}"
                     f"{' + sparse' + (', exact count bins' if fs.count_bins == 'exact' else '') if fs.sparse else ''})"
                     for fs in FEATURE_SETS.values())


_SYM_HELP = "grow-diag-final-and (alias diag-and), grow-diag-final, grow-diag (alias diag), union, intersect"


def _add_corpus_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--src", required=True, help="source side of the parallel corpus (plain or .gz, UTF-8)")
    p.add_argument("--tgt", required=True, help="target side, line-aligned with --src")
    p.add_argument("--src-lang", required=True, help="source language code (sacremoses tokenizer rules), e.g. fr")
    p.add_argument("--tgt-lang", required=True, help="target language code, e.g. en")
    p.add_argument("--tokenize", choices=("auto", "yes", "no"), default="auto",
                   help="tokenize with sacremoses: yes (raw text), no (already tokenized), auto (decide from "
                        "the text: it is tokenized if re-tokenizing leaves it unchanged; default)")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True,
                   help="lowercase both sides (default: yes); recorded so the decoder does the same")
    p.add_argument("--max-length", type=integer_at_least(1), default=80,
                   help="drop pairs with a side longer than this many tokens (default: 80, clean-corpus-n)")
    p.add_argument("--max-ratio", type=float, default=9.0,
                   help="drop pairs whose length ratio exceeds this (default: 9, clean-corpus-n)")


def _add_phrase_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-phrase-length", type=integer_at_least(1), default=7,
                   help="longest phrase on either side, at most 8 (default: 7, as Cherry & Foster)")
    p.add_argument("--table-limit", type=integer_at_least(0), default=100,
                   help="keep the N best targets per source phrase by p(e|f), 0 = all (default: 100)")


def _add_align_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=integer_at_least(0), default=0, help="seed of eflomal's samplers (default: 0); same seed, same output")
    p.add_argument("--threads", type=integer_at_least(1), default=2,
                   help="processes for alignment: 2 aligns both directions at once (default: 2); output is the same")


def _add_work_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--work", help="work directory: the default for every file option below, under the names "
                                  "smtlib train build uses")


def _add_file_option(p: argparse.ArgumentParser, option: str, default: str, what: str) -> None:
    p.add_argument(option, metavar="FILE", help=f"{what} (default: WORK/{default})")


def _add_build_stage(stages: argparse._SubParsersAction) -> None:
    """``build``: every stage at once."""
    p = stages.add_parser("build", help="run every stage and write a model directory",
                          description="Run every stage and write the model directory --out.")
    _add_corpus_options(p)
    p.add_argument("--feature-set", choices=tuple(FEATURE_SETS), default="medium",
                   help=f"{_feature_set_help()} (default: medium)")
    p.add_argument("--out", required=True, help="model directory to write (model.yaml, tables, LMs)")
    p.add_argument("--work", help="work directory for intermediate files (default: OUT/work)")
    p.add_argument("--lm-order", type=integer_at_least(1), default=4, help="order of LM0 (default: 4)")
    p.add_argument("--lm1-order", type=integer_at_least(1), default=2, help="order of LM1, medium/big (default: 2)")
    p.add_argument("--lm1-text", help="train LM1 on this target-language text instead of the target side")
    p.add_argument("--tm1-symmetrization", default="union", help=f"alignment of TM1 (default: union; {_SYM_HELP})")
    _add_phrase_options(p)
    _add_align_options(p)


def _add_prepare_stage(stages: argparse._SubParsersAction) -> None:
    """``prepare``: the prepared corpus."""
    p = stages.add_parser("prepare", help="read, tokenize, lowercase and clean a parallel corpus",
                          description="Write the prepared corpus (--corpus-src, --corpus-tgt) and its counts "
                                      "(--prepare-info).")
    _add_corpus_options(p)
    _add_work_option(p)
    _add_file_option(p, "--corpus-src", "corpus.src", "the prepared source side (written)")
    _add_file_option(p, "--corpus-tgt", "corpus.tgt", "the prepared target side (written)")
    _add_file_option(p, "--prepare-info", "prepare.json", "the counts and settings (written)")


def _add_align_stage(stages: argparse._SubParsersAction) -> None:
    """``align``: eflomal and symmetrization."""
    p = stages.add_parser("align", help="eflomal in both directions and symmetrization",
                          description="Align the prepared corpus with eflomal in both directions (--forward, "
                                      "--reverse) and write each --symmetrize heuristic's alignment (--aligned).")
    _add_work_option(p)
    _add_file_option(p, "--corpus-src", "corpus.src", "the prepared source side (read)")
    _add_file_option(p, "--corpus-tgt", "corpus.tgt", "the prepared target side (read)")
    p.add_argument("--symmetrize", nargs="+", default=["grow-diag-final-and", "union"],
                   help=f"heuristics to write (default: grow-diag-final-and union; {_SYM_HELP})")
    p.add_argument("--aligned", nargs="+", metavar="FILE",
                   help="one symmetrized alignment per --symmetrize heuristic, in the same order (written; "
                        "default: WORK/aligned.HEURISTIC)")
    _add_file_option(p, "--forward", "align.fwd", "eflomal's source-to-target links (written)")
    _add_file_option(p, "--reverse", "align.rev", "eflomal's target-to-source links (written)")
    _add_file_option(p, "--align-info", "align.json", "the link counts and the seed (written)")
    _add_align_options(p)


def _add_phrases_stage(stages: argparse._SubParsersAction) -> None:
    """``phrases``: a phrase table (and its reordering table)."""
    p = stages.add_parser("phrases", help="extract and score a phrase table",
                          description="Write the phrase table --phrase-table and its sizes --phrases-info (and "
                                      "the reordering table of the same extraction with --reordering-table).")
    _add_work_option(p)
    p.add_argument("--index", type=integer_at_least(0), default=0,
                   help="K in the default names: 0 for TranslationModel0, 1 for TranslationModel1")
    p.add_argument("--symmetrization", default="grow-diag-final-and",
                   help=f"the heuristic of --aligned, recorded in --phrases-info ({_SYM_HELP})")
    _add_file_option(p, "--corpus-src", "corpus.src", "the prepared source side (read)")
    _add_file_option(p, "--corpus-tgt", "corpus.tgt", "the prepared target side (read)")
    _add_file_option(p, "--aligned", "aligned.SYMMETRIZATION", "the symmetrized alignment (read)")
    _add_file_option(p, "--phrase-table", "phrase-table.K.gz", "the phrase table (written)")
    _add_file_option(p, "--phrases-info", "phrases.K.json", "its sizes and settings (written)")
    p.add_argument("--sparse", action="store_true", help="add the big set's sparse features as a sixth field")
    p.add_argument("--reordering-table", metavar="FILE",
                   help="also write the msd-bidirectional-fe reordering table here")
    p.add_argument("--reordering", action="store_true",
                   help="also write the reordering table, as WORK/reordering-table.K.gz")
    _add_phrase_options(p)


def _add_reordering_stage(stages: argparse._SubParsersAction) -> None:
    """``reordering``: the reordering table of a phrase table."""
    p = stages.add_parser("reordering", help="the msd-bidirectional-fe reordering table of a phrase table",
                          description="Write the reordering table --reordering-table for the pairs of the phrase "
                                      "table --phrases-info describes, and its sizes --reordering-info.")
    _add_work_option(p)
    p.add_argument("--index", type=integer_at_least(0), default=0, help="K in the default names (default: 0)")
    _add_file_option(p, "--corpus-src", "corpus.src", "the prepared source side (read)")
    _add_file_option(p, "--corpus-tgt", "corpus.tgt", "the prepared target side (read)")
    _add_file_option(p, "--phrases-info", "phrases.K.json", "the phrase table's settings (read)")
    _add_file_option(p, "--aligned", "aligned.SYMMETRIZATION",
                     "the alignment the phrase table was extracted from (read; the default names it from "
                     "--phrases-info)")
    _add_file_option(p, "--reordering-table", "reordering-table.K.gz", "the reordering table (written)")
    _add_file_option(p, "--reordering-info", "reordering.K.json", "its sizes (written)")


def _add_lm_stage(stages: argparse._SubParsersAction) -> None:
    """``lm``: an n-gram LM."""
    p = stages.add_parser("lm", help="an interpolated modified Kneser-Ney n-gram LM as ARPA",
                          description="Write the ARPA LM --lm and its sizes --lm-info (and, with --check, compare "
                                      "perplexities with kenlm).")
    _add_work_option(p)
    p.add_argument("--index", type=integer_at_least(0), default=0, help="K in the default names: 0 for LM0, 1 for LM1")
    p.add_argument("--order", type=integer_at_least(1), default=4, help="n-gram order (default: 4)")
    _add_file_option(p, "--corpus-tgt", "corpus.tgt", "the prepared target side to train on (read; not with --text)")
    p.add_argument("--text", help="train on this target-language text instead of the prepared target side")
    _add_file_option(p, "--prepare-info", "prepare.json, when there",
                     "with --text: lowercase it as the prepared corpus was (read)")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=None,
                   help="lowercase --text (default: as --prepare-info says; without one, no)")
    _add_file_option(p, "--lm", "lm.K.arpa.gz", "the LM (written)")
    _add_file_option(p, "--lm-info", "lm.K.json", "its sizes and discounts (written)")
    p.add_argument("--check", metavar="TEXT",
                   help="print the perplexity of TEXT under our estimate and under kenlm reading the ARPA file")


def _add_assemble_stage(stages: argparse._SubParsersAction) -> None:
    """``assemble``: a model directory from the stage files."""
    p = stages.add_parser("assemble", help="collect the components of a feature set into a model directory",
                          description="Write DIR/model.yaml, link the tables and LMs, write DIR/default.weights and "
                                      "DIR/compiled.bin.")
    _add_work_option(p)
    p.add_argument("--feature-set", choices=tuple(FEATURE_SETS), required=True, help=_feature_set_help())
    p.add_argument("--count-bins", choices=("paper", "exact"),
                   help="sparse sets: the 11 count bins of Table 3 (paper) or one feature per joint count, the "
                        "over-fitting set of Cherry & Foster 2012 §5.1 (exact) (default: the feature set's)")
    _add_file_option(p, "--prepare-info", "prepare.json", "languages and preprocessing (read)")
    _add_file_option(p, "--align-info", "align.json, when there", "the alignment seed, for the descriptions (read)")
    p.add_argument("--phrase-table", nargs="+", metavar="FILE",
                   help="TranslationModel0's table [and TranslationModel1's, as the feature set has] (read; "
                        "default: WORK/phrase-table.K.gz)")
    p.add_argument("--phrases-info", nargs="+", metavar="FILE",
                   help="their phrases.K.json, in the same order (read; default: WORK/phrases.K.json)")
    p.add_argument("--lm", nargs="+", metavar="FILE",
                   help="LM0 [and LM1, as the feature set has] (read; default: WORK/lm.K.arpa.gz)")
    p.add_argument("--lm-info", nargs="+", metavar="FILE",
                   help="their lm.K.json, in the same order (read; default: WORK/lm.K.json)")
    _add_file_option(p, "--reordering-table", "reordering-table.0.gz",
                     "LexicalReordering0, for the sets with reordering (read)")
    p.add_argument("--out", required=True, help="model directory to write (or its model.yaml)")


def _add_compile_stage(stages: argparse._SubParsersAction) -> None:
    """``compile``: DIR/compiled.bin."""
    p = stages.add_parser("compile", help="write DIR/compiled.bin, the binary model the decoder memory-maps",
                          description="Write DIR/compiled.bin from the text tables and LMs of DIR (what assemble "
                                      "does after collecting them); print its size and counts.")
    p.add_argument("--model", required=True, help="model directory (or its model.yaml)")


def _add_export_moses_stage(stages: argparse._SubParsersAction) -> None:
    """``export-moses``: a Moses system."""
    p = stages.add_parser("export-moses", help="a Moses system (moses.ini, merged phrase table) that Moses scores as "
                          "smtlib decode does",
                          description="Write OUT/moses.ini and OUT/phrase-table.gz (the model's phrase tables "
                                      "merged into one, as smtlib decode merges them) for Moses and moses2 "
                                      "(run them with -b 0: no beam threshold, as smtlib decode).")
    p.add_argument("--model", required=True, help="model directory (or its model.yaml)")
    p.add_argument("--out", required=True, help="directory for moses.ini and phrase-table.gz")
    p.add_argument("--weights", help="smtlib weights file (default: the hand-set defaults, DIR/default.weights)")
    p.add_argument("--copy", action="store_true",
                   help="copy the reordering table and LMs next to moses.ini (default: absolute paths)")
    p.add_argument("--distortion-limit", type=integer_at_least(0), default=6, help="[distortion-limit] (default: 6)")
    p.add_argument("--table-limit", type=integer_at_least(0), default=20,
                   help="options per source phrase, 0 = all (default: 20, as smtlib decode)")


def _add_import_moses_stage(stages: argparse._SubParsersAction) -> None:
    """``import-moses``: a model directory from a Moses system."""
    p = stages.add_parser("import-moses", help="a Moses system (moses.ini, its tables and ARPA LMs) as a model "
                          "directory", description="Write OUT/model.yaml and OUT/default.weights for the Moses system of "
                          "--ini, pointing at its files (or copying them); a merged phrase table of 4*T scores is "
                          "split into T tables. Features smtlib's decoder lacks are refused, by name.")
    p.add_argument("--ini", required=True, help="the moses.ini")
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--copy", action="store_true", help="copy the Moses files into OUT (default: absolute paths)")
    p.add_argument("--src-lang", default="und", help="source language code, for model.yaml (default: und)")
    p.add_argument("--tgt-lang", default="und", help="target language code (default: und)")
    p.add_argument("--lowercase", action="store_true",
                   help="the system was trained on lowercased text: smtlib decode lowercases its input")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One subcommand per stage (in the order a build runs them), then the model-directory commands."""
    stages = parser.add_subparsers(dest="stage", metavar="STAGE")
    stages.required = True
    for add_stage in (_add_build_stage, _add_prepare_stage, _add_align_stage, _add_phrases_stage,
                      _add_reordering_stage, _add_lm_stage, _add_assemble_stage, _add_compile_stage,
                      _add_export_moses_stage, _add_import_moses_stage):
        add_stage(stages)


def _print(data) -> None:
    print(json.dumps(data, indent=2, default=str))


def run(args: argparse.Namespace) -> int:
    from smtlib.system.modeldir import model_directory

    if args.stage == "assemble":
        args.out = model_directory(args.out)
    if args.stage in ("compile", "export-moses"):
        args.model = model_directory(args.model)
    _RUNNERS[args.stage](args)
    return 0


def _run_build(args: argparse.Namespace) -> None:
    from smtlib.system import build as b

    opts = b.BuildOptions(
        src_lang=args.src_lang, tgt_lang=args.tgt_lang, feature_set=args.feature_set, tokenize=args.tokenize,
        lowercase=args.lowercase, max_length=args.max_length, max_ratio=args.max_ratio,
        max_phrase_length=args.max_phrase_length, table_limit=args.table_limit, lm_order=args.lm_order,
        lm1_order=args.lm1_order, lm1_text=args.lm1_text, tm1_symmetrization=args.tm1_symmetrization,
        seed=args.seed, threads=args.threads,
    )
    report = b.build(args.src, args.tgt, args.out, opts, work=args.work,
                     log=lambda msg: print(f"smtlib train: {msg}", file=sys.stderr), compile_model=_compile)
    summary = {name: s["seconds"] for name, s in report["stages"].items()}
    _print({"model": args.out, "seconds": summary, "total_seconds": report["total_seconds"],
            "peak_memory_mib": report["peak_memory_mib"]})


def _run_prepare(args: argparse.Namespace) -> None:
    from smtlib.system import build as b

    files = _work_files(args)
    _print(b.stage_prepare(
        args.src, args.tgt, corpus_src=_file(args, "corpus_src", files, lambda w: w.corpus_src),
        corpus_tgt=_file(args, "corpus_tgt", files, lambda w: w.corpus_tgt),
        prepare_info=_file(args, "prepare_info", files, lambda w: w.prepare_info), src_lang=args.src_lang,
        tgt_lang=args.tgt_lang, tokenize=args.tokenize, lowercase=args.lowercase, max_length=args.max_length,
        max_ratio=args.max_ratio,
    ))


def _run_align(args: argparse.Namespace) -> None:
    from smtlib.system import build as b

    files = _work_files(args)
    aligned = args.aligned or [_file(args, "aligned", files, lambda w, h=h: w.aligned(h)) for h in args.symmetrize]
    if len(aligned) != len(args.symmetrize):
        raise InputError(f"--aligned names {len(aligned)} file(s) for {len(args.symmetrize)} --symmetrize heuristic(s)")
    _print(b.stage_align(
        *_corpus(args, files), forward=_file(args, "forward", files, lambda w: w.forward),
        reverse=_file(args, "reverse", files, lambda w: w.reverse), aligned=dict(zip(args.symmetrize, aligned)),
        align_info=_file(args, "align_info", files, lambda w: w.align_info), seed=args.seed, threads=args.threads,
    ))


def _run_phrases(args: argparse.Namespace) -> None:
    from smtlib.system import build as b

    files, k = _work_files(args), args.index
    reordering = args.reordering_table
    if reordering is None and args.reordering:
        reordering = _file(args, "reordering_table", files, lambda w: w.reordering_table(k))
    _print(b.stage_phrases(
        *_corpus(args, files), _file(args, "aligned", files, lambda w: w.aligned(args.symmetrization)),
        phrase_table=_file(args, "phrase_table", files, lambda w: w.phrase_table(k)),
        phrases_info=_file(args, "phrases_info", files, lambda w: w.phrases_info(k)), reordering_table=reordering,
        symmetrization=args.symmetrization, sparse=args.sparse, max_length=args.max_phrase_length,
        limit=args.table_limit,
    ))


def _run_reordering(args: argparse.Namespace) -> None:
    from smtlib.system import build as b

    files, k = _work_files(args), args.index
    phrases_info = _file(args, "phrases_info", files, lambda w: w.phrases_info(k))
    _print(b.stage_reordering(
        *_corpus(args, files),
        _file(args, "aligned", files, lambda w: w.aligned(b.phrases_symmetrization(phrases_info))), phrases_info,
        reordering_table=_file(args, "reordering_table", files, lambda w: w.reordering_table(k)),
        reordering_info=_file(args, "reordering_info", files, lambda w: w.reordering_info(k)),
    ))


def _run_lm(args: argparse.Namespace) -> None:
    from smtlib.system import build as b

    files, k = _work_files(args), args.index
    source, arpa = _lm_source(args, files), _file(args, "lm", files, lambda w: w.lm(k))
    info = b.stage_lm(lm=arpa, lm_info=_file(args, "lm_info", files, lambda w: w.lm_info(k)), order=args.order,
                      **source)
    if args.check:
        info["check"] = _check_lm(args, source, arpa, _prepare_info(args, files))
    _print(info)


def _run_assemble(args: argparse.Namespace) -> None:
    from smtlib.system import build as b

    files = _work_files(args)
    inputs = b.assemble_inputs(files, args.feature_set) if files is not None else {"align_info": None}
    explicit = {"prepare_info": args.prepare_info, "align_info": args.align_info, "phrase_tables": args.phrase_table,
                "phrases_infos": args.phrases_info, "lms": args.lm, "lm_infos": args.lm_info,
                "reordering_table": args.reordering_table}
    inputs.update({key: value for key, value in explicit.items() if value is not None})
    inputs.setdefault("reordering_table", None)  # the stage says which feature sets need one
    missing = [key for key in explicit if key not in inputs]
    if missing:
        raise InputError("give --work or every input: missing " + ", ".join(
            "--" + {"phrase_tables": "phrase-table", "phrases_infos": "phrases-info", "lms": "lm",
                    "lm_infos": "lm-info"}.get(key, key.replace("_", "-")) for key in missing))
    spec = b.stage_assemble(args.out, feature_set=args.feature_set, count_bins=args.count_bins, **inputs).to_dict()
    _print({**spec, "compiled": _compile(args.out)})


def _run_compile(args: argparse.Namespace) -> None:
    _print(_compile(args.model))


def _run_export_moses(args: argparse.Namespace) -> None:
    from smtlib.system.moses_export import export_moses
    from smtlib.weights import read_weights

    weights = read_weights(args.weights) if args.weights else None
    print(export_moses(args.model, args.out, weights, copy=args.copy, distortion_limit=args.distortion_limit,
                       table_limit=args.table_limit))


def _run_import_moses(args: argparse.Namespace) -> None:
    from smtlib.system.moses_import import import_moses

    _print(import_moses(args.ini, args.out, copy=args.copy, source_lang=args.src_lang,
                        target_lang=args.tgt_lang, lowercase=args.lowercase))


#: what each stage runs (argparse restricts --stage to these)
_RUNNERS = {
    "build": _run_build, "prepare": _run_prepare, "align": _run_align, "phrases": _run_phrases,
    "reordering": _run_reordering, "lm": _run_lm, "assemble": _run_assemble, "compile": _run_compile,
    "export-moses": _run_export_moses, "import-moses": _run_import_moses,
}


def _compile(model_dir) -> dict:
    """Write the model directory's compiled form (see :mod:`smtlib.decoder.compiled`)."""
    from smtlib.decoder.compiled import compile_model

    return compile_model(model_dir)


def _work_files(args: argparse.Namespace):
    """The default names in ``--work`` (None without it)."""
    from smtlib.system.build import WorkFiles

    return WorkFiles(args.work) if args.work else None


def _file(args: argparse.Namespace, dest: str, files, default):
    """The path of option ``dest``: as given, else its default name in ``--work``."""
    value = getattr(args, dest)
    if value is not None:
        return value
    if files is None:
        raise InputError(f"give --{dest.replace('_', '-')} or --work")
    return default(files)


def _corpus(args: argparse.Namespace, files) -> tuple:
    return (_file(args, "corpus_src", files, lambda w: w.corpus_src),
            _file(args, "corpus_tgt", files, lambda w: w.corpus_tgt))


def _prepare_info(args: argparse.Namespace, files):
    """``--prepare-info``, else WORK/prepare.json when it is there (it only says whether to lowercase)."""
    if args.prepare_info is not None:
        return args.prepare_info
    return files.prepare_info if files is not None and files.prepare_info.is_file() else None


def _lm_source(args: argparse.Namespace, files) -> dict:
    """The LM's training text: ``--text`` (lowercased as ``--prepare-info`` says), else the
    prepared target side."""
    if args.text is None:
        return {"corpus_tgt": _file(args, "corpus_tgt", files, lambda w: w.corpus_tgt)}
    if args.corpus_tgt is not None:
        raise InputError("give --corpus-tgt or --text, not both")
    return {"text": args.text, "prepare_info": _prepare_info(args, files), "lowercase": args.lowercase}


def _check_lm(args: argparse.Namespace, source: dict, arpa, prepare_info) -> dict:
    """Perplexity of --check text (lowercased as the training text was): our in-memory estimate vs
    kenlm reading the written ARPA."""
    from smtlib.io import read_lines
    from smtlib.system.build import lm_text
    from smtlib.system.lm import NGramLM, kenlm_perplexity

    text, _ = lm_text(**source)
    lm = NGramLM(text, args.order)
    check = read_lines(args.check, what="check text")
    lowercase = args.lowercase
    if lowercase is None:
        lowercase = bool(json.loads(open(prepare_info, encoding="utf-8").read())["lowercase"]) if prepare_info else False
    if lowercase:
        check = [t.lower() for t in check]
    ours = lm.perplexity(check)
    theirs = kenlm_perplexity(arpa, check)
    return {"perplexity_ours": ours, "perplexity_kenlm": theirs, "relative_difference": abs(ours - theirs) / theirs}
