"""The 1-best of each sentence of a k-best pool under a weight vector.

Prints one line per sentence id from 0 to the largest id in the pool (line i is sentence i; an id
without hypotheses gives an empty line). Ties go to the hypothesis that appears first. With
``--refs`` the corpus BLEU of the result is printed on stderr.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.references import read_references
from smtlib.cli.common import add_bleu_options, bleu_settings
from smtlib.io import atomic_output
from smtlib.kbest.pool import read_pool
from smtlib.weights import read_weights

HELP = "the 1-best of each sentence of a k-best pool under given weights"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kbest", "-k", nargs="+", required=True, help="k-best file(s); several are merged")
    parser.add_argument("--weights", "-w", required=True, help="weights file")
    parser.add_argument("--out", "-o", default="-", help="output file (default: stdout)")
    parser.add_argument("--refs", nargs="+", help="references: print the corpus BLEU of the 1-best on stderr")
    add_bleu_options(parser)


def run(args: argparse.Namespace) -> int:
    pool = read_pool(args.kbest)
    weights = read_weights(args.weights)
    best = pool.best_indices(pool.weight_vector(weights))
    references = None
    if args.refs:
        references = read_references(args.refs)
        pool.pad_sentences(len(references[0]))
        best = pool.best_indices(pool.weight_vector(weights))
    with atomic_output(args.out) as out:
        for row in best:
            out.write((pool.texts[row] if row >= 0 else "") + "\n")
    if references is not None:
        stats = pool.compute_stats(references, bleu_settings(args))
        chosen = best[best >= 0]
        print(f"BLEU = {100 * corpus_bleu_from_stats(stats[chosen]):.4f} ({bleu_settings(args).signature()})", file=sys.stderr)
        _ = np  # numpy used via pool
    return 0
