"""Distributed pairwise-ranking SGD on the training set (Simianer, Riezler & Dyer 2012), step by step,
for a workflow that runs each shard of each epoch as its own job (``rules/simianer.smk``).

  smtlib sgd shards --corpus-src W/corpus.src --corpus-tgt W/corpus.tgt --seed S \\
      --shard-src S/shard0.src ... --shard-ref S/shard0.ref ... --shard-ids S/shard0.ids ...  # Z shards
  smtlib sgd fold --corpus-src W/corpus.src --corpus-tgt W/corpus.tgt --aligned W/aligned.H ... \\
      --prepare-info W/prepare.json --held-out S/shard0.ids [...] --fold-src F/corpus.src \\
      --fold-tgt F/corpus.tgt --fold-aligned F/aligned.H ... --fold-prepare-info F/prepare.json --fold-info F/fold.json
  smtlib sgd templates --model MEDIUM/model.yaml --groups id ng shape --out DIR/model.yaml  # + rule templates (§3)
  smtlib sgd zero --model MODEL/model.yaml --out ep0.weights  # the zero start (§5.2)
  smtlib sgd pass --model FOLD_MODEL --weights START --input DIR/shard0.src --refs DIR/shard0.ref \\
      --out ep3/shard0.weights --info ep3/shard0.json [--kbest ep3/shard0.kbest.gz] [decoder, BLEU options]
  smtlib sgd mix --algorithm itermixsgd --shard-weights ep3/shard*.weights [--state ep2/mix.json] \\
      --out ep3/weights --next ep3/next.weights --state-out ep3/mix.json [--k K | --k-fraction F]
  smtlib sgd choose --epochs ep1 ep2 ... --out chosen.weights --info chosen.json
  smtlib sgd restore --record RUNS/id/iterselsgd-train/split1 --test-refs test.ref --chosen chosen.json \\
      --test-out test.out --test-bleu test.bleu.json --info restored.json [BLEU options]  # a published run
  smtlib sgd table --run NAME=DIR ... --test-refs REF --out table.tsv [--baseline NAME=DIR ...] [--trials N --seed S]
  smtlib sgd findings --run NAME=DIR ... --test-refs REF --out findings.md [the options of table]
  smtlib sgd plot --run NAME=DIR ... --out epochs.png

One epoch of one shard is ``pass``: Algorithm 1's inner loop over the shard, decoding each sentence
(100-best, distinct) with the weights left by the updates of the sentences before it
(:mod:`smtlib.tuners.sgd_decode`; features the shard never fires keep their value). ``mix`` is the
step between epochs.

The mixing step and the epoch choice are :mod:`smtlib.tuners.sgd_mixing` (with the deviation from the
paper's per-sentence loop), Table 2 and its figure :mod:`smtlib.report.simianer`, the findings of §5.2
:mod:`smtlib.report.simianer_findings`; this module only parses options and writes files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from smtlib.bleu.references import read_references
from smtlib.cli.common import add_bleu_options, add_search_options, bleu_settings, search_options
from smtlib.errors import InputError
from smtlib.io import read_json, write_json
from smtlib.system.modeldir import model_directory
from smtlib.tuners.sgd import PAIR_TESTS, PAPER_K_FRACTION
from smtlib.tuners.sgd_mixing import ALGORITHMS, choose_epoch, mix_epoch
from smtlib.weights import read_weights, write_weights
from smtlib.values import integer_at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser("shards", help="split the prepared training corpus into random shards")
    p.add_argument("--corpus-src", required=True, help="the prepared source side (smtlib train prepare; read)")
    p.add_argument("--corpus-tgt", required=True, help="the prepared target side (read)")
    p.add_argument("--seed", type=integer_at_least(0), default=1, help="random seed of the split (default 1)")
    p.add_argument("--shard-src", nargs="+", required=True, metavar="FILE",
                   help="each shard's source sentences (written; one file per shard, so their number is Z)")
    p.add_argument("--shard-ref", nargs="+", required=True, metavar="FILE",
                   help="each shard's references, in the order of --shard-src (written)")
    p.add_argument("--shard-ids", nargs="+", required=True, metavar="FILE",
                   help="each shard's 0-based corpus line ids, in the order of --shard-src (written)")

    p = sub.add_parser("fold", help="the prepared corpus without the held-out sentences (jackknifing)")
    p.add_argument("--corpus-src", required=True, help="the full prepared source side (read)")
    p.add_argument("--corpus-tgt", required=True, help="the full prepared target side (read)")
    p.add_argument("--aligned", nargs="+", required=True, metavar="FILE",
                   help="the full corpus's symmetrized alignments to carry over (read)")
    p.add_argument("--prepare-info", required=True, help="the full corpus's prepare.json (read)")
    p.add_argument("--held-out", nargs="+", required=True, help="sentence-id files (shard*.ids) left out")
    p.add_argument("--fold-src", required=True, help="the fold's prepared source side (written)")
    p.add_argument("--fold-tgt", required=True, help="the fold's prepared target side (written)")
    p.add_argument("--fold-aligned", nargs="+", required=True, metavar="FILE",
                   help="the fold's lines of each --aligned alignment, in the same order (written)")
    p.add_argument("--fold-prepare-info", required=True, help="the fold's prepare.json (written)")
    p.add_argument("--fold-info", required=True, help="JSON: sentences, held out, kept (written)")

    p = sub.add_parser("templates", help="a medium model + the rule templates of Simianer et al. (2012), §3")
    p.add_argument("--model", required=True, type=model_directory, help="the medium model (its directory or model.yaml)")
    p.add_argument("--groups", nargs="+", required=True, choices=("id", "ng", "shape"))
    p.add_argument("--out", required=True, type=model_directory,
                   help="the model to write (its directory or model.yaml): model.yaml, default.weights, compiled.bin, "
                        "TranslationModel0's table with the templates; the other tables and LMs are linked")

    p = sub.add_parser("zero", help="the zero weight vector of a model (the paper's start, §5.2)")
    p.add_argument("--model", required=True, type=model_directory, help="model directory or its model.yaml")
    p.add_argument("--out", required=True)

    p = sub.add_parser("pass", help="one epoch of one shard: decode each sentence with the current weights, update")
    p.add_argument("--model", required=True, help="model directory or its model.yaml (a training shard: its jackknife fold's model)")
    p.add_argument("--weights", required=True, help="the weights the shard starts the epoch from")
    p.add_argument("--input", required=True, help="the shard's source sentences")
    p.add_argument("--refs", nargs="+", required=True, help="reference file(s), one line per source sentence")
    p.add_argument("--out", required=True, help="the shard's weights after the pass")
    p.add_argument("--info", required=True, help="JSON: pairs, violated pairs, 1-best sentence BLEU, CPU seconds")
    p.add_argument("--kbest", help="also write every sentence's k-best list as decoded (.gz compresses)")
    p.add_argument("--eta", type=float, default=1e-4, help="learning rate (default 1e-4, §5.2)")
    p.add_argument("--margin", type=float, default=0.0, help="also update correct pairs closer than this (default 0)")
    p.add_argument("--hi-lo", type=float, default=0.1, help="size of the HI and LOW levels (default 0.1, §5.1)")
    p.add_argument("--sentence-bleu", default="liang-interpolated", help="smoothed sentence BLEU (default liang-interpolated)")
    p.add_argument("--pair-test", choices=PAIR_TESTS, default="decoded",
                   help="test every pair against the weights the sentence was decoded with (decoded, cdec dtrain) "
                   "or against the weights after the previous pair (current, the pseudo-code)")
    p.add_argument("--k", type=integer_at_least(1), default=100, help="k-best list size (default 100, distinct)")
    add_search_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_bleu_options(p)

    p = sub.add_parser("mix", help="mix (and select) the shards' weights after an epoch")
    p.add_argument("--algorithm", required=True, choices=ALGORITHMS)
    p.add_argument("--shard-weights", nargs="+", required=True, help="each shard's weights after the epoch")
    p.add_argument("--state", help="the previous epoch's mix.json (none after epoch 1)")
    p.add_argument("--out", required=True, help="the vector the algorithm returns after this epoch")
    p.add_argument("--next", required=True, help="the vector the next epoch's shards start from")
    p.add_argument("--state-out", required=True, help="this epoch's mix.json")
    p.add_argument("--k", type=integer_at_least(0), default=0, help="iterselsgd: features kept (0: from --k-fraction)")
    p.add_argument("--k-fraction", type=float, default=PAPER_K_FRACTION,
                   help=f"iterselsgd: share of the features kept when --k is 0 (default {PAPER_K_FRACTION:.5f})")

    p = sub.add_parser("choose", help="the epoch with the best devtest BLEU")
    p.add_argument("--epochs", nargs="+", required=True,
                   help="epoch directories in order (each with weights, mix.json, devtest.bleu.json)")
    p.add_argument("--out", required=True, help="the chosen epoch's weights")
    p.add_argument("--info", required=True, help="JSON: chosen epoch, devtest BLEU per epoch, #features")

    p = sub.add_parser("restore", help="a finished run from its published record (smtlib report publish-simianer)")
    p.add_argument("--record", required=True,
                   help="the run's record directory (chosen.json, test.bleu.json, test.out.gz[, chosen.weights.gz])")
    p.add_argument("--test-refs", required=True, help="the test set's references (the record's BLEU is checked)")
    p.add_argument("--chosen", required=True, help="chosen.json to write (the record's)")
    p.add_argument("--test-out", required=True, help="the test output to write (the record's, decompressed)")
    p.add_argument("--test-bleu", required=True, help="test.bleu.json to write (scored again: must equal the record's)")
    p.add_argument("--info", required=True, help="JSON to write: the record and its weights file")
    add_bleu_options(p)

    p = sub.add_parser("table", help="Table 2 of Simianer et al. (2012) with significance")
    _add_row_options(p)
    p.add_argument("--boot-samples", type=integer_at_least(2), default=1000,
                   help="bootstrap resamples of s_sel for runs with replicas (default 1000)")
    p.add_argument("--out", required=True)

    p = sub.add_parser("findings", help="the findings of Simianer et al. (2012), §5.2, decided on Table 2's runs")
    _add_row_options(p)
    p.add_argument("--out", required=True, help="the findings (Markdown; written)")

    p = sub.add_parser("plot", help="active features and devtest BLEU per epoch: a colour per feature group, a line per algorithm, the chosen epoch circled")
    p.add_argument("--run", nargs="+", required=True, metavar="ALGORITHM:DATA:GROUP=DIR")
    p.add_argument("--out", required=True)


def _add_row_options(p: argparse.ArgumentParser) -> None:
    """The runs of Table 2 and its significance test: the options ``table`` and ``findings`` share."""
    p.add_argument("--run", nargs="+", required=True, metavar="ALGORITHM:DATA:GROUP=DIR",
                   help="run directories (chosen.json, test.bleu.json, test.out); a name given more than once "
                        "has replicas, its first directory is the table's run")
    p.add_argument("--test-refs", required=True, help="test references (for the significance test)")
    p.add_argument("--baseline", nargs="+", default=[], metavar="METHOD:dev:GROUP=DIR",
                   help="batch tuning runs of the tables' workflow on the same system (the paper's MIRA row); "
                        "a name given more than once has replicas")
    p.add_argument("--devtest-name", default="test2016", help="the baselines' devtest set (default test2016)")
    p.add_argument("--test-name", default="test2017", help="the baselines' test set (default test2017)")
    p.add_argument("--trials", type=integer_at_least(1), default=10_000, help="approximate randomization shuffles (default 10000)")
    p.add_argument("--seed", type=integer_at_least(0), default=1)
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    add_bleu_options(p)


def run(args: argparse.Namespace) -> int:
    if args.action == "shards":
        from smtlib.system.jackknife import write_shards

        sizes = write_shards(args.corpus_src, args.corpus_tgt, sources=args.shard_src, references=args.shard_ref,
                             id_files=args.shard_ids, seed=args.seed)
        print(json.dumps({"shards": len(sizes), "sizes": sizes}))
    elif args.action == "fold":
        from smtlib.system.jackknife import FoldFiles, read_ids, write_fold

        held = np.unique(np.concatenate([read_ids(p) for p in args.held_out]))
        out = FoldFiles(args.fold_src, args.fold_tgt, args.fold_aligned, args.fold_prepare_info, args.fold_info)
        print(json.dumps(write_fold(args.corpus_src, args.corpus_tgt, args.aligned, args.prepare_info, held, out)))
    elif args.action == "templates":
        from smtlib.decoder.compiled import SparseOverlay
        from smtlib.system.modeldir import model_directory
        from smtlib.system.sparse import rule_template_model

        overlay = SparseOverlay(model_directory(args.model))
        print(json.dumps(rule_template_model(args.model, args.out, tuple(args.groups), compile_model=overlay.compile,
                                             on_line=overlay.add)))
    elif args.action == "zero":
        from smtlib.system.modeldir import read_model_spec

        spec = read_model_spec(args.model)
        write_weights(args.out, {n: 0.0 for n in spec.dense_weight_names()},
                      header="the zero vector (Simianer et al. 2012, §5.2: started at zero weight vector)")
    elif args.action == "pass":
        from smtlib.decoder.decoder import DecoderConfig
        from smtlib.io import read_lines
        from smtlib.tuners.sgd_decode import decode_pass, stderr_report

        if args.k < 1:
            raise InputError("--k must be at least 1")
        config = DecoderConfig(**search_options(args), k=args.k, distinct=True)
        sources = read_lines(args.input, what="input", allow_empty=True)
        references = read_references(args.refs, source=args.input, source_lines=len(sources))
        from smtlib.system.modeldir import model_directory

        weights, info = decode_pass(model_directory(args.model), dict(read_weights(args.weights)), sources, references,
                                    config=config, settings=bleu_settings(args), eta=args.eta, margin=args.margin,
                                    hi_lo=args.hi_lo, sentence_bleu=args.sentence_bleu, pair_test=args.pair_test,
                                    kbest_out=args.kbest,
                                    report=None if args.quiet else stderr_report("smtlib sgd pass"))
        info["params"] = {"eta": args.eta, "margin": args.margin, "hi_lo": args.hi_lo, "k": args.k,
                          "pair_test": args.pair_test}
        write_weights(args.out, weights, header=f"sgd pass over {len(sources)} sentences, decoding in the loop "
                      f"(Simianer et al. 2012, Algorithm 1): {info['violated_pairs']} of {info['pairs']} pairs violated")
        write_json(args.info, info)
        print(json.dumps({k: info[k] for k in ("sentences", "pairs", "violated_pairs", "onebest_avg_sentence_bleu")}))
    elif args.action == "mix":
        state = read_json(args.state, "mix state") if args.state else None
        weights = [dict(read_weights(p)) for p in args.shard_weights]
        out, nxt, info = mix_epoch(args.algorithm, weights, state, k=args.k, k_fraction=args.k_fraction)
        write_weights(args.out, out, header=f"{args.algorithm} epoch {info['epoch']}: returned vector")
        write_weights(args.next, nxt, header=f"{args.algorithm} epoch {info['epoch']}: next epoch's start")
        write_json(args.state_out, info)
        print(json.dumps({k: v for k, v in info.items() if k != "sum"}))
    elif args.action == "choose":
        epochs = []
        for directory in args.epochs:
            bleu = read_json(os.path.join(directory, "devtest.bleu.json"), "devtest BLEU")["score"]
            mix = read_json(os.path.join(directory, "mix.json"), "mix state")
            epochs.append({"epoch": int(mix["epoch"]), "devtest_bleu": float(bleu),
                           "nonzero_features": int(mix["nonzero_features"]),
                           "features_in_shards": int(mix["features_in_shards"])})
        best = choose_epoch([e["devtest_bleu"] for e in epochs])
        chosen = os.path.join(args.epochs[best - 1], "weights")
        write_weights(args.out, dict(read_weights(chosen)), header=f"epoch {best}, the best devtest BLEU")
        write_json(args.info, {"chosen_epoch": best, "epochs": epochs, "weights": chosen})
        print(json.dumps({"chosen_epoch": best}))
    elif args.action == "restore":
        from smtlib.report.publish_simianer import restore_sgd_run

        info = restore_sgd_run(args.record, args.test_refs, bleu_settings(args), chosen_out=args.chosen,
                               test_out=args.test_out, bleu_out=args.test_bleu, info_out=args.info)
        print(json.dumps(info))
    elif args.action == "table":
        from smtlib.report.simianer import write_table2

        rows = write_table2(args.run, args.test_refs, args.out, trials=args.trials, seed=args.seed, alpha=args.alpha,
                            settings=bleu_settings(args), boot_samples=args.boot_samples, baselines=args.baseline,
                            devtest=args.devtest_name, test=args.test_name)
        print(f"wrote {args.out}: {rows} rows", file=sys.stderr)
    elif args.action == "findings":
        from smtlib.report.simianer_findings import write_findings

        comparisons = write_findings(args.run, args.test_refs, args.out, trials=args.trials, seed=args.seed,
                                     alpha=args.alpha, settings=bleu_settings(args), baselines=args.baseline,
                                     devtest=args.devtest_name, test=args.test_name)
        tested = sum(c.test is not None for c in comparisons)
        print(f"wrote {args.out}: {len(comparisons)} comparisons, {tested} run", file=sys.stderr)
    elif args.action == "plot":
        from smtlib.report.simianer import plot_epochs

        plot_epochs(args.run, args.out)
    return 0
