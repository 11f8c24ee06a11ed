"""The 1-best of each sentence of a k-best pool under a weight vector.

Prints one line per sentence id from 0 to the largest id in the pool (line i is sentence i; an id
without hypotheses gives an empty line, and a note on stderr counts them). Ties go to the
hypothesis that appears first. The weights' names are checked against the pool
(:func:`smtlib.weights.check_weight_names`). With ``--refs`` the corpus BLEU of the pool's
sentences is printed on stderr with the sentences it covers and its signature
(``BLEU = 13.3009 on 50 sentences of 100 reference lines (nrefs:1|...)``): the pool's sentence ids
choose the reference lines (:func:`smtlib.bleu.references.covered_sentences`), so references may
have more lines than the pool and an id without hypotheses is left out, not scored as an empty
output; an id beyond the references is an error. ``--metric chrf ter`` adds those metrics' scores
on the same sentences, one line each.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from smtlib.bleu.metrics import get_metric
from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import (add_dialect_option, add_refs_prefix_option, bleu_settings, one_best_lines, pool_bleu,
                               pool_metric)
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
    add_refs_prefix_option(parser, pool=True)
    add_dialect_option(parser)
    add_extra_metrics(parser, help="with --refs, also print these metrics' corpus scores (chrf, chrf++, ter)")


def run(args: argparse.Namespace) -> int:
    if args.metric and not args.refs:
        raise InputError("--metric needs --refs")
    references = read_references(args.refs) if args.refs else None
    pool = read_pool(args.kbest, n_sentences=len(references[0]) if references else None, dialect=args.dialect,
                     references=args.refs[0] if args.refs else None)
    pool.cut_sentences(pool.sentences_spanned())  # one output line per id up to the pool's largest
    coverage = pool.coverage(references) if references is not None else None
    weights = read_weights(args.weights)
    check_weight_names(weights, pool.dense_names, sparse_names=pool.sparse_names, what="the k-best pool")
    best = pool.best_indices(pool.weight_vector(weights))
    lines = one_best_lines(pool.texts, best)
    with atomic_output(args.out) as out:
        for line in lines:
            out.write(line + "\n")
    empty = int(np.count_nonzero(best < 0))
    if empty:
        print(f"smtlib rerank: note: {empty} of the {len(lines)} lines written are empty: ids without hypotheses in "
              f"the pool, which its scores leave out (smtlib bleu on the file scores them as empty outputs)",
              file=sys.stderr)
    if coverage is not None:
        settings = bleu_settings(args)
        score = pool_bleu(pool.texts, best, references, coverage, settings)
        print(f"BLEU = {100 * score:.4f} on {coverage} ({BleuSignature(settings, len(references))})", file=sys.stderr)
        for name in args.metric:
            metric = get_metric(name, metric_options(args))
            value = pool_metric(metric, pool.texts, best, references, coverage)
            print(f"{metric.score_name} = {100 * value:.4f} on {coverage} ({metric.signature(len(references))})",
                  file=sys.stderr)
    return 0
