"""Build a phrase-based system from a parallel corpus, all at once or stage by stage.

All at once::

    smtlib train build --src train.fr --tgt train.en --src-lang fr --tgt-lang en \\
        --feature-set medium --out models/fr-en-medium [--lm-order 4] [--seed 1] [--threads 2]

Stage by stage (what a workflow runs; every stage reads and writes fixed names in --work)::

    smtlib train prepare  --src F --tgt E --src-lang fr --tgt-lang en --work W
    smtlib train align    --work W --symmetrize grow-diag-final-and union --seed 1
    smtlib train phrases  --work W --index 0 --symmetrization grow-diag-final-and --reordering [--sparse]
    smtlib train phrases  --work W --index 1 --symmetrization union
    smtlib train reordering --work W --index 0      (only if 'phrases --index 0' ran without --reordering)
    smtlib train lm       --work W --index 0 --order 4
    smtlib train lm       --work W --index 1 --order 2
    smtlib train assemble --work W --feature-set medium --out DIR
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


def _feature_set_help() -> str:
    """``small (7 features), medium (18), ...`` from the feature-set table."""
    return ", ".join(f"{fs.name} ({sum(n for _, n in fs.dense_features())}"
                     f"{' + sparse' + (', exact count bins' if fs.count_bins == 'exact' else '') if fs.sparse else ''})"
                     for fs in FEATURE_SETS.values())


_SYM_HELP = "grow-diag-final-and (alias diag-and), grow-diag-final, grow-diag (alias diag), union, intersect"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


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
    p.add_argument("--max-length", type=_positive, default=80,
                   help="drop pairs with a side longer than this many tokens (default: 80, clean-corpus-n)")
    p.add_argument("--max-ratio", type=float, default=9.0,
                   help="drop pairs whose length ratio exceeds this (default: 9, clean-corpus-n)")


def _add_phrase_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-phrase-length", type=_positive, default=7,
                   help="longest phrase on either side, at most 8 (default: 7, as Cherry & Foster)")
    p.add_argument("--table-limit", type=_non_negative, default=100,
                   help="keep the N best targets per source phrase by p(e|f), 0 = all (default: 100)")


def _add_align_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed of eflomal's samplers (default: 0); same seed, same output")
    p.add_argument("--threads", type=_positive, default=2,
                   help="processes for alignment: 2 aligns both directions at once (default: 2); output is the same")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    stages = parser.add_subparsers(dest="stage", metavar="STAGE")
    stages.required = True

    p = stages.add_parser("build", help="run every stage and write a model directory",
                          description="Run every stage and write the model directory --out.")
    _add_corpus_options(p)
    p.add_argument("--feature-set", choices=tuple(FEATURE_SETS), default="medium",
                   help=f"{_feature_set_help()} (default: medium)")
    p.add_argument("--out", required=True, help="model directory to write (model.yaml, tables, LMs)")
    p.add_argument("--work", help="work directory for intermediate files (default: OUT/work)")
    p.add_argument("--lm-order", type=_positive, default=4, help="order of LM0 (default: 4)")
    p.add_argument("--lm1-order", type=_positive, default=2, help="order of LM1, medium/big (default: 2)")
    p.add_argument("--lm1-text", help="train LM1 on this target-language text instead of the target side")
    p.add_argument("--tm1-symmetrization", default="union", help=f"alignment of TM1 (default: union; {_SYM_HELP})")
    _add_phrase_options(p)
    _add_align_options(p)

    p = stages.add_parser("prepare", help="read, tokenize, lowercase and clean a parallel corpus",
                          description="Write WORK/corpus.src, WORK/corpus.tgt and WORK/prepare.json (counts).")
    _add_corpus_options(p)
    p.add_argument("--work", required=True, help="work directory")

    p = stages.add_parser("align", help="eflomal in both directions and symmetrization",
                          description="Write WORK/align.fwd, WORK/align.rev and WORK/aligned.HEURISTIC.")
    p.add_argument("--work", required=True, help="work directory (after prepare)")
    p.add_argument("--symmetrize", nargs="+", default=["grow-diag-final-and", "union"],
                   help=f"heuristics to write (default: grow-diag-final-and union; {_SYM_HELP})")
    _add_align_options(p)

    p = stages.add_parser("phrases", help="extract and score a phrase table",
                          description="Write WORK/phrase-table.K.gz (and WORK/reordering-table.K.gz with --reordering).")
    p.add_argument("--work", required=True, help="work directory (after align)")
    p.add_argument("--index", type=_non_negative, default=0, help="K: 0 for TranslationModel0, 1 for TranslationModel1")
    p.add_argument("--symmetrization", default="grow-diag-final-and", help=f"alignment to extract from ({_SYM_HELP})")
    p.add_argument("--sparse", action="store_true", help="add the big set's sparse features as a sixth field")
    p.add_argument("--reordering", action="store_true", help="also write the msd-bidirectional-fe reordering table")
    _add_phrase_options(p)

    p = stages.add_parser("reordering", help="the msd-bidirectional-fe reordering table of a phrase table",
                          description="Write WORK/reordering-table.K.gz for the pairs of WORK/phrase-table.K.gz.")
    p.add_argument("--work", required=True, help="work directory (after phrases)")
    p.add_argument("--index", type=_non_negative, default=0, help="K of the phrase table (default: 0)")

    p = stages.add_parser("lm", help="an interpolated modified Kneser-Ney n-gram LM as ARPA",
                          description="Write WORK/lm.K.arpa.gz (and, with --check, compare perplexities with kenlm).")
    p.add_argument("--work", required=True, help="work directory")
    p.add_argument("--index", type=_non_negative, default=0, help="K: 0 for LM0, 1 for LM1")
    p.add_argument("--order", type=_positive, default=4, help="n-gram order (default: 4)")
    p.add_argument("--text", help="training text (default: WORK/corpus.tgt)")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=None,
                   help="lowercase --text (default: as the prepared corpus)")
    p.add_argument("--check", metavar="TEXT",
                   help="print the perplexity of TEXT under our estimate and under kenlm reading the ARPA file")

    p = stages.add_parser("assemble", help="collect the components of a feature set into a model directory",
                          description="Write DIR/model.yaml, link the tables and LMs, write DIR/weights.init and "
                                      "DIR/compiled.bin.")
    p.add_argument("--work", required=True, help="work directory with the stages' outputs")
    p.add_argument("--feature-set", choices=tuple(FEATURE_SETS), required=True, help=_feature_set_help())
    p.add_argument("--count-bins", choices=("paper", "exact"),
                   help="sparse sets: the 11 count bins of Table 3 (paper) or one feature per joint count, the "
                        "over-fitting set of Cherry & Foster 2012 §5.1 (exact) (default: the feature set's)")
    p.add_argument("--out", required=True, help="model directory to write")

    p = stages.add_parser("compile", help="write DIR/compiled.bin, the binary model the decoder memory-maps",
                          description="Write DIR/compiled.bin from the text tables and LMs of DIR (what assemble "
                                      "does after collecting them); print its size and counts.")
    p.add_argument("--model", required=True, help="model directory (with model.yaml)")

    p = stages.add_parser("export-moses", help="a Moses system (moses.ini, merged phrase table) that Moses scores as "
                          "smtlib decode does",
                          description="Write OUT/moses.ini and OUT/phrase-table.gz (the model's phrase tables "
                                      "merged into one, as smtlib decode merges them) for Moses and moses2 "
                                      "(run them with -b 0: no beam threshold, as smtlib decode).")
    p.add_argument("--model", required=True, help="model directory")
    p.add_argument("--out", required=True, help="directory for moses.ini and phrase-table.gz")
    p.add_argument("--weights", help="smtlib weights file (default: the hand-set defaults, DIR/weights.init)")
    p.add_argument("--copy", action="store_true",
                   help="copy the reordering table and LMs next to moses.ini (default: absolute paths)")
    p.add_argument("--distortion-limit", type=_non_negative, default=6, help="[distortion-limit] (default: 6)")
    p.add_argument("--table-limit", type=_non_negative, default=20,
                   help="options per source phrase, 0 = all (default: 20, as smtlib decode)")


    p = stages.add_parser("import-moses", help="a Moses system (moses.ini, its tables and ARPA LMs) as a model "
                          "directory", description="Write OUT/model.yaml and OUT/weights.init for the Moses system of "
                          "--ini, pointing at its files (or copying them); a merged phrase table of 4*T scores is "
                          "split into T tables. Features smtlib's decoder lacks are refused, by name.")
    p.add_argument("--ini", required=True, help="the moses.ini")
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--copy", action="store_true", help="copy the Moses files into OUT (default: absolute paths)")
    p.add_argument("--src-lang", default="und", help="source language code, for model.yaml (default: und)")
    p.add_argument("--tgt-lang", default="und", help="target language code (default: und)")
    p.add_argument("--lowercase", action="store_true",
                   help="the system was trained on lowercased text: smtlib decode lowercases its input")


def _print(data) -> None:
    print(json.dumps(data, indent=2, default=str))


def run(args: argparse.Namespace) -> int:
    from smtlib.system import build as b

    stage = args.stage
    if stage == "build":
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
    elif stage == "prepare":
        _print(b.stage_prepare(args.src, args.tgt, args.work, src_lang=args.src_lang, tgt_lang=args.tgt_lang,
                               tokenize=args.tokenize, lowercase=args.lowercase, max_length=args.max_length,
                               max_ratio=args.max_ratio))
    elif stage == "align":
        _print(b.stage_align(args.work, symmetrizations=tuple(args.symmetrize), seed=args.seed, threads=args.threads))
    elif stage == "phrases":
        _print(b.stage_phrases(args.work, index=args.index, symmetrization=args.symmetrization, sparse=args.sparse,
                               reordering=args.reordering, max_length=args.max_phrase_length, limit=args.table_limit))
    elif stage == "reordering":
        _print(b.stage_reordering(args.work, index=args.index))
    elif stage == "lm":
        info = b.stage_lm(args.work, index=args.index, order=args.order, text=args.text, lowercase=args.lowercase)
        if args.check:
            info["check"] = _check_lm(args)
        _print(info)
    elif stage == "assemble":
        spec = b.stage_assemble(args.work, args.out, feature_set=args.feature_set, count_bins=args.count_bins).to_dict()
        _print({**spec, "compiled": _compile(args.out)})
    elif stage == "compile":
        _print(_compile(args.model))
    elif stage == "export-moses":
        from smtlib.system.moses_export import export_moses
        from smtlib.weights import read_weights

        weights = read_weights(args.weights) if args.weights else None
        print(export_moses(args.model, args.out, weights, copy=args.copy, distortion_limit=args.distortion_limit,
                           table_limit=args.table_limit))
    elif stage == "import-moses":
        from smtlib.system.moses_import import import_moses

        _print(import_moses(args.ini, args.out, copy=args.copy, source_lang=args.src_lang,
                            target_lang=args.tgt_lang, lowercase=args.lowercase))
    else:  # argparse restricts the choices
        raise InputError(f"unknown stage {stage!r}")
    return 0


def _compile(model_dir) -> dict:
    """Write the model directory's compiled form (see :mod:`smtlib.decoder.compiled`)."""
    from smtlib.decoder.compiled import compile_model

    return compile_model(model_dir)


def _check_lm(args: argparse.Namespace) -> dict:
    """Perplexity of --check text: our in-memory estimate vs kenlm reading the written ARPA."""
    import pathlib

    from smtlib.io import read_lines
    from smtlib.system.lm import NGramLM, kenlm_perplexity

    work = pathlib.Path(args.work)
    text = read_lines(args.text) if args.text else read_lines(work / "corpus.tgt")
    lowercase = args.lowercase
    if lowercase is None:
        prep = work / "prepare.json"
        lowercase = json.loads(prep.read_text())["lowercase"] if prep.is_file() else False
    if lowercase:
        text = [t.lower() for t in text]
    lm = NGramLM(text, args.order)
    check = read_lines(args.check, what="check text")
    if lowercase:
        check = [t.lower() for t in check]
    ours = lm.perplexity(check)
    theirs = kenlm_perplexity(work / f"lm.{args.index}.arpa.gz", check)
    return {"perplexity_ours": ours, "perplexity_kenlm": theirs, "relative_difference": abs(ours - theirs) / theirs}
