"""Merge, convert and describe k-best lists (Moses n-best format, plain or gzip).

  smtlib kbest merge --out OUT IN [IN ...]   union per sentence, duplicates (same text and
                                             features) dropped, in first-appearance order
  smtlib kbest convert IN --out OUT          rewrite in the current Moses syntax (``Name= v``);
                                             accepts the old ``name: v`` and Joshua ``name=v`` dialects
  smtlib kbest stats IN [IN ...] [--refs R]  counts, features, and with references the 1-best
                                             and oracle BLEU of the pool (JSON)
  smtlib kbest add [--pool PREV] --kbest NEW [NEW ...] --refs R --out NEXT
                                             binary pool NEXT = PREV + the new lists, with BLEU
                                             statistics (format: smtlib.kbest.store; --metric chrf
                                             ter keeps theirs too); what `smtlib tune --pool` reads
  smtlib kbest slice --ids IDS [--kbest IN OUT] [--lines IN OUT] [--lattice IN OUT]
                                             keep the sentences of IDS, renumbered 0, 1, ...
                                             (a dev sub-sample's share of a full-dev decode)

`stats` and `convert` also read a binary pool (recognized by its first bytes). With references,
`stats` scores exactly the sentences the pool has hypotheses for: its sentence ids choose the
reference lines (:func:`smtlib.bleu.references.covered_sentences`), the JSON says how many
(`sentences` of `reference_lines`), and an id beyond the references is an error; `add` computes the
statistics of every hypothesis against the reference line of its id.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np

from smtlib.bleu.metrics import get_metric
from smtlib.bleu.references import covered_sentences, read_references
from smtlib.bleu.signature import BleuSignature
from smtlib.cli.common import (add_bleu_options, add_dialect_option, add_refs_prefix_option, bleu_settings, pool_bleu,
                               pool_metric)
from smtlib.cli.score import add_extra_metrics, add_metric_settings, metric_options
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool, argmax_per_sentence, read_pool, write_pool


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    merge = sub.add_parser("merge", help="merge and de-duplicate k-best lists per sentence")
    merge.add_argument("inputs", nargs="+", metavar="IN")
    merge.add_argument("--out", "-o", required=True, help="output file (.gz to compress)")
    merge.add_argument("--keep-duplicates", action="store_true", help="concatenate without de-duplication")
    add_dialect_option(merge)
    convert = sub.add_parser("convert", help="rewrite a k-best list in the current Moses syntax")
    convert.add_argument("input", metavar="IN")
    convert.add_argument("--out", "-o", required=True)
    add_dialect_option(convert)
    stats = sub.add_parser("stats", help="describe a k-best pool (JSON)")
    stats.add_argument("inputs", nargs="+", metavar="IN")
    stats.add_argument("--refs", nargs="+", metavar="REF", help="references: adds 1-best (by the file totals) and oracle BLEU")
    add_refs_prefix_option(stats, pool=True)
    add_dialect_option(stats)
    add_extra_metrics(stats, help="with --refs, also the 1-best and oracle scores of these metrics (chrf, chrf++, ter)")
    add = sub.add_parser("add", help="add k-best lists to a binary pool (with BLEU statistics)")
    add.add_argument("--pool", help="the pool to extend (absent: start an empty one)")
    add.add_argument("--kbest", "-k", nargs="+", required=True, help="k-best list(s) to add, in order")
    add.add_argument("--refs", "-r", nargs="+", required=True, help="reference files of the BLEU statistics")
    add.add_argument("--out", "-o", required=True, help="the new pool (binary, written atomically)")
    add_refs_prefix_option(add, pool=True)
    add.add_argument("--metric", nargs="+", default=[], metavar="METRIC",
                     help="also keep the statistics of these metrics (chrf, chrf++, ter), for smtlib tune --metric; "
                          "the same METRIC as smtlib tune's is accepted (bleu, a mixture such as bleu:0.5,ter:-0.5: "
                          "its metrics are kept); a pool keeps those it has")
    add_bleu_options(add)
    add_metric_settings(add)
    cut = sub.add_parser("slice", help="keep the sentences listed in an ids file, renumbered from 0")
    cut.add_argument("--ids", required=True, help="0-based sentence ids to keep, one per line, in output order")
    cut.add_argument("--kbest", nargs=2, metavar=("IN", "OUT"), help="a k-best list")
    cut.add_argument("--lines", nargs=2, metavar=("IN", "OUT"), help="a file with one line per sentence (1-best)")
    cut.add_argument("--lattice", nargs=2, metavar=("IN", "OUT"), help="a lattice file (smtlib decode --lattice)")


def _read(paths: list[str], dedup: bool = True, dialect: str | None = None, n_sentences: int | None = None,
          references: str | None = None) -> KBestPool:
    """Text k-best lists (merged), or one binary pool."""
    from smtlib.kbest.store import is_pool_file, load_pool

    binary = [p for p in paths if is_pool_file(p)]
    if not binary:
        return read_pool(paths, dedup=dedup, dialect=dialect, n_sentences=n_sentences, references=references)
    if len(paths) > 1:
        raise InputError("a binary pool cannot be merged with other files here (use smtlib kbest add)", binary[0])
    return load_pool(paths[0])


def run(args: argparse.Namespace) -> int:
    if args.action == "add":
        return _add(args)
    if args.action == "slice":
        return _slice(args)
    if args.action == "merge":
        pool = read_pool(args.inputs, dedup=not args.keep_duplicates, dialect=args.dialect)
        write_pool(pool, args.out)
        return 0
    if args.action == "convert":
        pool = _read([args.input], dedup=False, dialect=args.dialect)
        # Old-dialect labels (`d:`) become `d=`; Joshua `name=v` tokens keep their form, since
        # rewriting them as `name= v` would rename single-valued features without `_` to `name_0`.
        pool.groups = tuple(g if g.style == "joshua" else dataclasses.replace(g, style="=") for g in pool.groups)
        write_pool(pool, args.out)
        return 0
    references = read_references(args.refs) if args.refs else None
    pool = _read(args.inputs, dialect=args.dialect, n_sentences=len(references[0]) if references else None,
                 references=args.refs[0] if args.refs else None)
    coverage = None
    if references is not None:
        coverage = pool.coverage(references)  # a binary pool's own references may be others
    pool.cut_sentences(pool.sentences_spanned())
    sizes = pool.sizes()
    present = sizes[sizes > 0]  # the pool's sentences: an id without hypotheses is not one
    info = {
        "files": len(args.inputs),
        "sentences": int(np.count_nonzero(sizes)),
        **({"reference_lines": coverage.n_lines} if coverage is not None else {}),
        "largest_id": int(np.flatnonzero(sizes)[-1]),
        "hypotheses": pool.n_hypotheses,
        "duplicates_dropped": int(pool.duplicates_dropped),
        "hypotheses_per_sentence": {"min": int(present.min()), "mean": float(present.mean()), "max": int(present.max())},
        "dense_features": pool.dense_names,
        "sparse_features": len(pool.sparse_names),
        "sparse_nonzeros": int(pool.sparse.nnz),
    }
    if references is not None:
        settings = bleu_settings(args)
        pool.stats = None  # a binary pool's statistics may be against other references
        stats = pool.compute_stats(references, settings)
        totals = np.where(np.isnan(pool.totals), -np.inf, pool.totals)
        first = argmax_per_sentence(totals, pool.offsets)
        from smtlib.kbest.oracle import oracle_indices

        oracle = oracle_indices(stats, pool.offsets)
        # the scores of the pool's sentences (the ids with hypotheses), as `rerank` and `tune` print them
        info["bleu_1best_by_total"] = 100 * pool_bleu(pool.texts, first, references, coverage, settings)
        info["bleu_oracle"] = 100 * pool_bleu(pool.texts, oracle, references, coverage, settings)
        info["signature"] = str(BleuSignature(settings, len(references)))
        for name in args.metric:
            from smtlib.kbest.oracle import metric_oracle_indices

            metric = get_metric(name, metric_options(args))
            rows = pool.metric_stats(metric, references)
            oracle = metric_oracle_indices(metric, rows, pool.offsets)
            for what, chosen in (("1best_by_total", first), ("oracle", oracle)):
                info[f"{name}_{what}"] = 100 * pool_metric(metric, pool.texts, chosen, references, coverage)
            info[f"{name}_signature"] = metric.signature(len(references))
    elif args.metric:
        raise InputError("--metric needs --refs")
    print(json.dumps(info, indent=1))
    return 0


def pool_metrics(specs: list[str], options) -> list:
    """The metrics besides BLEU whose statistics a pool keeps for ``--metric`` values: names (chrf,
    chrf++, ter) or anything ``smtlib tune --metric`` takes (bleu, a mixture: its metrics), so that
    one option serves both commands of a tuning step. BLEU's statistics are always kept."""
    from smtlib.bleu.metrics import parse_mixture

    metrics = [metric for spec in specs for metric, _ in parse_mixture(spec, options).parts]
    return list(dict.fromkeys(m for m in metrics if m.name != "bleu"))


def _add(args: argparse.Namespace) -> int:
    import sys

    from smtlib.kbest.store import add_kbest

    references = read_references(args.refs)
    metrics = pool_metrics(args.metric, metric_options(args))
    stored = add_kbest(args.pool, args.kbest, references, bleu_settings(args), args.out, metrics=metrics)
    for added in stored.files[-len(args.kbest):]:
        print(f"kbest add: {added['path']}: {added['lines']} lines, {added['added']} new hypotheses", file=sys.stderr)
    kept = "".join(f", {m.name}" for m in stored.metrics)
    coverage = covered_sentences(np.flatnonzero(np.diff(stored.arrays["offsets"])), references)
    print(f"kbest add: pool of {stored.n_hypotheses} hypotheses over {coverage} "
          f"({stored.duplicates_dropped} duplicates dropped; statistics of bleu{kept}) -> {args.out}", file=sys.stderr)
    return 0


def _slice(args: argparse.Namespace) -> int:
    import sys

    from smtlib.data.slicing import read_ids, slice_kbest, slice_lattices, slice_lines

    if not (args.kbest or args.lines or args.lattice):
        raise InputError("nothing to slice: give --kbest, --lines and/or --lattice")
    ids = read_ids(args.ids)
    for option, function, unit in (("kbest", slice_kbest, "k-best lines"), ("lines", slice_lines, "lines"),
                                   ("lattice", slice_lattices, "lattices")):
        pair = getattr(args, option)
        if pair:
            count = function(pair[0], ids, pair[1], ids_path=args.ids)
            print(f"kbest slice: {pair[0]} -> {pair[1]}: {len(ids)} sentences, {count} {unit}", file=sys.stderr)
    return 0
