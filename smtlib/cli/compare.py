"""Compare systems tuned several times (Clark et al. 2011; MultEval's ``eval``).

Each system is a group of optimizer replicas: the 1-best test outputs (plain or .gz, one line per
reference line; ``--refs-prefix`` scores shorter outputs against the references' first lines) of
separate tuning runs; the output ends with the sentences scored (``scored: 100 sentences of 100
reference lines``). For each system and metric the table gives the mean over replicas, s_sel
(bootstrap standard deviation over test-set resamples, averaged over replicas), s_opt (standard
deviation across replicas) and the p-value of a stratified approximate
randomization test against the baseline over all replicas (replica r of a system paired with
replica r of the baseline), in MultEval's layout and rounding; ``--tsv`` writes the unrounded
numbers, ``--latex`` a LaTeX tabular. The same inputs and ``--seed`` give the same numbers. See
:mod:`smtlib.bleu.replicas` for the definitions and every difference from MultEval.

p-values: ``--ties count`` (default; Riezler & Maxwell 2005) counts shuffles at least as different
as the observed pair, so identical systems get p = 1; ``--ties strict`` is MultEval's and
sacrebleu's convention (only larger differences count: identical systems get 1/(shuffles+1),
printed 0.00).

``--ci`` adds each system's 95 % confidence interval from the paired bootstrap, sacrebleu's
``--paired-bs`` ``μ ± CI`` (the mean of the replica mean over ``--boot-samples`` resamples of the test
sentences, shared by all systems, and the half-width of its 95 % interval), as columns after
MultEval's (text: ``BLEU μ ± 95% CI``; TSV: boot_mean, ci_half, ci_low, ci_high; LaTeX: a last column),
so MultEval's columns keep their places. It covers test-set selection only, not s_opt.
``--correction holm`` corrects the systems' p-values against the baseline together, per metric
(:func:`smtlib.bleu.replicas.holm`); the table then ends with a line saying so, the TSV's p column
is ``p_holm`` followed at the end by ``p_uncorrected``, and the signature ends ``|correction:holm``.
``--all-pairs`` also tests every pair of systems, baseline included (the same test and seed, so a pair
with the baseline has the table's uncorrected p), and prints a p-value matrix per metric, corrected over
all pairs with ``--correction``; ``--pairs-tsv FILE`` writes the pairs as TSV (metric, system_a,
system_b, p, p_uncorrected, correction).

MultEval expects tokenized, lowercased text and does not tokenize; to score as it does, pass
``--tokenize none``.

Example::

    smtlib compare --refs ref.en --tokenize none \\
        --baseline base.opt0 base.opt1 base.opt2 \\
        --system "+sparse=sparse.opt0,sparse.opt1,sparse.opt2" --tsv table.tsv --latex table.tex
"""

from __future__ import annotations

import argparse
import collections

from smtlib.bleu.randomization import TIES
from smtlib.bleu.references import Coverage, covered_sentences, read_references, read_segments
from smtlib.bleu.replicas import (
    CORRECTIONS,
    DEFAULT_METRICS,
    METRICS,
    Layout,
    all_pairs,
    compare_systems,
    correct_p_values,
    format_latex,
    format_pairs_text,
    format_pairs_tsv,
    format_text,
    format_tsv,
)
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import add_bleu_options, add_refs_prefix_option, bleu_settings
from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.values import integer_at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refs", "-r", nargs="+", required=True, metavar="REF", help="reference files (one per reference set)")
    parser.add_argument("--baseline", "-B", nargs="*", default=[], metavar="HYP", help="the baseline's replica outputs")
    parser.add_argument("--baseline-name", default="baseline", help="the baseline's name in the table (default: baseline)")
    parser.add_argument("--system", "-H", action="append", default=[], metavar="NAME=HYP,HYP,...",
                        help="a system's name and its replica outputs, comma-separated, in the baseline's replica order "
                             "(repeat for several systems)")
    parser.add_argument("--metrics", nargs="+", default=list(DEFAULT_METRICS), choices=list(METRICS),
                        help=f"metrics, in table order, of {', '.join(METRICS)} (default: {' '.join(DEFAULT_METRICS)})")
    parser.add_argument("--ar-shuffles", type=integer_at_least(1), default=10_000, help="approximate randomization shuffles (default 10000)")
    parser.add_argument("--boot-samples", type=integer_at_least(1), default=1000, help="bootstrap resamples for s_sel (default 1000)")
    parser.add_argument("--seed", type=integer_at_least(0), default=0, help="seed of the shuffles and resamples (default 0)")
    parser.add_argument("--ties", choices=TIES, default="count",
                        help="p-value convention: count = Riezler & Maxwell (ties count, identical systems p=1; default), "
                             "strict = MultEval and sacrebleu (identical systems p=1/(shuffles+1))")
    parser.add_argument("--ci", action="store_true",
                        help="add each system's 95%% confidence interval from the paired bootstrap (sacrebleu's "
                             "--paired-bs 'mu +- CI', --boot-samples resamples) to the table, --tsv and --latex")
    parser.add_argument("--correction", choices=CORRECTIONS, default="none",
                        help="multiple-testing correction of the p-values, per metric: over the systems' tests "
                             "against the baseline, and with --all-pairs over all pairs (default: none)")
    parser.add_argument("--all-pairs", action="store_true",
                        help="also test every pair of systems (baseline included) and print a p-value matrix per metric")
    parser.add_argument("--pairs-tsv", metavar="FILE", help="with --all-pairs, also write the pairs' p-values as TSV")
    parser.add_argument("--tsv", metavar="FILE", help="also write the unrounded numbers as TSV")
    parser.add_argument("--latex", metavar="FILE", help="also write a LaTeX tabular")
    add_refs_prefix_option(parser)
    add_bleu_options(parser)


def parse_groups(baseline: list[str], baseline_name: str, systems: list[str]) -> dict[str, list[str]]:
    """``{name: replica files}``, the baseline first; empty or repeated names and empty groups are errors."""
    if not baseline:
        raise InputError("--baseline: no replica files given")
    groups = {baseline_name: list(baseline)}
    for item in systems:
        name, sep, files = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"--system expects NAME=HYP,HYP,..., got {item!r}")
        if name in groups:
            raise InputError(f"--system: the name {name!r} is given twice")
        paths = [f for f in files.split(",") if f.strip()]
        if not paths:
            raise InputError(f"--system {name}: no replica files given")
        groups[name] = paths
    sizes = {name: len(paths) for name, paths in groups.items()}
    if len(set(sizes.values())) > 1:
        odd = next(n for n in groups if sizes[n] != sizes[baseline_name])
        raise InputError(f"system {odd!r} has {sizes[odd]} replicas but {baseline_name!r} has {sizes[baseline_name]} "
                         "(replica r of each system is paired with replica r of the baseline)")
    return groups


def read_groups(groups: dict[str, list[str]], refs: list[str], n_ref_lines: int,
                prefix: bool = False) -> tuple[dict[str, list[list[str]]], Coverage]:
    """Every replica file's lines and the sentences they cover; a file whose length differs from the
    others' is an error naming it, and so are files whose length differs from the references'
    (shorter ones are scored against the references' first lines with ``prefix``: ``--refs-prefix``)."""
    texts = {name: [read_segments(p, what="hypothesis file", allow_empty=True) for p in paths]
             for name, paths in groups.items()}
    lengths = {p: len(t) for name, paths in groups.items() for p, t in zip(paths, texts[name], strict=True)}
    ranked = collections.Counter(lengths.values()).most_common()
    # the length most files share; without a majority, the references' length decides
    common = ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else n_ref_lines
    for path, n in lengths.items():
        if n != common:
            raise InputError(f"has {n} lines but the other replica files have {common}", path, min(n, common) + 1)
    if common > n_ref_lines or (common < n_ref_lines and not prefix):  # the replica files agree: the references differ
        hint = f" (--refs-prefix scores them against the first {common} lines)" if common < n_ref_lines else ""
        raise InputError(f"has {n_ref_lines} lines but the hypothesis files have {common}{hint}", refs[0],
                         min(common, n_ref_lines) + 1)
    coverage = covered_sentences(range(common), n_ref_lines, what="the replica files", path=next(iter(lengths)),
                                 lines=True, prefix=prefix)
    return texts, coverage


def run(args: argparse.Namespace) -> int:
    if args.ar_shuffles < 1:
        raise InputError(f"--ar-shuffles must be >= 1, got {args.ar_shuffles}")
    if args.boot_samples < 2:
        raise InputError(f"--boot-samples must be >= 2, got {args.boot_samples}")
    if args.pairs_tsv and not args.all_pairs:
        raise InputError("--pairs-tsv needs --all-pairs")
    settings = bleu_settings(args)
    layout = Layout.of(args.metrics)
    groups = parse_groups(args.baseline, args.baseline_name, args.system)
    references = read_references(args.refs)
    texts, coverage = read_groups(groups, args.refs, len(references[0]), args.refs_prefix)
    references = coverage.references(references)
    import numpy as np

    stats = {name: np.stack([layout.rows(t, references, settings) for t in replicas]) for name, replicas in texts.items()}
    pairs = (all_pairs(stats, layout, ar_shuffles=args.ar_shuffles, seed=args.seed, ties=args.ties,
                       correction=args.correction) if args.all_pairs else None)
    baseline = stats.pop(args.baseline_name)
    results = compare_systems(baseline, stats, layout, baseline_name=args.baseline_name, ar_shuffles=args.ar_shuffles,
                              boot_samples=args.boot_samples, seed=args.seed, ties=args.ties)
    results = correct_p_values(results, args.correction)
    signature = (f"{BleuSignature(settings, len(references))}|ar:{args.ar_shuffles}|ties:{args.ties}"
                 f"|bs:{args.boot_samples}|seed:{args.seed}")
    if args.correction != "none":
        signature += f"|correction:{args.correction}"
    shown = dict(ci=args.ci, correction=args.correction)
    if args.tsv:
        with atomic_output(args.tsv) as out:
            out.write(format_tsv(results, layout, **shown))
    if pairs is not None and args.pairs_tsv:
        with atomic_output(args.pairs_tsv) as out:
            out.write(format_pairs_tsv(pairs, layout))
    if args.latex:
        with atomic_output(args.latex) as out:
            out.write(format_latex(results, layout, note=f"smtlib compare; {signature}", **shown))
    print(format_text(results, layout, **shown), end="")
    if pairs is not None:
        print(format_pairs_text(pairs, layout), end="")
    print(f"signature: {signature}")
    from smtlib.bleu.metrics import MetricOptions, get_metric

    for name in dict.fromkeys(m for m in layout.metrics if m not in ("bleu", "length")):
        metric = get_metric(name, MetricOptions(bleu=settings, lowercase=settings.lowercase))
        print(f"signature {metric.label}: {metric.signature(len(references))}")
    print(f"scored: {coverage}")
    return 0
