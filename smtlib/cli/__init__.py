"""The ``smtlib`` command: one sub-command per module of :mod:`smtlib.cli`.

Each sub-command module defines ``add_arguments(parser)`` and
``run(args) -> int``. Modules are imported only when their sub-command runs, so ``smtlib --help``
stays fast. Any :class:`~smtlib.errors.InputError` becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import sys

from smtlib import __version__
from smtlib.errors import InputError, TuningError
from smtlib.numpy_startup import defer_until_scipy

#: sub-command name -> (module, one-line help). A new command is one module plus one line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "bleu": ("smtlib.cli.bleu", "corpus BLEU (equal to sacrebleu's) and sentence-level BLEU variants"),
    "score": ("smtlib.cli.score", "corpus or sentence BLEU, chrF, chrF++ or TER, equal to sacrebleu's"),
    "kbest": ("smtlib.cli.kbest", "merge, convert and describe Moses n-best lists"),
    "tune": ("smtlib.cli.tune", "run one optimizer step on a k-best pool"),
    "rerank": ("smtlib.cli.rerank", "the 1-best of each sentence of a k-best pool under given weights"),
    "weights": ("smtlib.cli.weights", "convert weights between smtlib files and moses.ini"),
    "train": ("smtlib.cli.train", "build a phrase-based system from a parallel corpus, stage by stage"),
    "decode": ("smtlib.cli.decode", "translate with a phrase-based model: 1-best, k-best and lattices"),
    "data": ("smtlib.cli.data", "corpora with checksums, dev sub-samples and initial weights for the workflow"),
    "sgd": ("smtlib.cli.sgd", "sharded pairwise-ranking SGD on the training set (Simianer et al. 2012), step by step"),
    "compare": ("smtlib.cli.compare", "compare systems tuned several times: mean, s_sel, s_opt, randomization p (MultEval)"),
    "warmup": ("smtlib.cli.warmup", "compile the numba kernels once for this installation (the workflow's first step)"),
    "report": ("smtlib.cli.report", "tables, companions and figures of the workflow (Cherry & Foster 2012 layout)"),
    "loop": ("smtlib.cli.loop", "a standalone tuning loop around any decoder (mert-moses.pl style), with every tuner"),
}


def available_commands() -> dict[str, tuple[str, str]]:
    """The registered sub-commands whose module is installed (found without importing it)."""
    return {name: spec for name, spec in COMMANDS.items() if importlib.util.find_spec(spec[0]) is not None}


_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``|`([^`]+)`")


def plain_text(doc: str | None) -> str | None:
    """A module docstring as help text: Sphinx roles and literals as plain words
    (``:mod:`smtlib.x``` -> ``smtlib.x``, ``:func:`~a.b.f``` -> ``f``, ````--x```` and ```x``` -> ``--x``, ``x``)."""
    if doc is None:
        return None
    doc = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), doc)
    return _LITERAL.sub(lambda m: m.group(1) or m.group(2), doc)


def build_parser(command: str | None = None, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser; only ``command``'s module is imported (none for the top-level ``--help``).

    A module may define ``prepare_parser(parser, argv)`` to adapt its parser to the command line
    (``smtlib tune METHOD --help`` describes METHOD); it may raise :class:`InputError`.
    """
    parser = argparse.ArgumentParser(
        prog="smtlib",
        description="Tuning statistical machine translation: BLEU, k-best lists, tuners, a phrase-based system.",
    )
    parser.add_argument("--version", action="version", version=f"smtlib {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in available_commands().items():
        if name != command:  # listed by its one-line help; its module is imported only when it runs
            subparsers.add_parser(name, help=help_text, add_help=False)
            continue
        module = importlib.import_module(module_name)
        sub = subparsers.add_parser(
            name, help=help_text, description=plain_text(module.__doc__),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(sub)
        if hasattr(module, "prepare_parser"):
            module.prepare_parser(sub, argv or [])
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``smtlib`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    defer_until_scipy()  # numpy's f2py and testing are not imported with scipy (smtlib.numpy_startup)
    command = next((a for a in argv if not a.startswith("-")), None)
    if command not in COMMANDS:
        command = None
    try:
        parser = build_parser(command, argv)
    except InputError as exc:  # e.g. `smtlib tune METHOD --help` with an unknown METHOD
        print(f"smtlib {command}: error: {exc}", file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return int(exc.code or 0)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2 if args.command is None else 0
    if args.command != "warmup":  # the warm-up says what it compiles itself
        from smtlib.compile_notice import announce_compilation

        announce_compilation()
    if "numba" in sys.modules:  # the command's modules use compiled kernels
        from smtlib.numba_startup import load_numba_implementations

        load_numba_implementations()
    try:
        return int(args._run(args) or 0)
    except InputError as exc:
        print(f"smtlib {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except TuningError as exc:
        print(f"smtlib {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
