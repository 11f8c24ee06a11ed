"""Options and steps shared by several sub-commands: BLEU settings, the k-best dialect, --set, 1-best BLEU."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.stats import REF_LENGTH_RULES, BleuSettings, tokenizers
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
