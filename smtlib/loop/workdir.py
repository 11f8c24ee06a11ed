"""The working directory of ``smtlib loop``: one folder per iteration, the curve, the best weights.

Layout (every file written atomically, :func:`smtlib.io.atomic_output`)::

    WORK/loop.json              the configuration the directory is bound to (smtlib.loop.options)
    WORK/curve.tsv              iteration, dev_bleu, pool_bleu, [test_bleu,] seconds: one row per iteration
    WORK/best.weights           the weights of the iteration with the best dev score (the decoder's 1-best)
    WORK/best.moses.ini         the same in the decoder's moses.ini (when --init is a moses.ini)
    WORK/best.json              which iteration that is, its scores, whether the loop has finished and why
    WORK/itN/weights            the weights the decoder used in iteration N (and moses.ini / sparse.weights,
                                as the decoder command reads them)
    WORK/itN/decoder.log        the decoder's standard error
    WORK/itN/nbest.gz           its n-best list of the dev set (shards joined, ids renumbered)
    WORK/itN/pool.bin           the binary pool the tuner read (smtlib.kbest.store): this list and the
                                earlier ones (all, or the last --prev-nbest)
    WORK/itN/tuner.json         the step's info: every run's tuner figures, seeds, constraints
    WORK/itN/optimized.weights  the optimizer's weights (runs averaged)
    WORK/itN/next.weights       after historic interpolation: the weights of iteration N+1
    WORK/itN/test.nbest.gz      with --test: the test set's n-best list, and test.1best, test.decoder.log
    WORK/itN/scores.json        dev, pool and test scores, weights moved, seconds, stop: written last

An iteration is **complete** when its ``scores.json`` exists (:meth:`WorkDir.complete_iterations`,
counted from 1 without a gap): that file is written last, so a loop killed in iteration N leaves
iterations 1 .. N-1 complete, and a rerun starts iteration N again from an empty folder (as
mert-moses.pl's ``--continue`` restarts after its ``finished_step.txt``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from smtlib.errors import InputError
from smtlib.io import atomic_output, read_json
from smtlib.loop.options import configuration_difference

CONFIG = "loop.json"
CURVE = "curve.tsv"
BEST_WEIGHTS = "best.weights"
BEST_INI = "best.moses.ini"
BEST_JSON = "best.json"
NBEST = "nbest.gz"
POOL = "pool.bin"
TUNER = "tuner.json"
OPTIMIZED = "optimized.weights"
NEXT = "next.weights"
SCORES = "scores.json"
DECODER_LOG = "decoder.log"
TEST_NBEST = "test.nbest.gz"
TEST_ONE_BEST = "test.1best"
TEST_LOG = "test.decoder.log"
SCRATCH = ".work"


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as JSON values (the tuners' info holds some)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def write_json(path: str | os.PathLike, data: Any) -> None:
    """``data`` as indented JSON, atomically (numpy values as plain numbers)."""
    with atomic_output(path) as fh:
        json.dump(data, fh, indent=1, default=_plain)
        fh.write("\n")


class WorkDir:
    """The working directory (see the module docstring)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = os.fspath(root)

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def folder(self, iteration: int) -> str:
        return os.path.join(self.root, f"it{iteration}")

    def file(self, iteration: int, name: str) -> str:
        return os.path.join(self.folder(iteration), name)

    def bind(self, configuration: Mapping[str, Any]) -> bool:
        """Record ``configuration`` in a new directory, or check it against the recorded one.

        Returns True when the directory already had a configuration (a rerun).

        Raises
        ------
        InputError
            When the directory was started with another configuration (naming what differs), or
            the path is a file.
        """
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise InputError("--work-dir is a file, not a directory", self.root)
        path = self.path(CONFIG)
        if not os.path.exists(path):
            if os.path.isdir(self.root) and any(re.fullmatch(r"it[0-9]+", n) for n in os.listdir(self.root)):
                raise InputError(f"the working directory has iteration folders but no {CONFIG}: not a smtlib loop "
                                 "directory, or damaged; use another --work-dir", self.root)
            os.makedirs(self.root, exist_ok=True)
            write_json(path, dict(configuration))
            return False
        recorded = read_json(path, what=CONFIG)
        difference = configuration_difference(recorded, configuration)
        if difference is not None:
            raise InputError(f"this working directory belongs to a loop started with other options: {difference}; "
                             "rerun with the same options to continue it, or give another --work-dir", path)
        return True

    def complete_iterations(self) -> list[int]:
        """1, 2, ... up to the last iteration whose ``scores.json`` exists, without a gap."""
        done = []
        while os.path.exists(self.file(len(done) + 1, SCORES)):
            done.append(len(done) + 1)
        return done

    def scores(self, iteration: int) -> dict:
        return read_json(self.file(iteration, SCORES), what=SCORES)

    def start_iteration(self, iteration: int) -> str:
        """An empty folder for ``iteration`` (what an interrupted attempt left is removed)."""
        folder = self.folder(iteration)
        if os.path.lexists(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        return folder

    def write_curve(self, rows: Sequence[Mapping[str, Any]], with_test: bool) -> None:
        """``curve.tsv``: one row per complete iteration (BLEU 0-100 with 4 decimals, seconds with 2)."""
        header = ["iteration", "dev_bleu", "pool_bleu"] + (["test_bleu"] if with_test else []) + ["seconds"]
        with atomic_output(self.path(CURVE)) as out:
            out.write("\t".join(header) + "\n")
            for row in rows:
                values = [str(row["iteration"]), f"{row['dev_bleu']:.4f}", f"{row['pool_bleu']:.4f}"]
                if with_test:
                    values.append(f"{row['test_bleu']:.4f}")
                values.append(f"{row['seconds']:.2f}")
                out.write("\t".join(values) + "\n")


def best_iteration(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The row of the best dev score (``dev_score``, the tuning metric of the decoder's 1-best; the
    earliest on ties): mert-moses.pl's ``--return-best-dev``."""
    return max(rows, key=lambda row: (row["dev_score"], -row["iteration"]))
