"""The example data of the fake decoder and two ways to run ``smtlib loop`` on it.

:func:`loop_in_process` runs the command in the test's process (``smtlib.cli.main``), which saves
the start-up of a Python process per run; the tests that need a real process (a kill, the exit
status as a user sees it) use the ``cli`` fixture of ``tests/conftest.py``.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import pathlib

import pytest

from smtlib.cli import main
from tests.support.fake_decoder import command, write_example


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> dict[str, str]:
    """The fake decoder's dev and test sets and initial weights (:func:`write_example`)."""
    return write_example(tmp_path_factory.mktemp("loop-example"))


def loop_args(example: dict[str, str], work: pathlib.Path, mode: str = "weights", *options: str,
              extra: str = "", init: str | None = None) -> list[str]:
    """``smtlib loop`` options for the example: the fake decoder passing weights as ``mode``, k = 4."""
    init = init or (example["moses.ini"] if mode == "ini" else example["init.weights"])
    return ["loop", "--source", example["dev.src"], "--refs", example["dev.en"], "--init", init,
            "--decoder", command(mode, extra), "--work-dir", str(work), "--k", "4", *options]


def loop_in_process(args: list[str]) -> tuple[int, str]:
    """Run ``smtlib ARGS`` in this process: (exit status, standard error)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, err.getvalue()


def curve(work: pathlib.Path) -> list[dict[str, str]]:
    """``curve.tsv`` as rows of column -> text."""
    lines = (work / "curve.tsv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]


def nbest_lines(path: pathlib.Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()


def outputs(work: pathlib.Path) -> dict[str, bytes]:
    """Every file of a working directory that must not depend on timing or on the directory's path:
    weights, n-best lists, tuner info, best.json; curve.tsv without its seconds column."""
    files = {}
    for path in sorted(work.rglob("*")):
        rel = path.relative_to(work).as_posix()
        if path.is_dir() or path.name in ("scores.json", "loop.json", "curve.tsv", "pool.bin") or path.name.endswith(".log"):
            continue
        files[rel] = path.read_bytes()
    files["curve.tsv"] = "\n".join("\t".join(row[k] for k in row if k != "seconds") for row in curve(work)).encode()
    return files
