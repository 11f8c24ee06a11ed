"""Tan et al. (2013)'s findings on a table's runs (smtlib.report.cmira) and `smtlib report cmira`.

The paper's numbers are checked against the paper's text; the update counts against the tuners'
own `smtlib tune --info` files; the costs, the comparisons and the Markdown against numbers computed
here from the inputs (paired t by scipy, the AR p by the tables' test on the same statistics).
"""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from scipy import stats

from smtlib.bleu.replicas import Layout, compare_systems
from smtlib.bleu.stats import BleuSettings
from smtlib.errors import InputError
from smtlib.report.claims import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN
from smtlib.report.cmira import (
    CLAIMS,
    Step,
    cells,
    cost_rows,
    decide,
    format_costs,
    format_findings,
    paper_numbers,
    paper_score,
    paper_value,
    read_step_benchmark,
    step_updates,
)
from smtlib.report import significance
from tests.support.repo import REPO
from tests.support.tuner_fixtures import REFS, three_sentences, write_case

PAPER = REPO.parent / "shared" / "papers" / "003_c2c41f3a11a59a7c.txt"


# ------------------------------------------------------------------ the paper
def test_the_transcribed_numbers_are_the_papers():
    numbers = paper_numbers()
    table1 = [r for r in numbers if r["table"] == "table1" and r["set"] != "C"]
    assert len(table1) == 4 * 3 + 4 * 7  # 4 methods x (dev, 04, 05) with 8 features, x (dev + 6 tests) with all
    if not PAPER.exists():
        pytest.skip("the paper's text is not here")
    text = PAPER.read_text(encoding="utf-8")
    # each of Table 1's rows in the paper's text, with its values in the order of MERT, MIRA1, MIRA2, c-MIRA
    for features in ("8", "all"):
        for name in ("dev", "04", "05", "06news", "06others", "08news", "08others"):
            row = [r["value"] + r["mark"] for m in ("MERT", "MIRA1", "MIRA2", "c-MIRA") for r in table1
                   if (r["features"], r["set"], r["method"]) == (features, name, m)]
            if row:
                assert f"{name} {' '.join(row)}" in text, (features, name, row)
    assert "25.8min 16.0min 7.3min 7.8min" in text and "1,966,720 35,120 400" in text
    assert [paper_value(numbers, "table2", m) for m in ("MERT", "MIRA1", "MIRA2", "c-MIRA")] == [25.8, 16.0, 7.3, 7.8]
    assert [paper_value(numbers, "table4", m) for m in ("MIRA1", "MIRA2", "c-MIRA")] == [1966720, 35120, 400]


def test_the_papers_test_is_the_mean_over_its_test_sets_as_ours():
    numbers = paper_numbers()
    tests = [float(r["value"]) for r in numbers if r["table"] == "table1" and r["features"] == "all"
             and r["method"] == "c-MIRA" and r["set"] not in ("C", "dev")]
    assert len(tests) == 6 and paper_score(numbers, "all", "c-MIRA", "test") == pytest.approx(statistics.fmean(tests))
    dev = next(float(r["value"]) for r in numbers if r["table"] == "table1" and r["features"] == "8"
               and r["method"] == "MERT" and r["set"] == "dev")
    assert paper_score(numbers, "8", "MERT", "tune") == dev


# ------------------------------------------------------------------ updates from the tuners' --info
def _tune(cli, tmp_path, method, epochs):
    kbest, ref = write_case(tmp_path, three_sentences(), REFS)
    init = tmp_path / "init.weights"
    init.write_text("F_0 0.1\nF_1 1.0\n", encoding="utf-8")
    info = tmp_path / f"{method}.json"
    r = cli("tune", method, "--kbest", kbest, "--refs", ref, "--init", init, "--out", tmp_path / f"{method}.w",
            "--info", info, "--set", f"epochs={epochs}", "--seed", "3")
    assert r.returncode == 0, r.stderr
    return json.loads(info.read_text(encoding="utf-8"))


def test_updates_are_read_from_each_tuners_own_info(tmp_path, cli):
    info = _tune(cli, tmp_path, "kbmira", 4)
    made, counted, searches = step_updates(info)
    assert made == sum(e["updates"] for e in info["epochs"]) and 0 < made <= 4 * 3
    assert counted == 4 * 3 and searches is None  # every sentence of every epoch, as Tan et al. count MIRA2's
    info = _tune(cli, tmp_path, "cmira", 7)
    made, counted, searches = step_updates(info)
    assert made == info["updates"] and 0 < made <= 7 and counted == 7 and searches is None
    kbest, ref = tmp_path / "kbest.txt", tmp_path / "ref.txt"
    r = cli("tune", "mert", "--kbest", kbest, "--refs", ref, "--init", tmp_path / "init.weights", "--out",
            tmp_path / "mert.w", "--info", tmp_path / "mert.json", "--set", "random_restarts=2")
    assert r.returncode == 0, r.stderr
    mert = json.loads((tmp_path / "mert.json").read_text(encoding="utf-8"))
    assert step_updates(mert) == (None, None, mert["line_searches"]) and mert["line_searches"] > 0


def test_an_info_without_what_its_method_records_is_refused():
    with pytest.raises(InputError, match="a kbmira step's --info without 'epochs'"):
        step_updates({"method": "kbmira", "params": {"epochs": 30}, "sentences": 3})
    with pytest.raises(InputError, match="the costs are of cmira, kbmira, mert"):
        step_updates({"method": "pro"})


def test_a_benchmark_file_is_checked(tmp_path):
    good = tmp_path / "good.tsv"
    good.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                    "2.7\t0:00:02\t100\t0\t0\t0\t0\t0\t0\t2.0\n")
    b = read_step_benchmark(good)
    assert b["s"] == 2.7 and b["cpu_time"] == 2.0 and b["cpu_extrapolated"] == pytest.approx(2.0 * 2.7 / 2.5)
    bad = tmp_path / "bad.tsv"
    bad.write_text("x\ty\n1\t2\n")
    with pytest.raises(InputError, match="not a Snakemake benchmark file"):
        read_step_benchmark(bad)
    with pytest.raises(InputError):
        read_step_benchmark(tmp_path / "missing.tsv")


def test_costs_are_means_per_step_and_sums_per_run():
    steps = [Step("cmira", "small", s, it, 100 + it, 400, None, cpu, 2 * cpu)
             for s, cpus in (("0", (1.0, 3.0)), ("1", (2.0, 4.0))) for it, cpu in zip((1, 2), cpus)]
    steps += [Step("mert", "small", "0", it, None, None, 40 * it, 9.0, 9.0) for it in (1, 2)]
    rows = {r["method"]: r for r in cost_rows(steps)}
    c = rows["cmira"]
    assert (c["runs"], c["steps"]) == (2, 4) and c["updates_per_step"] == pytest.approx(101.5)
    assert c["first_step_cpu_s"] == pytest.approx(1.5) and c["later_step_cpu_s"] == pytest.approx(3.5)
    assert c["run_cpu_s"] == pytest.approx(5.0) and c["step_wall_s"] == pytest.approx(5.0)
    assert rows["mert"]["updates_per_step"] is None and rows["mert"]["line_searches_per_step"] == 60
    lines = [ln.split("\t") for ln in format_costs(cost_rows(steps)).splitlines()]
    assert lines[2][:6] == ["small", "mert", "1", "2", "-", "-"]


def test_cpu_ratios_of_cells_not_measured_on_one_known_machine_are_marked():
    """Each step's CPU seconds were measured where its run was tuned (a restored run's: its record's
    machine, or none recorded): a ratio between cells measured on different machines, or on one not
    recorded, is marked and the machines said; updates stay comparable; one known machine: no mark."""
    def steps(method, fs, machine, cpu):
        return [Step(method, fs, s, it, 10, 400, None, cpu, cpu, machine) for s in "01" for it in (1, 2)]

    rows = cost_rows(steps("cmira", "small", "CPU A", 2.0) + steps("kbmira", "small", "CPU B", 4.0)
                     + steps("cmira", "big", "CPU A", 3.0) + steps("kbmira", "big", "CPU A", 6.0)
                     + steps("cmira", "medium", None, 3.0) + steps("kbmira", "medium", None, 6.0))
    assert [r["feature_set"] for r in rows] == ["small"] * 2 + ["medium"] * 2 + ["big"] * 2  # the registry's order
    text = format_findings("t", [], rows, "sig")
    ratios = {ln.split(" | ")[0][2:] + ":" + ln.split(" | ")[1]: ln.split(" | ")[2] for ln in text.splitlines()
              if ln.startswith(("| small |", "| big |", "| medium |"))}
    assert ratios["small:CPU of the optimizer alone (first step)"] == "0.5 †"
    assert ratios["small:CPU of a run's tuning steps (paper: running time)"] == "0.5 †"
    assert ratios["small:updates made"] == "1"  # counts do not depend on the machine
    assert ratios["big:CPU of the optimizer alone (first step)"] == "0.5"  # one known machine
    assert ratios["medium:CPU of the optimizer alone (first step)"] == "0.5 †"  # both restored, machine unknown
    assert "c-MIRA on small: CPU A (2 of 2 runs)" in text and "kb-mira on small: CPU B (2 of 2 runs)" in text
    assert "kb-mira on medium: a machine not recorded (2 of 2 runs)" in text and "on big" not in text
    # one run of a cell elsewhere is enough
    mixed = steps("cmira", "small", "CPU A", 2.0) + steps("kbmira", "small", "CPU A", 4.0)[:2] + steps(
        "kbmira", "small", "CPU B", 4.0)[2:]
    assert "kb-mira on small: CPU A (1 of 2 runs), CPU B (1 of 2 runs)" in format_findings("t", [], cost_rows(mixed), "s")
    # all on one machine: no note, and no machine named (the bytes do not depend on it)
    here = steps("cmira", "small", "CPU A", 2.0) + steps("kbmira", "small", "CPU A", 4.0)
    alike = format_findings("t", [], cost_rows(here), "sig")
    assert "†" not in alike and "CPU A" not in alike


def test_this_machine_names_the_cpu_of_the_first_processor(tmp_path):
    from smtlib.report.publish import this_machine

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
                    "model name\t: AMD EPYC\n\nprocessor\t: 1\nvendor_id\t: Other\n")
    assert this_machine(info) == "AMD EPYC (AuthenticAMD family 25 model 1)"
    assert this_machine(tmp_path / "none")  # no /proc: platform's name, never empty


# ------------------------------------------------------------------ the claims
def _layout_stats(outputs, refs):
    layout = Layout.of(["bleu"])
    return layout, np.stack([layout.rows(o, [refs], BleuSettings()) for o in outputs])


def _runs(method, fs, tests, tunes):
    return [{"method": method, "fs": fs, "sample": str(s), "test": t, "tune": u, "_path": f"{method}{fs}{s}"}
            for s, (t, u) in enumerate(zip(tests, tunes))]


def test_each_claim_is_a_paired_test_over_the_runs_with_the_tables_ar_p_beside_it():
    refs = ["the cat sat on the mat", "a dog ran in the park", "it is a good day"]
    good = [refs[0], refs[1], "it is a day"]
    poor = ["cat the mat", "dog ran park a", "good day"]
    layout, s_good = _layout_stats([good] * 3, refs)
    _, s_poor = _layout_stats([poor] * 3, refs)
    runs = (_runs("cmira", "big", [40.1, 40.6, 40.3], [50.0, 50.2, 50.1])
            + _runs("kbmira", "big", [39.0, 39.4, 39.3], [49.1, 49.0, 49.2])
            + _runs("cmira", "small", [30.0, 30.5, 29.8], [35.0, 35.1, 35.2])
            + _runs("kbmira", "small", [30.1, 30.3, 29.9], [35.0, 35.0, 35.1]))
    by_cell = cells(runs)
    st = {("cmira", "big"): s_good, ("kbmira", "big"): s_poor, ("cmira", "small"): s_good,
          ("kbmira", "small"): s_good}
    options = significance.TestOptions(ar_shuffles=200, boot_samples=10, seed=1)
    found = {c.label: c for c in decide(by_cell, st, layout, options)}
    big = found["big-test"]
    diffs = [a - b for a, b in zip([40.1, 40.6, 40.3], [39.0, 39.4, 39.3])]
    assert big.test.estimate == pytest.approx(statistics.fmean(diffs))
    assert big.test.p == pytest.approx(stats.ttest_rel([40.1, 40.6, 40.3], [39.0, 39.4, 39.3]).pvalue)
    (_, against) = compare_systems(s_poor, {"cmira": s_good}, layout, baseline_name="kbmira", ar_shuffles=200,
                                   boot_samples=10, seed=1, ties="count")
    assert big.ar_p == pytest.approx(float(against.p_value[0]))
    assert found["big-tune"].ar_p is None  # dev outputs are not a table's: no sentence-level test of Tune
    tested = [c for c in found.values() if c.test is not None]
    assert len(tested) == 3 and all(c.p_holm >= c.test.p for c in tested)
    assert found["small-test"].verdict == INCONCLUSIVE
    # kb-mert is not among these runs: its claims are not run, and say why
    assert found["small-tune-mert"].verdict == NOT_RUN and "kb-mert small not in our runs" in found[
        "small-tune-mert"].ours
    # the paper's point verdicts: c-MIRA above MIRA2 with all features, below MERT on dev with 8
    assert found["big-test"].paper_verdict == HOLDS and found["small-tune-mert"].paper_verdict == HOLDS
    assert found["small-test-mert"].paper_verdict == FAILS
    assert "c-MIRA 27.62 vs MIRA2 27.21 (+0.41)" in found["big-test"].paper
    text = format_findings("table4 (fr-en)", list(found.values()), [], "sig")
    rows = [ln for ln in text.splitlines() if ln[:4] in {f"| {i} " for i in range(1, 10)}]
    assert len(rows) == len(CLAIMS) and f"**{big.verdict}**" in rows[0] and big.paper in rows[0]
    assert "(No runs of Small, Big in this table" in text


def test_two_runs_of_a_cell_on_one_sub_sample_are_refused():
    with pytest.raises(InputError, match="two runs of cmira small on sub-sample 0"):
        cells(_runs("cmira", "small", [1.0], [1.0]) * 2)
    with pytest.raises(InputError, match="the comparison is of cmira, kbmira, mert"):
        cells(_runs("pro", "small", [1.0], [1.0]))


def test_a_restored_runs_steps_come_from_its_record_matched_by_identity(tmp_path):
    """`smtlib report cmira --restored-steps`: a run restored from its record (smtlib report restore
    --out-steps) is costed from the record's steps, found by the run's identity whatever the order;
    a record without steps, or steps of a run not among the summaries, is an input error."""
    from smtlib.cli.report import _restored_steps

    runs = [{"pair": "fr-en", "fs": "small", "method": m, "setting": "default", "sample": "0", "iterations": 2}
            for m in ("cmira", "mert")]
    bench = {"s": 10.0, "cpu_time": 9.0, "max_rss": 50.0}
    steps = [{"iteration": 1, "info": {"method": "cmira", "updates": 7, "params": {"epochs": 400}}, "benchmark": bench},
             {"iteration": 2, "info": {"method": "cmira", "updates": 5, "params": {"epochs": 400}}, "benchmark": bench}]
    path = tmp_path / "steps.json"
    path.write_text(json.dumps({**{k: runs[0][k] for k in ("pair", "fs", "method", "setting")}, "sample": 0,
                                "steps": steps}))
    got = _restored_steps([str(path)], runs)
    assert list(got) == [id(runs[0])]
    assert got[id(runs[0])] == [Step("cmira", "small", "0", it, u, 400, None, 9.0, 10.0, None)
                                for it, u in ((1, 7), (2, 5))]  # a record that names no machine
    path.write_text(json.dumps({**{k: runs[0][k] for k in ("pair", "fs", "method", "setting")}, "sample": 0,
                                "steps": [{**s, "benchmark": {**bench, "machine": "CPU A"}} for s in steps]}))
    assert {s.machine for s in _restored_steps([str(path)], runs)[id(runs[0])]} == {"CPU A"}
    with pytest.raises(InputError, match="given twice"):
        _restored_steps([str(path), str(path)], runs)
    path.write_text(json.dumps({**{k: runs[0][k] for k in ("pair", "fs", "method", "setting", "sample")},
                                "steps": []}))
    with pytest.raises(InputError, match="published without its tuning steps"):
        _restored_steps([str(path)], runs)
    path.write_text(json.dumps({**{k: runs[0][k] for k in ("pair", "fs", "method", "setting")}, "sample": "4",
                                "steps": steps}))
    with pytest.raises(InputError, match="no --summaries run is that one"):
        _restored_steps([str(path)], runs)
