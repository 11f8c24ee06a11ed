"""``smtlib tune`` for the tuners that read a k-best pool (the registry's ``kbest`` kind)::

    smtlib tune METHOD --kbest K [K ...] --refs REF [REF ...] --init W --out W [--seed N] [--set key=value ...]
    smtlib tune METHOD --pool POOL --refs REF [REF ...] --init W --out W ...

The k-best files are merged (duplicates dropped), BLEU statistics are computed against the
references (``--tokenize``/``--lowercase``/``--ref-length``); a binary pool (``--pool``, written by
``smtlib kbest add``; also accepted as the one ``--kbest`` file) already holds them, computed against
the same references and settings (else an error). The pool's sentence ids choose the reference
lines, and the pool BLEU printed before and after (``pool BLEU 13.30 -> 13.56 on 50 sentences of
100 reference lines``, also in ``--info``) covers exactly the sentences with hypotheses, as the
tuners' own progress lines do (:func:`smtlib.bleu.references.covered_sentences`); a sentence id
beyond the references is an error. METHOD's ``fit`` starts from the
``--init`` weights (features absent from the file start at 0). Features of ``--init`` that the
pool does not have (sparse features that did not fire) are written back unchanged; the names of
``--init`` are checked against the pool (:func:`smtlib.weights.check_weight_names`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from smtlib.bleu.references import read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import add_dialect_option, bleu_settings, pool_bleu, pool_metric
from smtlib.errors import InputError
from smtlib.weights import check_weight_names, read_weights, write_weights

if TYPE_CHECKING:
    from smtlib.kbest.pool import KBestPool

#: the options a run requires besides one of ``--kbest``/``--pool`` (shown as required in ``--help``)
REQUIRED = ("refs", "init", "out")
#: what ``smtlib tune METHOD --help`` says the method reads
READS = "a k-best pool (--kbest files or a binary --pool) and its references"
#: ``--refs-prefix``'s help for this kind
REFS_PREFIX = ("accepted and without effect: the sentence ids of the k-best pool choose the reference lines, so "
               "references may have more lines than the pool")


def usage_forms(usage_of: Callable[[str], str]) -> list[str]:
    """The command lines ``smtlib tune METHOD --help`` shows, after ``smtlib tune METHOD``."""
    return [f"({usage_of('kbest')} | {usage_of('pool')}) " + " ".join(usage_of(d) for d in REQUIRED)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("k-best input")
    g.add_argument("--kbest", "-k", nargs="+", metavar="K", help="k-best file(s), merged (required: --kbest or --pool)")
    g.add_argument("--pool", metavar="POOL",
                   help="a binary pool with BLEU statistics (smtlib kbest add), instead of --kbest "
                        "(required: --kbest or --pool)")
    add_dialect_option(g)


def _read_pool(args: argparse.Namespace, references: Sequence[Sequence[str]], settings) -> KBestPool:
    """The binary pool (--pool, or one --kbest file in the binary format) or the merged text lists,
    with BLEU statistics against ``references``."""
    from smtlib.kbest.pool import read_pool
    from smtlib.kbest.store import checked_pool, is_pool_file, read_stored

    if args.pool or (len(args.kbest) == 1 and is_pool_file(args.kbest[0])):
        path = args.pool or args.kbest[0]
        return checked_pool(read_stored(path), path, references, settings)
    pool = read_pool(args.kbest, n_sentences=len(references[0]), dialect=args.dialect, references=args.refs[0])
    pool.compute_stats(references, settings)
    return pool


def run(tuner, args: argparse.Namespace, mixture) -> int:
    """One step of a :class:`~smtlib.tuners.base.KBestTuner` on the pool; writes the weights (and ``--info``)."""
    for option in REQUIRED:
        if not getattr(args, option):
            raise InputError(f"--{option} is required")
    if bool(args.kbest) == bool(args.pool):
        raise InputError("give either --kbest or --pool")
    references = read_references(args.refs)
    settings = bleu_settings(args)
    pool = _read_pool(args, references, settings)
    coverage = pool.coverage(references)
    init_weights = read_weights(args.init)
    check_weight_names(init_weights, pool.dense_names, sparse_names=pool.sparse_names, what="the k-best pool")
    init = pool.weight_vector(init_weights)
    metric = None if mixture.is_bleu else tuner.corpus_metric(mixture, pool.metric_stats(mixture, references))
    result = tuner(pool, init, metric)
    out = dict(zip(pool.feature_names, map(float, result.weights), strict=True))
    for name, value in init_weights.items():
        out.setdefault(name, value)
    # the BLEU of the pool's sentences, as `smtlib rerank` prints it
    before = pool_bleu(pool.texts, pool.best_indices(init), references, coverage, settings)
    after = pool_bleu(pool.texts, pool.best_indices(result.weights), references, coverage, settings)
    info = {"method": args.method, "seed": args.seed, "params": tuner.params, "pool_bleu_init": 100 * before,
            "pool_bleu_out": 100 * after, **coverage.info(), "hypotheses": pool.n_hypotheses, **result.info}
    header = (f"smtlib tune {args.method} seed={args.seed} pool BLEU {100 * before:.2f} -> {100 * after:.2f} on {coverage} "
              f"({BleuSignature(settings, len(references))})")
    if not mixture.is_bleu:
        header += f"; tuned toward {mixture.text}:" + _metric_report(mixture, pool, init, result.weights, references,
                                                                      coverage, info)
    write_weights(args.out, out, header=header)
    if args.info:
        from smtlib.io import atomic_output

        with atomic_output(args.info) as fh:
            json.dump(info, fh, indent=1, default=str)
    print(header, file=sys.stderr)
    return 0


def _metric_report(mixture, pool: KBestPool, init, weights, references, coverage, info: dict) -> str:
    """The 1-best pool score of each metric of ``mixture`` before and after (sacrebleu's, on the pool's
    sentences, as ``smtlib rerank`` prints them), added to ``info``; the text for the header line."""
    rows = [pool.best_indices(w) for w in (init, weights)]
    parts = []
    for metric, _ in mixture.parts:
        before, after = (100 * pool_metric(metric, pool.texts, r, references, coverage) for r in rows)
        info[f"pool_{metric.name}_init"], info[f"pool_{metric.name}_out"] = before, after
        parts.append(f" pool {metric.score_name} {before:.2f} -> {after:.2f} ({metric.signature(len(references))})")
    return ";".join(parts)
