"""``smtlib report publish-simianer``: a Simianer Table 2 run's finished runs, costs and commit."""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import subprocess

import pytest
import sacrebleu

from smtlib.errors import InputError
from smtlib.report.publish import DRIVER_COMMITS
from smtlib.report.publish_simianer import publish_simianer, simianer_costs, simianer_rule
from tests.unit.report.test_publish import _bench, _checkout, _run

SIM = "results/simianer/fr-en"


def _sgd_run(base, group, run, split, finished, weights="LM0_0 0.5\nWordPenalty0_0 -1.25\nid:a|b 0\n"):
    d = base / SIM / group / run / f"split{split}"
    (d / "ep1").mkdir(parents=True)
    (d / "chosen.json").write_text(json.dumps({"chosen_epoch": 1, "epochs": [
        {"epoch": 1, "devtest_bleu": 30.0, "nonzero_features": 2, "features_in_shards": 3}]}))
    (d / "chosen.weights").write_text("# epoch 1\n" + weights)
    (d / "test.out").write_text("a b c\nd e\n")
    if finished:
        (d / "test.bleu.json").write_text(json.dumps({"score": 31.5}))
    return d


@pytest.fixture
def workdir(tmp_path):
    base = tmp_path / "wf"
    _checkout(base, "# workflow\n")
    _sgd_run(base, "default", "sgd-dev", 1, finished=True)
    _sgd_run(base, "id-ng-shape", "iterselsgd-train", 1, finished=True,
             weights="".join(f"id:{i}|{i * 7919} {i / 3}\n" for i in range(1, 20_000)))
    _sgd_run(base, "default", "itermixsgd-train", 2, finished=False)
    _run(base, "kbmira", 2, finished=True)  # the batch tuner's row (tables' layout, medium)
    bench = base / "results" / "benchmarks"
    _bench(bench / "simianer/fr-en/split1/folds/f0/phrases.0.tsv", 20, 1200, 22)
    _bench(bench / "simianer/fr-en/split1/folds/f0/lm.1.tsv", 3, 300, 2.8)
    _bench(bench / "simianer/fr-en/models/split1/f0/id-ng-shape.tsv", 9, 800, 8)
    _bench(bench / "simianer/fr-en/models/full/id-ng-shape.tsv", 9, 800, 8)
    _bench(bench / "simianer/fr-en/default/sgd-dev/split1/ep1/pass.shard0.tsv", 15, 240, 14)
    _bench(bench / "simianer/fr-en/id-ng-shape/iterselsgd-train/split1/ep1/pass.shard3.tsv", 12, 260, 10)
    _bench(bench / "simianer/fr-en/id-ng-shape/iterselsgd-train/split1/ep1/mix.tsv", 1, 100, 0.5)
    _bench(bench / "simianer/fr-en/default/sgd-dev/split1/ep1/devtest.tsv", 13, 400, 12)
    _bench(bench / "simianer/fr-en/default/sgd-dev/split1/test.tsv", 13, 400, 12)
    _bench(bench / "tune/fr-en/medium/kbmira/default/s0/it2/decode.tsv", 5, 450, 9)
    _bench(bench / "simianer/de-en/default/sgd-dev/split1/test.tsv", 99, 9999, 99)  # another pair
    (base / "results" / "simianer_table2.tsv").write_text("algorithm\ttest_bleu\n")
    return base


def test_rules_of_the_loops_benchmark_files():
    assert simianer_rule("split3/folds/f12/phrases.1.tsv") == "simianer_fold_phrases"
    assert simianer_rule("split1/folds/f0/assemble.tsv") == "simianer_fold_assemble"
    assert simianer_rule("models/split2/f4/id.tsv") == "simianer_templates"
    assert simianer_rule("ng/mixsgd-train/split1/ep10/pass.shard28.tsv") == "simianer_shard_pass"
    assert simianer_rule("ng/mixsgd-train/split1/ep10/devtest.tsv") == "simianer_devtest"
    assert simianer_rule("ng/mixsgd-train/split1/test.tsv") == "simianer_test"
    assert simianer_rule("ng/mixsgd-train/split1/choose.tsv") is None


def test_costs_count_the_loop_the_folds_and_the_batch_runs_of_the_pair(workdir):
    costs = {c["rule"]: c for c in simianer_costs(workdir, "fr-en")}
    assert costs["simianer_shard_pass"]["jobs"] == 2
    assert costs["simianer_shard_pass"]["cpu_h"] == pytest.approx(24 / 3600)
    assert costs["simianer_templates"]["jobs"] == 2 and costs["simianer_fold_phrases"]["max_rss_mb"] == 1200
    assert costs["decode_dev"]["jobs"] == 1  # the batch tuner's jobs, by the tables' rules
    assert costs["simianer_test"]["max_cpu_s"] == 12  # not the other pair's 99


def test_publish_writes_record_directories_costs_and_provenance(workdir, tmp_path):
    out = tmp_path / "pub"
    done = publish_simianer(workdir, "fr-en", out, command="phases.sh", max_weights_bytes=20_000)
    assert done["finished"] == 2 and done["unfinished"] == 1 and done["baseline"] == 1
    record = out / "runs/default/sgd-dev/split1"
    assert json.loads((record / "test.bleu.json").read_text()) == {"score": 31.5}
    assert gzip.decompress((record / "test.out.gz").read_bytes()) == b"a b c\nd e\n"
    # non-zero weights only; a vector too large compressed is left out and named
    assert gzip.decompress((record / "chosen.weights.gz").read_bytes()).decode() == \
        "LM0_0 0.5\nWordPenalty0_0 -1.25\n"
    assert done["heavy"] == ["id-ng-shape/iterselsgd-train/split1"]
    assert not (out / "runs/id-ng-shape/iterselsgd-train/split1/chosen.weights.gz").exists()
    assert (out / "runs/id-ng-shape/iterselsgd-train/split1/test.out.gz").exists()
    assert not (out / "runs/default/itermixsgd-train").exists()
    assert json.loads((out / "runs/baseline/kbmira/s0/summary.json").read_text())["method"] == "kbmira"
    assert (out / "runs/baseline/kbmira/s0/best.weights").exists()
    assert (out / "simianer_table2.tsv").read_text() == "algorithm\ttest_bleu\n"
    provenance = (out / "PROVENANCE.md").read_text()
    assert done["commit"] in provenance and "phases.sh" in provenance
    assert "Weights not published (1 runs" in provenance and "not finished (in flight, or left between phases): 1" in provenance
    costs = (out / "costs.tsv").read_text()
    assert "simianer_shard_pass\t2\t" in costs
    # bytes depend on the text only: publishing again writes the same files
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"}
    publish_simianer(workdir, "fr-en", out, command="phases.sh", max_weights_bytes=20_000)
    assert before == {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"}


def test_publish_refuses_a_directory_without_results(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    r = cli("report", "publish-simianer", "--workdir", tmp_path / "empty", "--out", tmp_path / "pub")
    assert r.returncode == 2 and "not a workflow directory" in r.stderr


def test_the_table_rebuilds_from_the_records_bit_for_bit(workdir, tmp_path, cli):
    refs = tmp_path / "test.ref"
    refs.write_text("a b c\nd e f\n")
    for run in ("default/sgd-dev/split1", "id-ng-shape/iterselsgd-train/split1"):
        score = sacrebleu.corpus_bleu(["a b c", "d e"], [["a b c", "d e f"]], tokenize="none").score
        (workdir / SIM / run / "test.bleu.json").write_text(json.dumps({"score": score}))
    publish_simianer(workdir, "fr-en", tmp_path / "pub")

    def table(root, out):
        runs = [f"sgd:dev:default={root}/default/sgd-dev/split1",
                f"iterselsgd:train:id-ng-shape={root}/id-ng-shape/iterselsgd-train/split1"]
        r = cli("sgd", "table", "--run", *runs, "--test-refs", refs, "--trials", "50", "--tokenize", "none",
                "--out", out)
        assert r.returncode == 0, r.stderr
        return out.read_bytes()

    assert table(workdir / SIM, tmp_path / "run.tsv") == table(tmp_path / "pub" / "runs", tmp_path / "records.tsv")


def _set_mtime(run, when):
    for path in run.rglob("*"):
        if path.is_file():
            os.utime(path, (when, when))


def test_a_run_resumed_at_a_later_commit_names_which_commit_wrote_each_run(workdir, tmp_path):
    head = subprocess.run(["git", "-C", str(workdir), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    old = "a" * 40
    (workdir / DRIVER_COMMITS).write_text(f"2026-11-29T19:00:00Z\t{old}\tclean\n"
                                          f"2026-11-30T01:00:00Z\t{old}\tclean\n"
                                          f"2026-11-30T03:00:00Z\t{head}\tclean\n")
    hour = 3600
    switch = 1796007600  # 2026-11-30T03:00:00Z
    _set_mtime(workdir / SIM / "default/sgd-dev/split1", switch - 5 * hour)  # before the switch
    straddling = workdir / SIM / "id-ng-shape/iterselsgd-train/split1"
    _set_mtime(straddling, switch - hour)
    os.utime(straddling / "test.bleu.json", (switch + hour, switch + hour))
    done = publish_simianer(workdir, "fr-en", tmp_path / "pub")
    assert done["commits"] == [old, head]
    provenance = (tmp_path / "pub" / "PROVENANCE.md").read_text()
    assert f"Produced by commits `{old}`, then `{head}`" in provenance
    assert "started at 2 commits" in provenance and "from 2026-11-29 19:00 UTC" in provenance
    assert f"  - `{old[:12]}` (1): default/sgd-dev/split1;" in provenance
    assert f"  - `{old[:12]}` then `{head[:12]}` (1): id-ng-shape/iterselsgd-train/split1;" in provenance


def test_one_commit_in_the_driver_record_reads_as_before(workdir, tmp_path):
    head = subprocess.run(["git", "-C", str(workdir), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    (workdir / DRIVER_COMMITS).write_text(f"2026-11-29T19:00:00Z\t{head}\tclean\n")
    done = publish_simianer(workdir, "fr-en", tmp_path / "pub")
    provenance = (tmp_path / "pub" / "PROVENANCE.md").read_text()
    assert done["commits"] == [head] and f"Produced by commit `{head}`." in provenance
    assert "driver started" not in provenance


def test_the_driver_s_deletions_are_named_in_the_provenance(workdir, tmp_path):
    from smtlib.report.publish_simianer import DRIVER_FREED

    (workdir / DRIVER_FREED).write_text("2026-12-01T10:00:00Z\t52428800\tresults/m/f*/id results/m/f*/ng\n")
    publish_simianer(workdir, "fr-en", tmp_path / "pub")
    provenance = (tmp_path / "pub" / "PROVENANCE.md").read_text()
    assert "  - 2026-12-01T10:00:00Z, 50.0 GB: `results/m/f*/id results/m/f*/ng`;" in provenance
    (workdir / DRIVER_FREED).write_text("2026-12-01T10:00:00Z\tmany\tresults/m\n")
    with pytest.raises(InputError, match="line 1: expected"):
        publish_simianer(workdir, "fr-en", tmp_path / "pub2")


@pytest.mark.parametrize("record, message", [
    (f"2026-11-29T19:00:00Z\t{'b' * 40}\tclean\n", "start the driver again at this commit"),
    ("2026-11-29 19:00\tabc\tclean\n", "line 1: expected"),
    ("", "empty"),
])
def test_a_driver_record_that_does_not_fit_the_checkout_is_refused(workdir, tmp_path, record, message):
    (workdir / DRIVER_COMMITS).write_text(record)
    with pytest.raises(InputError, match=message):
        publish_simianer(workdir, "fr-en", tmp_path / "pub")
    assert not (tmp_path / "pub").exists()


DRIVER = pathlib.Path(__file__).resolve().parents[3] / "docs" / "results" / "run" / "phases.sh"
ECHO = "#!/bin/sh\necho \"snakemake $*\"\n"


def _driver_run(tmp_path, snakemake: str = ECHO) -> tuple[pathlib.Path, str]:
    """A run clone for docs/results/run/phases.sh, with ``snakemake`` (a shell script) standing in for
    Snakemake; the clone and its commit."""
    run = tmp_path / "run"
    head = _checkout(run, "# workflow\n")
    bin_dir = tmp_path / "run-venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "snakemake").write_text(snakemake)
    (bin_dir / "snakemake").chmod(0o755)
    return run, head


def test_the_run_driver_records_each_start_s_commit_and_the_publisher_reads_it(tmp_path):
    """docs/results/run/phases.sh, with a stand-in snakemake: each start appends its commit and whether the
    tree was clean to results/run_commits.tsv, in the format the publisher reads."""
    from smtlib.report.publish import driver_commits

    run, head = _driver_run(tmp_path)
    phases = tmp_path / "phases.txt"
    phases.write_text("# a comment\nresults/a.txt\n")
    script = DRIVER
    for _ in range(2):
        subprocess.run(["bash", str(script), str(run), "1", str(phases)], check=True)
    (run / "Snakefile").write_text("# changed\n")
    subprocess.run(["bash", str(script), str(run), "1", str(phases)], check=True)
    starts = driver_commits(run)
    assert [(commit, clean) for _, commit, clean in starts] == [(head, True), (head, True), (head, False)]
    assert "all phases done" in (tmp_path / "run.log").read_text()


def test_the_run_driver_frees_consumed_intermediates_only_when_no_finished_phase_would_rebuild_them(tmp_path):
    """A "free PATH..." line of the phases file deletes the files when Snakemake's dry run over the phases
    above it plans nothing (recorded in results/run_freed.tsv); when it plans jobs, the files are put back
    as they were and the driver stops."""
    # the stand-in's dry run plans a job while the file "stale" exists in the run directory
    run, _ = _driver_run(tmp_path, '#!/bin/sh\ncase " $* " in\n'
                         '  *" -n "*) if [ -e stale ]; then echo "total 1"; '
                         'else echo "Nothing to be done (all requested files are present and up to date)."; fi ;;\n'
                         '  *) echo "snakemake $*" ;;\nesac\n')
    big = run / "results" / "big"
    big.mkdir(parents=True)
    for name in ("x.bin", "y.bin", "keep.txt"):
        (big / name).write_bytes(b"x" * 40_960)
    (run / "results" / "kept-link").hardlink_to(big / "y.bin")  # y.bin's data stays: it frees nothing
    phases = tmp_path / "phases.txt"
    phases.write_text("results/a.txt\nfree results/big/*.bin results/absent\nresults/b.txt\n")
    script = DRIVER
    subprocess.run(["bash", str(script), str(run), "1", str(phases)], check=True)
    assert sorted(p.name for p in big.iterdir()) == ["keep.txt"]
    freed = (run / "results" / "run_freed.tsv").read_text().splitlines()
    assert len(freed) == 1 and freed[0].split("\t")[2] == "results/big/x.bin results/big/y.bin results/absent"
    assert int(freed[0].split("\t")[1]) == 40  # x.bin's 40 kB only
    assert "all phases done" in (tmp_path / "run.log").read_text()

    (big / "x.bin").write_text("still needed")
    (run / "stale").write_text("")
    done = subprocess.run(["bash", str(script), str(run), "1", str(phases)])
    assert done.returncode == 1
    assert (big / "x.bin").read_text() == "still needed"
    assert not list((run / "results").glob(".freed-*"))
    assert len((run / "results" / "run_freed.tsv").read_text().splitlines()) == 1
    assert "free refused" in (tmp_path / "run.log").read_text()


def test_files_a_stopped_driver_had_moved_aside_are_put_back_at_the_next_start(tmp_path):
    run, _ = _driver_run(tmp_path)
    aside = run / "results" / ".freed-4242" / "results" / "big"
    aside.mkdir(parents=True)
    (aside / "x.bin").write_text("moved")
    (run / "results" / "big").mkdir()
    (run / "results" / "big" / "y.bin").write_text("stayed")
    phases = tmp_path / "phases.txt"
    phases.write_text("results/a.txt\n")
    subprocess.run(["bash", str(DRIVER), str(run), "1", str(phases)], check=True)
    assert (run / "results" / "big" / "x.bin").read_text() == "moved"
    assert (run / "results" / "big" / "y.bin").read_text() == "stayed"
    assert not (run / "results" / ".freed-4242").exists()


def test_a_free_line_before_any_phase_is_refused(tmp_path):
    run, _ = _driver_run(tmp_path, "#!/bin/sh\necho 'Nothing to be done'\n")
    (run / "results").mkdir(exist_ok=True)
    (run / "results" / "x.bin").write_text("x")
    phases = tmp_path / "phases.txt"
    phases.write_text("free results/x.bin\nresults/a.txt\n")
    done = subprocess.run(["bash", str(DRIVER), str(run), "1", str(phases)])
    assert done.returncode == 1 and (run / "results" / "x.bin").read_text() == "x"


def _scored_record(workdir, tmp_path, cli, run="id-ng-shape/iterselsgd-train/split1"):
    """A published record of ``run`` whose test.bleu.json is what `smtlib bleu` writes for its output,
    and the test references."""
    refs = tmp_path / "test.ref"
    refs.write_text("a b c\nd e f\n")
    r = cli("bleu", "--refs", refs, "--hyps", workdir / SIM / run / "test.out", "--tokenize", "none")
    assert r.returncode == 0, r.stderr
    (workdir / SIM / run / "test.bleu.json").write_text(r.stdout)
    publish_simianer(workdir, "fr-en", tmp_path / "pub", max_weights_bytes=20_000)
    return tmp_path / "pub" / "runs" / run, refs


def _restore(cli, record, refs, out, *bleu):
    names = {"--chosen": "chosen.json", "--test-out": "test.out", "--test-bleu": "test.bleu.json",
             "--info": "restored.json"}
    options = [x for flag, name in names.items() for x in (flag, out / name)]
    return cli("sgd", "restore", "--record", record, "--test-refs", refs, *options, *(bleu or ("--tokenize", "none")))


def test_a_run_restored_from_its_record_has_the_run_s_own_files(workdir, tmp_path, cli):
    record, refs = _scored_record(workdir, tmp_path, cli, "default/sgd-dev/split1")
    out = tmp_path / "restored"
    r = _restore(cli, record, refs, out)
    assert r.returncode == 0, r.stderr
    run = workdir / SIM / "default/sgd-dev/split1"
    for name in ("chosen.json", "test.out", "test.bleu.json"):
        assert (out / name).read_bytes() == (run / name).read_bytes(), name
    info = json.loads((out / "restored.json").read_text())
    assert info["weights"] == str(record / "chosen.weights.gz") and info["chosen_epoch"] == 1


@pytest.mark.parametrize("damage, message", [
    ("bleu", "differs in score"),  # an edited or differently scored record
    ("lines", "line"),  # a test output without one line per reference
    ("epoch", "the chosen epoch is 2, but epoch 1"),
    ("missing", "test.out.gz"),
])
def test_a_record_that_does_not_reproduce_is_refused_and_nothing_written(workdir, tmp_path, cli, damage, message):
    record, refs = _scored_record(workdir, tmp_path, cli)
    if damage == "bleu":
        scored = json.loads((record / "test.bleu.json").read_text())
        (record / "test.bleu.json").write_text(json.dumps({**scored, "score": scored["score"] + 0.01}))
    elif damage == "lines":
        (record / "test.out.gz").write_bytes(gzip.compress(b"a b c\n"))
    elif damage == "epoch":
        chosen = json.loads((record / "chosen.json").read_text())
        (record / "chosen.json").write_text(json.dumps({**chosen, "chosen_epoch": 2}))
    else:
        (record / "test.out.gz").unlink()
    out = tmp_path / "restored"
    r = _restore(cli, record, refs, out)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert not out.exists() or not list(out.iterdir())


def test_other_bleu_settings_than_the_record_s_are_refused(workdir, tmp_path, cli):
    record, refs = _scored_record(workdir, tmp_path, cli)
    r = _restore(cli, record, refs, tmp_path / "restored", "--tokenize", "13a", "--lowercase")
    assert r.returncode == 2 and "signature" in r.stderr


def test_publishing_restored_runs_keeps_their_records_and_names_them_apart(workdir, tmp_path, cli):
    """A lost run directory's finished runs restored in a new one are published again as they were (the
    record's weights, or none where the record had none) and named as restored, not as run here."""
    record, refs = _scored_record(workdir, tmp_path, cli, "default/sgd-dev/split1")
    heavy, _ = _scored_record(workdir, tmp_path, cli)
    before = {p.relative_to(tmp_path / "pub" / "runs"): p.read_bytes()
              for p in (tmp_path / "pub" / "runs").rglob("*") if p.is_file() and "baseline" not in p.parts}
    new = tmp_path / "new"
    head = _checkout(new, "# workflow\n")
    (new / "results").mkdir()
    (new / DRIVER_COMMITS).write_text(f"2026-11-30T08:00:00Z\t{'a' * 40}\tclean\n2026-11-30T09:00:00Z\t{head}\tclean\n")
    for source in (record, heavy):
        run = new / SIM / source.relative_to(tmp_path / "pub" / "runs")
        assert _restore(cli, source, refs, run).returncode == 0
    out = tmp_path / "pub2"
    (out / "part1").mkdir(parents=True)  # the lost directory's publication, kept apart
    done = publish_simianer(new, "fr-en", out, batch_method=None)
    assert done["restored"] == ["default/sgd-dev/split1", "id-ng-shape/iterselsgd-train/split1"]
    assert done["heavy"] == ["id-ng-shape/iterselsgd-train/split1"]
    after = {p.relative_to(out / "runs"): p.read_bytes() for p in (out / "runs").rglob("*") if p.is_file()}
    assert after == before
    provenance = (out / "PROVENANCE.md").read_text()
    assert "restored from their published records and not run here (2" in provenance
    assert "lost with their machines: `part1/`" in provenance
    assert "started at 2 commits" in provenance and "whose starts cover" not in provenance  # none was run here


def test_a_config_line_adds_its_items_to_every_later_snakemake_call(tmp_path):
    """A "config ITEM..." line of the phases file: its --config items go to the phases below it and to
    the dry runs of their "free" lines, not to the phases above it."""
    run, _ = _driver_run(tmp_path, '#!/bin/sh\necho "$*" >> calls.txt\n'
                         'case " $* " in *" -n "*) echo "Nothing to be done" ;; esac\n')
    (run / "results").mkdir(exist_ok=True)
    (run / "results" / "x.bin").write_text("x")
    phases = tmp_path / "phases.txt"
    phases.write_text('results/a.txt\nconfig s={"restore_runs":"docs/r"} n=2\nresults/b.txt\nfree results/x.bin\n')
    subprocess.run(["bash", str(DRIVER), str(run), "1", str(phases)], check=True)
    calls = (run / "calls.txt").read_text().splitlines()
    assert len(calls) == 5  # unlock and run for each phase, the free line's dry run
    extra = 'data_dir=../shared/data s={"restore_runs":"docs/r"} n=2 --'
    assert [extra in c for c in calls] == [False, False, True, True, True]
    assert calls[-1].startswith("-n ") and not (run / "results" / "x.bin").exists()
