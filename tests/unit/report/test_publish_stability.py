"""``smtlib report publish-stability``: Hopkins & May's seed-only replicas, their test curves, findings and costs."""

from __future__ import annotations

import json

import pytest

from smtlib.report.publish_stability import publish_stability, stability_costs
from smtlib.report.runs import read_curve
from smtlib.report.stability import curve_with_tests, format_test_curve
from tests.unit.report.test_publish import _bench, _checkout, _run

METHODS = ("mert", "pro", "kbmira")


def _replica(base, method, seed, finished=True):
    run = _run(base, method, 3, finished, setting=f"seed={seed}")
    if finished:
        curve = read_curve(run / "curve.tsv")
        bump = {"mert": 0.7, "pro": 0.1, "kbmira": 0.3}[method] * seed
        tests = {t: [{"score": 30.0 + i + (bump if i % 2 else -bump), "signature": "sig"} for i in range(4)]
                 for t in ("t1", "t2")}
        (run / "test_curve.tsv").write_text(format_test_curve(*curve_with_tests(curve, tests)))
        (run / "test.t1.1best").write_text("a b\nc\n")
    return run


@pytest.fixture
def workdir(tmp_path, cli):
    base = tmp_path / "wf"
    _checkout(base, "# workflow\n")
    curves = [_replica(base, m, s) / "test_curve.tsv" for m in METHODS for s in (1, 2, 3)]
    _replica(base, "pro", 4, finished=False)
    _run(base, "mert", 3, True)  # a table's run (setting default): not a replica
    bench = base / "results" / "benchmarks"
    _bench(bench / "tune/fr-en/medium/pro/seed=1/s0/it2/decode.tsv", 10, 500, 9)
    _bench(bench / "tune/fr-en/medium/pro/seed=1/s0/it2/test.t1.decode.tsv", 6, 400, 5)
    _bench(bench / "tune/fr-en/medium/mert/default/s0/it2/decode.tsv", 99, 999, 99)  # the table's
    _bench(bench / "tune/fr-en/medium/first/decode.tsv", 99, 999, 99)  # shared with the tables
    _bench(bench / "stability/fr-en.tsv", 3, 200, 2)
    out = base / "results" / "stability"
    out.mkdir(parents=True)
    r = cli("report", "stability", "--curves", *curves, "--methods", *METHODS, "--permutations", "200",
            "--out", out / "fr-en.md", "--tsv", out / "fr-en.tsv", "--figure", out / "fr-en.png")
    assert r.returncode == 0, r.stderr
    return base


def test_costs_count_the_replicas_own_jobs_and_the_findings(workdir):
    costs = {c["rule"]: c for c in stability_costs(workdir, "fr-en")}
    assert costs["decode_dev"]["jobs"] == 1 and costs["decode_dev"]["max_cpu_s"] == 9  # not the table's 99
    assert costs["decode_test_iteration"]["jobs"] == 1
    assert costs["stability_findings"]["jobs"] == 1
    assert "decode_first" not in costs


def test_publish_writes_records_curves_reports_and_provenance(workdir, tmp_path, cli):
    out = tmp_path / "pub"
    done = publish_stability(workdir, "fr-en", out, command="phases.sh")
    assert len(done["finished"]) == 9 and done["unfinished"] == ["medium/pro/seed=4/s0"]
    assert done["reports"] == ["fr-en.md", "fr-en.tsv", "fr-en.png"]
    record = json.loads((out / "runs/medium/pro/seed=2/s0.json").read_text())
    assert record["setting"] == "seed=2" and record["method"] == "pro"
    assert (out / "runs/medium/pro/seed=2/s0.test.t1.1best.gz").exists()
    assert not (out / "runs/medium/mert/default").exists()  # the table's run is not a replica
    provenance = (out / "PROVENANCE.md").read_text()
    assert done["commit"] in provenance and "Replicas finished (9)" in provenance and "medium/pro/seed=4/s0" in provenance
    # the findings and table rebuild from the published curves alone, byte for byte
    curves = [out / f"runs/medium/{m}/seed={s}/s0.test_curve.tsv" for m in METHODS for s in (1, 2, 3)]
    r = cli("report", "stability", "--curves", *curves, "--methods", *METHODS, "--permutations", "200",
            "--out", tmp_path / "re.md", "--tsv", tmp_path / "re.tsv", "--figure", tmp_path / "re.png")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "re.tsv").read_bytes() == (out / "fr-en.tsv").read_bytes()
    assert (tmp_path / "re.md").read_bytes() == (out / "fr-en.md").read_bytes()


def test_publish_refuses_a_directory_without_results(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    r = cli("report", "publish-stability", "--workdir", tmp_path / "empty", "--pair", "fr-en", "--out", tmp_path / "p")
    assert r.returncode == 2 and "not a workflow directory" in r.stderr


def test_replicas_resumed_at_a_later_commit_name_every_commit_of_the_driver(workdir, tmp_path):
    """The driver's starts (results/run_commits.tsv) name each commit the replicas ran at, oldest first."""
    from smtlib.report.publish import DRIVER_COMMITS

    head = publish_stability(workdir, "fr-en", tmp_path / "first")["commit"]
    (workdir / DRIVER_COMMITS).write_text(f"2026-12-01T07:32:00Z\t{'f' * 40}\tclean\n2026-12-01T09:00:00Z\t{head}\tclean\n")
    publish_stability(workdir, "fr-en", tmp_path / "pub")
    assert f"Produced by commits `{'f' * 40}`, then `{head}`" in (tmp_path / "pub/PROVENANCE.md").read_text()
