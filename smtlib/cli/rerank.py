"""The 1-best of each sentence of a k-best pool under a weight vector.

Prints one line per sentence id from 0 to the largest id in the pool (line i is sentence i; an id
without hypotheses gives an empty line). References with more lines than that are an error, unless
``--refs-prefix`` asks to score their first lines only (the lines left out are counted on stderr). Ties go to
the hypothesis that appears first. The weights' names are checked against the pool
(:func:`smtlib.weights.check_weight_names`). With ``--refs`` the corpus BLEU of exactly the lines
written is printed on stderr with its signature: the number ``smtlib bleu`` gives on the output;
``--metric chrf ter`` adds those metrics' scores (``smtlib score``'s numbers), one line each.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from smtlib.bleu.corpus import corpus_bleu
from smtlib.bleu.metrics import get_metric
from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import (add_dialect_option, add_refs_prefix_option, bleu_settings, one_best_lines,
                               pool_references)
from smtlib.cli.score import add_extra_metrics, metric_options
from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.kbest.pool import read_pool
from smtlib.weights import check_weight_names, read_weights


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kbest", "-k", nargs="+", required=True, help="k-best file(s); several are merged")
    parser.add_argument("--weights", "-w", required=True, help="weights file")
    parser.add_argument("--out", "-o", default="-", help="output file (default: stdout)")
    parser.add_argument("--refs", nargs="+", help="references: print the corpus BLEU of the 1-best on stderr")
    add_refs_prefix_option(parser)
    add_dialect_option(parser)
    add_extra_metrics(parser, help="with --refs, also print these metrics' corpus scores (chrf, chrf++, ter)")


def run(args: argparse.Namespace) -> int:
    if args.metric and not args.refs:
        raise InputError("--metric needs --refs")
    references = read_references(args.refs) if args.refs else None
    pool = read_pool(args.kbest, n_sentences=len(references[0]) if references else None, dialect=args.dialect,
                     references=args.refs[0] if args.refs else None)
    if references is not None:
        references = pool_references(args, references, pool.sentences_spanned())
        pool.cut_sentences(len(references[0]))
    weights = read_weights(args.weights)
    check_weight_names(weights, pool.dense_names, sparse_names=pool.sparse_names, what="the k-best pool")
    lines = one_best_lines(pool.texts, pool.best_indices(pool.weight_vector(weights)))
    with atomic_output(args.out) as out:
        for line in lines:
            out.write(line + "\n")
    if references is not None:
        settings = bleu_settings(args)
        score = corpus_bleu(lines, references, settings)
        print(f"BLEU = {100 * score:.4f} ({BleuSignature(settings, len(references))})", file=sys.stderr)
        ids = np.arange(len(lines))
        for name in args.metric:
            metric = get_metric(name, metric_options(args))
            value = metric.corpus(metric.stats(lines, ids, references))
            print(f"{metric.score_name} = {100 * value:.4f} ({metric.signature(len(references))})", file=sys.stderr)
    return 0
