"""Corpus or sentence scores of any metric, equal to sacrebleu's: BLEU, chrF, chrF++, TER.

The sibling of ``smtlib bleu`` for every metric of :mod:`smtlib.bleu.metrics`, with the same strict
inputs (``--refs`` required, no empty reference line, reference files and the hypothesis file of
equal length, or ``--refs-prefix`` to score a shorter file against the references' first lines)
and sacrebleu's signatures. Corpus mode prints, per metric, a JSON object with
``name`` (sacrebleu's: ``BLEU``, ``chrF2``, ``chrF2++``, ``TER``), ``score`` (0-100),
``signature`` and the sentences it covers (``sentences`` of ``reference_lines``) (a list of them
for several ``--metric``); ``--score-only`` prints the numbers alone,
one per line. ``--sentence`` prints one line per hypothesis, the metrics' sentence scores separated
by tabs, and the signatures on stderr. BLEU's sentence score is sacrebleu's ``sentence_bleu``
(``exp`` smoothing, effective order); ``smtlib bleu --sentence`` has the other variants.

Options are sacrebleu's: ``--tokenize``/``--ref-length``/``--bleu-max-ngram-order`` apply to BLEU,
``--lowercase`` to BLEU and chrF; ``--chrf-char-order``, ``--chrf-word-order`` and ``--chrf-beta``
to chrF (6, 0 and 2 by default; ``chrf++`` is chrF with word order 2): the score's name carries
beta and the word order (``chrF3``, ``chrF2+``), the signature the orders (``nc:4|nw:1``), as
sacrebleu writes them; ``--chrf-keep-whitespace`` (sacrebleu's ``whitespace=True``, ``space:yes``)
and ``--chrf-eps-smoothing`` (``eps_smoothing=True``, ``eff:no``) too; TER
lowercases unless ``--ter-case-sensitive``, as sacrebleu's TER does. ``smtlib tune``, ``smtlib kbest``
and ``smtlib rerank`` take the same chrF and TER options with their ``--metric``.

Examples::

    smtlib score --metric chrf --refs ref.en --hyps out.en
    smtlib score --metric bleu chrf++ ter --refs ref1.en ref2.en --hyps out.en --score-only
    smtlib score --metric ter --refs ref.en --hyps out.en --sentence
    smtlib score --metric chrf --chrf-char-order 4 --chrf-word-order 1 --chrf-beta 3 --refs ref.en --hyps out.en
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from smtlib.bleu.metrics import METRICS, MetricOptions, get_metric
from smtlib.bleu.references import read_references
from smtlib.bleu.chrf import ChrfSettings
from smtlib.bleu.ter import TerSettings
from smtlib.cli.common import add_bleu_options, add_refs_prefix_option, bleu_settings, read_hypothesis_file
from smtlib.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metric", "-m", nargs="+", default=["bleu"], choices=list(METRICS), metavar="METRIC",
                        help=f"one or more of {', '.join(METRICS)} (default: bleu)")
    parser.add_argument("--refs", "-r", nargs="+", metavar="REF", help="reference files (one per reference set)")
    parser.add_argument("--hyps", "-i", default="-", help="hypothesis file, one segment per line (default: stdin)")
    parser.add_argument("--score-only", "-b", action="store_true", help="print only the scores, one per line")
    parser.add_argument("--sentence", action="store_true", help="one line of sentence scores per hypothesis")
    add_refs_prefix_option(parser)
    add_metric_settings(parser)
    add_bleu_options(parser, ngram_order=True)


def add_metric_settings(parser: argparse.ArgumentParser) -> None:
    """sacrebleu's chrF and TER options (``--chrf-beta``, ``--ter-case-sensitive`` ...), with the
    defaults of :class:`ChrfSettings` and :class:`TerSettings` (sacrebleu's)."""
    chrf = ChrfSettings()
    group = parser.add_argument_group("chrF and chrF++ (sacrebleu's options)")
    group.add_argument("--chrf-char-order", "-cc", type=int, default=chrf.char_order, metavar="N",
                       help=f"character n-gram order (default: {chrf.char_order})")
    group.add_argument("--chrf-word-order", "-cw", type=int, metavar="N",
                       help="word n-gram order of chrf (default: 0; chrf++ is chrf with 2)")
    group.add_argument("--chrf-beta", type=int, default=chrf.beta, metavar="B",
                       help=f"weight of recall against precision (default: {chrf.beta})")
    group.add_argument("--chrf-keep-whitespace", action="store_true",
                       help="keep whitespace in the character n-grams (sacrebleu's whitespace=True, signature "
                            "space:yes; default: removed)")
    group.add_argument("--chrf-eps-smoothing", action="store_true",
                       help="chrF++.py's epsilon smoothing: the mean F-score of every order (sacrebleu's "
                            "eps_smoothing=True, signature eff:no; default: effective-order averaging)")
    group = parser.add_argument_group("TER (sacrebleu's options)")
    group.add_argument("--ter-case-sensitive", action="store_true", help="keep case (default: lowercase)")
    group.add_argument("--ter-normalized", action="store_true", help="tercom's normalisation of punctuation")
    group.add_argument("--ter-no-punct", action="store_true", help="remove punctuation")
    group.add_argument("--ter-asian-support", action="store_true", help="CJK handling for the two options above")


def add_extra_metrics(parser: argparse.ArgumentParser, help: str) -> None:
    """``--metric`` (the scores to report beside BLEU), BLEU's options and the other metrics'
    settings: what a command that reports the scores of its output offers."""
    parser.add_argument("--metric", nargs="+", default=[], choices=[m for m in METRICS if m != "bleu"],
                        metavar="METRIC", help=help)
    add_bleu_options(parser, ngram_order=True)
    add_metric_settings(parser)


def metric_options(args: argparse.Namespace) -> MetricOptions:
    """The metrics' settings from the command's options."""
    ter = TerSettings(case_sensitive=args.ter_case_sensitive, normalized=args.ter_normalized,
                      no_punct=args.ter_no_punct, asian_support=args.ter_asian_support)
    return MetricOptions(bleu=bleu_settings(args), lowercase=args.lowercase, ter=ter, chrf_char_order=args.chrf_char_order,
                         chrf_word_order=args.chrf_word_order, chrf_beta=args.chrf_beta,
                         chrf_whitespace=args.chrf_keep_whitespace, chrf_eps_smoothing=args.chrf_eps_smoothing)


def run(args: argparse.Namespace) -> int:
    if not args.refs:
        raise InputError("--refs is required")
    if len(set(args.metric)) != len(args.metric):
        raise InputError(f"--metric names a metric twice: {' '.join(args.metric)}")
    options = metric_options(args)
    metrics = [get_metric(name, options) for name in args.metric]
    references = read_references(args.refs)
    hyps, references, coverage = read_hypothesis_file(args, references)
    ids = np.arange(len(hyps))
    stats = [m.stats(hyps, ids, references) for m in metrics]
    n_refs = len(references)
    if args.sentence:
        columns = [m.sentence(s) for m, s in zip(metrics, stats, strict=True)]
        out = sys.stdout
        for row in zip(*columns, strict=True):
            out.write("\t".join(f"{100 * v:.6f}" for v in row) + "\n")
        for m in metrics:
            print(f"{m.score_name}: {m.signature(n_refs, sentence=True)}", file=sys.stderr)
        return 0
    scores = [m.corpus(s) for m, s in zip(metrics, stats, strict=True)]
    if args.score_only:
        for value in scores:
            print(f"{100 * value:.4f}")
        return 0
    objects = [{"name": m.score_name, "score": round(100 * v, 10), "signature": m.signature(n_refs), **coverage.info()}
               for m, v in zip(metrics, scores, strict=True)]
    print(json.dumps(objects[0] if len(objects) == 1 else objects, indent=1))
    return 0
