"""Options shared by several sub-commands (BLEU settings, --set key=value)."""

from __future__ import annotations

import argparse

from smtlib.bleu.stats import REF_LENGTH_RULES, TOKENIZERS, BleuSettings
from smtlib.errors import InputError


def add_bleu_options(parser: argparse.ArgumentParser, *, default_tokenize: str = "none") -> None:
    group = parser.add_argument_group("BLEU")
    group.add_argument(
        "--tokenize",
        default=default_tokenize,
        choices=TOKENIZERS,
        help=f"sacrebleu tokenizer applied to hypotheses and references (default: {default_tokenize})",
    )
    group.add_argument("--lowercase", "-lc", action="store_true", help="lowercase before scoring")
    group.add_argument(
        "--ref-length",
        default="closest",
        choices=REF_LENGTH_RULES,
        help="effective reference length with several references (default: closest, as sacrebleu)",
    )


def bleu_settings(args: argparse.Namespace) -> BleuSettings:
    return BleuSettings(tokenize=args.tokenize, lowercase=args.lowercase, ref_length=args.ref_length)


def parse_assignments(items: list[str] | None, what: str = "--set") -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``."""
    result: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"{what} expects key=value, got {item!r}")
        result[key.strip()] = value.strip()
    return result
