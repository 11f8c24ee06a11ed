"""How the loop's weights reach the decoder: a weights file, a rewritten moses.ini, or command-line weights.

The initial weights (``--init``) are a weights file (``name value`` per line,
:func:`smtlib.weights.read_weights`) or a moses.ini (its ``[weight]`` section, or the old
``[weight-d]`` ... sections, read by :func:`smtlib.weights.from_moses_ini`, the library of
``smtlib weights from-moses-ini``). Which one is decided by the content: a file with a
``[section]`` header line is a moses.ini.

Every iteration writes its weights in each form the decoder command asks for
(:func:`write_iteration_weights`):

* ``{weights}``: ``weights``, a weights file;
* ``{ini}``: ``moses.ini``, the initial moses.ini with its weights replaced in the file's own dialect
  (:func:`smtlib.weights.update_moses_ini`, the library of ``smtlib weights to-moses-ini --ini``),
  as mert-moses.pl's ``create_config`` writes ``run N.moses.ini``;
* ``{weights_args}``: command-line weights as mert-moses.pl passes them, ``-weight-overwrite 'LM0= 0.5
  TranslationModel0= 0.2 0.2 0.2 0.2 ...'`` (one ``NAME=`` per dense feature, its values in order,
  Moses's ``-weight-overwrite`` syntax), plus ``-weight-file sparse.weights`` with the sparse weights
  (``name value`` per line) when there are any, as mert-moses.pl passes ``run N.sparse-weights``.
  Deviation: mert-moses.pl prints the values with ``%.6f``; here every value is printed exactly
  (the shortest text that reads back to the same double), so the decoder scores with the weights
  the tuner returned, and a weight below 5e-7 is not rounded to 0.

Which names are dense: a group ``NAME_0 .. NAME_{n-1}`` (:func:`smtlib.weights.group_dense`); a
name of one value without ``_`` (a Joshua-style name) goes in ``-weight-overwrite`` as ``name= v``;
every other name is sparse.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping

from smtlib.errors import InputError
from smtlib.io import atomic_output, read_lines
from smtlib.weights import format_value, from_moses_ini, group_dense, read_weights, update_moses_ini, write_weights

#: file names in an iteration's folder
WEIGHTS_FILE = "weights"
INI_FILE = "moses.ini"
SPARSE_FILE = "sparse.weights"


def is_moses_ini(path: str | os.PathLike) -> bool:
    """True when ``path`` has a ``[section]`` header line (a moses.ini), False for a weights file."""
    for raw in read_lines(path, what="initial weights file", allow_empty=True):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            return True
    return False


@dataclasses.dataclass(frozen=True)
class InitialWeights:
    """``--init``: its weights in smtlib names, and the moses.ini it came from (None for a weights file)."""

    weights: dict[str, float]
    ini: str | None
    path: str

    @classmethod
    def read(cls, path: str | os.PathLike) -> InitialWeights:
        """Read a weights file or a moses.ini (see the module docstring).

        Raises
        ------
        InputError
            For a damaged file (the readers' errors, at the line), or one without any weight.
        """
        path = os.fspath(path)
        if is_moses_ini(path):
            return cls(dict(from_moses_ini(path)), path, path)
        weights = read_weights(path)
        if not weights:
            raise InputError("the initial weights file has no weights", path)
        return cls(weights, None, path)


def split_for_moses(weights: Mapping[str, float]) -> tuple[dict[str, list[float]], dict[str, float]]:
    """``(groups for -weight-overwrite, sparse weights for -weight-file)`` (see the module docstring)."""
    dense, rest = group_dense(weights)
    overwrite = dict(dense)
    sparse: dict[str, float] = {}
    for name, value in rest.items():
        if "_" in name:
            sparse[name] = value
        else:
            overwrite[name] = [value]
    return overwrite, sparse


def weight_overwrite(groups: Mapping[str, list[float]]) -> str:
    """``NAME= v0 v1 NAME2= v`` (Moses's ``-weight-overwrite`` value)."""
    return " ".join(f"{name}= " + " ".join(format_value(v) for v in values) for name, values in groups.items())


def write_iteration_weights(folder: str | os.PathLike, weights: Mapping[str, float], initial: InitialWeights,
                            used: frozenset[str], *, header: str | None = None) -> dict[str, str]:
    """Write the iteration's weights in every form the decoder command uses; the placeholders' values.

    Parameters
    ----------
    folder
        The iteration's folder.
    weights
        The weights to decode with.
    initial
        ``--init`` (its moses.ini is the one rewritten for ``{ini}``).
    used
        The placeholders of the decoder command.

    Returns
    -------
    dict
        ``ini``, ``weights`` and ``weights_args`` -> their text in the command (paths shell-quoted).
        The weights file is always written: it is the iteration's record of its weights.

    Raises
    ------
    InputError
        For ``{ini}`` without a moses.ini ``--init``, or names the moses.ini has no place for.
    """
    folder = os.fspath(folder)
    values: dict[str, str] = {}
    path = os.path.join(folder, WEIGHTS_FILE)
    write_weights(path, weights, header=header)
    values["weights"] = shlex.quote(path)
    if "ini" in used:
        if initial.ini is None:
            raise InputError("the decoder command has {ini} but --init is a weights file, not a moses.ini")
        ini_path = os.path.join(folder, INI_FILE)
        text = update_moses_ini(initial.ini, weights)
        with atomic_output(ini_path) as out:
            if header:
                out.write("".join(f"# {line}\n" for line in header.splitlines()))
            out.write(text)
        values["ini"] = shlex.quote(ini_path)
    if "weights_args" in used:
        groups, sparse = split_for_moses(weights)
        args = f"-weight-overwrite {shlex.quote(weight_overwrite(groups))}" if groups else ""
        if sparse:
            sparse_path = os.path.join(folder, SPARSE_FILE)
            write_weights(sparse_path, sparse)
            args = f"{args} -weight-file {shlex.quote(sparse_path)}".strip()
        values["weights_args"] = args
    return values


def write_decoder_weights(path: str | os.PathLike, weights: Mapping[str, float], initial: InitialWeights,
                          *, header: str | None = None) -> None:
    """``weights`` in the decoder's own format: a moses.ini when ``--init`` was one, else a weights file."""
    if initial.ini is None:
        write_weights(path, weights, header=header)
        return
    text = update_moses_ini(initial.ini, weights)
    with atomic_output(path) as out:
        if header:
            out.write("".join(f"# {line}\n" for line in header.splitlines()))
        out.write(text)
