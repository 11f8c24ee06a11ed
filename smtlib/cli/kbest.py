"""Merge, convert and describe k-best lists (Moses n-best format, plain or gzip).

  smtlib kbest merge --out OUT IN [IN ...]   union per sentence, duplicates (same text and
                                             features) dropped, in first-appearance order
  smtlib kbest convert IN --out OUT          rewrite in the current Moses syntax (``Name= v``);
                                             accepts the old ``name: v`` and Joshua ``name=v`` dialects
  smtlib kbest stats IN [IN ...] [--refs R]  counts, features, and with references the 1-best
                                             and oracle BLEU of the pool (JSON)
"""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np

from smtlib.bleu.corpus import corpus_bleu
from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import add_bleu_options, add_dialect_option, bleu_settings, one_best_lines
from smtlib.kbest.pool import argmax_per_sentence, read_pool, write_pool

HELP = "merge, convert and describe Moses n-best lists"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    merge = sub.add_parser("merge", help="merge and de-duplicate k-best lists per sentence")
    merge.add_argument("inputs", nargs="+", metavar="IN")
    merge.add_argument("--out", "-o", required=True, help="output file (.gz to compress)")
    merge.add_argument("--keep-duplicates", action="store_true", help="concatenate without de-duplication")
    add_dialect_option(merge)
    convert = sub.add_parser("convert", help="rewrite a k-best list in the current Moses syntax")
    convert.add_argument("input", metavar="IN")
    convert.add_argument("--out", "-o", required=True)
    add_dialect_option(convert)
    stats = sub.add_parser("stats", help="describe a k-best pool (JSON)")
    stats.add_argument("inputs", nargs="+", metavar="IN")
    stats.add_argument("--refs", nargs="+", metavar="REF", help="references: adds 1-best (by the file totals) and oracle BLEU")
    add_dialect_option(stats)
    add_bleu_options(stats)


def run(args: argparse.Namespace) -> int:
    if args.action == "merge":
        pool = read_pool(args.inputs, dedup=not args.keep_duplicates, dialect=args.dialect)
        write_pool(pool, args.out)
        return 0
    if args.action == "convert":
        pool = read_pool(args.input, dedup=False, dialect=args.dialect)
        # Old-dialect labels (`d:`) become `d=`; Joshua `name=v` tokens keep their form, since
        # rewriting them as `name= v` would rename single-valued features without `_` to `name_0`.
        pool.groups = tuple(g if g.style == "joshua" else dataclasses.replace(g, style="=") for g in pool.groups)
        write_pool(pool, args.out)
        return 0
    references = read_references(args.refs) if args.refs else None
    pool = read_pool(args.inputs, n_sentences=len(references[0]) if references else None, dialect=args.dialect,
                     references=args.refs[0] if args.refs else None)
    sizes = pool.sizes()
    info = {
        "files": len(args.inputs),
        "sentences": int(np.count_nonzero(sizes)),
        "largest_id": int(np.flatnonzero(sizes)[-1]),
        "hypotheses": pool.n_hypotheses,
        "duplicates_dropped": int(pool.duplicates_dropped),
        "hypotheses_per_sentence": {"min": int(sizes.min()), "mean": float(sizes.mean()), "max": int(sizes.max())},
        "dense_features": pool.dense_names,
        "sparse_features": len(pool.sparse_names),
        "sparse_nonzeros": int(pool.sparse.nnz),
    }
    if references is not None:
        settings = bleu_settings(args)
        stats = pool.compute_stats(references, settings)
        totals = np.where(np.isnan(pool.totals), -np.inf, pool.totals)
        first = argmax_per_sentence(totals, pool.offsets)
        from smtlib.kbest.oracle import oracle_indices

        oracle = oracle_indices(stats, pool.offsets)
        # the BLEU of the lines as `rerank` would write them (an empty line for a sentence without hypotheses)
        info["bleu_1best_by_total"] = 100 * corpus_bleu(one_best_lines(pool.texts, first), references, settings)
        info["bleu_oracle"] = 100 * corpus_bleu(one_best_lines(pool.texts, oracle), references, settings)
        info["signature"] = str(BleuSignature(settings, len(references)))
    print(json.dumps(info, indent=1))
    return 0
