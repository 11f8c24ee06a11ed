"""Our Tables 4-6 next to Cherry & Foster's (2012) published ones.

The paper's numbers (``cherry_foster_2012.tsv``, transcribed from its Tables 4-6) come from other
corpora (Hansard/Europarl-sized Fr-En and En-Fr, NIST Zh-En) than ours (Multi30k), so absolute BLEU
is not comparable; what carries over is each method's difference to the baseline the paper names,
"Medium k-best MERT" (§5: "The important baseline when assessing the utility of a method is Medium
k-best MERT"). :func:`compare` therefore sets, for every method and feature set, our Tune/Test/SD
and the paper's side by side, each with its difference to its own table's Medium kb-mert Test,
and the method's rank by Test within its feature set in both tables.
"""

from __future__ import annotations

import csv
import importlib.resources
import os
from dataclasses import dataclass

from smtlib.errors import InputError
from smtlib.io import open_text
from smtlib.system.feature_sets import FEATURE_SETS

PAPER_TSV = "cherry_foster_2012.tsv"
BASELINE = ("kb-mert", "medium")


@dataclass(frozen=True)
class Cell:
    """One method x feature-set cell of a table: Tune and Test BLEU, SD (None where undefined)."""

    tune: float | None
    test: float | None
    sd: float | None


def _number(text: str) -> float | None:
    text = text.strip()
    if text in ("n/a", "-", ""):
        return None
    return float(text)


def paper_table(table: str) -> dict[tuple[str, str], Cell]:
    """The paper's ``table`` (``table4``, ``table5`` or ``table6``) as (method, feature set) -> Cell."""
    text = importlib.resources.files("smtlib.report").joinpath(PAPER_TSV).read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    header, body = rows[0], rows[1:]
    cells = {}
    for row in body:
        rec = dict(zip(header, row))
        if rec["table"] == table:
            cells[(rec["method"], rec["feature_set"])] = Cell(
                _number(rec["tune"]), _number(rec["test"]), _number(rec["sd"])
            )
    if not cells:
        raise InputError(f"the paper has no {table!r} (it has table4, table5, table6)")
    return cells


def read_our_table(path: str | os.PathLike) -> dict[tuple[str, str], Cell]:
    """A table written by ``smtlib report table`` (method, then Tune/Test/SD per feature set)."""
    with open_text(path, what="table") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader, None)
        if not header or header[0] != "method":
            raise InputError("not a table of `smtlib report table` (first column must be 'method')", path, 1)
        cells = {}
        for lineno, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise InputError(f"{len(row)} fields where the header has {len(header)}", path, lineno)
            for fs, title in ((fs.name, fs.title) for fs in FEATURE_SETS.values()):
                if f"{title} Test" not in header:
                    continue
                value = {col: row[header.index(f"{title} {col}")] for col in ("Tune", "Test", "SD")}
                try:
                    cell = Cell(_number(value["Tune"]), _number(value["Test"]), _number(value["SD"]))
                except ValueError:
                    raise InputError(f"not a number in the {title} columns", path, lineno) from None
                if cell.test is not None:
                    cells[(row[0], fs)] = cell
    if not cells:
        raise InputError("the table has no scores", path)
    return cells


def _ranks(cells: dict[tuple[str, str], Cell]) -> dict[tuple[str, str], int]:
    """1 = the best Test of its feature set (ties share the better rank)."""
    ranks = {}
    for fs in FEATURE_SETS:
        scores = [(key, c.test) for key, c in cells.items() if key[1] == fs and c.test is not None]
        for key, score in scores:
            ranks[key] = 1 + sum(other > score for _, other in scores)
    return ranks


def compare(ours: dict[tuple[str, str], Cell], paper: dict[tuple[str, str], Cell]) -> list[dict[str, str]]:
    """One row per (method, feature set) present in our table, with the paper's cell beside it."""
    if BASELINE not in paper:
        raise InputError("the paper's table lacks its Medium kb-mert baseline")
    our_base = ours.get(BASELINE)
    our_ranks, paper_ranks = _ranks(ours), _ranks(paper)

    def fmt(value: float | None, signed: bool = False) -> str:
        if value is None:
            return "-"
        return f"{value:+.2f}" if signed else f"{value:.2f}"

    rows = []
    for fs in FEATURE_SETS:
        for (method, cell_fs), cell in ours.items():
            if cell_fs != fs:
                continue
            theirs = paper.get((method, fs), Cell(None, None, None))
            rows.append({
                "method": method,
                "feature_set": fs,
                "tune": fmt(cell.tune),
                "test": fmt(cell.test),
                "sd": fmt(cell.sd),
                "test_vs_medium_kb_mert": fmt(None if our_base is None else cell.test - our_base.test, True),
                "rank": str(our_ranks[(method, fs)]),
                "paper_tune": fmt(theirs.tune),
                "paper_test": fmt(theirs.test),
                "paper_sd": fmt(theirs.sd),
                "paper_test_vs_medium_kb_mert": fmt(
                    None if theirs.test is None else theirs.test - paper[BASELINE].test, True
                ),
                "paper_rank": str(paper_ranks[(method, fs)]) if (method, fs) in paper_ranks else "-",
            })
    return rows


def format_comparison(rows: list[dict[str, str]], table_name: str, paper: str) -> str:
    """:func:`compare`'s rows as TSV, under a comment line naming both tables and the baseline."""
    text = (
        f"# {table_name} next to Cherry & Foster (2012) {paper}; "
        "differences are to each table's Medium kb-mert Test\n"
    )
    text += "\t".join(rows[0]) + "\n"
    return text + "".join("\t".join(row.values()) + "\n" for row in rows)
