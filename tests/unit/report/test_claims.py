"""The paper's §5 claims evaluated (smtlib.report.claims) and `smtlib report paper --tests --findings`.

Unit tests build a table's tests directly (cells with their runs' Test, pair p-values): a known-better
method makes a claim hold, a significantly worse one makes it fail, a worse one that the test cannot
separate is not significant, identical methods tie. The paper's own numbers are judged too.
"""

from __future__ import annotations

import json
import statistics

import pytest

from smtlib.report.claims import CLAIMS, FAILS, FEW_RUNS, HOLDS, NOT_RUN, NOT_SIGNIFICANT, evaluate, format_findings
from smtlib.report.paper import Cell, CellTest, TableTests, paper_table

CLAIM = {c.key: i for i, c in enumerate(CLAIMS)}


def make_tests(cells: dict[tuple[str, str], list[float]], pairs: dict[tuple[str, str, str], float]) -> TableTests:
    """TableTests of cells (method, feature set) -> the runs' Test; the best of each column by mean."""
    tested = {}
    for (m, fs), runs in cells.items():
        column = {k: v for k, v in cells.items() if k[1] == fs}
        best = max(column, key=lambda k: statistics.fmean(column[k]))
        tested[(m, fs)] = CellTest(statistics.fmean(runs), statistics.stdev(runs) if len(runs) > 1 else None,
                                 tuple(runs), (m, fs) == best, None if (m, fs) == best else pairs.get((fs, m, best[0])))
    both = {**pairs, **{(fs, b, a): p for (fs, a, b), p in pairs.items()}}
    return TableTests(tested, both, 0.05, "sig")


def by_key(findings):
    return {f.claim.key: f for f in findings}


def test_claims_are_data_about_the_papers_methods_and_columns():
    names = {m for (m, _) in paper_table("table4")}
    for claim in CLAIMS:
        assert set(claim.methods) <= names and (claim.other is None or claim.other in names)
        assert set(claim.columns) <= {"small", "medium", "big"}
    assert len(CLAIMS) == 7


def test_the_papers_own_numbers():
    """The paper's Table 4 bears out every claim; Table 6 not lb-mira on Big (SVM ahead) nor MR within 0.2
    on Medium (0.25 below), as its text and numbers say."""
    paper4, paper6 = paper_table("table4"), paper_table("table6")
    runs = {key: [cell.test] * 2 for key, cell in paper4.items()}  # our table = the paper's, zero SD
    found = by_key(evaluate(make_tests(runs, {}), paper4))
    assert {k: f.paper_verdict for k, f in found.items()} == {c.key: HOLDS for c in CLAIMS}
    found6 = by_key(evaluate(make_tests({k: [c.test] * 2 for k, c in paper6.items()}, {}), paper6))
    assert found6["lb-mira-best"].paper_verdict == FAILS and found6["mr-within-0.2"].paper_verdict == FAILS
    assert found6["batch-vs-online-mira"].paper_verdict == FAILS  # kb-mira below mira on Zh-En Small, Medium
    assert found6["mira-vs-kb-mert"].paper_verdict == HOLDS and found6["pro-sd-largest"].paper_verdict == HOLDS


def test_a_known_better_method_holds_a_worse_one_does_not():
    cells = {("kb-mert", "medium"): [30.0, 30.1, 29.9], ("mira", "medium"): [29.0, 29.1, 28.9],
             ("kb-mira", "medium"): [31.0, 31.1, 30.9], ("lb-mira", "medium"): [29.8, 29.9, 29.7]}
    pairs = {("medium", "mira", "kb-mert"): 0.001, ("medium", "kb-mira", "kb-mert"): 0.001,
             ("medium", "lb-mira", "kb-mert"): 0.40, ("medium", "lb-mira", "kb-mira"): 0.002,
             ("medium", "mira", "kb-mira"): 0.001, ("medium", "mira", "lb-mira"): 0.3}
    found = by_key(evaluate(make_tests(cells, pairs), paper_table("table4")))
    verdicts = [c.verdict for c in found["mira-vs-kb-mert"].comparisons]
    assert verdicts == [FAILS, HOLDS, NOT_SIGNIFICANT]  # mira significantly below, kb-mira above, lb-mira tied
    assert found["mira-vs-kb-mert"].verdict == FAILS
    lb_best = found["lb-mira-best"]
    assert [c.verdict for c in lb_best.comparisons] == [FAILS, NOT_RUN]  # kb-mira is significantly better; no Big
    assert "vs best kb-mira 31.00" in lb_best.comparisons[0].ours
    assert found["mr-within-0.2"].verdict == NOT_RUN and found["pro-sd-largest"].verdict == NOT_RUN
    # without our direct optimizers, the paper's side is all its cells of the claim (not only our lb-mira's)
    assert "(9 cells) vs lb-mira 0.07 (3)" in found["direct-optimizers-vary"].comparisons[0].paper


def test_identical_methods_tie():
    same = [30.0, 30.4, 29.8]
    cells = {("lb-mira", fs): same for fs in ("small", "medium", "big")}
    cells.update({(m, fs): same for m in ("mr", "mira", "kb-mira", "pro", "svm") for fs in ("small", "medium", "big")})
    pairs = {(fs, a, "lb-mira"): 1.0 for fs in ("small", "medium", "big")
             for a in ("mr", "mira", "kb-mira", "pro", "svm")}
    pairs.update({(fs, a, "mira"): 1.0 for fs in ("small", "medium", "big") for a in ("kb-mira",)})
    found = by_key(evaluate(make_tests(cells, pairs), paper_table("table4")))
    # "at least as good" and "within 0.2" hold for a tie; "varies more" is not significant (p = 1)
    assert found["mr-within-0.2"].verdict == HOLDS and found["batch-vs-online-mira"].verdict == HOLDS
    vary = found["direct-optimizers-vary"]
    assert vary.verdict == NOT_SIGNIFICANT and vary.comparisons[0].p > 0.5
    assert found["pro-sd-largest"].verdict == HOLDS  # equal SDs: PRO's is (one of) the largest


def test_sd_claims():
    wide, narrow = [30.0, 32.0, 28.0, 31.5, 28.5], [30.0, 30.05, 29.95, 30.02, 29.98]
    cells = {(m, "big"): narrow for m in ("mira", "kb-mira", "lb-mira", "mr", "svm")}
    cells[("pro", "big")] = wide
    cells[("mr", "big")] = [30.0, 31.0, 29.0, 30.8, 29.2]
    cells[("svm", "big")] = [30.0, 31.0, 29.0, 30.8, 29.2]
    found = by_key(evaluate(make_tests(cells, {}), paper_table("table4")))
    pro = found["pro-sd-largest"].comparisons[0]
    assert pro.verdict == HOLDS and "vs largest other mr" in pro.ours
    vary = found["direct-optimizers-vary"]
    assert vary.verdict == HOLDS and vary.comparisons[0].p < 0.001  # pooled over pro, mr, svm vs lb-mira
    small = found["sds-small"]
    assert small.verdict == FAILS and f"largest SD {statistics.stdev(wide):.2f} (pro big)" in small.comparisons[0].ours
    # lb-mira wide, the direct optimizers narrow: significantly the other way
    flipped = dict(cells)
    flipped[("lb-mira", "big")] = wide
    for m in ("pro", "mr", "svm"):
        flipped[(m, "big")] = narrow
    found = by_key(evaluate(make_tests(flipped, {}), paper_table("table4")))
    assert found["direct-optimizers-vary"].verdict == FAILS
    assert found["pro-sd-largest"].verdict == FAILS  # lb-mira's SD is significantly larger than PRO's


def test_fewer_than_two_runs_are_flagged_as_not_meaningful():
    cells = {("kb-mert", "medium"): [30.0], ("lb-mira", "medium"): [31.0], ("mira", "medium"): [30.5]}
    pairs = {("medium", "lb-mira", "kb-mert"): 0.01, ("medium", "mira", "kb-mert"): 0.2,
             ("medium", "mira", "lb-mira"): 0.3}
    tests = make_tests(cells, pairs)
    paper = paper_table("table4")
    findings = evaluate(tests, paper)
    found = by_key(findings)
    assert found["mira-vs-kb-mert"].few_runs and found["mira-vs-kb-mert"].verdict == HOLDS
    assert found["sds-small"].verdict == NOT_RUN
    assert "SD undefined with fewer than 2 runs" in found["sds-small"].comparisons[0].ours
    ours = {k: Cell(None, c.test, c.sd) for k, c in tests.cells.items()}
    text = format_findings(findings, "table4", "table4", tests, ours, paper)
    assert "Some cells have fewer than 2 runs" in text
    claim_lines = [ln for ln in text.splitlines() if ln.startswith("| 1 |")]
    assert FEW_RUNS in claim_lines[0]


def test_report_paper_writes_orderings_and_findings(cli, tmp_path):
    table = tmp_path / "t.tsv"
    table.write_text("method\tMedium Tune\tMedium Test\tMedium SD\tMedium Sig\n"
                     "kb-mert\t30.00\t33.00\t0.10\t*\nlb-mira\t31.00\t34.00\t0.20\tbest\nmr\t31.00\t33.90\t0.10\t=\n",
                     encoding="utf-8")
    cells = [{"method": m, "feature_set": "medium", "test": t, "sd": sd, "run_tests": runs, "best": "lbmira",
              "p_vs_best": p} for m, t, sd, runs, p in
             (("mert", 33.0, 0.1, [32.9, 33.1], 0.001), ("lbmira", 34.0, 0.2, [33.8, 34.2], None),
              ("mr", 33.9, 0.1, [33.8, 34.0], 0.6))]
    pairs = [{"feature_set": "medium", "a": a, "b": b, "p": p}
             for a, b, p in (("mert", "lbmira", 0.001), ("mert", "mr", 0.01), ("lbmira", "mr", 0.6))]
    (tmp_path / "t.json").write_text(json.dumps({"alpha": 0.05, "cells": cells, "pairs": pairs, "signature": "s"}))
    out, findings = tmp_path / "vs.tsv", tmp_path / "f.md"
    r = cli("report", "paper", "--table", table, "--tests", tmp_path / "t.json", "--paper", "table4", "--out", out,
            "--findings", findings)
    assert r.returncode == 0, r.stderr
    rows = [ln.split("\t") for ln in out.read_text().splitlines() if not ln.startswith("#")]
    assert rows[0] == ["feature_set", "ahead", "behind", "paper_ahead", "paper_behind", "paper_diff", "ours_ahead",
                       "ours_behind", "ours_diff", "agrees", "p", "significant", "runs"]
    got = {(r[1], r[2]): (r[5], r[8], r[9], r[11]) for r in rows[1:]}
    # the paper: lb-mira 40.65 > mr 40.57 > kb-mert 40.29 on Medium
    assert got == {("lb-mira", "kb-mert"): ("+0.36", "+1.00", "yes", "yes"),
                   ("mr", "kb-mert"): ("+0.28", "+0.90", "yes", "yes"),
                   ("lb-mira", "mr"): ("+0.08", "+0.10", "yes", "no")}
    text = findings.read_text()
    assert "| 4 | MR is within 0.2 BLEU of batch lattice MIRA" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("| 4 |"))
    assert "mr 33.90 vs lb-mira 34.00 (-0.10, p = 0.6000)" in line and "**holds**" in line
    assert "## Each cell next to the paper's" in text
    # the tests must be the table's
    table.write_text(table.read_text().replace("33.90", "33.80"), encoding="utf-8")
    r = cli("report", "paper", "--table", table, "--tests", tmp_path / "t.json", "--paper", "table4", "--out", out)
    assert r.returncode == 2 and "does not belong to this table" in r.stderr
    r = cli("report", "paper", "--table", table, "--paper", "table4", "--out", out, "--findings", findings)
    assert r.returncode == 2 and "--findings needs --tests" in r.stderr


@pytest.mark.parametrize("table", ["table4", "table5", "table6"])
def test_findings_of_the_paper_against_itself(table):
    """Our table = the paper's (each cell two runs at its Test): every claim's point estimates agree."""
    paper = paper_table(table)
    tests = make_tests({k: [c.test - 0.01, c.test + 0.01] for k, c in paper.items()}, {})
    for f in evaluate(tests, paper):
        if f.claim.kind in ("at_least", "best", "within"):
            assert f.verdict in (f.paper_verdict, NOT_SIGNIFICANT), f.claim.key
