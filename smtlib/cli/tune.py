"""Run one optimizer step and write the new weights.

  smtlib tune METHOD --kbest K [K ...] --refs REF [REF ...] --init W --out W [--seed N] [--set key=value ...]
  smtlib tune METHOD --pool POOL --refs REF [REF ...] --init W --out W ...
  smtlib tune lbmert|lbmira --lattice L [L ...] [--kbest PATHS ...] --refs REF ... --init W --out W [--paths-out P]
  smtlib tune mira --model M --source SRC --refs REF ... --init W --out W [--shard I] (or --mix ...)
  smtlib tune --list

What METHOD reads (the registry's input kind, :func:`smtlib.tuners.registry.input_kind`) decides
its options and its run: a k-best pool (:mod:`smtlib.cli.tune_kbest`), lattices
(:mod:`smtlib.cli.tune_lattice`) or the decoder itself (online MIRA, :mod:`smtlib.cli.tune_online`);
each of those modules adds its own options, and ``smtlib tune METHOD --help`` shows METHOD's summary,
its hyper-parameters with their defaults (``--help-params`` lists only these), the options it
requires and only the options that apply to it. Common to every kind: the references, the initial
and output weights, the seed, ``--set``, ``--info``, ``--quiet``, ``--metric`` and the BLEU options.
An unknown METHOD is an error with "did you mean".
"""

from __future__ import annotations

import argparse
import importlib

from smtlib.bleu.references import REFS_PREFIX_OPTION
from smtlib.cli.common import add_bleu_options, parse_assignments
from smtlib.cli.score import add_metric_settings, metric_options
from smtlib.errors import InputError
from smtlib.progress import command_progress
from smtlib.tuners.registry import INPUT_KINDS, check_metric, get_tuner_class, input_kind, list_tuners, metrics, summary
from smtlib.values import integer_at_least

# the k-best reader and BLEU scorer (numba, scipy, pandas) are imported in the functions that use
# them, so `smtlib tune --list` and `--help-params` start in a fraction of a second

#: input kind -> the module with its options and its run (``add_arguments``, ``REQUIRED``, ``READS``,
#: ``REFS_PREFIX``, ``usage_forms``, ``run``); a test checks that it names every kind of the registry
KIND_MODULES = {"kbest": "smtlib.cli.tune_kbest", "lattice": "smtlib.cli.tune_lattice", "online": "smtlib.cli.tune_online"}


#: ``--refs-prefix``'s help before METHOD's kind is known (each kind module's ``REFS_PREFIX`` after)
_ANY_KIND_REFS_PREFIX = ("mira: score the first lines of references longer than --source (default: an error); "
                         "k-best and lattice methods: accepted and without effect, since the sentence ids of the "
                         "pool or lattices choose the reference lines")


def _kind_module(kind: str):
    return importlib.import_module(KIND_MODULES[kind])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every kind takes; :func:`prepare_parser` adds METHOD's kind's own."""
    parser.add_argument("method", nargs="?", help="tuning method (see --list)")
    parser.add_argument("--list", action="store_true", help="list the methods and exit")
    parser.add_argument("--help-params", action="store_true", help="list METHOD's hyper-parameters and exit")
    parser.add_argument("--refs", "-r", nargs="+", metavar="REF", help="reference files")
    parser.add_argument(REFS_PREFIX_OPTION, action="store_true", help=_ANY_KIND_REFS_PREFIX)
    parser.add_argument("--init", "-i", metavar="W", help="initial weights file")
    parser.add_argument("--out", "-o", metavar="W", help="output weights file")
    parser.add_argument("--seed", type=integer_at_least(0), default=0, help="random seed (default 0)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="set a hyper-parameter (repeatable)")
    parser.add_argument("--info", help="write a JSON file with the tuner's figures (training BLEU, ...)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress lines (epoch/iteration/restart and objective, at most one a second) on stderr")
    parser.add_argument("--metric", default="bleu", metavar="METRIC",
                        help="what to tune toward: bleu (default), chrf, chrf++, ter, or a weighted "
                             "mixture NAME:WEIGHT,... such as bleu:0.5,ter:-0.5 (Moses's interpolated scorer; TER "
                             "takes a negative weight); smtlib tune --list shows which methods take which")
    add_bleu_options(parser)
    add_metric_settings(parser)


def _add_every_kind(parser: argparse.ArgumentParser) -> None:
    """Every kind's options, each kind in its group (``smtlib tune --help`` without a METHOD)."""
    for kind in INPUT_KINDS:
        _kind_module(kind).add_arguments(parser)
    kbest = parser._option_string_actions["--kbest"]
    kbest.help = "k-best file(s), merged (lattice tuners: the paths earlier iterations aggregated)"


def _method_in(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The METHOD of ``smtlib tune ... METHOD ...`` in ``argv`` (the first word after ``tune`` that is
    not an option or an option's value), or None."""
    if "tune" not in argv:
        return None
    words = argv[argv.index("tune") + 1:]
    k = 0
    while k < len(words):
        word = words[k]
        if word == "--":
            return words[k + 1] if k + 1 < len(words) else None
        if not word.startswith("-"):
            return word
        action = parser._option_string_actions.get(word.split("=", 1)[0])
        k += 1
        if action is not None and action.nargs != 0 and "=" not in word:
            takes = 1 if action.nargs in (None, "?") else len(words)
            while takes and k < len(words) and not words[k].startswith("-"):
                k, takes = k + 1, takes - 1
    return None


def _usage_of(parser: argparse.ArgumentParser, dest: str) -> str:
    """``--refs REF [REF ...]``: an option as the usage line shows it."""
    action = next(a for a in parser._actions if a.dest == dest)
    metavar = action.metavar or dest.upper()
    values = f"{metavar} [{metavar} ...]" if action.nargs == "+" else metavar
    return f"{action.option_strings[0]} {values}"


def prepare_parser(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Add METHOD's kind's options (every kind's without a METHOD); for ``smtlib tune METHOD --help``,
    METHOD's summary and settings with their defaults and its required options as required in the
    usage, as plain text.

    Raises
    ------
    InputError
        For an unknown METHOD (with "did you mean").
    """
    scan = argparse.ArgumentParser(add_help=False)  # every option, to tell METHOD from option values
    add_arguments(scan)
    _add_every_kind(scan)
    method = _method_in(scan, argv)
    if method is None:
        _add_every_kind(parser)
        return
    kind = input_kind(method)  # an unknown method: InputError with "did you mean"
    module = _kind_module(kind)
    module.add_arguments(parser)
    forms = module.usage_forms(lambda dest: _usage_of(parser, dest))
    parser.usage = "\n       ".join(f"smtlib tune {method} {form} [options]" for form in forms)
    for action in parser._actions:
        if action.dest == "refs_prefix":
            action.help = module.REFS_PREFIX
        if action.dest in module.REQUIRED:
            action.help += " (required)" if kind != "online" or action.dest == "out" else " (required without --mix)"
    cls = get_tuner_class(method)
    settings = "\n".join(f"  {key}={value}" for key, value in cls.defaults.items()) or "  (none)"
    takes = metrics(method)
    takes_text = f"{', '.join(takes)} and their mixtures" if len(takes) > 1 else f"{takes[0]} only"
    parser.description = (f"{method}: {summary(method)}\n\nReads {module.READS}.\nTunes toward (--metric): {takes_text}.\n\n"
                          f"Settings (--set KEY=VALUE; also smtlib tune {method} --help-params), with their defaults:\n"
                          f"{settings}")


def run(args: argparse.Namespace) -> int:
    if args.list:
        for name in list_tuners():
            takes = metrics(name)
            mixtures = " and their mixtures" if len(takes) > 1 else ""
            print(f"{name}\t{summary(name)}\tmetrics: {' '.join(takes)}{mixtures}")
        return 0
    if not args.method:
        raise InputError("a METHOD is required (smtlib tune --list names them)")
    cls = get_tuner_class(args.method)
    if args.help_params:
        for key, value in cls.defaults.items():
            print(f"{key}={value}")
        return 0
    from smtlib.bleu.metrics import parse_mixture

    mixture = parse_mixture(args.metric, metric_options(args))
    check_metric(args.method, mixture.names)
    if any(getattr(m.settings, "eps_smoothing", False) for m, _ in mixture.parts):
        raise InputError("--chrf-eps-smoothing: the tuners optimise chrF with effective-order averaging (sacrebleu's "
                         "default); score with it in smtlib score, rerank or kbest stats")
    tuner = cls(seed=args.seed, **parse_assignments(args.set))
    tuner.progress = command_progress(f"smtlib tune {args.method}", args.quiet)
    tuner.step = f"the step writing {args.out}"
    return _kind_module(input_kind(args.method)).run(tuner, args, mixture)
