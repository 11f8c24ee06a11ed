"""Run one optimizer step on a k-best pool and write the new weights.

  smtlib tune METHOD --kbest K [K ...] --refs REF [REF ...] --init W --out W [--seed N] [--set key=value ...]
  smtlib tune METHOD --pool POOL --refs REF [REF ...] --init W --out W ...
  smtlib tune --list

Lattice tuners (lbmert, lbmira) read ``--lattice`` files instead, online MIRA (mira) decodes with
``--model``/``--source``: see :mod:`smtlib.cli.tune_lattice`.

The k-best files are merged (duplicates dropped), BLEU statistics are computed against the
references (``--tokenize``/``--lowercase``/``--ref-length``); a binary pool (``--pool``, written by
``smtlib kbest add``; also accepted as the one ``--kbest`` file) already holds them, computed against
the same references and settings (else an error). References must have one line per sentence of
the pool (its largest id + 1); ``--refs-prefix`` scores only their first lines instead of failing on
more (:func:`smtlib.bleu.references.references_for_pool`). METHOD's ``fit`` starts from the
``--init`` weights (features absent from the file start at 0). Features of ``--init`` that the
pool does not have (sparse features that did not fire) are written back unchanged; the names of
``--init`` are checked against the pool (:func:`smtlib.weights.check_weight_names`).
``smtlib tune METHOD --help`` describes METHOD: its summary, its hyper-parameters with their defaults
(``--help-params`` lists only these) and the options it requires; an unknown METHOD is an error
with "did you mean".
``--jobs N`` runs lbmert's climbs on N threads (the other tuners ignore it; results never depend on it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli import tune_lattice
from smtlib.cli.common import (
    add_bleu_options,
    add_dialect_option,
    add_refs_prefix_option,
    bleu_settings,
    one_best_lines,
    parse_assignments,
    pool_references,
)
from smtlib.cli.score import add_ter_options, metric_options
from smtlib.errors import InputError
from smtlib.progress import command_progress
from smtlib.tuners.registry import check_metric, get_tuner_class, input_kind, list_tuners, metrics, summary
from smtlib.weights import check_weight_names, read_weights, write_weights

if TYPE_CHECKING:
    from smtlib.kbest.pool import KBestPool

# the k-best reader and BLEU scorer (numba, scipy, pandas) are imported in the functions that use
# them, so `smtlib tune --list` and `--help-params` start in a fraction of a second


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("method", nargs="?", help="tuning method (see --list)")
    parser.add_argument("--list", action="store_true", help="list the methods and exit")
    parser.add_argument("--help-params", action="store_true", help="list METHOD's hyper-parameters and exit")
    parser.add_argument("--kbest", "-k", nargs="+", metavar="K", help="k-best file(s), merged")
    parser.add_argument("--pool", metavar="POOL", help="a binary pool with BLEU statistics (smtlib kbest add), instead of --kbest")
    parser.add_argument("--refs", "-r", nargs="+", metavar="REF", help="reference files")
    add_refs_prefix_option(parser, "the largest sentence id + 1 of the k-best pool or lattices (mira: the source's lines)")
    parser.add_argument("--init", "-i", metavar="W", help="initial weights file")
    parser.add_argument("--out", "-o", metavar="W", help="output weights file")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="set a hyper-parameter (repeatable)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="threads for the tuners that use them (lbmert: its climbs, current weights and random "
                             "restarts, run in parallel); results do not depend on it (default 1)")
    parser.add_argument("--info", help="write a JSON file with the tuner's figures (training BLEU, ...)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress lines (epoch/iteration/restart and objective, at most one a second) on stderr")
    parser.add_argument("--metric", default="bleu", metavar="METRIC",
                        help="what to tune toward (issue 25): bleu (default), chrf, chrf++, ter, or a weighted "
                             "mixture NAME:WEIGHT,... such as bleu:0.5,ter:-0.5 (Moses's interpolated scorer; TER "
                             "takes a negative weight); smtlib tune --list shows which methods take which")
    add_dialect_option(parser)
    add_bleu_options(parser)
    add_ter_options(parser)
    tune_lattice.add_arguments(parser)


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
    """``smtlib tune METHOD --help``: METHOD's summary and settings with their defaults, its required
    options as required in the usage, only the options that apply to it, as plain text.

    Raises
    ------
    InputError
        For an unknown METHOD (with "did you mean").
    """
    method = _method_in(parser, argv)
    if method is None:
        return
    kind = input_kind(method)  # an unknown method: InputError with "did you mean"
    required = tune_lattice.REQUIRED[kind]
    forms = [" ".join(_usage_of(parser, d) for d in required)]
    if kind == "kbest":
        forms = [f"({_usage_of(parser, 'kbest')} | {_usage_of(parser, 'pool')}) {forms[0]}"]
    elif kind == "lattice":
        forms[0] += f" [{_usage_of(parser, 'kbest')}] [--paths-out PATHS]"
    else:
        forms.append("--mix SHARD_JSON [SHARD_JSON ...] --out W [--state STATE] [--mixed-out W] [--state-out STATE]")
    parser.usage = "\n       ".join(f"smtlib tune {method} {form} [options]" for form in forms)
    hidden = {"kbest": {*tune_lattice.ONLINE_ONLY, "lattice", "paths_out"},
              "lattice": {*tune_lattice.ONLINE_ONLY, "pool", "dialect"},
              "online": {"kbest", "pool", "lattice", "paths_out", "dialect", "jobs"}}[kind]
    for action in parser._actions:
        if action.dest in hidden:
            action.help = argparse.SUPPRESS
        elif action.dest in required:
            action.help += " (required)" if kind != "online" or action.dest == "out" else " (required without --mix)"
    if kind == "lattice":
        next(a for a in parser._actions if a.dest == "kbest").help = \
            "the paths earlier iterations aggregated (their --paths-out), merged"
    if kind == "kbest":
        for dest in ("kbest", "pool"):
            action = next(a for a in parser._actions if a.dest == dest)
            action.help = f"{action.help} (required: --kbest or --pool)"
    cls = get_tuner_class(method)
    settings = "\n".join(f"  {key}={value}" for key, value in cls.defaults.items()) or "  (none)"
    reads = {"kbest": "a k-best pool (--kbest files or a binary --pool) and its references",
             "lattice": "this iteration's lattices (--lattice), earlier iterations' paths (--kbest) and the references",
             "online": "the model and the dev source (--model, --source); decodes in the loop"}[kind]
    takes = metrics(method)
    takes_text = f"{', '.join(takes)} and their mixtures" if len(takes) > 1 else f"{takes[0]} only"
    parser.description = (f"{method}: {summary(method)}\n\nReads {reads}.\nTunes toward (--metric): {takes_text}.\n\n"
                          f"Settings (--set KEY=VALUE; also smtlib tune {method} --help-params), with their defaults:\n"
                          f"{settings}")


def _read_pool(args: argparse.Namespace, references, settings) -> tuple[KBestPool, Sequence[Sequence[str]]]:
    """The binary pool (--pool, or one --kbest file in the binary format) or the merged text lists,
    with the references of its sentences (:func:`smtlib.cli.common.pool_references`, ``--refs-prefix``)."""
    from smtlib.kbest.pool import read_pool
    from smtlib.kbest.store import checked_pool, is_pool_file, read_stored

    if args.pool or (len(args.kbest) == 1 and is_pool_file(args.kbest[0])):
        path = args.pool or args.kbest[0]
        stored = read_stored(path)
        references = pool_references(args, references, stored.sentences_spanned())
        return checked_pool(stored, path, references, settings), references
    pool = read_pool(args.kbest, n_sentences=len(references[0]), dialect=args.dialect, references=args.refs[0])
    references = pool_references(args, references, pool.sentences_spanned())
    pool.cut_sentences(len(references[0]))
    pool.compute_stats(references, settings)
    return pool, references


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
    if input_kind(args.method) != "kbest":  # lattice tuners, online MIRA
        return tune_lattice.run(cls, args)
    for option in tune_lattice.REQUIRED["kbest"]:
        if not getattr(args, option):
            raise InputError(f"--{option} is required")
    if bool(args.kbest) == bool(args.pool):
        raise InputError("give either --kbest or --pool")
    tuner = cls(seed=args.seed, **parse_assignments(args.set))
    tuner.progress = command_progress(f"smtlib tune {args.method}", args.quiet)
    tuner.step = f"the step writing {args.out}"
    from smtlib.bleu.corpus import corpus_bleu

    references = read_references(args.refs)
    settings = bleu_settings(args)
    pool, references = _read_pool(args, references, settings)
    init_weights = read_weights(args.init)
    check_weight_names(init_weights, pool.dense_names, sparse_names=pool.sparse_names, what="the k-best pool")
    init = pool.weight_vector(init_weights)
    metric = None if mixture.is_bleu else tuner.corpus_metric(mixture, pool.metric_stats(mixture, references))
    result = tuner(pool, init, metric)
    out = dict(zip(pool.feature_names, map(float, result.weights), strict=True))
    for name, value in init_weights.items():
        out.setdefault(name, value)
    # the BLEU of the lines `smtlib rerank` would write (an empty line for a sentence without hypotheses)
    before = corpus_bleu(one_best_lines(pool.texts, pool.best_indices(init)), references, settings)
    after = corpus_bleu(one_best_lines(pool.texts, pool.best_indices(result.weights)), references, settings)
    info = {"method": args.method, "seed": args.seed, "params": tuner.params, "pool_bleu_init": 100 * before,
            "pool_bleu_out": 100 * after, "hypotheses": pool.n_hypotheses, **result.info}
    header = f"smtlib tune {args.method} seed={args.seed} pool BLEU {100 * before:.2f} -> {100 * after:.2f} ({BleuSignature(settings, len(references))})"
    if not mixture.is_bleu:
        header += f"; tuned toward {mixture.text}:" + _metric_report(mixture, pool, init, result.weights, references, info)
    write_weights(args.out, out, header=header)
    if args.info:
        from smtlib.io import atomic_output

        with atomic_output(args.info) as fh:
            json.dump(info, fh, indent=1, default=str)
    print(header, file=sys.stderr)
    return 0


def _metric_report(mixture, pool: KBestPool, init, weights, references, info: dict) -> str:
    """The 1-best pool score of each metric of ``mixture`` before and after (sacrebleu's, on the lines
    ``smtlib rerank`` would write), added to ``info``; the text for the header line."""
    import numpy as np

    texts = [one_best_lines(pool.texts, pool.best_indices(w)) for w in (init, weights)]
    ids = np.arange(len(references[0]))
    parts = []
    for metric, _ in mixture.parts:
        before, after = (100 * metric.corpus(metric.stats(t, ids, references)) for t in texts)
        info[f"pool_{metric.name}_init"], info[f"pool_{metric.name}_out"] = before, after
        parts.append(f" pool {metric.label} {before:.2f} -> {after:.2f} ({metric.signature(len(references))})")
    return ";".join(parts)
