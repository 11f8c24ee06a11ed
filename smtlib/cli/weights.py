"""Convert weights between smtlib weights files and a moses.ini ``[weight]`` section.

  smtlib weights to-moses-ini W [--ini moses.ini] --out OUT   the [weight] section (or a whole
                                                             moses.ini with its section replaced)
  smtlib weights from-moses-ini moses.ini --out W            smtlib names: NAME_k, sparse as is

The names of W are checked by the rule every command applies (``smtlib.weights.check_weight_names``):
with ``--ini``, against the dense features the moses.ini weighs; without, every name must be a
dense value ``NAME_k`` or a sparse name (containing ``_``). Sparse names are allowed either way (a
moses.ini does not list the sparse features Moses reads weights for), unless one is a misspelt
dense name (within an edit or two of one).
"""

from __future__ import annotations

import argparse

from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines
from smtlib.weights import check_weight_names, from_moses_ini, group_dense, read_weights, to_moses_ini, write_weights


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    to_ini = sub.add_parser("to-moses-ini", help="write a moses.ini [weight] section")
    to_ini.add_argument("weights")
    to_ini.add_argument("--ini", help="a moses.ini whose [weight] section is replaced (other sections kept)")
    to_ini.add_argument("--out", "-o", default="-")
    from_ini = sub.add_parser("from-moses-ini", help="read the [weight] section of a moses.ini")
    from_ini.add_argument("ini")
    from_ini.add_argument("--out", "-o", default="-")


def run(args: argparse.Namespace) -> int:
    if args.action == "from-moses-ini":
        weights = from_moses_ini(args.ini)
        write_weights(args.out, weights)
        return 0
    weights = read_weights(args.weights)
    if not weights:
        raise InputError("weights file has no weights", args.weights)
    if args.ini:
        dense, _ = group_dense(from_moses_ini(args.ini))
        check_weight_names(weights, [f"{g}_{k}" for g, values in dense.items() for k in range(len(values))],
                           has_sparse=True, what=f"the moses.ini {args.ini}")
    else:
        dense, _ = group_dense(weights)
        check_weight_names(weights, [f"{g}_{k}" for g, values in dense.items() for k in range(len(values))],
                           has_sparse=True, what="the weights file")
    section = to_moses_ini(weights)
    text = section
    if args.ini:
        kept: list[str] = []
        skipping = False
        for line in read_lines(args.ini, what="moses.ini"):
            stripped = line.strip()
            if stripped.startswith("["):
                skipping = stripped == "[weight]"
            if not skipping:
                kept.append(line)
        text = "\n".join(kept).rstrip("\n") + "\n\n" + section
    with atomic_output(args.out) as out:
        out.write(text)
    return 0
