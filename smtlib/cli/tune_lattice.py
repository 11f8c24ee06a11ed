"""``smtlib tune`` for the tuners that do not read a k-best pool: lattice tuners and online MIRA.

Lattice tuners (``lbmert``, ``lbmira``)::

    smtlib tune lbmira --lattice it3/dev.lattice.gz --kbest it2/paths.kbest.gz --refs dev.en \\
        --init w2.txt --out w3.txt --paths-out it3/paths.kbest.gz [--seed N] [--set key=value ...]

``--lattice`` files (several are merged per sentence) are this iteration's search graphs
(``smtlib decode --lattice``); ``--kbest`` files, if any, are the paths aggregated by earlier
iterations; ``--paths-out`` writes them plus this run's new paths (lb-mert: the paths on a line
search's upper envelope; lb-mira: the hope and fear paths) for the next iteration.

Online MIRA (``mira``), one epoch of iterative parameter mixing::

    smtlib tune mira --model M --source dev.fr --refs dev.en --init w.txt --out w1.txt [--mixed-out m1.txt]
    smtlib tune mira --model M --source dev.fr --refs dev.en --init m0.txt --shard 3 --shards 8 \\
        [--state mix0.json] --out shard3.json
    smtlib tune mira --mix shard0.json ... shard7.json [--state mix0.json] --out w1.txt \\
        --mixed-out m1.txt --state-out mix1.json

The first form runs every shard in this process; the second one shard (its result is JSON; ``--state``
gives the shard the pseudo-document it ended the last epoch with); the third mixes the shards
(``--out`` the average of the epoch's weights, or of all epochs' with ``--set average=all``,
``--mixed-out`` the mixture the next epoch starts from, ``--state-out`` the sums and pseudo-documents).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import (
    add_search_options,
    bleu_settings,
    parse_assignments,
    pool_references,
    pool_references_function,
    search_options,
)
from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines
from smtlib.progress import command_progress
from smtlib.tuners.base import check_tuned_weights
from smtlib.tuners.registry import input_kind
from smtlib.weights import check_weight_names, read_weights, write_weights


#: per input kind (:data:`smtlib.tuners.registry.INPUT_KINDS`), the options a run requires (``tune kbest``
#: methods also one of ``--kbest``/``--pool``; ``mira --mix`` only ``--out``): checked here and in
#: :mod:`smtlib.cli.tune`, and shown as required in ``smtlib tune METHOD --help``
REQUIRED = {"kbest": ("refs", "init", "out"), "lattice": ("lattice", "refs", "init", "out"),
            "online": ("model", "source", "refs", "init", "out")}
#: the options of this module's group that concern only online MIRA
ONLINE_ONLY = ("model", "source", "shard", "mix", "state", "state_out", "mixed_out", "stack_size", "search",
               "pop_limit", "distortion_limit", "table_limit")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("lattice tuners (lbmert, lbmira) and online MIRA (mira)")
    g.add_argument("--lattice", nargs="+", metavar="LATTICE", help="lattice file(s) of this iteration (lbmert, lbmira)")
    g.add_argument("--paths-out", metavar="PATHS", help="write the aggregated paths for the next iteration (lbmert, lbmira)")
    g.add_argument("--model", metavar="MODEL", help="model directory or its model.yaml (mira: the decoder in the loop)")
    g.add_argument("--source", metavar="SRC", help="source sentences of the dev set (mira)")
    g.add_argument("--shard", type=int, help="mira: run only this shard (0-based); the output is JSON")
    g.add_argument("--mix", nargs="+", metavar="SHARD_JSON", help="mira: average these shard results")
    g.add_argument("--state", help="mira: the previous epoch's mixing state (JSON)")
    g.add_argument("--state-out", help="mira: write this epoch's mixing state (JSON)")
    g.add_argument("--mixed-out", help="mira: write the mixed weights the next epoch starts from")
    add_search_options(g, who="mira: decoder ")


def _info(args: argparse.Namespace, data: dict) -> None:
    if args.info:
        with atomic_output(args.info) as fh:
            json.dump(data, fh, indent=1, default=str)


def _require(args: argparse.Namespace, *options: str) -> None:
    for option in options:
        if not getattr(args, option.replace("-", "_")):
            raise InputError(f"--{option.replace('_', '-')} is required")


def run(cls, args: argparse.Namespace) -> int:
    """Dispatch on what the tuner reads (:func:`smtlib.tuners.registry.input_kind`)."""
    from smtlib.system.modeldir import model_directory

    if args.model is not None:
        args.model = model_directory(args.model)
    tuner = cls(seed=args.seed, **parse_assignments(args.set))
    tuner.progress = command_progress(f"smtlib tune {tuner.name}", args.quiet)
    if hasattr(tuner, "threads"):  # lbmert: --jobs threads run its climbs
        tuner.threads = args.jobs
    if input_kind(args.method) == "lattice":
        return _run_lattice(tuner, args)
    return _run_online(tuner, args)




def _run_lattice(tuner, args: argparse.Namespace) -> int:
    from smtlib.lattice.problem import load_lattice_problem, path_lines, write_paths

    _require(args, *REQUIRED["lattice"])
    references = read_references(args.refs)
    settings = bleu_settings(args)
    init_weights = read_weights(args.init)
    density = float(tuner.params.get("density", 0.0))
    ls, refs, n_in = load_lattice_problem(args.lattice, args.kbest, references, settings,
                                          prune_weights=init_weights, density=density,
                                          fit_references=pool_references_function(args, references,
                                                                                  what="the lattice set"))
    check_weight_names(init_weights, ls.feature_names, sparse_names=ls.sparse_names, what="the lattice set")
    init = ls.weight_vector(init_weights)
    result = tuner.fit_lattices(ls, refs, init)
    tuner.progress.finish()
    # the base class's check, with every edge of the lattices as one group of scores
    check_tuned_weights(tuner.name, result.weights, f"the step writing {args.out}", ls.edge_scores)
    weights, info = result.weights, result.info
    out = dict(zip(ls.all_feature_names, map(float, weights), strict=True))
    for name, value in init_weights.items():
        out.setdefault(name, value)
    header = (f"smtlib tune {tuner.name} seed={args.seed} lattice BLEU {100 * info['objective_init']:.2f} -> "
              f"{100 * info['objective']:.2f} ({BleuSignature(settings, len(references))})")
    write_weights(args.out, out, header=header)
    new_paths = getattr(tuner, "envelope_paths", None) or getattr(tuner, "hope_fear_paths", [])
    kept = 0
    if args.paths_out:
        kept = write_paths(args.paths_out, args.kbest, path_lines(ls, new_paths, init))
    _info(args, {"method": tuner.name, "seed": args.seed, "params": tuner.params, "paths_in": n_in,
                 "paths_new": kept, **info})
    print(header + f"; {n_in} aggregated paths in, {kept} new", file=sys.stderr)
    return 0


def _write_mixed(tuner, args: argparse.Namespace, mixed: dict, n_shards: int) -> dict:
    """Check both weight vectors of a mixing step (the base class's check; no pool to score here), then
    write the average (--out), the next epoch's start (--mixed-out), the state and the info."""
    from smtlib.io import write_json

    for key in ("average", "mixed"):
        check_tuned_weights(tuner.name, np.array(list(mixed[key].values())),
                            f"the step writing {args.out} ({key} weights)")
    span = "all epochs" if tuner.accumulate else "this epoch"
    write_weights(args.out, mixed["average"],
                  header=f"smtlib tune mira: average of the weights of {span}, {mixed['steps']} steps")
    if args.mixed_out:
        write_weights(args.mixed_out, mixed["mixed"], header="smtlib tune mira: mixture of the shards' weights")
    if args.state_out:
        write_json(args.state_out, mixed)
    _info(args, {"method": "mira", "shards": n_shards, "steps": mixed["steps"], "updates": mixed["updates"]})
    return mixed


def _run_online(tuner, args: argparse.Namespace) -> int:
    from smtlib.io import read_json, write_json
    from smtlib.tuners.mira import mix

    if args.mix:
        _require(args, "out")
        previous = read_json(args.state, "mira state") if args.state else None
        shards = [read_json(p, "mira shard result") for p in args.mix]
        tuner._check()
        _write_mixed(tuner, args, mix(shards, previous, tuner.accumulate), len(shards))
        return 0
    _require(args, *REQUIRED["online"])
    sources = read_lines(args.source, what="source", allow_empty=True)
    references = read_references(args.refs)
    if len(references[0]) < len(sources):
        read_references(args.refs, source=args.source, source_lines=len(sources))  # the error naming both
    references = pool_references(args, references, len(sources), what=f"the source {args.source}")
    init = read_weights(args.init)
    previous = read_json(args.state, "mira state") if args.state else None
    options = search_options(args)
    settings = bleu_settings(args)
    if args.shard is not None:
        bg = previous["bg"].get(str(args.shard)) if previous else None
        result = tuner.run_shard(args.model, sources, references, init, args.shard, settings=settings, bg=bg,
                                 decoder_options=options)
        tuner.progress.finish()
        write_json(args.out, result)
        print(f"smtlib tune mira: shard {args.shard}/{tuner.params['shards']}, {result['steps']} sentences, "
              f"{result['updates']} updates", file=sys.stderr)
        return 0
    results = []
    for shard in range(tuner.params["shards"]):
        bg = previous["bg"].get(str(shard)) if previous else None
        results.append(tuner.run_shard(args.model, sources, references, init, shard, settings=settings, bg=bg,
                                       decoder_options=options))
    tuner.progress.finish()
    mixed = _write_mixed(tuner, args, mix(results, previous, tuner.accumulate), len(results))
    print(f"smtlib tune mira: {len(results)} shards, {mixed['steps']} sentences, {mixed['updates']} updates",
          file=sys.stderr)
    return 0
