"""Corpus BLEU equal to sacrebleu's, or one sentence-level BLEU variant per line.

Corpus mode prints a JSON object with ``score`` (0-100), a ``signature`` and the sentences it
covers (``sentences`` of ``reference_lines``); ``--score-only`` prints the number alone. Line i of
the hypotheses is scored against line i of the references: a file with fewer lines than the
references is an error unless ``--refs-prefix`` asks to score the references' first lines (then a
note on stderr counts them). ``--bleu-max-ngram-order`` is sacrebleu's ``max_ngram_order`` (1-6;
4); the statistics and the signature (``ngram:N``) follow it. ``--sentence --variant NAME`` prints
one score per hypothesis line, and a signature line on stderr. Hypotheses come from ``--hyps
FILE`` or standard input. Defaults are the project's, the same in every command
(``smtlib.bleu.stats.BleuSettings``: sacrebleu's own defaults, ``--tokenize 13a``, case-sensitive,
closest reference length, ``exp`` smoothing), so corpus BLEU equals sacrebleu's with the same
options, and with none. Pre-tokenized MT output is usually scored
with ``--tokenize none`` (as the workflow does).

Examples::

    smtlib bleu --refs ref.en --hyps out.en --tokenize 13a
    smtlib bleu --refs ref.en --hyps out.en --lowercase --score-only
    smtlib bleu --refs ref.en --hyps out.en --sentence --variant moses-smoothed --param bp_smooth=true
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from smtlib.bleu.corpus import SMOOTH_DEFAULTS, bleu_from_stats
from smtlib.bleu.report import corpus_report
from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.bleu.stats import NGRAM_ORDER, compute_stats
from smtlib.bleu.variants import VARIANTS, SacrebleuSentence, get_variant
from smtlib.cli.common import (add_bleu_options, add_refs_prefix_option, bleu_settings, parse_assignments,
                               read_hypothesis_file)
from smtlib.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refs", "-r", nargs="+", metavar="REF", help="reference files (one per reference set)")
    parser.add_argument("--hyps", "-i", default="-", help="hypothesis file, one segment per line (default: stdin)")
    add_refs_prefix_option(parser)
    add_bleu_options(parser, ngram_order=True)
    parser.add_argument("--smooth-method", default="exp", choices=sorted(SMOOTH_DEFAULTS), help="corpus smoothing (default: exp, as sacrebleu)")
    parser.add_argument("--smooth-value", type=float, default=None, help="value for floor / add-k smoothing")
    parser.add_argument("--score-only", "-b", action="store_true", help="print only the score")
    parser.add_argument("--sentence", action="store_true", help="score each line with a sentence-level variant")
    parser.add_argument("--variant", default="bleu+1", help="sentence-level variant (see --list-variants; default bleu+1)")
    parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="a variant parameter, e.g. bp_smooth=true")
    parser.add_argument("--list-variants", action="store_true", help="list the sentence-level variants and exit")


def _list_variants() -> int:
    for name, cls in VARIANTS.items():
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        params = ", ".join(f"{k}={v}" for k, v in cls.defaults.items())
        print(f"{name}\t{doc}" + (f" [{params}]" if params else ""))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.list_variants:
        return _list_variants()
    if not args.refs:
        raise InputError("--refs is required")
    settings = bleu_settings(args)
    references = read_references(args.refs)
    hyps, references, coverage = read_hypothesis_file(args, references)
    if args.sentence:
        variant = get_variant(args.variant, **parse_assignments(args.param, "--param"))
        if settings.max_ngram_order != NGRAM_ORDER and not isinstance(variant, SacrebleuSentence):
            orders = ", ".join(name for name, cls in VARIANTS.items() if issubclass(cls, SacrebleuSentence))
            raise InputError(f"the variant {args.variant} is defined on 4-gram statistics; --bleu-max-ngram-order "
                             f"applies to the variants of any order ({orders})")
    stats = compute_stats(hyps, np.arange(len(hyps)), references, settings)
    if args.sentence:
        scores = variant.score_sequence(stats) if hasattr(variant, "score_sequence") else variant.score(stats)
        out = sys.stdout
        for value in scores:
            out.write(f"{100 * value:.6f}\n" if args.variant != "pseudo-doc" or variant.params["scale"] == "none" else f"{value:.6f}\n")
        print(BleuSignature.for_variant(variant, settings, len(references)), file=sys.stderr)
        return 0
    if args.score_only:
        score = bleu_from_stats(stats.sum(axis=0), smooth_method=args.smooth_method, smooth_value=args.smooth_value)
        print(f"{100 * score:.4f}")
        return 0
    print(json.dumps(corpus_report(stats, settings, len(references), coverage.info(), args.smooth_method,
                                   args.smooth_value), indent=1))
    return 0
