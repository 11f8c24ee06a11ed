"""``smtlib tune`` for the lattice tuners (the registry's ``lattice`` kind: lbmert, lbmira)::

    smtlib tune lbmira --lattice it3/dev.lattice.gz --kbest it2/paths.kbest.gz --refs dev.en \\
        --init w2.txt --out w3.txt --paths-out it3/paths.kbest.gz [--seed N] [--set key=value ...]

``--lattice`` files (several are merged per sentence) are this iteration's search graphs
(``smtlib decode --lattice``); ``--kbest`` files, if any, are the paths aggregated by earlier
iterations; ``--paths-out`` writes them plus this run's new paths (lb-mert: the paths on a line
search's upper envelope; lb-mira: the hope and fear paths) for the next iteration. The lattices,
paths and references are read and the paths written by :mod:`smtlib.lattice.problem`; the step is
the tuner's :meth:`~smtlib.tuners.base.LatticeTuner.tune_lattices`. The sentence ids of the
lattices and paths choose the reference lines; the lattice BLEU printed before and after (sacrebleu's,
of each sentence's best path under the initial and the tuned weights; also in ``--info`` beside the
tuner's own objective) covers exactly the sentences with a lattice or a path and says how many
(:func:`smtlib.bleu.references.covered_sentences`); a sentence id beyond the references is an
error.
``--jobs N`` runs lbmert's climbs on N threads (results never depend on it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import bleu_settings
from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.weights import check_weight_names, read_weights, write_weights
from smtlib.values import integer_at_least

#: the options a run requires (shown as required in ``--help``)
REQUIRED = ("lattice", "refs", "init", "out")
#: what ``smtlib tune METHOD --help`` says the method reads
READS = "this iteration's lattices (--lattice), earlier iterations' paths (--kbest) and the references"
#: ``--refs-prefix``'s help for this kind
REFS_PREFIX = ("accepted and without effect: the sentence ids of the lattices and paths choose the reference lines, "
               "so references may have more lines")


def usage_forms(usage_of: Callable[[str], str]) -> list[str]:
    """The command lines ``smtlib tune METHOD --help`` shows, after ``smtlib tune METHOD``."""
    return [" ".join(usage_of(d) for d in REQUIRED) + f" [{usage_of('kbest')}] [--paths-out PATHS]"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("lattice input (lbmert, lbmira)")
    g.add_argument("--lattice", nargs="+", metavar="LATTICE", help="lattice file(s) of this iteration")
    if "--kbest" not in parser._option_string_actions:  # `smtlib tune --help` shows the k-best kind's too
        g.add_argument("--kbest", "-k", nargs="+", metavar="K",
                       help="the paths earlier iterations aggregated (their --paths-out), merged")
    g.add_argument("--paths-out", metavar="PATHS", help="write the aggregated paths for the next iteration")
    g.add_argument("--jobs", type=integer_at_least(1), default=1,
                   help="threads for the tuners that use them (lbmert: its climbs, current weights and random "
                        "restarts, run in parallel); results do not depend on it (default 1)")


def run(tuner, args: argparse.Namespace, mixture) -> int:
    """One step of a :class:`~smtlib.tuners.base.LatticeTuner` on the lattices; writes the weights,
    the aggregated paths (``--paths-out``) and ``--info``."""
    from smtlib.bleu.corpus import corpus_bleu
    from smtlib.lattice.problem import covered, load_lattice_problem, path_lines, viterbi_lines, write_paths

    for option in REQUIRED:
        if not getattr(args, option):
            raise InputError(f"--{option.replace('_', '-')} is required")
    tuner.threads = args.jobs
    references = read_references(args.refs)
    settings = bleu_settings(args)
    init_weights = read_weights(args.init)
    density = float(tuner.params.get("density", 0.0))
    ls, refs, n_in = load_lattice_problem(args.lattice, args.kbest, references, settings,
                                          prune_weights=init_weights, density=density)
    coverage = covered(ls, references)
    check_weight_names(init_weights, ls.feature_names, sparse_names=ls.sparse_names, what="the lattice set")
    init = ls.weight_vector(init_weights)
    result = tuner.tune_lattices(ls, refs, init)
    weights, info = result.weights, result.info
    out = dict(zip(ls.all_feature_names, map(float, weights), strict=True))
    for name, value in init_weights.items():
        out.setdefault(name, value)
    before, after = (100 * corpus_bleu(coverage.pick(viterbi_lines(ls, w)), coverage.references(references), settings)
                     for w in (init, weights))
    header = (f"smtlib tune {tuner.name} seed={args.seed} lattice BLEU {before:.2f} -> {after:.2f} on {coverage} "
              f"({BleuSignature(settings, len(references))})")
    write_weights(args.out, out, header=header)
    kept = 0
    if args.paths_out:
        kept = write_paths(args.paths_out, args.kbest, path_lines(ls, tuner.new_paths, init))
    if args.info:
        with atomic_output(args.info) as fh:
            json.dump({"method": tuner.name, "seed": args.seed, "params": tuner.params, "lattice_bleu_init": before,
                       "lattice_bleu_out": after, **coverage.info(), "paths_in": n_in, "paths_new": kept, **info},
                      fh, indent=1, default=str)
    print(header + f"; {n_in} aggregated paths in, {kept} new", file=sys.stderr)
    return 0
