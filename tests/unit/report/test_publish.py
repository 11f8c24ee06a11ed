"""``smtlib report publish``: a workflow run's finished runs, costs and commit, ready to be committed."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from smtlib.errors import InputError
from smtlib.report.publish import benchmark_feature_set, benchmark_rule, publish, rule_costs, unsampled_cpu
from smtlib.report.runs import format_curve

BENCH_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, seconds, rss, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BENCH_HEADER + f"{seconds}\t0:00:01\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n")


def _run(base, method, iterations, finished, setting="default"):
    run = base / "results" / "tune" / "fr-en" / "medium" / method / setting / "s0"
    run.mkdir(parents=True)
    scores = [40.0 + i for i in range(iterations + 1)]
    if finished:
        meta = {"pair": "fr-en", "fs": "medium", "method": method, "setting": setting, "sample": "0"}
        results = [{"score": s, "signature": "sig"} for s in scores]
        (run / "curve.tsv").write_text(format_curve(results, iterations, meta))
        (run / "best.weights").write_text("# best\nLM0_0 0.5\nWordPenalty0_0 -1.25\n")
        (run / "summary.json").write_text(json.dumps({**meta, "tune": scores[-1], "best_iteration": iterations,
                                                      "iterations": iterations, "tests": {"t1": 30.0, "t2": 32.0},
                                                      "test": 31.0, "signatures": ["sig"]}))
    return run


def _checkout(base, snakefile):
    """A git checkout at ``base`` with one commit (a Snakefile of this text); its commit hash."""
    base.mkdir()
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    (base / "Snakefile").write_text(snakefile)
    subprocess.run(["git", "-C", str(base), "add", "Snakefile"], check=True)
    subprocess.run(["git", "-C", str(base), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
                   check=True)
    return subprocess.run(["git", "-C", str(base), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def workdir(tmp_path):
    base = tmp_path / "wf"
    _checkout(base, "# workflow\n")
    _run(base, "kbmira", 2, finished=True)
    _run(base, "lbmert", 1, finished=False)
    bench = base / "results" / "benchmarks"
    _bench(bench / "systems/fr-en/align.tsv", 15, 300, 36)
    _bench(bench / "tune/fr-en/medium/first/decode.tsv", 10, 400, 18)
    _bench(bench / "tune/fr-en/medium/kbmira/default/s0/it2/decode.tsv", 5, 450, 9)
    _bench(bench / "tune/fr-en/medium/kbmira/default/s0/it3/decode.tsv", 7, 470, 9)
    _bench(bench / "tune/fr-en/medium/kbmira/default/s0/it1/tune.tsv", 2, 200, 1.8)
    _bench(bench / "tune/fr-en/medium/lbmert/default/s0/it1/decode.tsv", 8, 900, 14.4)
    _bench(bench / "tune/fr-en/medium/lbmert/default/s0/it1/tune.tsv", 60, 2000, "NA")
    _bench(bench / "tune/de-en/medium/first/decode.tsv", 99, 9999, 99)  # another pair: not counted
    _bench(bench / "tables/table4.tsv", 15, 700, 19.5)
    _bench(bench / "tables/table4_vs_paper.tsv", 1, 150, 0.5)
    _bench(bench / "tables/table5.tsv", 20, 9999, 19.5)  # another table: not counted
    (base / "results" / "table4.tsv").write_text("method\tTune\n")
    return base


def test_rules_of_benchmark_files():
    assert benchmark_rule("systems/fr-en/phrases.1.tsv") == "train_phrases"
    assert benchmark_rule("tune/fr-en/big/first/s3/first_sample.tsv") == "first_sample"
    assert benchmark_rule("tune/fr-en/big/kbmira/default/s3/it1/tune.tsv") == "tune_first"
    assert benchmark_rule("tune/fr-en/big/kbmira/C=0.1/s3/it4/tune.tsv") == "tune"
    assert benchmark_rule("tune/fr-en/big/lbmira/default/s3/it4/tune.tsv") == "tune_lattice"
    assert benchmark_rule("tune/fr-en/big/lbmira/default/s3/it4/decode.tsv") == "decode_dev_lattice"
    assert benchmark_rule("tune/fr-en/big/mira/default/s0/it4/decode.tsv") == "decode_dev"
    assert benchmark_rule("tune/fr-en/big/mira/default/s0/it4/mira.shard7.tsv") == "mira_shard"
    assert benchmark_rule("tune/fr-en/big/mr/default/s0/test.test2017.decode.tsv") == "decode_test"
    assert benchmark_rule("tables/table4_cmira.tsv") == "cmira_findings"
    assert benchmark_rule("tables/table4_extended.tsv") == "table_extended"
    assert benchmark_rule("tune/fr-en/medium/pro/seed=2/s0/it5/test.test2017.decode.tsv") == "decode_test_iteration"
    assert benchmark_rule("tune/fr-en/big/mr/default/s0/restore.tsv") == "restore_run"
    assert benchmark_rule("tune/fr-en/big/mira/default/s0/it4/mira.mix.tsv") == "mira_mix"
    assert benchmark_rule("tune/fr-en/big/mr/default/s2/select_best.tsv") == "select_best"
    assert benchmark_rule("tune/fr-en/big/mr/default/s2/summary.tsv") == "run_summary"
    assert benchmark_rule("systems/fr-en/big/initial.test.test2017.tsv") == "decode_test_initial"
    assert benchmark_rule("tables/table4.tsv") == "table"
    assert benchmark_rule("tables/table4_extended.tsv") == "table_extended"
    assert benchmark_rule("tables/table4_vs_paper.tsv") == "table_vs_paper"
    assert benchmark_rule("figures/pro_mert.tsv") is None


def test_the_cpu_after_snakemakes_last_sample_is_extrapolated():
    # read every 0.5 s up to 15 s: a 12.7 s job's last reading is at 12.5 s
    assert unsampled_cpu(12.7, 10.0) == pytest.approx(10.0 * 12.7 / 12.5)
    # then at 45, 75, ... s: a 26 s job was last read at 15 s, a 50 s job at 45 s, a 75 s job at 75 s
    assert unsampled_cpu(26.0, 15.0) == pytest.approx(26.0)
    assert unsampled_cpu(50.0, 45.0) == pytest.approx(50.0)
    assert unsampled_cpu(75.0, 50.0) == 50.0 and unsampled_cpu(7.0, 9.0) == 9.0  # read at its last moment
    assert unsampled_cpu(0.4, 0.3) == 0.3  # never sampled: nothing to scale
    assert unsampled_cpu(60.0, 0.0) == 0.0  # "NA"
    # Snakemake 9.27.1's benchmark files of busy loops of known CPU time (8.06, 25.06 and 40.06 s by
    # getrusage; benchmarks/results/snakemake_overhead.md): the 25 and 40 s loops were recorded as 14.2 s
    assert unsampled_cpu(8.56, 7.62) == pytest.approx(7.62 * 8.56 / 8.5)
    assert unsampled_cpu(26.46, 14.20) == pytest.approx(25.06, abs=0.1)
    assert unsampled_cpu(42.08, 14.34) == pytest.approx(40.06, abs=0.3)


def test_costs_per_rule(workdir):
    costs = {c["rule"]: c for c in rule_costs(workdir, "fr-en")}
    assert costs["decode_dev"]["jobs"] == 2 and costs["decode_dev"]["cpu_h"] == pytest.approx(18 / 3600)
    assert costs["decode_dev"]["max_rss_mb"] == 470 and costs["decode_dev"]["max_wall_s"] == 7
    assert costs["decode_dev"]["max_cpu_s"] == 9 and costs["tune_lattice"]["max_cpu_s"] == 0
    assert costs["tune_lattice"]["cpu_h"] == 0.0 and costs["tune_lattice"]["max_rss_mb"] == 2000  # NA cpu
    assert costs["decode_first"]["max_rss_mb"] == 400  # de-en's file is not fr-en's
    assert costs["decode_dev"]["cpu_extrapolated_h"] == pytest.approx(18 / 3600)  # both read at their end
    assert costs["tune_first"]["cpu_extrapolated_h"] == pytest.approx(1.8 / 3600)
    assert set(costs) == {"train_align", "decode_first", "decode_dev", "tune_first", "decode_dev_lattice",
                          "tune_lattice"}
    with_tables = {c["rule"]: c for c in rule_costs(workdir, "fr-en", ["table4"])}
    assert with_tables["table"]["jobs"] == 1 and with_tables["table"]["max_rss_mb"] == 700
    assert with_tables["table_vs_paper"]["cpu_h"] == pytest.approx(0.5 / 3600)
    assert "table_extended" not in with_tables  # not run: no file


def test_publish_writes_finished_runs_costs_tables_and_commit(workdir, tmp_path):
    out = tmp_path / "docs" / "table4"
    done = publish(workdir, "fr-en", out, ["table4"], command="snakemake --cores 2 -- results/table4.tsv")
    assert done["finished"] == 1 and done["unfinished"] == 1 and done["tables"] == ["table4.tsv"]
    record = json.loads((out / "runs/medium/kbmira/default/s0.json").read_text())
    assert record["dev_bleu"] == [40.0, 41.0, 42.0] and record["best_iteration"] == 2
    assert record["tests"] == {"t1": 30.0, "t2": 32.0} and record["best_weights"] == {"LM0_0": 0.5,
                                                                                      "WordPenalty0_0": -1.25}
    assert not (out / "runs/medium/lbmert").exists()
    commit = subprocess.run(["git", "-C", str(workdir), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    provenance = (out / "PROVENANCE.md").read_text()
    assert f"`{commit.strip()}`." in provenance
    assert "Runs finished: 1 at the default settings (the tables' runs).\n" in provenance
    assert "Runs started and not finished (in flight, or left between phases): 1.\n" in provenance
    assert (out / "table4.tsv").read_text() == "method\tTune\n"
    header, *_, total = (out / "costs.tsv").read_text().splitlines()
    # 7 jobs of the pair's runs and 2 of its table (the table and its paper comparison)
    assert header.endswith("\tcpu_hours_extrapolated") and total.startswith("total\t9\t")
    assert total.split("\t")[2] == total.split("\t")[-1]  # every job read at its last moment (15 s, or under)
    (workdir / "Snakefile").write_text("# changed\n")
    publish(workdir, "fr-en", out, ["table4"])
    assert "with uncommitted changes" in (out / "PROVENANCE.md").read_text()


def test_runs_at_other_settings_are_counted_apart_from_the_tables_runs(workdir, tmp_path):
    """A check at another setting is published, but not counted as one of the tables' runs."""
    _run(workdir, "pro", 1, finished=True, setting="psi=0.1")
    _run(workdir, "mr", 1, finished=True, setting="default@chrf")
    out = tmp_path / "docs" / "table4"
    done = publish(workdir, "fr-en", out, ["table4"])
    assert done["finished"] == 3 and done["finished_default"] == 1 and done["unfinished"] == 1
    assert (out / "runs/medium/pro/psi=0.1/s0.json").exists()
    assert ("Runs finished: 1 at the default settings (the tables' runs) and 2 at other settings, in no paper "
            "table (medium/mr/default@chrf/s0, medium/pro/psi=0.1/s0).\n") in (out / "PROVENANCE.md").read_text()


def test_feature_sets_keep_a_figures_runs_and_costs_out_of_a_tables(workdir, tmp_path):
    """Figure 1's sweep runs in the table's directory on its own feature set: published apart."""
    assert benchmark_feature_set("tune/fr-en/overfit/svm/l2=100/s0/it3/tune.tsv") == "overfit"
    assert benchmark_feature_set("systems/fr-en/assemble.overfit.tsv") == "overfit"
    assert benchmark_feature_set("systems/fr-en/big/initial.test.t1.tsv") == "big"
    assert benchmark_feature_set("systems/fr-en/phrases.1.tsv") is None  # shared by every feature set
    sweep = workdir / "results/tune/fr-en/overfit/svm/l2=100/s0"
    medium = workdir / "results/tune/fr-en/medium/kbmira/default/s0"
    sweep.mkdir(parents=True)
    for name in ("summary.json", "curve.tsv", "best.weights"):
        (sweep / name).write_bytes((medium / name).read_bytes())
    bench = workdir / "results" / "benchmarks"
    _bench(bench / "tune/fr-en/overfit/svm/l2=100/s0/it2/decode.tsv", 50, 9000, 3600)
    _bench(bench / "systems/fr-en/assemble.overfit.tsv", 50, 9000, 3600)
    everything = {c["rule"]: c for c in rule_costs(workdir, "fr-en")}
    table = {c["rule"]: c for c in rule_costs(workdir, "fr-en", feature_sets=["medium"])}
    assert everything["decode_dev"]["jobs"] == 3 and table["decode_dev"]["jobs"] == 2
    assert "train_assemble" in everything and "train_assemble" not in table
    assert table["train_align"]["jobs"] == 1  # shared: counted with the table
    out = tmp_path / "docs" / "table4"
    done = publish(workdir, "fr-en", out, ["table4"], feature_sets=["medium"])
    assert done["finished"] == 1 and not (out / "runs/overfit").exists()
    total = (out / "costs.tsv").read_text().splitlines()[-1]
    assert total.startswith("total\t9\t") and "9000" not in total
    assert "- Feature sets: medium only" in (out / "PROVENANCE.md").read_text()
    assert publish(workdir, "fr-en", tmp_path / "all", ["table4"])["finished"] == 2
    figures = workdir / "results" / "figures"
    figures.mkdir()
    for name in ("figure1.png", "figure1.tsv", "curves_fr-en.png", "curves_de-en.png", "pro_mert.png"):
        (figures / name).write_text(name)
    sweep_out = tmp_path / "docs" / "figure1"
    done = publish(workdir, "fr-en", sweep_out, [], feature_sets=["overfit"], figures=["figure1"])
    assert done["finished"] == 1 and (sweep_out / "runs/overfit/svm/l2=100/s0.json").exists()
    assert done["figures"] == ["figure1.png", "figure1.tsv"]  # the named ones only
    assert (sweep_out / "figures/figure1.tsv").read_text() == "figure1.tsv"
    provenance = (sweep_out / "PROVENANCE.md").read_text()
    assert "- Figures (`figures/`): figure1.png, figure1.tsv.\n" in provenance
    assert "- Runs finished: 1, the runs of figure1 (overfit/svm/l2=100/s0).\n" in provenance
    assert "Tables present" not in provenance and "in no paper table" not in provenance
    assert publish(workdir, "fr-en", tmp_path / "t4", ["table4"])["figures"] == ["curves_fr-en.png"]  # the pair's


@pytest.fixture
def tables_workdir(workdir, tmp_path):
    """A later checkout holding the same finished run (its files copied), where only the tables ran."""
    base = tmp_path / "tables"
    commit = _checkout(base, "# a later workflow\n")
    run = "results/tune/fr-en/medium/kbmira/default/s0"
    (base / run).mkdir(parents=True)
    for name in ("summary.json", "curve.tsv", "best.weights"):
        (base / run / name).write_bytes((workdir / run / name).read_bytes())
    (base / "results/table4.tsv").write_text("method\tTune\tSig\n")
    (base / "results/table4_findings.md").write_text("# findings\n")
    bench = base / "results" / "benchmarks"
    _bench(bench / "tune/fr-en/medium/kbmira/default/s0/it2/decode.tsv", 5, 450, 9)  # the run's, linked: once
    _bench(bench / "tables/table4.tsv", 30, 800, 28)
    _bench(bench / "systems/fr-en/medium/initial.test.t1.tsv", 12, 500, 11)
    return base, commit


def test_tables_from_a_later_checkout_of_the_same_runs(workdir, tables_workdir, tmp_path):
    base, later = tables_workdir
    out = tmp_path / "docs" / "table4"
    done = publish(workdir, "fr-en", out, ["table4"], command="snakemake -- results/table4.tsv",
                   tables_workdir=base, tables_command="snakemake -- results/table4_vs_paper.tsv")
    assert done["tables"] == ["table4.tsv", "table4_findings.md"] and done["finished"] == 1
    assert (out / "table4.tsv").read_text() == "method\tTune\tSig\n"  # the later checkout's, not the run's
    provenance = (out / "PROVENANCE.md").read_text()
    assert f"by commit `{later}`" in provenance and "(1 runs there, every summary byte-identical" in provenance
    assert "Table step command: `snakemake -- results/table4_vs_paper.tsv`" in provenance
    costs = {row.split("\t")[0]: row.split("\t") for row in (out / "costs.tsv").read_text().splitlines()[1:]}
    assert costs["decode_dev"][1] == "2"  # the runs directory's two decodes, not three
    assert costs["table"][1] == "2"  # both ran: the runs directory's table and the table step's
    assert costs["decode_test_initial"][1] == "1"


def test_the_table_steps_own_jobs_count_also_where_the_runs_directory_ran_the_same_rule(workdir, tables_workdir,
                                                                                          tmp_path):
    """A job is counted once, by its benchmark file: the table step's decode of a run's tests (a restored
    run's) adds to the runs directory's own decode of them, its copy of a run's file does not."""
    base, _ = tables_workdir
    test_decode = "results/benchmarks/tune/fr-en/medium/kbmira/default/s0/test.t1.decode.tsv"
    _bench(workdir / test_decode, 4, 300, 3.5)
    _bench(base / test_decode, 4.5, 310, 4)  # decoded again in the table step: another job
    _bench(base / "results/benchmarks/tune/fr-en/medium/kbmira/default/s0/test.t2.decode.tsv", 5, 320, 4.5)
    out = tmp_path / "docs" / "table4"
    publish(workdir, "fr-en", out, ["table4"], tables_workdir=base)
    costs = {row.split("\t")[0]: row.split("\t") for row in (out / "costs.tsv").read_text().splitlines()[1:]}
    assert costs["decode_test"][1] == "3" and float(costs["decode_test"][2]) == pytest.approx(12 / 3600, abs=1e-3)
    assert costs["decode_dev"][1] == "2"  # the copied file of the run's decode: once


def test_tables_of_other_runs_are_refused(workdir, tables_workdir, tmp_path):
    base, _ = tables_workdir
    summary = base / "results/tune/fr-en/medium/kbmira/default/s0/summary.json"
    summary.write_text(summary.read_text().replace('"tune": 42.0', '"tune": 43.0'))
    with pytest.raises(InputError, match="kbmira/default/s0: its summary differs"):
        publish(workdir, "fr-en", tmp_path / "out", ["table4"], tables_workdir=base)
    assert not (tmp_path / "out").exists()  # nothing written


def test_a_side_experiment_in_the_table_steps_directory(workdir, tables_workdir, tmp_path):
    """Runs at a setting no table reads (a diagnostic run beside the table step, e.g. online MIRA with 2
    shards) are refused with the option that leaves them out; left out, they are neither checked nor
    costed, and the provenance names them."""
    base, _ = tables_workdir
    _run(base, "mira", 2, finished=True, setting="shards=2")
    _bench(base / "results/benchmarks/tune/fr-en/medium/mira/shards=2/s0/it1/mira.shard0.tsv", 50, 400, 45)
    _bench(base / "results/benchmarks/tune/fr-en/medium/mira/shards=2/s0/it2/decode.tsv", 9, 450, 8)
    _bench(base / "results/benchmarks/tune/fr-en/medium/first/decode.tsv", 11, 400, 10)  # decoded again for it
    out = tmp_path / "docs" / "table4"
    with pytest.raises(InputError, match=r"mira/shards=2/s0: the runs directory does not have it.*"
                                         r"--side-settings shards=2 leaves it out"):
        publish(workdir, "fr-en", out, ["table4"], tables_workdir=base)
    assert not out.exists()
    publish(workdir, "fr-en", out, ["table4"], tables_workdir=base, side_settings=["shards=2"])
    provenance = (out / "PROVENANCE.md").read_text()
    assert "(1 runs there, every summary byte-identical" in provenance
    assert "also holds 1 runs of a side experiment at settings no table reads (shards=2)" in provenance
    costs = {row.split("\t")[0]: row.split("\t") for row in (out / "costs.tsv").read_text().splitlines()[1:]}
    assert "mira_shard" not in costs and costs["decode_dev"][1] == "2" and costs["decode_first"][1] == "1"
    assert not (out / "runs/medium/mira").exists()
    with pytest.raises(InputError, match="the tables read the runs at 'default'"):
        publish(workdir, "fr-en", out, ["table4"], tables_workdir=base, side_settings=["default@chrf"])


def test_a_side_experiment_in_the_runs_directory(workdir, tmp_path):
    """Seed-only replicas run beside the table's runs (one run directory for both) are left out of the
    table's records and costs when their settings are named, and the provenance says so; the first decode,
    which the table's runs share, stays counted."""
    for seed in (1, 2):
        _run(workdir, "kbmira", 2, finished=True, setting=f"seed={seed}")
        _bench(workdir / f"results/benchmarks/tune/fr-en/medium/kbmira/seed={seed}/s0/it2/decode.tsv", 6, 460, 9)
        _bench(workdir / f"results/benchmarks/tune/fr-en/medium/kbmira/seed={seed}/s0/it2/test.t1.decode.tsv", 4, 300, 3)
    out = tmp_path / "docs" / "table4"
    publish(workdir, "fr-en", out, ["table4"])
    costs = {row.split("\t")[0]: row.split("\t") for row in (out / "costs.tsv").read_text().splitlines()[1:]}
    assert costs["decode_dev"][1] == "4" and costs["decode_test_iteration"][1] == "2"  # counted without the option
    assert (out / "runs/medium/kbmira/seed=1/s0.json").is_file()
    shutil.rmtree(out)
    publish(workdir, "fr-en", out, ["table4"], side_settings=["seed=1", "seed=2"])
    costs = {row.split("\t")[0]: row.split("\t") for row in (out / "costs.tsv").read_text().splitlines()[1:]}
    assert costs["decode_dev"][1] == "2" and "decode_test_iteration" not in costs and costs["decode_first"][1] == "1"
    assert not (out / "runs/medium/kbmira/seed=1").exists() and (out / "runs/medium/kbmira/default/s0.json").is_file()
    provenance = (out / "PROVENANCE.md").read_text()
    assert "also holds 2 runs of a side experiment at settings no table reads (seed=1, seed=2; published apart)" \
        in provenance
    assert "Runs finished: 1 at the default settings (the tables' runs)." in provenance


def test_tan_et_al_findings_are_copied_with_the_table(workdir, tmp_path):
    (workdir / "results" / "table4_cmira.md").write_text("# c-MIRA\n")
    (workdir / "results" / "table4_cmira.tsv").write_text("claim\tverdict\n")
    (workdir / "results" / "table5_cmira.md").write_text("# another table\n")
    _bench(workdir / "results/benchmarks/tables/table4_cmira.tsv", 3, 250, 2.5)
    _bench(workdir / "results/benchmarks/tables/table5_cmira.tsv", 3, 250, 2.5)  # another table: not counted
    out = tmp_path / "docs" / "table4"
    done = publish(workdir, "fr-en", out, ["table4"])
    costs = {row.split("\t")[0]: row.split("\t") for row in (out / "costs.tsv").read_text().splitlines()[1:]}
    assert costs["cmira_findings"][1] == "1"
    assert {"table4_cmira.md", "table4_cmira.tsv"} <= set(done["tables"]) and "table5_cmira.md" not in done["tables"]
    assert (out / "table4_cmira.md").read_text() == "# c-MIRA\n"


def test_the_cli_names_itself_in_errors_not_the_recorded_command(workdir, tmp_path, capsys):
    from smtlib.cli import main

    status = main(["report", "publish", "--workdir", str(workdir), "--pair", "fr-en", "--out", str(tmp_path / "o"),
                   "--command", "snakemake --cores 2 -- results/table4.tsv", "--side-settings", "default"])
    assert status == 2
    assert capsys.readouterr().err.startswith("smtlib report: error: side setting 'default'")


def test_tables_over_runs_restored_from_an_earlier_publish(workdir, tables_workdir, tmp_path):
    """A run the runs directory lacks (published earlier from a machine since lost) is accepted in the
    table step when it was restored from its record and reproduces it; the provenance says so, and
    counts the earlier records apart from this run directory's."""
    from smtlib.report.publish import run_record

    base, _ = tables_workdir
    restored = _run(base, "pro", 2, finished=True)  # in the table step only
    out = tmp_path / "docs" / "table4"
    (out / "runs/medium/pro/default").mkdir(parents=True)
    record = out / "runs/medium/pro/default/s0.json"
    record.write_text(json.dumps(run_record(restored), indent=1, sort_keys=True))
    done = publish(workdir, "fr-en", out, ["table4"], tables_workdir=base)
    assert done["finished"] == 1 and done["earlier"] == 1
    provenance = (out / "PROVENANCE.md").read_text()
    assert ("2 runs there: 1 with a summary byte-identical to the runs', 1 restored from their records in "
            "`runs/`") in provenance
    assert "published earlier from another run directory (not this one's runs; e.g. a lost machine's" in provenance
    assert "): 1 at the default settings (the tables' runs).\n" in provenance
    # a record the restored run does not reproduce: the tables are not of the published runs
    data = json.loads(record.read_text())
    data["tests"]["t2"] = 32.5
    record.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"pro/default/s0: the restored run does not reproduce its record .*t2 BLEU"):
        publish(workdir, "fr-en", out, ["table4"], tables_workdir=base)


def test_tables_over_runs_restored_from_another_tables_records(workdir, tables_workdir, tmp_path):
    """A table step whose restore_runs named a list (this pair's new records, then another table's):
    a run the runs directory lacks is checked against its record in the first directory that has it,
    which the provenance names with how its test outputs were made; its record is not copied."""
    from smtlib.report.publish import run_record

    base, _ = tables_workdir
    restored = _run(base, "pro", 2, finished=True)
    other = tmp_path / "docs" / "table6" / "runs"
    (other / "medium/pro/default").mkdir(parents=True)
    (other / "medium/pro/default/s0.json").write_text(json.dumps(run_record(restored), indent=1, sort_keys=True))
    _bench(base / "results/benchmarks/tune/fr-en/medium/pro/default/s0/test.t1.decode.tsv", 4, 300, 3.5)
    out = tmp_path / "docs" / "ja-en"
    with pytest.raises(InputError, match=r"pro/default/s0: the runs directory does not have it, nor is it recorded"):
        publish(workdir, "fr-en", out, ["table4"], tables_workdir=base)
    with pytest.raises(InputError, match="needs --tables-workdir"):
        publish(workdir, "fr-en", out, ["table4"], restored_from=[other])
    with pytest.raises(InputError, match="no such directory of published run records"):
        publish(workdir, "fr-en", out, ["table4"], tables_workdir=base, restored_from=[other.parent / "rnus"])
    done = publish(workdir, "fr-en", out, ["table4"], tables_workdir=base, restored_from=[other])
    assert done["finished"] == 1 and done["earlier"] == 0 and not (out / "runs/medium/pro").exists()
    provenance = (out / "PROVENANCE.md").read_text()
    assert (f"2 runs there: 1 with a summary byte-identical to the runs', 1 restored from their records in "
            f"`{other.as_posix()}` (test outputs decoded again); each restored run") in provenance
    # a record in the pair's own runs/ comes first, and one it does not reproduce is refused
    (out / "runs/medium/pro/default").mkdir(parents=True)
    data = run_record(restored)
    data["tests"]["t2"] = 32.5
    (out / "runs/medium/pro/default/s0.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"pro/default/s0: the restored run does not reproduce its record .*t2 BLEU"):
        publish(workdir, "fr-en", out, ["table4"], tables_workdir=base, restored_from=[other])


def test_provenance_counts_the_records_by_method_and_feature_set(workdir, tmp_path):
    """Every record of runs/ at the default settings, whichever directory published it, per method and
    feature set: what a table still lacks is read off, not worked out from a total."""
    out = tmp_path / "docs" / "table4"
    for name in ("big/pro/default/s0", "big/pro/default/s1", "small/mert/default/s4", "small/pro/psi=0.1/s0"):
        (out / "runs" / name).parent.mkdir(parents=True, exist_ok=True)
        (out / "runs" / f"{name}.json").write_text("{}")
    publish(workdir, "fr-en", out, ["table4"])
    provenance = (out / "PROVENANCE.md").read_text()
    assert provenance.endswith("Run records in `runs/` at the default settings: 4, by method and feature set:\n\n"
                               "| method | small | medium | big |\n|---|---|---|---|\n| kbmira | 0 | 1 | 0 |\n"
                               "| mert | 1 | 0 | 0 |\n| pro | 0 | 0 | 2 |\n"), provenance


def test_publish_keeps_each_runs_test_outputs_and_the_initial_ones(workdir, tmp_path):
    """The test 1-bests beside each record, gzipped with no time in the header: published twice, the
    same bytes; the initial weights' outputs under initial/<fs>/."""
    import gzip

    run = workdir / "results/tune/fr-en/medium/kbmira/default/s0"
    (run / "test.t1.1best").write_text("a cat .\nthe dog\n")
    (run / "test.t2.1best").write_text("x\n")
    (workdir / "results/tune/fr-en/medium/lbmert/default/s0/test.t1.1best").write_text("unfinished\n")
    initial = workdir / "results/systems/fr-en/medium/initial"
    initial.mkdir(parents=True)
    (initial / "test.t1.1best").write_text("start\n")
    (workdir / "results/systems/fr-en/small/initial").mkdir(parents=True)
    (workdir / "results/systems/fr-en/small/initial/test.t1.1best").write_text("other feature set\n")
    out = tmp_path / "docs" / "table4"
    publish(workdir, "fr-en", out, ["table4"], feature_sets=["medium"])
    best = out / "runs/medium/kbmira/default/s0.test.t1.1best.gz"
    assert gzip.decompress(best.read_bytes()) == b"a cat .\nthe dog\n"
    assert (out / "runs/medium/kbmira/default/s0.test.t2.1best.gz").is_file()
    assert not (out / "runs/medium/lbmert").exists()  # an unfinished run publishes nothing
    assert gzip.decompress((out / "initial/medium/test.t1.1best.gz").read_bytes()) == b"start\n"
    assert not (out / "initial/small").exists()
    first = best.read_bytes()
    publish(workdir, "fr-en", out, ["table4"], feature_sets=["medium"])
    assert best.read_bytes() == first
    assert json.loads((out / "runs/medium/kbmira/default/s0.json").read_text())["test"] == 31.0


def test_a_published_record_keeps_its_runs_tuning_steps_and_a_restored_run_published_again_keeps_them(
        workdir, tmp_path):
    """publish reads each step's --info and its benchmark file (results/benchmarks/tune/...); a run
    directory that restored the run without giving the steps back (no it*/ files, no steps.json)
    publishes the same record again with the steps it had, never a record without them."""
    import shutil

    run = workdir / "results/tune/fr-en/medium/kbmira/default/s0"
    for it in (1, 2):
        (run / f"it{it}").mkdir()
        (run / f"it{it}/tune.json").write_text(json.dumps({"method": "kbmira", "it": it}))
    out = tmp_path / "docs" / "table4"
    publish(workdir, "fr-en", out, ["table4"])
    record = json.loads((out / "runs/medium/kbmira/default/s0.json").read_text())
    assert [(s["iteration"], s["info"]["it"]) for s in record["steps"]] == [(1, 1), (2, 2)]
    from smtlib.report.publish import this_machine

    assert record["steps"][0]["benchmark"] == {"s": 2.0, "cpu_time": 1.8, "max_rss": 200.0,  # the fixture's it1,
                                               "machine": this_machine()}  # measured on the machine that publishes
    assert record["steps"][1]["benchmark"] is None  # no benchmark file for it2 in the fixture
    for it in (1, 2):
        shutil.rmtree(run / f"it{it}")
    publish(workdir, "fr-en", out, ["table4"])
    assert json.loads((out / "runs/medium/kbmira/default/s0.json").read_text()) == record
    # another run's record in its place (other test BLEU): its steps are not carried over
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**summary, "tests": {"t1": 30.5, "t2": 32.0}}))
    publish(workdir, "fr-en", out, ["table4"])
    assert "steps" not in json.loads((out / "runs/medium/kbmira/default/s0.json").read_text())


def test_a_run_resumed_at_a_later_commit_names_every_commit_of_its_driver(workdir, tmp_path):
    """The driver's starts (results/run_commits.tsv): PROVENANCE.md names each commit the run ran at,
    oldest first; a checkout moved past its driver's last start is refused before anything is written."""
    from smtlib.report.publish import DRIVER_COMMITS

    head = subprocess.run(["git", "-C", str(workdir), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    old = "b" * 40
    (workdir / DRIVER_COMMITS).write_text(f"2026-12-01T07:32:00Z\t{old}\tclean\n2026-12-01T12:00:00Z\t{head}\tclean\n")
    out = tmp_path / "docs" / "table4"
    publish(workdir, "fr-en", out, ["table4"])
    assert f"Produced by commits `{old}`, then `{head}` (the checkout is now at the last)." in (
        out / "PROVENANCE.md").read_text()
    (workdir / DRIVER_COMMITS).write_text(f"2026-12-01T07:32:00Z\t{old}\tclean\n")
    with pytest.raises(InputError, match="its driver last started at bbbbbbbbbbbb"):
        publish(workdir, "fr-en", tmp_path / "other", ["table4"])
    assert not (tmp_path / "other").exists()
