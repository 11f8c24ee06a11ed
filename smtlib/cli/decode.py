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
    parser.add_argument("--model", required=True, help="model directory (or its model.yaml)")
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
    moses.add_argument("--backend", choices=("smtlib", "moses"), default="smtlib",
                       help="who searches: our decoder (default) or a Moses binary, with the same settings and "
                            "outputs in our format")
    moses.add_argument("--moses-bin", help="the moses or moses2 binary (default: $SMTLIB_MOSES_BIN/moses)")
    moses.add_argument("--moses-ini", help="a moses.ini for the model (default: export the model to a temporary "
                                           "directory, smtlib train export-moses)")


def run(args: argparse.Namespace) -> int:
    from smtlib.decoder.driver import decode_file
    from smtlib.errors import InputError
    from smtlib.system.modeldir import model_directory

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
