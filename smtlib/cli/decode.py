"""Translate with a phrase-based model (``smtlib train``'s model directory): 1-best, k-best lists, lattices.

Stack decoding as in Moses (future costs, distortion limit, histogram pruning, recombination; cube
pruning with ``--search cube``); the
k-best list is in Moses n-best format with 0-based sentence ids, each line's total equal to ``w . h``
of its features; the lattice file format is documented in ``smtlib.lattice.format``.

Example::

    smtlib decode --model models/fr-en-medium --weights w.txt --input dev.fr \\
        --kbest dev.kbest.gz --k 100 --lattice dev.lattice.gz --jobs 8
"""

from __future__ import annotations

import argparse
import sys

from smtlib.cli.common import add_search_options, search_options
from smtlib.decoder.settings import DecoderConfig
from smtlib.values import integer_at_least

_DEFAULTS = DecoderConfig()  # the defaults of --k, --lattice-beam and --nbest-factor (the search's: add_search_options)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model directory (or its model.yaml); required unless --backend command")
    parser.add_argument("--weights", required=True, help="weights file (NAME_k value per line)")
    parser.add_argument("--input", default="-", help="source text, one sentence per line (default: stdin)")
    parser.add_argument("--output", help="1-best translations (default: stdout when no --kbest is given)")
    parser.add_argument("--kbest", help="k-best list output (Moses n-best format, .gz to compress)")
    parser.add_argument("--k", type=integer_at_least(1), default=_DEFAULTS.k, help=f"k-best list size (default {_DEFAULTS.k})")
    parser.add_argument("--lattice", help="search-graph lattice output (.gz to compress)")
    parser.add_argument("--lattice-beam", type=float, default=_DEFAULTS.lattice_beam,
                        help="keep only lattice edges on paths within this model score of the 1-best, plus the "
                             f"k-best paths (default {_DEFAULTS.lattice_beam:g}; 0 = the whole search graph)")
    parser.add_argument("--jobs", type=integer_at_least(1), default=1, help="decoding processes (default 1)")
    add_search_options(parser)
    parser.add_argument("--nbest-factor", type=integer_at_least(1), default=_DEFAULTS.nbest_factor,
                        help="examine at most k*factor derivations for k distinct translations "
                             f"(default {_DEFAULTS.nbest_factor})")
    parser.add_argument("--non-distinct", action="store_true", help="k-best over derivations, duplicates allowed")
    parser.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    moses = parser.add_argument_group("Moses backend (smtlib.decoder.moses_backend)")
    moses.add_argument("--backend", choices=("smtlib", "moses", "command"), default="smtlib",
                       help="who searches: our decoder (default), a Moses binary with the same settings, or any "
                            "decoder given as --decoder COMMAND; outputs in our format")
    moses.add_argument("--moses-bin", help="the moses or moses2 binary (default: $SMTLIB_MOSES_BIN/moses)")
    moses.add_argument("--moses-ini", help="a moses.ini for the model (default: export the model to a temporary "
                                           "directory, smtlib train export-moses)")
    command = parser.add_argument_group("command backend (any decoder; the decoder command of smtlib loop)")
    command.add_argument("--decoder", metavar="COMMAND",
                         help="the decoder command with --backend command: placeholders {input} {nbest} {k} and "
                              "{ini} | {weights} | {weights_args}, as smtlib loop --decoder (docs/loop.md); the "
                              "search options above are the command's business and are not passed")
    command.add_argument("--dialect", help="the n-best dialect the command writes (moses, cdec, joshua; default: "
                                           "detected per file)")
    command.add_argument("--decoder-ini", metavar="MOSES_INI",
                         help="the moses.ini that {ini} rewrites with --weights (needed when COMMAND has {ini})")


def run(args: argparse.Namespace) -> int:
    from smtlib.decoder.driver import decode_file
    from smtlib.errors import InputError
    from smtlib.system.modeldir import model_directory

    if args.backend == "command":
        return _run_command_backend(args)
    if args.model is None:
        raise InputError("--model is required (unless --backend command)")
    args.model = model_directory(args.model)
    if args.k < 1:
        raise InputError(f"--k must be at least 1, got {args.k}")
    if args.nbest_factor < 1 or args.lattice_beam < 0:
        raise InputError("--lattice-beam must be >= 0, --nbest-factor >= 1")
    config = DecoderConfig(**search_options(args), k=args.k, distinct=not args.non_distinct,
                           nbest_factor=args.nbest_factor, lattice_beam=args.lattice_beam)
    output = args.output
    if output is None and args.kbest is None:
        output = "-"
    if args.backend == "moses":
        from smtlib.decoder.moses_backend import decode_file_moses, default_moses_dir

        binary = args.moses_bin
        if binary is None:
            found = default_moses_dir()
            if found is None:
                raise InputError("--backend moses needs --moses-bin (or $SMTLIB_MOSES_BIN)")
            binary = found / "moses"
        stats = decode_file_moses(args.model, args.weights, args.input, moses_bin=binary, moses_ini=args.moses_ini,
                                  kbest_out=args.kbest, output=output, lattice_out=args.lattice, config=config,
                                  jobs=args.jobs, progress=not args.quiet)
    else:
        stats = decode_file(args.model, args.weights, args.input, kbest_out=args.kbest, output=output,
                            lattice_out=args.lattice, config=config, jobs=args.jobs,
                            progress=not args.quiet)
    if not args.quiet:
        print(f"decode: {stats.sentences} sentences in {stats.seconds:.1f} s ({stats.rate:.1f} sent/s), "
              f"model loaded in {stats.load_seconds:.1f} s"
              + "".join(f", {name} {sec:.1f} s" for name, sec in stats.phases.items()), file=sys.stderr)
    return 0


def _run_command_backend(args: argparse.Namespace) -> int:
    """Decode ``--input`` with any decoder (``--decoder``): its n-best list, joined from ``--jobs`` shards,
    read and checked as ``smtlib loop`` reads it, written in our format (``--kbest``), and its 1-best
    (the first hypothesis of each sentence's list) to ``--output``.

    The weights reach the command as the loop passes them (a weights file, ``-weight-overwrite``, or
    ``--decoder-ini`` rewritten); the workflow's ``decoder: {backend: command}`` decodes with this.
    """
    import os
    import tempfile

    from smtlib.errors import InputError
    from smtlib.io import atomic_output, read_lines
    from smtlib.kbest.format import DIALECTS
    from smtlib.kbest.pool import write_pool
    from smtlib.loop.decoder_command import DecoderTemplate
    from smtlib.loop.decoder_output import decode_and_read
    from smtlib.loop.decoder_weights import InitialWeights, is_moses_ini, write_iteration_weights
    from smtlib.loop.options import DIALECT_ALIASES
    from smtlib.weights import read_weights

    if not args.decoder:
        raise InputError("--backend command needs --decoder COMMAND")
    if args.lattice:
        raise InputError("--backend command writes no lattice: an outside decoder's search graph is not read")
    template = DecoderTemplate.parse(args.decoder)
    if "ini" in template.used and not args.decoder_ini:
        raise InputError("the decoder command has {ini}: give the moses.ini it rewrites (--decoder-ini)")
    if args.decoder_ini and not is_moses_ini(args.decoder_ini):
        raise InputError("--decoder-ini is not a moses.ini", args.decoder_ini)
    weights = read_weights(args.weights)
    initial = InitialWeights.read(args.decoder_ini) if args.decoder_ini else InitialWeights(weights, None, args.weights)
    source = read_lines("/dev/stdin" if args.input == "-" else args.input, what="source")
    dialect = None if args.dialect is None else DIALECT_ALIASES.get(args.dialect, args.dialect)
    if dialect is not None and dialect not in DIALECTS:
        raise InputError(f"unknown --dialect {args.dialect!r} (choose from {', '.join((*DIALECTS, *DIALECT_ALIASES))})")
    output = args.output if args.output is not None or args.kbest is not None else "-"
    with tempfile.TemporaryDirectory(prefix="smtlib-decode-") as scratch:
        values = write_iteration_weights(scratch, weights, initial, template.used, header="smtlib decode --backend command")
        decoded = decode_and_read(template, source, os.path.join(scratch, "shards"), values, args.k, args.jobs,
                                  os.path.join(scratch, "nbest"), os.path.join(scratch, "decoder.log"), dialect,
                                  what="input")
        if not args.quiet:
            with open(os.path.join(scratch, "decoder.log"), encoding="utf-8", errors="replace") as log:
                sys.stderr.write(log.read())
    if args.kbest:
        write_pool(decoded.pool, args.kbest)
    if output == "-":
        sys.stdout.writelines(line + "\n" for line in decoded.one_best)
    elif output is not None:
        with atomic_output(output) as out:
            out.writelines(line + "\n" for line in decoded.one_best)
    if not args.quiet:
        print(f"decode: {len(source)} sentences by the decoder command ({args.jobs} shard"
              f"{'s' if args.jobs > 1 else ''}), {decoded.pool.n_hypotheses} hypotheses", file=sys.stderr)
    return 0
