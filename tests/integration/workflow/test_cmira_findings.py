"""Tan et al. (2013)'s findings on a table's runs through `snakemake` (rule cmira_findings), tiny size.

config/tiny.yaml's table4 (fr-en, Small and Medium, the full dev set and one sub-sample, 2 iterations):
`results/table4_cmira.md` and `.tsv` are built from the runs of cmira, kb-mira and kb-mert (which the
rule asks for itself; tiny.yaml's tables list no cmira), and every number checked is recomputed from
the runs' own files: the claims' paired t p from the summaries, the updates from each step's --info,
the CPU seconds from each step's benchmark file. Skipped when ../shared/data is absent.
"""

from __future__ import annotations

import csv
import json
import statistics

import pytest


@pytest.mark.slow
def test_tiny_cmira_findings_end_to_end(tiny_table4_run):
    work = tiny_table4_run.check()  # conftest.py: results/table4_cmira.md is one of its targets
    md = (work / "results/table4_cmira.md").read_text(encoding="utf-8")
    with open(work / "results/table4_cmira.tsv", encoding="utf-8", newline="") as fh:
        rows = {(row["feature_set"], row["method"]): row for row in csv.DictReader(fh, delimiter="\t")}
    assert sorted(rows) == sorted((fs, m) for fs in ("small", "medium") for m in ("cmira", "kbmira", "mert"))
    tune = work / "results/tune/fr-en"

    def run(fs, method, sample):
        return tune / fs / method / "default" / f"s{sample}"

    # updates per step: c-MIRA's and kb-mira's from each step's --info, none for MERT (its line searches)
    for fs in ("small", "medium"):
        infos = {m: [json.loads((run(fs, m, s) / f"it{it}/tune.json").read_text()) for s in (0, 1) for it in (1, 2)]
                 for m in ("cmira", "kbmira", "mert")}
        assert float(rows[(fs, "cmira")]["updates_per_step"]) == pytest.approx(
            statistics.fmean(i["updates"] for i in infos["cmira"]), abs=1e-4)
        assert float(rows[(fs, "kbmira")]["updates_per_step"]) == pytest.approx(
            statistics.fmean(sum(e["updates"] for e in i["epochs"]) for i in infos["kbmira"]), abs=1e-4)
        assert float(rows[(fs, "cmira")]["paper_count_per_step"]) == 400  # c-MIRA's epochs, as the paper counts
        assert float(rows[(fs, "kbmira")]["paper_count_per_step"]) == pytest.approx(
            30 * statistics.fmean(i["sentences"] for i in infos["kbmira"]))
        assert rows[(fs, "mert")]["updates_per_step"] == "-"
        assert float(rows[(fs, "mert")]["line_searches_per_step"]) == pytest.approx(
            statistics.fmean(i["line_searches"] for i in infos["mert"]), abs=1e-4)
        assert all(rows[(fs, m)]["runs"] == "2" and rows[(fs, m)]["steps"] == "4" for m in ("cmira", "kbmira", "mert"))
    # CPU seconds of the first step: each run's benchmark file of rule tune_first
    from smtlib.report.publish import read_benchmark

    first = [read_benchmark(work / f"results/benchmarks/tune/fr-en/small/cmira/default/s{s}/it1/tune.tsv")
             for s in (0, 1)]
    assert float(rows[("small", "cmira")]["first_step_cpu_s"]) == pytest.approx(
        statistics.fmean(b["cpu_extrapolated"] for b in first), abs=1e-4)
    # the claims: Small's from the summaries (paired t over the two sub-samples), Big's not run (no Big here)
    from scipy import stats

    def summaries(fs, method):
        return [json.loads((run(fs, method, s) / "summary.json").read_text()) for s in (0, 1)]

    c, k = summaries("small", "cmira"), summaries("small", "kbmira")
    claim = next(ln for ln in md.splitlines() if ln.startswith("| 3 | With few features, c-MIRA outperforms kb-mira"))
    diffs = [a["test"] - b["test"] for a, b in zip(c, k)]
    assert f"{statistics.fmean(diffs):+.2f}" in claim
    if len(set(diffs)) > 1:
        p = stats.ttest_rel([a["test"] for a in c], [b["test"] for b in k]).pvalue
        assert f"| {p:.4f} |" in claim or p < 0.0001, (p, claim)
    assert "| 2 |" in claim  # runs
    for i in (1, 2):
        big = next(ln for ln in md.splitlines() if ln.startswith(f"| {i} | With many features"))
        assert "not in our runs" in big and "**not run**" in big
    assert "(No runs of Big in this table" in md
    assert "c-MIRA 27.62 vs MIRA2 27.21 (+0.41)" in md  # the paper's Table 1 beside ours
    assert "## Updates and time per tuning step" in md


@pytest.mark.slow
def test_tiny_cmira_findings_from_runs_restored_from_their_records(tiny_table4_run, data_dir, tmp_path):
    """The runs of the findings lost with their machine (run directories, logs and benchmark files
    deleted) and restored from their published records (config restore_runs): no tuning job and no
    decode runs, and the findings, the costs per step included, are the tuned runs', byte for byte."""
    import subprocess

    import yaml

    from smtlib.report.publish import publish_outputs, run_benchmarks, run_record
    from tests.support.workflow_runner import REPO, job_counts, snakemake, write_config

    work = tiny_table4_run.copy_to(tmp_path / "work")
    before = {name: (work / "results" / name).read_bytes() for name in ("table4_cmira.md", "table4_cmira.tsv")}
    records = tmp_path / "published/runs"
    lost = [run for m in ("cmira", "kbmira", "mert") for run in sorted((work / "results/tune/fr-en").glob(f"*/{m}/default/s*"))]
    assert len(lost) == 12
    for run in lost:
        name = run.relative_to(work / "results/tune/fr-en")
        record = run_record(run, run_benchmarks(work, run))
        assert [s["iteration"] for s in record["steps"]] == [1, 2] and record["steps"][0]["benchmark"]["s"] > 0
        (records / name.parent).mkdir(parents=True, exist_ok=True)
        (records / f"{name}.json").write_text(json.dumps(record, indent=1, sort_keys=True))
        publish_outputs(run, records / name.parent, f"{name.name}.")
        subprocess.run(["rm", "-r", str(run), str(run_benchmarks(work, run)), str(work / "logs/tune/fr-en" / name)],
                       check=True)
    (work / "results/table4_cmira.md").unlink()
    quick = yaml.safe_load((REPO / "config/tiny.yaml").read_text(encoding="utf-8"))
    cfg = write_config(work / "restore.yaml", {**quick, "restore_runs": {"fr-en": str(records)}})
    r = snakemake(work, "-n", "results/table4_cmira.md", "--quiet", "rules", configfile=cfg, data_dir=data_dir,
                  timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts["restore_run"] == 12 and counts["cmira_findings"] == 1, counts
    assert not {"decode_dev", "decode_test", "tune_first", "tune", "select_best"} & set(counts), counts
    r = snakemake(work, "--cores", "2", "results/table4_cmira.md", configfile=cfg, data_dir=data_dir, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for name, data in before.items():
        assert (work / "results" / name).read_bytes() == data, name
