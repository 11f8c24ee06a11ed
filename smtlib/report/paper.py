"""Our Tables 4-6 next to Cherry & Foster's (2012) published ones.

The paper's numbers (``cherry_foster_2012.tsv``, transcribed from its Tables 4-6) come from other
corpora (Hansard/Europarl-sized Fr-En and En-Fr, NIST Zh-En) than ours (Multi30k), so absolute BLEU
is not comparable; what carries over is each method's difference to the baseline the paper names,
"Medium k-best MERT" (§5: "The important baseline when assessing the utility of a method is Medium
k-best MERT"). :func:`compare` therefore sets, for every method and feature set, our Tune/Test/SD
and the paper's side by side, each with its difference to its own table's Medium kb-mert Test,
and the method's rank by Test within its feature set in both tables (a section of the findings
file, :func:`smtlib.report.claims.format_findings`).

What else carries over is the order of the methods within a column: :func:`orderings` takes every
pair of methods the paper's column orders (the one with the higher Test "ahead") and says whether
our table orders them alike and, from the table's tests (:func:`read_tests`, written by
``smtlib report table --tests``: the stratified approximate randomization test over the runs,
:mod:`smtlib.report.significance`), whether our difference is significant. The paper's §5 findings
are decided by :mod:`smtlib.report.claims`, with run-level tests over the runs that
:func:`read_tests` pairs by dev sub-sample.
"""

from __future__ import annotations

import csv
import importlib.resources
import os
from dataclasses import dataclass

from smtlib.errors import InputError
from smtlib.io import open_text, read_json
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


@dataclass(frozen=True)
class CellTest:
    """One cell of a tested table (:func:`read_tests`): its Test and SD, the runs' Test (in
    sub-sample order), whether it is its column's best, its p against the best, and the dev
    sub-sample of each run (``samples[i]`` is the run of ``run_tests[i]``: runs of two cells tuned on
    the same sub-sample are paired, :mod:`smtlib.report.claims`)."""

    test: float
    sd: float | None
    run_tests: tuple[float, ...]
    best: bool
    p_vs_best: float | None
    samples: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.samples) != len(self.run_tests) or len(set(self.samples)) != len(self.samples):
            raise ValueError(f"{len(self.run_tests)} runs with sub-samples {list(self.samples)} (one distinct "
                             "sub-sample per run)")

    @property
    def runs(self) -> int:
        return len(self.run_tests)


@dataclass(frozen=True)
class TableTests:
    """A table's tests: cells and pair p-values keyed by the paper's method names."""

    cells: dict[tuple[str, str], CellTest]
    pairs: dict[tuple[str, str, str], float]  # (feature set, a, b) -> p, both orders
    alpha: float
    signature: str

    def p(self, fs: str, a: str, b: str) -> float | None:
        return self.pairs.get((fs, a, b))


def read_tests(path: str | os.PathLike) -> TableTests:
    """The tests of ``smtlib report table --tests`` (JSON), with the paper's method names."""
    from smtlib.report.tables import paper_name

    data = read_json(path, "table tests")
    try:
        cells = {
            (paper_name(c["method"]), c["feature_set"]): CellTest(
                float(c["test"]), None if c["sd"] is None else float(c["sd"]), tuple(map(float, c["run_tests"])),
                c["best"] == c["method"], None if c["p_vs_best"] is None else float(c["p_vs_best"]),
                tuple(str(s) for s in c["samples"]))
            for c in data["cells"]
        }
        pairs = {}
        for q in data["pairs"]:
            a, b = paper_name(q["a"]), paper_name(q["b"])
            pairs[(q["feature_set"], a, b)] = pairs[(q["feature_set"], b, a)] = float(q["p"])
        return TableTests(cells, pairs, float(data["alpha"]), str(data.get("signature", "")))
    except (KeyError, TypeError, ValueError) as err:
        raise InputError(f"not the tests of `smtlib report table --tests` ({type(err).__name__}: {err})",
                         path) from None


def check_tests_match(ours: dict[tuple[str, str], Cell], tests: TableTests, table: str | os.PathLike) -> None:
    """The tests are those of the table: the same cells with the same Test (to the table's rounding)."""
    for key, cell in ours.items():
        tested = tests.cells.get(key)
        if tested is None or f"{tested.test:.2f}" != f"{cell.test:.2f}":
            raise InputError(f"the tests file does not belong to this table ({key[0]} {key[1]}: Test "
                             f"{cell.test:.2f} in the table, {'none' if tested is None else f'{tested.test:.2f}'} "
                             "in the tests)", table)


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


ORDERING_COLUMNS = ("feature_set", "ahead", "behind", "paper_ahead", "paper_behind", "paper_diff", "ours_ahead",
                    "ours_behind", "ours_diff", "agrees", "p", "significant", "runs")


def orderings(
    ours: dict[tuple[str, str], Cell], paper: dict[tuple[str, str], Cell], tests: TableTests | None = None
) -> list[dict[str, str]]:
    """Every pair of methods the paper's column orders, with our order and our test.

    One row per feature set and pair of methods present in both tables, in the paper's row order;
    ``ahead`` is the method with the higher Test in the paper (the earlier row when the paper ties them:
    ``paper_diff`` +0.00). ``agrees``: ``yes`` when ours puts the same method ahead, ``no`` when ours
    puts the other ahead, ``tie`` on equal TableTests, ``-`` when the paper ties them. ``p`` and
    ``significant`` (p < alpha) are our test of the pair (``-`` without ``tests``); ``runs`` is the
    number of runs per cell (with one, the test is across test sentences only).
    """
    rows = []
    methods = list(dict.fromkeys(m for m, _ in paper))
    for fs in FEATURE_SETS:
        present = [m for m in methods if (m, fs) in paper and (m, fs) in ours]
        for i, x in enumerate(present):
            for y in present[i + 1:]:
                ahead, behind = (y, x) if paper[(y, fs)].test > paper[(x, fs)].test else (x, y)
                paper_diff = round(paper[(ahead, fs)].test - paper[(behind, fs)].test, 2)
                ta, tb = (tests.cells[(m, fs)].test if tests else ours[(m, fs)].test for m in (ahead, behind))
                diff = ta - tb
                if paper_diff == 0:
                    agrees = "-"
                else:
                    agrees = "yes" if diff > 0 else "no" if diff < 0 else "tie"
                p = tests.p(fs, ahead, behind) if tests else None
                rows.append({
                    "feature_set": fs, "ahead": ahead, "behind": behind,
                    "paper_ahead": f"{paper[(ahead, fs)].test:.2f}", "paper_behind": f"{paper[(behind, fs)].test:.2f}",
                    "paper_diff": f"{paper_diff:+.2f}", "ours_ahead": f"{ta:.2f}", "ours_behind": f"{tb:.2f}",
                    "ours_diff": f"{diff:+.2f}", "agrees": agrees,
                    "p": "-" if p is None else f"{p:.6f}",
                    "significant": "-" if p is None else ("yes" if p < tests.alpha else "no"),
                    "runs": str(tests.cells[(ahead, fs)].runs) if tests else "-",
                })
    return rows


def format_orderings(rows: list[dict[str, str]], table_name: str, paper: str, tests: TableTests | None) -> str:
    """:func:`orderings`' rows as TSV, under comment lines naming both tables and the test."""
    text = (f"# {table_name} next to Cherry & Foster (2012) {paper}: each pair of methods the paper orders in a "
            "column (ahead = higher Test in the paper); agrees = ours orders them alike\n")
    if tests is None:
        text += "# no tests given: p and significant are not known\n"
    else:
        text += (f"# p: stratified approximate randomization over the runs (significant: p < {tests.alpha}); "
                 f"{tests.signature}\n")
        if any(c.runs < 2 for c in tests.cells.values()):
            text += "# runs < 2: the test is across test sentences only; it says nothing about optimizer instability\n"
    text += "\t".join(ORDERING_COLUMNS) + "\n"
    return text + "".join("\t".join(row[c] for c in ORDERING_COLUMNS) + "\n" for row in rows)
