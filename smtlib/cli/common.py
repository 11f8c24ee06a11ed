"""Options and steps shared by several sub-commands: BLEU settings, the decoder's search settings, the k-best
dialect, --set, 1-best BLEU."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence

import numpy as np

from smtlib.bleu.references import REFS_PREFIX_OPTION, references_for_pool
from smtlib.bleu.stats import REF_LENGTH_RULES, BleuSettings, tokenizers
from smtlib.decoder.settings import SEARCHES, search_defaults
from smtlib.errors import InputError

_DEFAULTS = {f.name: f.default for f in dataclasses.fields(BleuSettings)}


def add_bleu_options(parser: argparse.ArgumentParser) -> None:
    """``--tokenize``, ``--lowercase``, ``--ref-length``, with the defaults of :class:`BleuSettings` (the only ones)."""
    group = parser.add_argument_group("BLEU")
    group.add_argument(
        "--tokenize",
        default=_DEFAULTS["tokenize"],
        choices=tokenizers(),
        help=f"sacrebleu tokenizer applied to hypotheses and references (default: {_DEFAULTS['tokenize']})",
    )
    group.add_argument("--lowercase", "-lc", action="store_true", help="lowercase before scoring")
    group.add_argument(
        "--ref-length",
        default=_DEFAULTS["ref_length"],
        choices=REF_LENGTH_RULES,
        help=f"effective reference length with several references (default: {_DEFAULTS['ref_length']}, as sacrebleu)",
    )


def bleu_settings(args: argparse.Namespace) -> BleuSettings:
    return BleuSettings(tokenize=args.tokenize, lowercase=args.lowercase, ref_length=args.ref_length)


def add_refs_prefix_option(parser, n_is: str = "the k-best pool's largest sentence id + 1") -> None:
    """``--refs-prefix``: the one option, in every command that scores a pool, that lets references be longer."""
    parser.add_argument(REFS_PREFIX_OPTION, action="store_true",
                        help=f"score only the first N reference lines, N = {n_is}; without it, references with "
                             "more lines than that are an error")


def pool_references(args: argparse.Namespace, references: Sequence[Sequence[str]], n_sentences: int, *,
                    what: str = "the k-best pool") -> Sequence[Sequence[str]]:
    """The references of a pool of ``n_sentences`` (:func:`~smtlib.bleu.references.references_for_pool`).

    With ``--refs-prefix``, the lines left out are counted on stderr (``smtlib CMD: note: ...``).
    """
    fitted = references_for_pool(references, args.refs, n_sentences, prefix=args.refs_prefix, what=what)
    left_out = len(references[0]) - len(fitted[0])
    if left_out:
        lines = "line" if left_out == 1 else "lines"
        print(f"smtlib {args.command}: note: {REFS_PREFIX_OPTION}: scoring the first {len(fitted[0])} of the "
              f"{len(references[0])} lines of {args.refs[0]} ({left_out} reference {lines} left out)", file=sys.stderr)
    return fitted


def pool_references_function(args: argparse.Namespace, references: Sequence[Sequence[str]], *,
                             what: str = "the k-best pool") -> Callable[[int], Sequence[Sequence[str]]]:
    """:func:`pool_references` as a function of the pool's sentence count, for library calls that
    learn it while reading (``add_kbest``, ``load_lattice_problem``)."""

    def fit(n_sentences: int) -> Sequence[Sequence[str]]:
        return pool_references(args, references, n_sentences, what=what)

    return fit


def add_search_options(parser, who: str = "") -> None:
    """The decoder's search settings (``--stack-size --search --pop-limit --distortion-limit --table-limit``).

    Every command that decodes (``smtlib decode``, ``smtlib tune mira``, ``smtlib sgd pass``) takes the
    same five, so that the workflow's ``decoder_options()`` can be given to any of them; their defaults
    and choices are :class:`~smtlib.decoder.settings.DecoderConfig`'s. ``who`` prefixes the help texts
    (e.g. ``"mira: "``).
    """
    d = search_defaults()
    parser.add_argument("--stack-size", type=int, default=d["stack_size"],
                        help=f"{who}histogram pruning limit, 0 = none (default {d['stack_size']})")
    parser.add_argument("--search", choices=SEARCHES, default=d["search"],
                        help=f"{who}stack: extend every hypothesis by every option; cube: cube pruning "
                             f"(Moses's -search-algorithm 1) (default {d['search']})")
    parser.add_argument("--pop-limit", type=int, default=d["pop_limit"],
                        help=f"{who}with --search cube, hypotheses popped per stack (default {d['pop_limit']})")
    parser.add_argument("--distortion-limit", type=int, default=d["distortion_limit"],
                        help=f"{who}maximum jump, -1 = none (default {d['distortion_limit']})")
    parser.add_argument("--table-limit", type=int, default=d["table_limit"],
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
