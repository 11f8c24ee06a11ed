"""Convert weights between smtlib weights files and a moses.ini ``[weight]`` section.

  smtlib weights to-moses-ini W [--ini moses.ini] --out OUT   the [weight] section (or a whole
                                                             moses.ini with its weights replaced,
                                                             in the file's dialect)
  smtlib weights from-moses-ini moses.ini --out W            smtlib names: NAME_k, sparse as is

The names of W are checked by the rule every command applies (``smtlib.weights.check_weight_names``):
with ``--ini``, against the dense features the moses.ini weighs; without, every name must be a
dense value ``NAME_k`` or a sparse name (containing ``_``). Sparse names are allowed either way (a
moses.ini does not list the sparse features Moses reads weights for), unless one is a misspelt
dense name (within an edit or two of one) -- or the moses.ini is in the old dialect only
(``[weight-d]`` ... without ``[weight]``), which has no place for them.

With ``--ini`` the weights are written in the dialect the file uses (:func:`smtlib.weights.update_moses_ini`):
old sections (``[weight-d]``, ``[weight-l]``, ``[weight-t]``, ``[weight-w]`` ...) get their new values
in place and no ``[weight]`` section is added; a ``[weight]`` section is rewritten where it is.
"""

from __future__ import annotations

import argparse

from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.weights import (check_weight_names, from_moses_ini, group_dense, read_weights, to_moses_ini,
                            update_moses_ini, write_weights)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    to_ini = sub.add_parser("to-moses-ini", help="write a moses.ini [weight] section")
    to_ini.add_argument("weights")
    to_ini.add_argument("--ini", help="a moses.ini whose weights are replaced in its own dialect: the [weight] "
                                      "section, or the old [weight-d] [weight-l] [weight-t] [weight-w] ... values "
                                      "in place (other sections kept)")
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
        text = update_moses_ini(args.ini, weights)
    else:
        dense, _ = group_dense(weights)
        check_weight_names(weights, [f"{g}_{k}" for g, values in dense.items() for k in range(len(values))],
                           has_sparse=True, what="the weights file")
        text = to_moses_ini(weights)
    with atomic_output(args.out) as out:
        out.write(text)
    return 0
