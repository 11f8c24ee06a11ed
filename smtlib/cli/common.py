"""Options and steps shared by several sub-commands: BLEU settings, the decoder's search settings, the k-best
dialect, --set, 1-best BLEU."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.references import REFS_PREFIX_OPTION
from smtlib.bleu.stats import NGRAM_ORDERS, REF_LENGTH_RULES, BleuSettings, TokenizerChoices
from smtlib.decoder.settings import SEARCHES, search_defaults
from smtlib.errors import InputError
from smtlib.values import integer_at_least

_DEFAULTS = {f.name: f.default for f in dataclasses.fields(BleuSettings)}


def add_bleu_options(parser: argparse.ArgumentParser, *, ngram_order: bool = False) -> None:
    """``--tokenize``, ``--lowercase``, ``--ref-length``, with the defaults of :class:`BleuSettings` (the only ones);
    with ``ngram_order``, ``--bleu-max-ngram-order`` too (the commands that only score: the tuners and binary
    pools keep 4-gram statistics)."""
    group = parser.add_argument_group("BLEU")
    group.add_argument(
        "--tokenize",
        default=_DEFAULTS["tokenize"],
        choices=TokenizerChoices(),
        help=f"sacrebleu tokenizer applied to hypotheses and references (default: {_DEFAULTS['tokenize']})",
    )
    group.add_argument("--lowercase", "-lc", action="store_true", help="lowercase before scoring")
    group.add_argument(
        "--ref-length",
        default=_DEFAULTS["ref_length"],
        choices=REF_LENGTH_RULES,
        help=f"effective reference length with several references (default: {_DEFAULTS['ref_length']}, as sacrebleu)",
    )
    if ngram_order:
        group.add_argument(
            "--bleu-max-ngram-order", type=int, default=_DEFAULTS["max_ngram_order"], metavar="N",
            help=f"largest n-gram order of BLEU, {NGRAM_ORDERS[0]}-{NGRAM_ORDERS[-1]} (sacrebleu's max_ngram_order; "
                 f"default: {_DEFAULTS['max_ngram_order']})")


def bleu_settings(args: argparse.Namespace) -> BleuSettings:
    """The :class:`BleuSettings` of :func:`add_bleu_options`'s options."""
    return BleuSettings(tokenize=args.tokenize, lowercase=args.lowercase, ref_length=args.ref_length,
                        max_ngram_order=getattr(args, "bleu_max_ngram_order", _DEFAULTS["max_ngram_order"]))


def add_refs_prefix_option(parser, *, pool: bool = False) -> None:
    """``--refs-prefix`` (:func:`~smtlib.bleu.references.covered_sentences`): for a file with one
    hypothesis per line, score it against the references' first lines; for a pool (``pool``) it is
    accepted and has no effect, since the pool's sentence ids choose the reference lines."""
    if pool:
        text = ("accepted and without effect here: the sentence ids of the k-best pool (lattices) choose the "
                "reference lines it is scored on, so references may have more lines; it matters for files with one "
                "hypothesis per line (smtlib bleu, score, compare; tune mira's --source)")
    else:
        text = ("score a file with fewer lines than the references against their first lines (default: an error, "
                "since line i of the file is scored against reference line i)")
    parser.add_argument(REFS_PREFIX_OPTION, action="store_true", help=text)


def read_hypothesis_file(args: argparse.Namespace, references: Sequence[Sequence[str]]):
    """``args.hyps`` (line i is sentence i) and the references of the lines it covers
    (:func:`~smtlib.bleu.references.covered_sentences`, ``--refs-prefix``), with a note on stderr
    when that is not every reference line: ``(hypotheses, references, coverage)``."""
    from smtlib.bleu.references import covered_sentences, read_segments

    hyps = read_segments(args.hyps, what="hypothesis file", allow_empty=True)
    coverage = covered_sentences(range(len(hyps)), references, what="the hypothesis file", path=args.hyps, lines=True,
                                 prefix=args.refs_prefix)
    if not coverage.complete:
        print(f"smtlib {args.command}: note: scoring {coverage} ({REFS_PREFIX_OPTION})", file=sys.stderr)
    return hyps, coverage.references(references), coverage


def add_search_options(parser, who: str = "") -> None:
    """The decoder's search settings (``--stack-size --search --pop-limit --distortion-limit --table-limit``).

    Every command that decodes (``smtlib decode``, ``smtlib tune mira``, ``smtlib sgd pass``) takes the
    same five, so that the workflow's ``decoder_options()`` can be given to any of them; their defaults
    and choices are :class:`~smtlib.decoder.settings.DecoderConfig`'s. ``who`` prefixes the help texts
    (e.g. ``"mira: "``).
    """
    d = search_defaults()
    parser.add_argument("--stack-size", type=integer_at_least(0), default=d["stack_size"],
                        help=f"{who}histogram pruning limit, 0 = none (default {d['stack_size']})")
    parser.add_argument("--search", choices=SEARCHES, default=d["search"],
                        help=f"{who}stack: extend every hypothesis by every option; cube: cube pruning "
                             f"(Moses's -search-algorithm 1) (default {d['search']})")
    parser.add_argument("--pop-limit", type=integer_at_least(1), default=d["pop_limit"],
                        help=f"{who}with --search cube, hypotheses popped per stack (default {d['pop_limit']})")
    parser.add_argument("--distortion-limit", type=integer_at_least(-1), default=d["distortion_limit"],
                        help=f"{who}maximum jump, -1 = none (default {d['distortion_limit']})")
    parser.add_argument("--table-limit", type=integer_at_least(0), default=d["table_limit"],
                        help=f"{who}options per source phrase, 0 = all (default {d['table_limit']})")


def search_options(args: argparse.Namespace) -> dict:
    """The :class:`~smtlib.decoder.decoder.DecoderConfig` fields of :func:`add_search_options`, checked."""
    if args.stack_size < 0 or args.table_limit < 0:
        raise InputError("--stack-size and --table-limit must be >= 0")
    if args.pop_limit < 1:
        raise InputError(f"--pop-limit must be at least 1, got {args.pop_limit}")
    return {"stack_size": args.stack_size, "distortion_limit": args.distortion_limit,
            "table_limit": args.table_limit, "search": args.search, "pop_limit": args.pop_limit}


def add_dialect_option(parser: argparse.ArgumentParser) -> None:
    """``--dialect``: the k-best dialect of every input file (default: decided per file)."""
    from smtlib.kbest.format import DIALECTS

    parser.add_argument(
        "--dialect",
        choices=DIALECTS,
        help="k-best dialect of every input file (default: decided once per file from its first lines)",
    )


def parse_assignments(items: list[str] | None, what: str = "--set") -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}`` (values are converted by :func:`smtlib.values.convert`)."""
    result: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{what} expects key=value, got {item!r}")
        if key.strip() in result:
            raise InputError(f"{what} {key.strip()} is given twice")
        result[key.strip()] = value.strip()
    return result


def one_best_lines(texts: Sequence[str], rows: np.ndarray) -> list[str]:
    """The lines ``rerank`` writes: the text of each sentence's chosen row, empty where there is none."""
    return [texts[r] if r >= 0 else "" for r in rows]


def pool_bleu(texts: Sequence[str], rows: np.ndarray, references: Sequence[Sequence[str]], coverage,
              settings: BleuSettings) -> float:
    """Corpus BLEU (0-1) of the chosen rows (one per sentence id, -1: none) on the sentences
    ``coverage`` covers (:func:`~smtlib.bleu.references.covered_sentences`): what every command
    prints for a pool."""
    from smtlib.bleu.corpus import corpus_bleu

    return corpus_bleu(coverage.pick(one_best_lines(texts, rows)), coverage.references(references), settings)


def pool_metric(metric, texts: Sequence[str], rows: np.ndarray, references: Sequence[Sequence[str]], coverage) -> float:
    """:func:`pool_bleu` for any metric of :mod:`smtlib.bleu.metrics` (sacrebleu's corpus score, 0-1)."""
    hyps = coverage.pick(one_best_lines(texts, rows))
    return metric.corpus(metric.stats(hyps, np.arange(len(hyps)), coverage.references(references)))
