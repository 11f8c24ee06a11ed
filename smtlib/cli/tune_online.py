"""``smtlib tune`` for online MIRA (the registry's ``online`` kind: ``mira``), the decoder in the loop.

One epoch of iterative parameter mixing::

    smtlib tune mira --model M --source dev.fr --refs dev.en --init w.txt --out w1.txt [--mixed-out m1.txt]
    smtlib tune mira --model M --source dev.fr --refs dev.en --init m0.txt --shard 3 --set shards=8 \\
        [--state mix0.json] --out shard3.json
    smtlib tune mira --mix shard0.json ... shard7.json [--state mix0.json] --out w1.txt \\
        --mixed-out m1.txt --state-out mix1.json

The first form runs every shard in this process; the second one shard (its result is JSON; ``--state``
gives the shard the pseudo-document it ended the last epoch with); the third mixes the shards
(``--out`` the average of the epoch's weights, or of all epochs' with ``--set average=all``,
``--mixed-out`` the mixture the next epoch starts from, ``--state-out`` the sums and pseudo-documents).
The steps are the tuner's :meth:`~smtlib.tuners.base.OnlineTuner.run_shard` and
:meth:`~smtlib.tuners.base.OnlineTuner.mix_shards`; the decoder's search options are the ones
``smtlib decode`` takes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from smtlib.bleu.references import covered_sentences, read_references
from smtlib.cli.common import add_search_options, bleu_settings, search_options
from smtlib.errors import InputError
from smtlib.io import atomic_output, read_json, read_lines, write_json
from smtlib.weights import read_weights, write_weights
from smtlib.values import integer_at_least

#: the options a run requires (``--mix`` only ``--out``; shown as required in ``--help``)
REQUIRED = ("model", "source", "refs", "init", "out")
#: what ``smtlib tune METHOD --help`` says the method reads
READS = "the model and the dev source (--model, --source); decodes in the loop"
#: ``--refs-prefix``'s help for this kind
REFS_PREFIX = ("score against the first lines of references with more lines than --source (default: an error, since "
               "source line i is translated and scored against reference line i)")


def usage_forms(usage_of: Callable[[str], str]) -> list[str]:
    """The command lines ``smtlib tune METHOD --help`` shows, after ``smtlib tune METHOD``."""
    return [" ".join(usage_of(d) for d in REQUIRED),
            "--mix SHARD_JSON [SHARD_JSON ...] --out W [--state STATE] [--mixed-out W] [--state-out STATE]"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("online MIRA (mira): the decoder in the loop")
    g.add_argument("--model", metavar="MODEL", help="model directory or its model.yaml")
    g.add_argument("--source", metavar="SRC", help="source sentences of the dev set")
    g.add_argument("--shard", type=integer_at_least(0), help="run only this shard (0-based); the output is JSON")
    g.add_argument("--mix", nargs="+", metavar="SHARD_JSON", help="average these shard results")
    g.add_argument("--state", help="the previous epoch's mixing state (JSON)")
    g.add_argument("--state-out", help="write this epoch's mixing state (JSON)")
    g.add_argument("--mixed-out", help="write the mixed weights the next epoch starts from")
    add_search_options(g, who="mira: decoder ")


def _require(args: argparse.Namespace, *options: str) -> None:
    for option in options:
        if not getattr(args, option.replace("-", "_")):
            raise InputError(f"--{option.replace('_', '-')} is required")


def _info(args: argparse.Namespace, data: dict) -> None:
    if args.info:
        with atomic_output(args.info) as fh:
            json.dump(data, fh, indent=1, default=str)


def _write_mixed(tuner, args: argparse.Namespace, mixed: dict, n_shards: int) -> None:
    """Write the average (--out), the next epoch's start (--mixed-out), the state and the info."""
    span = "all epochs" if tuner.accumulate else "this epoch"
    write_weights(args.out, mixed["average"],
                  header=f"smtlib tune mira: average of the weights of {span}, {mixed['steps']} steps")
    if args.mixed_out:
        write_weights(args.mixed_out, mixed["mixed"], header="smtlib tune mira: mixture of the shards' weights")
    if args.state_out:
        write_json(args.state_out, mixed)
    _info(args, {"method": "mira", "shards": n_shards, "steps": mixed["steps"], "updates": mixed["updates"]})


def run(tuner, args: argparse.Namespace, mixture) -> int:
    """A shard, a whole epoch, or the mixing step of an :class:`~smtlib.tuners.base.OnlineTuner`."""
    from smtlib.system.modeldir import model_directory

    if args.model is not None:
        args.model = model_directory(args.model)
    if args.mix:
        _require(args, "out")
        previous = read_json(args.state, "mira state") if args.state else None
        shards = [read_json(p, "mira shard result") for p in args.mix]
        _write_mixed(tuner, args, tuner.mix_shards(shards, previous), len(shards))
        return 0
    _require(args, *REQUIRED)
    sources = read_lines(args.source, what="source", allow_empty=True)
    references = read_references(args.refs)
    if len(references[0]) < len(sources):
        read_references(args.refs, source=args.source, source_lines=len(sources))  # the error naming both
    coverage = covered_sentences(range(len(sources)), references, what="the source", path=args.source, lines=True,
                                 prefix=args.refs_prefix)
    if not coverage.complete:
        print(f"smtlib tune mira: note: scoring {coverage} (--refs-prefix)", file=sys.stderr)
    references = coverage.references(references)
    init = read_weights(args.init)
    previous = read_json(args.state, "mira state") if args.state else None
    options = search_options(args)
    settings = bleu_settings(args)
    shards = range(tuner.params["shards"]) if args.shard is None else [args.shard]
    results = []
    for shard in shards:
        bg = previous["bg"].get(str(shard)) if previous else None
        results.append(tuner.run_shard(args.model, sources, references, init, shard, settings=settings, bg=bg,
                                       decoder_options=options))
    tuner.progress.finish()
    if args.shard is not None:
        result = results[0]
        write_json(args.out, result)
        print(f"smtlib tune mira: shard {args.shard}/{tuner.params['shards']}, {result['steps']} sentences, "
              f"{result['updates']} updates", file=sys.stderr)
        return 0
    mixed = tuner.mix_shards(results, previous)
    _write_mixed(tuner, args, mixed, len(results))
    print(f"smtlib tune mira: {len(results)} shards, {mixed['steps']} sentences, {mixed['updates']} updates",
          file=sys.stderr)
    return 0
