"""A standalone tuning loop around any decoder, in the style of Moses's mert-moses.pl, with every tuner.

  smtlib loop --source dev.fr --refs dev.en --init moses.ini --decoder 'moses -f {ini} -n-best-list {nbest} {k} < {input} > /dev/null'
  smtlib loop --source dev.fr --refs dev.en --init w0.txt --method kbmira --jobs 4 \\
      --decoder 'smtlib decode --model M --weights {weights} --input {input} --kbest {nbest} --k {k} --quiet'

Each iteration decodes the dev set with the current weights, adds the decoder's n-best list to the
pool of the earlier ones, runs one step of METHOD (any of smtlib tune --list) on the pool and
stops when no weight moved by more than --epsilon or after --max-iterations. The decoder command
is run by /bin/sh in the current directory with these placeholders (paths shell-quoted):
{input} the source (without it: on standard input), {nbest} the n-best file to write (without it:
standard output), {k} the n-best size, and the weights as {ini} (a moses.ini rewritten each
iteration; --init must be a moses.ini), {weights} (a weights file) or {weights_args}
(-weight-overwrite 'NAME= v ...' as mert-moses.pl passes them, plus -weight-file F for sparse
weights). {{ and }} are literal braces.

The working directory (--work-dir) has a folder per iteration (itN/: the weights used, the n-best
list, the binary pool, the tuner's info, the scores), curve.tsv (iteration, dev BLEU of the
decoder's 1-best, pool BLEU, test BLEU with --test, seconds), and best.weights / best.moses.ini /
best.json: the weights of the iteration with the best dev score. Rerunning the same command
continues after the last complete iteration; a working directory started with other options is
refused (--jobs, --max-iterations and --quiet may change). See docs/loop.md for recipes (Moses,
smtlib decode, reranking a fixed n-best list).
"""

from __future__ import annotations

import argparse

from smtlib.cli.common import add_bleu_options, bleu_settings, parse_assignments
from smtlib.cli.score import add_metric_settings, metric_options
from smtlib.loop.options import DIALECT_ALIASES, LoopOptions, parse_range
from smtlib.values import integer_at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from smtlib.kbest.format import DIALECTS

    io = parser.add_argument_group("inputs and outputs")
    io.add_argument("--source", "-s", required=True, metavar="SRC", help="dev set source, one sentence per line")
    io.add_argument("--refs", "-r", required=True, nargs="+", metavar="REF", help="dev set reference file(s)")
    io.add_argument("--init", "-i", required=True, metavar="W",
                    help="initial weights: a weights file (name value per line) or a moses.ini (its [weight] section)")
    io.add_argument("--decoder", "-d", required=True, metavar="COMMAND",
                    help="the decoder command with placeholders {input} {nbest} {k} and {ini}, {weights} or "
                         "{weights_args} (see above)")
    io.add_argument("--work-dir", "-w", default="loop-work", metavar="DIR",
                    help="working directory; rerunning the same command continues it (default: loop-work)")
    io.add_argument("--dialect", choices=(*DIALECTS, *DIALECT_ALIASES),
                    help="the n-best dialect the decoder writes (cdec = joshua's name=value features; default: "
                         "decided from each list's first lines)")
    io.add_argument("--k", type=integer_at_least(1), default=100, metavar="K", help="n-best size, the {k} placeholder (default 100)")
    io.add_argument("--jobs", "-j", type=integer_at_least(1), default=1, metavar="N",
                    help="split the source into N shards decoded at once (their lists are joined with renumbered "
                         "ids: results do not depend on N) (default 1)")
    io.add_argument("--test", metavar="SRC", help="a test source decoded with every iteration's weights (test BLEU "
                                                  "in curve.tsv)")
    io.add_argument("--test-refs", nargs="+", metavar="REF", help="the test set's reference file(s)")
    io.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")

    tuning = parser.add_argument_group("tuning")
    tuning.add_argument("--method", "-m", default="mert", metavar="METHOD",
                        help="the tuner, any of smtlib tune --list (default mert, as mert-moses.pl); lbmert, lbmira "
                             "and mira take their step on the k-best pool")
    tuning.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="a hyper-parameter of METHOD (repeatable; smtlib tune METHOD --help-params lists them)")
    tuning.add_argument("--seed", type=integer_at_least(0), default=0,
                        help="random seed; run r of iteration N uses seed + 1000 (N - 1) + r (default 0)")
    tuning.add_argument("--metric", default="bleu", metavar="METRIC",
                        help="what to tune toward, as smtlib tune: bleu (default), chrf, chrf++, ter or a mixture "
                             "such as bleu:0.5,ter:-0.5; the best iteration is chosen by it too")
    tuning.add_argument("--start-from", metavar="METHOD",
                        help="run METHOD (pro or kbmira) first in every iteration and start the method from its "
                             "weights, as mert-moses.pl --pro-starting-point")
    tuning.add_argument("--start-set", action="append", metavar="KEY=VALUE",
                        help="a hyper-parameter of the --start-from method (repeatable; as --set)")
    tuning.add_argument("--runs", type=integer_at_least(1), default=1, metavar="R",
                        help="optimizer runs per iteration, each with its own seed; their weights are averaged "
                             "feature by feature (default 1)")
    tuning.add_argument("--historic-interpolation", type=float, default=0.0, metavar="A",
                        help="w = A * w_new + (1 - A) * w_prev after every step: A is the share of the newly "
                             "optimized weights, mert-moses.pl's rule (default 0: off)")

    limits = parser.add_argument_group("stopping, pool and constraints")
    limits.add_argument("--max-iterations", type=integer_at_least(1), default=25, metavar="N", help="at most N iterations (default 25)")
    limits.add_argument("--epsilon", type=float, default=1e-5,
                        help="stop when no weight moves by more than this (default 1e-5, as mert-moses.pl)")
    limits.add_argument("--prev-nbest", type=integer_at_least(1), metavar="N",
                        help="the pool holds the n-best lists of the last N iterations only, this one included "
                             "(default: all; mert-moses.pl's --prev-aggregate-nbestlist N-1)")
    limits.add_argument("--fixed", nargs="+", default=[], metavar="NAME",
                        help="features whose weights stay at their initial value: weight names (LM0_0) or dense "
                             "features (TranslationModel0); mert-moses.pl's --activate-features, inverted")
    limits.add_argument("--range", action="append", default=[], metavar="NAME:LO..HI", dest="ranges",
                        help="keep a weight (or every value of a dense feature) within [LO, HI] (repeatable): MERT "
                             "draws its restarts and runs its line searches inside the ranges; every other "
                             "method's weights are clipped to them after its step")
    add_bleu_options(parser)
    add_metric_settings(parser)


def options_from(args: argparse.Namespace) -> LoopOptions:
    """The :class:`LoopOptions` of the command line."""
    return LoopOptions(
        source=args.source, refs=tuple(args.refs), init=args.init, decoder=args.decoder, work_dir=args.work_dir,
        method=args.method, params=parse_assignments(args.set), metric=args.metric,
        metric_options=metric_options(args), bleu=bleu_settings(args), seed=args.seed, dialect=args.dialect,
        k=args.k, jobs=args.jobs, max_iterations=args.max_iterations, epsilon=args.epsilon,
        prev_nbest=args.prev_nbest, fixed=tuple(args.fixed), ranges=tuple(parse_range(r) for r in args.ranges),
        historic_interpolation=args.historic_interpolation, start_from=args.start_from,
        start_params=parse_assignments(args.start_set, "--start-set"), runs=args.runs,
        test=args.test, test_refs=tuple(args.test_refs or ()), quiet=args.quiet,
    )


def run(args: argparse.Namespace) -> int:
    from smtlib.loop.loop import run_loop

    run_loop(options_from(args))
    return 0
