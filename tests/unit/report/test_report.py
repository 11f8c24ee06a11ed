"""`smtlib report`: best-iteration selection, run summaries, the paper's table layout, figures, replay."""

from __future__ import annotations

import json
import statistics

import pytest

from smtlib.errors import InputError
from smtlib.report.replay import read_moses_results
from smtlib.report.runs import best_iteration
from smtlib.report.tables import aggregate, table_rows

SIG = "nrefs:1|case:lc|eff:no|tok:none|smooth:exp|version:2.6.0|impl:smtlib-0.1.0"


def bleu_json(path, score):
    path.write_text(json.dumps({"name": "BLEU", "score": score, "signature": SIG}), encoding="utf-8")
    return path


def test_best_iteration_prefers_the_earliest_of_equal_scores():
    assert best_iteration([30.0, 31.5, 31.5, 29.0]) == 1
    assert best_iteration([30.0]) == 0
    with pytest.raises(InputError):
        best_iteration([])


def _run(method, fs, sample, tune, tests):
    return {"pair": "fr-en", "fs": fs, "method": method, "setting": "default", "sample": str(sample), "tune": tune,
            "tests": tests, "test": statistics.fmean(tests.values()), "best_iteration": 3}


def test_aggregate_averages_runs_and_takes_the_sd_of_per_run_test_means():
    runs = [_run("kbmira", "small", s, 40.0 + s, {"a": 30.0 + s, "b": 32.0 + 2 * s}) for s in range(5)]
    cell = aggregate(runs)[("kbmira", "small")]
    assert cell["tune"] == pytest.approx(42.0)
    per_run = [31.0 + 1.5 * s for s in range(5)]  # mean of the two test sets of each run
    assert cell["test"] == pytest.approx(statistics.fmean(per_run))
    assert cell["sd"] == pytest.approx(statistics.stdev(per_run))  # n-1, across the 5 sub-samples
    assert cell["runs"] == 5
    with pytest.raises(InputError, match="listed twice"):
        aggregate(runs + runs[:1])


def test_table_rows_have_the_papers_layout():
    runs = [_run(m, fs, s, 40.0, {"t": 39.0 + s}) for m in ("mert", "pro") for fs in ("small", "medium", "big")
            for s in range(2) if not (m == "mert" and fs == "big")]
    runs += [_run("svm", fs, 0, 41.0, {"t": 40.0}) for fs in ("small", "medium", "big")]
    header, rows = table_rows(aggregate(runs), ["mert", "pro", "svm"], ["small", "medium", "big"], {("mert", "big")})
    assert header == ["method", "Small Tune", "Small Test", "Small SD", "Medium Tune", "Medium Test", "Medium SD",
                      "Big Tune", "Big Test", "Big SD"]
    assert rows[0] == ["kb-mert", "40.00", "39.50", "0.71", "40.00", "39.50", "0.71", "n/a", "n/a", "n/a"]
    assert rows[1][0] == "pro" and rows[1][7:] == ["40.00", "39.50", "0.71"]
    assert rows[2][1:4] == ["41.00", "40.00", "-"]  # one run: SD undefined
    with pytest.raises(InputError, match="no runs for method 'pro' on feature set 'big'"):
        table_rows(aggregate(runs[:4]), ["pro"], ["big"], set())


def test_best_summary_and_table_through_the_cli(tmp_path, cli):
    table_summaries = []
    for method in ("mert", "kbmira"):
        for sample in (0, 1):
            run = tmp_path / method / str(sample)
            run.mkdir(parents=True)
            scores = [20.0, 25.0 + sample, 24.0] if method == "mert" else [20.0, 22.0, 23.0 + sample]
            bleus = [bleu_json(run / f"dev{i}.json", s) for i, s in enumerate(scores)]
            weights = []
            for i in range(3):
                (run / f"w{i}").write_text(f"LM0_0 {i}.5\n", encoding="utf-8")
                weights.append(run / f"w{i}")
            r = cli("report", "best", "--dev-bleu", *bleus, "--weights", *weights, "--out-weights", run / "best",
                    "--out-curve", run / "curve.tsv", "--meta", "pair=fr-en", "fs=small", f"method={method}",
                    "setting=default", f"sample={sample}")
            assert r.returncode == 0, r.stderr
            best = 1 if method == "mert" else 2
            assert (run / "best").read_text().splitlines()[1] == f"LM0_0 {best}.5"
            curve = (run / "curve.tsv").read_text().splitlines()
            assert len(curve) == 4 and curve[1 + best].split("\t")[7] == "1"
            r = cli("report", "summary", "--curve", run / "curve.tsv", "--test",
                    f"t1={bleu_json(run / 't1.json', 30.0 + sample)}", f"t2={bleu_json(run / 't2.json', 32.0)}",
                    "--out", run / "summary.json")
            assert r.returncode == 0, r.stderr
            s = json.loads((run / "summary.json").read_text())
            assert s["tune"] == scores[best] and s["best_iteration"] == best and s["test"] == 31.0 + sample / 2
            table_summaries.append(run / "summary.json")
    r = cli("report", "table", "--summaries", *table_summaries, "--methods", "mert", "kbmira", "--feature-sets",
            "small", "--out", tmp_path / "t.tsv", "--companion", tmp_path / "t.md", "--settings", '{"k": 100}',
            "--title", "Table 4")
    assert r.returncode == 0, r.stderr
    lines = [ln.split("\t") for ln in (tmp_path / "t.tsv").read_text().splitlines()]
    assert lines[0] == ["method", "Small Tune", "Small Test", "Small SD"]
    assert lines[1] == ["kb-mert", "25.50", "31.25", "0.35"]
    assert lines[2] == ["kb-mira", "23.50", "31.25", "0.35"]
    md = (tmp_path / "t.md").read_text()
    assert SIG in md and '"k": 100' in md and "| kb-mira | small | 2 | 2 2 |" in md
    assert "| kb-mert | small | 30.50 | 32.00 |" in md  # per test set, mean over the two runs
    # a summary outside the table's rows/columns is an error, and nothing is written
    r = cli("report", "table", "--summaries", *table_summaries, "--methods", "mert", "--feature-sets", "small",
            "--out", tmp_path / "u.tsv", "--companion", tmp_path / "u.md")
    assert r.returncode == 2 and "outside the table" in r.stderr and not (tmp_path / "u.tsv").exists()

    # the starting point: the initial weights' Test (mean of the test sets, as a cell's) and each cell minus it
    table = ["report", "table", "--summaries", *table_summaries, "--methods", "mert", "kbmira", "--feature-sets",
             "small", "--out", tmp_path / "i.tsv", "--companion", tmp_path / "i.md"]
    initial = [f"small:t1={bleu_json(tmp_path / 'i1.json', 29.0)}", f"small:t2={bleu_json(tmp_path / 'i2.json', 32.5)}"]
    r = cli(*table, "--initial", *initial)
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "i.md").read_text()
    assert "## The starting point: initial weights" in md
    assert "| small | 30.75 | +0.50 | +0.50 |" in md and "small: t1 29.00, t2 32.50" in md
    assert (tmp_path / "i.tsv").read_text() == (tmp_path / "t.tsv").read_text()  # the paper's layout unchanged
    # a starting point scored otherwise than the runs, or missing a test set, is no baseline
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"name": "BLEU", "score": 29.0, "signature": SIG.replace("tok:none", "tok:13a")}))
    for bad, message in [([initial[0]], "no score for test set"), ([f"small:t1={other}", initial[1]], "not the runs'"),
                         ([initial[0], initial[0]], "given twice"), ([f"small={other}"], "FEATURE_SET:TEST_SET")]:
        r = cli(*table, "--initial", *bad, "--out", tmp_path / "v.tsv", "--companion", tmp_path / "v.md")
        assert r.returncode == 2 and message in r.stderr, (bad, r.stderr)
        assert not (tmp_path / "v.tsv").exists()


def score_json(path, name, score):
    path.write_text(json.dumps({"name": name, "score": score, "signature": f"{name}-sig"}), encoding="utf-8")
    return path


def test_other_metrics_in_summaries_companion_and_matrix(tmp_path, cli):
    """Issue 25: a run's test sets scored with chrF and TER too (TER may exceed 100) are kept under the
    summary's ``metrics``, BLEU staying ``test``; the companion gives each metric's Test and signature,
    and the metric matrix sets the tuning metrics against the evaluation metrics."""
    runs = []
    for tuned, offset in (("bleu", 0.0), ("chrf", 1.0)):
        for sample in (0, 1):
            run = tmp_path / tuned / str(sample)
            run.mkdir(parents=True)
            bleus = [bleu_json(run / f"dev{i}.json", 20.0 + i) for i in range(2)]
            for i in range(2):
                (run / f"w{i}").write_text(f"LM0_0 {i}\n", encoding="utf-8")
            r = cli("report", "best", "--dev-bleu", *bleus, "--weights", run / "w0", run / "w1", "--out-weights",
                    run / "best", "--out-curve", run / "curve.tsv", "--meta", "pair=fr-en", "fs=small",
                    "method=kbmira", "setting=default" if tuned == "bleu" else "setting=default@chrf", f"sample={sample}")
            assert r.returncode == 0, r.stderr
            tests = []
            for t in ("t1", "t2"):
                tests += [f"{t}={bleu_json(run / f'{t}.bleu.json', 30.0 + sample)}",
                          f"{t}={score_json(run / f'{t}.chrf.json', 'chrF2', 50.0 + offset + sample)}",
                          f"{t}={score_json(run / f'{t}.ter.json', 'TER', 101.0 - offset)}"]
            r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", *tests, "--out", run / "summary.json")
            assert r.returncode == 0, r.stderr
            summary = json.loads((run / "summary.json").read_text())
            assert summary["test"] == 30.0 + sample and summary["tests"] == {"t1": 30.0 + sample, "t2": 30.0 + sample}
            assert summary["metrics"]["ter"] == {"tests": {"t1": 101.0 - offset, "t2": 101.0 - offset},
                                                 "test": 101.0 - offset, "signatures": ["TER-sig"]}
            runs.append((tuned, run / "summary.json"))
    # BLEU alone: the summary has no metrics key (what it was before other metrics existed)
    r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", f"t1={run / 't1.bleu.json'}",
            "--out", tmp_path / "plain.json")
    assert r.returncode == 0 and "metrics" not in json.loads((tmp_path / "plain.json").read_text())
    # a metric missing for a test set, or given twice, is an error
    r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", f"t1={run / 't1.bleu.json'}",
            f"t2={run / 't2.bleu.json'}", f"t1={run / 't1.ter.json'}", "--out", tmp_path / "bad.json")
    assert r.returncode == 2 and "give every metric for every test set" in r.stderr
    r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", f"t1={run / 't1.bleu.json'}",
            f"t1={run / 't1.bleu.json'}", "--out", tmp_path / "bad.json")
    assert r.returncode == 2 and "two bleu results" in r.stderr and not (tmp_path / "bad.json").exists()
    # the companion of the chrF-tuned runs' table
    chrf_runs = [path for tuned, path in runs if tuned == "chrf"]
    r = cli("report", "table", "--summaries", *chrf_runs, "--methods", "kbmira", "--feature-sets", "small",
            "--out", tmp_path / "t.tsv", "--companion", tmp_path / "t.md")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "t.md").read_text()
    assert "| method | feature set | BLEU | chrF2 | TER |" in md and "| kb-mira | small | 30.50 | 51.50 | 100.00 |" in md
    assert "chrF2:\n\n    chrF2-sig\n" in md and "TER:\n\n    TER-sig\n" in md
    # the table: BLEU's columns, as ever, then each other evaluation metric's Test
    header, row = (tmp_path / "t.tsv").read_text().splitlines()
    assert header.split("\t") == ["method", "Small Tune", "Small Test", "Small SD", "Small chrF2", "Small TER"]
    assert row == "kb-mira\t21.00\t30.50\t0.71\t51.50\t100.00"
    assert "| method | Small Tune | Small Test | Small SD | Small chrF2 | Small TER |" in md
    from smtlib.report.paper import read_our_table

    assert read_our_table(tmp_path / "t.tsv")[("kb-mira", "small")].test == 30.5  # `report paper` reads it as before
    bleu_runs = [path for tuned, path in runs if tuned == "bleu"]
    without = tmp_path / "without_chrf.json"
    summary = json.loads(bleu_runs[1].read_text())
    del summary["metrics"]["chrf"]
    without.write_text(json.dumps(summary))
    r = cli("report", "table", "--summaries", bleu_runs[0], without, "--methods", "kbmira", "--feature-sets", "small",
            "--out", tmp_path / "u.tsv", "--companion", tmp_path / "u.md")
    assert r.returncode == 2 and "a run without chrf test scores" in r.stderr and not (tmp_path / "u.tsv").exists()
    r = cli("report", "metric-matrix", "--run", *[f"{tuned}={path}" for tuned, path in runs],
            "--out", tmp_path / "m.tsv")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "m.tsv").read_text().splitlines()
    assert lines[0].split("\t") == ["pair", "feature_set", "method", "tuning_metric", "runs", "bleu", "chrf", "ter"]
    assert lines[1].split("\t") == ["fr-en", "small", "kbmira", "bleu", "2", "30.50", "50.50", "101.00"]
    assert lines[2].split("\t") == ["fr-en", "small", "kbmira", "chrf", "2", "30.50", "51.50", "100.00"]
    assert lines[3:] == [f"# signature bleu: {SIG}", "# signature chrf: chrF2-sig", "# signature ter: TER-sig"]
    r = cli("report", "metric-matrix", "--run", f"meteor={runs[0][1]}", "--out", tmp_path / "n.tsv")
    assert r.returncode == 2 and "unknown metric 'meteor'" in r.stderr and not (tmp_path / "n.tsv").exists()


def test_best_rejects_mismatched_and_invalid_inputs(tmp_path, cli):
    (tmp_path / "w").write_text("LM0_0 1\n", encoding="utf-8")
    good = bleu_json(tmp_path / "b.json", 20.0)
    r = cli("report", "best", "--dev-bleu", good, good, "--weights", tmp_path / "w", "--out-weights", tmp_path / "o",
            "--out-curve", tmp_path / "c")
    assert r.returncode == 2 and "2 dev BLEU files for 1 weight files" in r.stderr
    bad = bleu_json(tmp_path / "bad.json", 120.0)
    r = cli("report", "best", "--dev-bleu", bad, "--weights", tmp_path / "w", "--out-weights", tmp_path / "o",
            "--out-curve", tmp_path / "c")
    assert r.returncode == 2 and "between 0 and 100" in r.stderr and not (tmp_path / "o").exists()


def test_figures_are_written(tmp_path, cli):
    summaries = []
    for i, (method, setting) in enumerate([("kbmira", "C=0.1"), ("kbmira", "C=0.01"), ("mr", "l2=5"), ("mr", "l2=50")]):
        p = tmp_path / f"s{i}.json"
        p.write_text(json.dumps(_run(method, "big", 0, 40.0 + i, {"t": 39.0}) | {"setting": setting}), encoding="utf-8")
        summaries.append(p)
    r = cli("report", "figure1", "--summaries", *summaries, "--out", tmp_path / "f.png", "--tsv", tmp_path / "f.tsv")
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "f.tsv").read_text().splitlines()
    assert rows[1:] == ["kbmira\tC\t0.01\t1\t41.0000\t39.0000", "kbmira\tC\t0.1\t1\t40.0000\t39.0000",
                        "mr\tl2\t5\t1\t42.0000\t39.0000", "mr\tl2\t50\t1\t43.0000\t39.0000"]
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_moses_results_parser(tmp_path):
    (tmp_path / "r.dat").write_text("STDOUT_1=weights_1: 0.1 0.2\nSTDOUT_2=best_1:  0.379034\nSTDOUT_3=best_2:  0.4\n",
                                    encoding="utf-8")
    assert read_moses_results(tmp_path / "r.dat") == pytest.approx({1: 37.9034, 2: 40.0})
    (tmp_path / "x.dat").write_text("nothing\n", encoding="utf-8")
    with pytest.raises(InputError, match="best_N"):
        read_moses_results(tmp_path / "x.dat")


@pytest.mark.data
def test_replay_table_from_recorded_moses_results(shared_data, tmp_path, cli):
    truth = shared_data / "moses-mert-nbest/regression/mert-moses-new-aggregate/truth/results.dat.gz"
    assert read_moses_results(truth)[14] == pytest.approx(44.3906)
    scores = [f"mert:{i}:{bleu_json(tmp_path / f'm{i}.json', 30.0 + i)}" for i in (1, 2, 3)]
    scores += [f"pro:{i}:{bleu_json(tmp_path / f'p{i}.json', 35.0 - i)}" for i in (1, 2, 3)]
    r = cli("report", "replay", "--truth", truth, "--score", *scores, "--out", tmp_path / "t.tsv",
            "--figure", tmp_path / "t.png")
    assert r.returncode == 0, r.stderr
    rows = [ln.split("\t") for ln in (tmp_path / "t.tsv").read_text().splitlines() if not ln.startswith("#")]
    assert rows[0] == ["method", "final_bleu", "best_bleu", "best_iteration", "it1", "it2", "it3"]
    assert rows[1] == ["mert", "33.00", "33.00", "3", "31.00", "32.00", "33.00"]
    assert rows[2] == ["pro", "32.00", "34.00", "1", "34.00", "33.00", "32.00"]
    assert rows[3] == ["moses-mert (recorded)", "43.56", "43.56", "3", "37.90", "43.12", "43.56"]


def test_curves_round_trip_and_figure(tmp_path, cli):
    from smtlib.report.runs import format_curve, read_curve

    paths = []
    for method, scores in (("mert", [20.0, 22.5, 21.0]), ("kbmira", [20.0, 20.0, 19.0])):
        results = [{"score": s, "signature": SIG} for s in scores]
        meta = {"pair": "fr-en", "fs": "small", "method": method, "setting": "default", "sample": "0"}
        path = tmp_path / f"{method}.tsv"
        path.write_text(format_curve(results, best_iteration(scores), meta), encoding="utf-8")
        rows = read_curve(path)
        assert [r["dev_bleu"] for r in rows] == scores and [r["best"] for r in rows].index(True) == \
            best_iteration(scores)
        paths.append(path)
    r = cli("report", "curves", "--curves", *paths, "--out", tmp_path / "c.png", "--tsv", tmp_path / "c.tsv")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "c.tsv").read_text().splitlines()
    assert lines[0] == "pair\tfs\tmethod\tsetting\tsample\titeration\tdev_bleu\tbest"
    assert lines[2] == "fr-en\tsmall\tmert\tdefault\t0\t1\t22.5000\t1" and lines[4].endswith("\t0\t20.0000\t1")
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "bad.tsv").write_text(lines[0] + "\nfr-en\tsmall\tmert\tdefault\t0\tx\t1\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match="bad.tsv:2: malformed number"):
        read_curve(tmp_path / "bad.tsv")


def test_curves_figure_is_readable_without_its_code():
    """One colour and marker per method, the same in every panel; whole-iteration ticks; a legend that
    names every method and explains the line widths and the markers (issue 28, item 13)."""
    from smtlib.report.curves import method_styles, plot_curves
    from smtlib.report.figures import pyplot

    methods = ["mert", "lbmert", "mira", "kbmira", "lbmira", "pro", "mr", "svm", "cmira", "sgd", "arow", "xbleu"]
    styles = method_styles(methods)
    assert len(set(styles.values())) == len(methods)
    assert styles["mert"] == method_styles(["mert", "svm"])["mert"]  # the paper's order fixes the style
    curves = []
    for fs in ("small", "medium"):
        for m in methods:
            for sample in ("0", "1"):
                curves.append([{"pair": "fr-en", "fs": fs, "method": m, "setting": "default", "sample": sample,
                                "iteration": i, "dev_bleu": 20.0 + i, "best": i == 2} for i in range(3)])
    fig = plot_curves(curves)
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[:2] == ["kb-mert", "lb-mert"] and len(labels) == len(methods) + 3
        assert "full dev set (s0)" in labels and "its marker: kept weights (best dev)" in labels
        fig.canvas.draw()
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert all(float(t).is_integer() for t in ticks)
    pyplot().close(fig)


def test_best_iteration_by_the_tuning_metric(tmp_path, cli):
    """Issue 25: a run tuned toward another metric keeps the weights best in it (TER: the lowest), its
    curve carries that metric's dev scores and direction, its summary the kept weights' score; the
    curve and weights of BLEU's runs are what they were (``--metric bleu`` is the default)."""
    from smtlib.report.runs import read_curve

    bleu = [21.0, 24.0, 23.0, 22.0]  # BLEU alone would keep iteration 1
    chrf = [50.0, 51.0, 53.0, 52.0]  # chrF: iteration 2
    ter = [60.0, 58.0, 59.0, 57.5]  # TER, lower is better: iteration 3
    bleus = [bleu_json(tmp_path / f"b{i}.json", s) for i, s in enumerate(bleu)]
    chrfs = [score_json(tmp_path / f"c{i}.json", "chrF2", s) for i, s in enumerate(chrf)]
    ters = [score_json(tmp_path / f"t{i}.json", "TER", s) for i, s in enumerate(ter)]
    weights = []
    for i in range(4):
        (tmp_path / f"w{i}").write_text(f"LM0_0 {i}\n", encoding="utf-8")
        weights.append(tmp_path / f"w{i}")

    def best(name, *options):
        out = tmp_path / name
        out.mkdir()
        r = cli("report", "best", "--dev-bleu", *bleus, "--weights", *weights, "--out-weights", out / "best",
                "--out-curve", out / "curve.tsv", "--meta", "pair=fr-en", "fs=small", "method=kbmira",
                "setting=default", "sample=0", *options)
        return r, out

    (r, plain), (r2, as_bleu) = best("plain"), best("bleu", "--metric", "bleu")
    assert r.returncode == 0 and r2.returncode == 0
    for name in ("best", "curve.tsv"):
        assert (plain / name).read_bytes() == (as_bleu / name).read_bytes()
    assert (plain / "best").read_text().splitlines() == [f"# best dev BLEU 24.00 at iteration 1 of 3 ({SIG})", "LM0_0 1"]
    assert (plain / "curve.tsv").read_text().splitlines()[0].split("\t")[-4:] == ["iteration", "dev_bleu", "best",
                                                                                   "signature"]
    for spec, scores, want, better in (("chrf", chrfs, 2, "higher"), ("ter", ters, 3, "lower"),
                                       ("bleu:1,ter:-1", ters, 1, "higher"),  # 24 - 58 = -34, the best
                                       ("chrf:1,ter:-0.5", [*ters, *chrfs], 2, "higher")):
        r, out = best(spec.replace(":", "_").replace(",", "+"), "--metric", spec, "--dev-score", *scores)
        assert r.returncode == 0, r.stderr
        assert (out / "best").read_text().splitlines()[1] == f"LM0_0 {want}", spec
        curve = read_curve(out / "curve.tsv")
        assert [row["best"] for row in curve].index(True) == want
        assert {row["tuning_metric"] for row in curve} == {spec} and {row["better"] for row in curve} == {better}
        summary_path = out / "summary.json"
        r = cli("report", "summary", "--curve", out / "curve.tsv", "--test", f"t={bleus[0]}", "--out", summary_path)
        summary = json.loads(summary_path.read_text())
        assert summary["tune"] == bleu[want] and summary["tuning"]["metric"] == spec
        assert summary["tuning"]["better"] == better
    assert (tmp_path / "ter" / "best").read_text().startswith("# best dev ter 57.50 (lower is better; TER-sig), dev BLEU 22.00")
    mixed = read_curve(tmp_path / "chrf_1+ter_-0.5" / "curve.tsv")
    assert [row["dev_tuning"] for row in mixed] == [c - t / 2 for c, t in zip(chrf, ter, strict=True)]
    r = cli("report", "summary", "--curve", plain / "curve.tsv", "--test", f"t={bleus[0]}", "--out", plain / "s.json")
    assert r.returncode == 0 and "tuning" not in json.loads((plain / "s.json").read_text())
    for options, message in ((("--metric", "ter"), "0 dev ter scores for 4 weights"),
                             (("--metric", "ter", "--dev-score", *ters[:3]), "3 dev ter scores for 4 weights"),
                             (("--metric", "ter", "--dev-score", *chrfs), "a dev chrf score, but the tuning metric is ter"),
                             (("--dev-score", *ters), "--dev-score needs --metric"),
                             (("--metric", "ter:1",), "its weight must be negative")):
        r, out = best(f"bad{len(options)}{message[:3]}", *options)
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not (out / "best").exists() and not (out / "curve.tsv").exists()


def test_curves_of_runs_tuned_toward_another_metric_are_drawn_in_it(tmp_path):
    """Issue 25: a chrF or TER run keeps the iteration best in its metric, so its curve is drawn in that
    metric (the marker then sits on the best point) and the TSV keeps the metric's columns; runs tuned
    toward different metrics are refused in one figure, not drawn on a BLEU axis that fits neither."""
    from smtlib.report.curves import format_curves, plot_curves
    from smtlib.report.figures import pyplot

    def curve(method, metric, better, tuning, best):
        return [{"pair": "fr-en", "fs": "medium", "method": method, "setting": f"default@{metric}", "sample": "0",
                 "iteration": i, "dev_bleu": 40.0 + i, "best": i == best, "tuning_metric": metric,
                 "dev_tuning": t, "better": better} for i, t in enumerate(tuning)]

    ter = [curve("mert", "ter", "lower", [60.0, 57.0, 58.0], 1), curve("kbmira", "ter", "lower", [61.0, 59.0, 58.5], 2)]
    fig = plot_curves(ter)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "dev TER (lower is better)"
    assert "its marker: kept weights (best dev TER)" in [t.get_text() for t in ax.get_legend().get_texts()]
    markers = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert [(line.get_xdata()[0], line.get_ydata()[0]) for line in markers] == [(1, 57.0), (2, 58.5)]
    assert fig._suptitle.get_text() == "learning curves: dev TER of each iteration's weights"
    pyplot().close(fig)
    lines = format_curves(ter).splitlines()
    assert lines[0].endswith("\tdev_bleu\tbest\ttuning_metric\tdev_tuning\tbetter")
    assert lines[2].endswith("\t1\t41.0000\t1\tter\t57.0000\tlower")
    chrf = curve("mert", "chrf", "higher", [60.0, 61.0, 62.0], 2)
    with pytest.raises(InputError, match=r"different metrics \(chrf, ter\)"):
        plot_curves([ter[0], chrf])
    bleu = [{k: v for k, v in r.items() if k not in ("tuning_metric", "dev_tuning", "better")} for r in chrf]
    with pytest.raises(InputError, match=r"different metrics \(bleu, chrf\)"):
        format_curves([bleu, chrf])
