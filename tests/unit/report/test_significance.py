"""Tables 4-6 with significance marks (smtlib.report.significance, `smtlib report table --outputs`).

Synthetic runs: references of random words, each method's runs the references with a share of the
words replaced (more for a worse method), so the order of the methods is known; a method whose
outputs are copies of another's is identical to it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sacrebleu

from smtlib.report.significance import format_p, mark

TEST_SETS = {"t1": 60, "t2": 40}
VOCAB = [f"w{i}" for i in range(50)]


def _noisy(line: str, q: float, rng) -> str:
    """Each word replaced with probability q; kept words upper-cased with probability 0.1 (which
    lowercased BLEU, the runs' setting, does not see)."""
    words = [w if rng.random() > q else str(rng.choice(VOCAB)) for w in line.split()]
    return " ".join(w.upper() if rng.random() < 0.1 else w for w in words)


def write_runs(tmp_path, noise: dict[tuple[str, str], float | str], runs: int = 3, lowercase_refs: bool = True):
    """Runs of (method, feature set) -> noise (share of words replaced) or the method it copies.

    Returns (summaries, outputs, refs): summary paths, output paths (per run, one per test set in
    TEST_SETS order) and ``NAME=REF`` arguments. Each summary records sacrebleu's BLEU of its outputs.
    """
    rng = np.random.default_rng(0)
    refs = {}
    for t, n in TEST_SETS.items():
        lines = [" ".join(rng.choice(VOCAB, size=int(rng.integers(6, 14)))) for _ in range(n)]
        refs[t] = lines
        (tmp_path / f"{t}.ref").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summaries, outputs, texts = [], [], {}
    for (method, fs), q in noise.items():
        for s in range(runs):
            run = tmp_path / fs / method / f"s{s}"
            run.mkdir(parents=True)
            r = np.random.default_rng([s, len(texts)])
            scores = {}
            for t in TEST_SETS:
                hyps = texts[(q, fs, s, t)] if isinstance(q, str) else [_noisy(x, q, r) for x in refs[t]]
                texts[(method, fs, s, t)] = hyps
                (run / f"test.{t}.1best").write_text("\n".join(hyps) + "\n", encoding="utf-8")
                scores[t] = sacrebleu.corpus_bleu(hyps, [refs[t]], tokenize="none", lowercase=True).score
                outputs.append(run / f"test.{t}.1best")
            summary = {"pair": "fr-en", "fs": fs, "method": method, "setting": "default", "sample": str(s),
                       "tune": 30.0 + s, "tests": scores, "test": sum(scores.values()) / len(scores),
                       "best_iteration": 1, "iterations": 2, "signatures": []}
            (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
            summaries.append(run / "summary.json")
    return summaries, outputs, [f"{t}={tmp_path / f'{t}.ref'}" for t in TEST_SETS]


def run_table(cli, tmp_path, summaries, outputs, refs, methods, feature_sets=("small",), *extra):
    r = cli("report", "table", "--summaries", *summaries, "--methods", *methods, "--feature-sets", *feature_sets,
            "--out", tmp_path / "t.tsv", "--companion", tmp_path / "t.md", "--tests", tmp_path / "t.json",
            "--outputs", *outputs, "--test-refs", *refs, "--tokenize", "none", "--lowercase",
            "--ar-shuffles", "999", "--boot-samples", "100", "--seed", "3", *extra)
    return r


def read_tsv(path):
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]


def test_mark_and_p_formatting():
    assert mark(True, None, 5) == "best"
    # the run-level p decides; the sentence-level p only where there is no run-level test
    assert mark(False, 0.5, 5, 0.01) == "*" and mark(False, 0.01, 5, 0.2) == "="
    assert mark(False, 0.01, 1) == "(*)" and mark(False, 0.5, 1) == "(=)" and mark(False, 0.01, 5) == "(*)"
    # never rounded across alpha: 100/2001 = 0.049975... is not printed 0.0500
    assert format_p(100 / 2001) == "0.04998" and format_p(0.05) == "0.0500" and format_p(0.5) == "0.5000"
    assert format_p(0.0499999) == "0.0499999"
    assert format_p(1e-6) == "<0.0001"


def test_a_known_worse_method_is_marked_and_an_identical_one_is_tied(cli, tmp_path):
    noise = {("mert", "small"): 0.5, ("kbmira", "small"): 0.15, ("lbmira", "small"): "kbmira",
             ("mert", "medium"): 0.15, ("kbmira", "medium"): 0.5}
    summaries, outputs, refs = write_runs(tmp_path, noise)
    r = run_table(cli, tmp_path, summaries, outputs, refs, ["mert", "kbmira", "lbmira"], ["small", "medium"],
                  "--not-applicable", "lbmira:medium")
    assert r.returncode == 0, r.stderr
    rows = read_tsv(tmp_path / "t.tsv")
    assert rows[0] == ["method", "Small Tune", "Small Test", "Small SD", "Small Sig",
                       "Medium Tune", "Medium Test", "Medium SD", "Medium Sig"]
    sig = {row[0]: (row[4], row[8]) for row in rows[1:]}
    # Small: kb-mira best (ties go to the earlier row), lb-mira identical (p = 1), kb-mert far worse
    assert sig == {"kb-mert": ("*", "best"), "kb-mira": ("best", "*"), "lb-mira": ("=", "n/a")}
    tests = json.loads((tmp_path / "t.json").read_text())
    cells = {(c["method"], c["feature_set"]): c for c in tests["cells"]}
    assert cells[("lbmira", "small")]["p_vs_best"] == 1.0 and cells[("lbmira", "small")]["best"] == "kbmira"
    assert cells[("mert", "small")]["p_vs_best"] == pytest.approx(1 / 1000)  # no shuffle reaches the gap
    assert cells[("mert", "small")]["runs"] == 3 and cells[("mert", "small")]["s_opt"] > 0
    pairs = {(p["feature_set"], p["a"], p["b"]): p["p"] for p in tests["pairs"]}
    assert set(pairs) == {("small", "mert", "kbmira"), ("small", "mert", "lbmira"), ("small", "kbmira", "lbmira"),
                          ("medium", "mert", "kbmira")}  # every pair of a column
    assert pairs[("small", "kbmira", "lbmira")] == 1.0
    assert pairs[("small", "mert", "kbmira")] == cells[("mert", "small")]["p_vs_best"]
    md = (tmp_path / "t.md").read_text()
    assert "## Significance: each cell against its column's best" in md and "ar:999|ties:count|bs:100|seed:3" in md
    assert "| lb-mira | small | 3 |" in md and "| = |" in md and "| kb-mira | small | 3 |" in md


def test_p_against_the_best_is_smtlib_compares(cli, tmp_path):
    """The cell test is `smtlib compare` on the runs' concatenated test outputs, same seed and shuffles."""
    noise = {("mert", "small"): 0.3, ("kbmira", "small"): 0.25}
    summaries, outputs, refs = write_runs(tmp_path, noise)
    assert run_table(cli, tmp_path, summaries, outputs, refs, ["mert", "kbmira"]).returncode == 0
    cells = {c["method"]: c for c in json.loads((tmp_path / "t.json").read_text())["cells"]}
    best = cells["mert"]["best"]
    other = "mert" if best == "kbmira" else "kbmira"
    concat = {}
    for method in ("mert", "kbmira"):
        for s in range(3):
            run = tmp_path / "small" / method / f"s{s}"
            path = tmp_path / f"{method}.{s}.cat"
            path.write_text("".join((run / f"test.{t}.1best").read_text() for t in TEST_SETS), encoding="utf-8")
            concat.setdefault(method, []).append(str(path))
    ref = tmp_path / "all.ref"
    ref.write_text("".join((tmp_path / f"{t}.ref").read_text() for t in TEST_SETS), encoding="utf-8")
    r = cli("compare", "--refs", ref, "--baseline", *concat[best], "--system", f"x={','.join(concat[other])}",
            "--metrics", "bleu", "--ar-shuffles", "999", "--boot-samples", "100", "--seed", "3",
            "--tokenize", "none", "--lowercase", "--tsv", tmp_path / "cmp.tsv")
    assert r.returncode == 0, r.stderr
    rows = {row[0]: row for row in read_tsv(tmp_path / "cmp.tsv")[1:]}
    assert float(rows["x"][6]) == pytest.approx(cells[other]["p_vs_best"], abs=1e-6)
    assert float(rows["x"][4]) == pytest.approx(cells[other]["s_sel"], abs=1e-4)
    assert float(rows["x"][5]) == pytest.approx(cells[other]["s_opt"], abs=1e-4)


def test_one_run_per_cell_marks_in_parentheses(cli, tmp_path):
    noise = {("mert", "small"): 0.6, ("kbmira", "small"): 0.1, ("lbmira", "small"): "kbmira"}
    summaries, outputs, refs = write_runs(tmp_path, noise, runs=1)
    r = run_table(cli, tmp_path, summaries, outputs, refs, ["mert", "kbmira", "lbmira"], ["small"], "--pairs", "best")
    assert r.returncode == 0, r.stderr
    assert [row[4] for row in read_tsv(tmp_path / "t.tsv")[1:]] == ["(*)", "best", "(=)"]
    tests = json.loads((tmp_path / "t.json").read_text())
    assert all(c["s_opt"] is None and c["runs"] == 1 for c in tests["cells"])
    assert len(tests["pairs"]) == 2 and tests["pairs_tested"] == "best"  # against the best only
    md = (tmp_path / "t.md").read_text()
    assert "Cells with fewer than 2 runs: their p-values are across test sentences only" in md


def test_outputs_that_do_not_score_their_runs_are_rejected(cli, tmp_path):
    noise = {("mert", "small"): 0.5, ("kbmira", "small"): 0.1}
    summaries, outputs, refs = write_runs(tmp_path, noise, runs=2)
    methods = ["mert", "kbmira"]
    swapped = outputs[4:6] + outputs[2:4] + outputs[0:2] + outputs[6:]  # run 0 of mert <-> run 0 of kbmira
    r = run_table(cli, tmp_path, summaries, swapped, refs, methods)
    assert r.returncode == 2 and "records" in r.stderr and "another run" in r.stderr
    assert not (tmp_path / "t.tsv").exists() and not (tmp_path / "t.json").exists()
    r = run_table(cli, tmp_path, summaries, outputs[:-1], refs, methods)
    assert r.returncode == 2 and "--outputs has 7 files for 4 summaries x 2 test sets" in r.stderr
    r = cli("report", "table", "--summaries", *summaries, "--methods", *methods, "--feature-sets", "small",
            "--out", tmp_path / "t.tsv", "--companion", tmp_path / "t.md", "--tests", tmp_path / "t.json",
            "--outputs", *outputs, "--test-refs", *refs, "--tokenize", "none")  # cased BLEU: not the runs'
    assert r.returncode == 2 and "other BLEU settings" in r.stderr
    r = run_table(cli, tmp_path, summaries[:3], outputs[:6], refs, methods)  # kb-mira has one run fewer
    assert r.returncode == 2 and "the same sub-sample" in r.stderr


def test_marks_are_run_level_with_holm_and_the_ar_p_is_shown_beside(cli, tmp_path):
    """A cell far below the best in every run is `*`; the tests file carries the paired t p, its Holm
    adjustment over the table's tested cells, and the AR p; the companion shows all three."""
    from scipy.stats import ttest_rel

    from smtlib.report.significance import holm

    noise = {("mert", "small"): 0.5, ("kbmira", "small"): 0.15, ("lbmira", "small"): 0.2}
    summaries, outputs, refs = write_runs(tmp_path, noise)
    assert run_table(cli, tmp_path, summaries, outputs, refs, ["mert", "kbmira", "lbmira"]).returncode == 0
    tests = json.loads((tmp_path / "t.json").read_text())
    assert tests["holm_family"] == 2 and "paired t-test" in tests["marks"]
    cells = {c["method"]: c for c in tests["cells"]}
    best = cells["mert"]["best"]
    runs = {m: dict(zip(c["samples"], c["run_tests"])) for m, c in cells.items()}
    others = [m for m in cells if m != best]
    expected = [float(ttest_rel([runs[m][s] for s in sorted(runs[m])], [runs[best][s] for s in sorted(runs[m])]).pvalue)
                for m in others]
    assert [cells[m]["p_runs_vs_best"] for m in others] == pytest.approx(expected)
    assert [cells[m]["p_runs_holm"] for m in others] == pytest.approx(holm(expected))
    for m in others:
        assert cells[m]["mark"] == ("*" if cells[m]["p_runs_holm"] < 0.05 else "=")
    assert cells[best]["p_runs_vs_best"] is None and cells[best]["mark"] == "best"
    md = (tmp_path / "t.md").read_text()
    assert "| p runs | p runs (Holm) | p AR |" in md


def test_cells_against_a_reference_method(cli, tmp_path):
    """--against kbmira: a column of marks per feature set, each cell's runs against kb-mira's with the
    paired t-test, Holm over the cells so tested (a family apart from the tests against the best)."""
    from scipy.stats import ttest_rel

    from smtlib.report.significance import against_mark, holm

    noise = {("mert", "small"): 0.5, ("kbmira", "small"): 0.3, ("cmira", "small"): 0.1, ("pro", "small"): "kbmira",
             ("mert", "big"): 0.2, ("cmira", "big"): 0.3}  # big: kb-mira and pro not run
    summaries, outputs, refs = write_runs(tmp_path, noise, runs=4)
    methods = ["mert", "kbmira", "cmira", "pro"]
    na = ["--not-applicable", "kbmira:big", "pro:big"]
    r = run_table(cli, tmp_path, summaries, outputs, refs, methods, ["small", "big"], "--pairs", "best",
                  "--against", "kbmira", *na)
    assert r.returncode == 0, r.stderr
    rows = read_tsv(tmp_path / "t.tsv")
    assert rows[0][1:6] == ["Small Tune", "Small Test", "Small SD", "Small Sig", "Small vs kb-mira"]
    against = {row[0]: (row[5], row[10]) for row in rows[1:]}
    # far below, the reference, far above, a copy of it; Big has no kb-mira cell to test against
    assert against == {"kb-mert": ("<", "-"), "kb-mira": ("ref", "n/a"), "cmira": (">", "-"), "pro": ("=", "n/a")}
    tests = json.loads((tmp_path / "t.json").read_text())
    assert tests["against"] == "kbmira" and tests["against_holm_family"] == 3
    best = {c["method"]: c for c in tests["cells"] if c["feature_set"] == "small"}
    runs = {m: [c["run_tests"][c["samples"].index(s)] for s in sorted(best["kbmira"]["samples"])]
            for m, c in best.items()}
    cells = {c["method"]: c for c in tests["against_cells"]}
    others = ["mert", "cmira", "pro"]
    expected = [1.0 if m == "pro" else float(ttest_rel(runs[m], runs["kbmira"]).pvalue) for m in others]
    assert [cells[m]["p_runs"] for m in others] == pytest.approx(expected)
    assert [cells[m]["p_runs_holm"] for m in others] == pytest.approx(holm(expected))
    assert cells["pro"]["p_ar"] == 1.0 and cells["kbmira"]["p_runs"] is None
    # c-MIRA is Small's best: its AR test against kb-mira is the column's pair test, not run again
    pair = next(p for p in tests["pairs"] if p["feature_set"] == "small" and {p["a"], p["b"]} == {"kbmira", "cmira"})
    assert (pair["a"], cells["cmira"]["p_ar"]) == ("kbmira", pair["p"])
    assert cells["cmira"]["pooled_bleu_diff"] == -pair["pooled_bleu_diff"]
    md = (tmp_path / "t.md").read_text()
    assert "## Significance: each cell against kb-mira" in md and "| cmira | small | 4 |" in md
    # one run per cell: the AR test's mark, in brackets
    assert against_mark(False, -2.0, 1, None, 0.001) == "(<)" and against_mark(False, 0.3, 1, None, 0.4) == "(=)"
    assert against_mark(False, 0.3, 5, 0.01, 0.4) == ">" and against_mark(True, 0.0, 5, None, None) == "ref"


def test_against_a_method_outside_the_table_or_without_outputs_is_refused(cli, tmp_path):
    noise = {("mert", "small"): 0.5, ("kbmira", "small"): 0.1}
    summaries, outputs, refs = write_runs(tmp_path, noise, runs=2)
    r = run_table(cli, tmp_path, summaries, outputs, refs, ["mert", "kbmira"], ["small"], "--against", "cmira")
    assert r.returncode == 2 and "--against cmira: not one of --methods" in r.stderr
    r = cli("report", "table", "--summaries", *summaries, "--methods", "mert", "kbmira", "--feature-sets", "small",
            "--out", tmp_path / "t.tsv", "--companion", tmp_path / "t.md", "--against", "kbmira")
    assert r.returncode == 2 and "--against needs --outputs" in r.stderr
    assert not (tmp_path / "t.tsv").exists()
