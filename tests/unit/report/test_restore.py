"""`smtlib report restore` and `smtlib report summary --expect`: a finished run restored from its
published record (smtlib.report.restore) gives back the run's learning curve and summary, and a
summary that does not reproduce the record's test BLEU is refused."""

from __future__ import annotations

import json

import pytest

from smtlib.errors import InputError
from smtlib.report.publish import run_record
from smtlib.report.restore import read_record
from smtlib.weights import read_weights

SIG = "nrefs:1|case:lc|eff:no|tok:none|smooth:exp|version:2.6.0|impl:smtlib-0.1.0"
META = ["pair=fr-en", "fs=big", "method=kbmira", "setting=default", "sample=3"]


def bleu_json(path, score):
    path.write_text(json.dumps({"name": "BLEU", "score": score, "signature": SIG}), encoding="utf-8")
    return path


@pytest.fixture
def tuned_run(tmp_path, cli):
    """A run as the tuning loop leaves it: report best over 4 iterations (the best one tied with a
    later one), then report summary over two test sets; and its published record."""
    run = tmp_path / "run"
    run.mkdir()
    dev = [bleu_json(run / f"dev{i}.json", s) for i, s in enumerate([20.12345, 31.5, 33.25, 33.25])]
    weights = []
    for i in range(4):
        path = run / f"w{i}"
        # dense and sparse features, values that need all 17 digits to read back
        path.write_text(f"LM0_0 {0.1 * (i + 1)!r}\nWordPenalty0_0 -{1 / 3 + i}\nsparse:id_la_the {2e-7 * i}\n")
        weights.append(path)
    r = cli("report", "best", "--dev-bleu", *dev, "--weights", *weights, "--out-weights", run / "best.weights",
            "--out-curve", run / "curve.tsv", "--meta", *META)
    assert r.returncode == 0, r.stderr
    tests = [f"test2016={bleu_json(run / 't16.json', 29.123456789)}", f"test2017={bleu_json(run / 't17.json', 27.5)}"]
    r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", *tests, "--out", run / "summary.json")
    assert r.returncode == 0, r.stderr
    record = tmp_path / "record.json"
    record.write_text(json.dumps(run_record(run), indent=1, sort_keys=True))
    return run, tests, record


def test_a_restored_run_gives_back_its_curve_weights_and_summary(tmp_path, cli, tuned_run):
    run, tests, record = tuned_run
    out = tmp_path / "restored"
    r = cli("report", "restore", "--record", record, "--meta", *META, "--out-weights", out / "best.weights",
            "--out-curve", out / "curve.tsv")
    assert r.returncode == 0, r.stderr
    assert (out / "curve.tsv").read_bytes() == (run / "curve.tsv").read_bytes()
    restored, original = read_weights(out / "best.weights"), read_weights(run / "best.weights")
    assert dict(restored) == dict(original) and restored["WordPenalty0_0"] == -(1 / 3 + 2)  # iteration 2 kept
    assert "restored from the run's published record" in (out / "best.weights").read_text()
    # the test sets decoded again to the same scores: the summary is the tuned run's, byte for byte
    r = cli("report", "summary", "--curve", out / "curve.tsv", "--test", *tests, "--expect", record,
            "--out", out / "summary.json")
    assert r.returncode == 0, r.stderr
    assert (out / "summary.json").read_bytes() == (run / "summary.json").read_bytes()


def test_a_run_that_kept_a_later_iteration_tied_at_the_records_precision_is_restored(tmp_path, cli):
    """The record's dev BLEU is rounded to 4 decimals; the run chose at full precision (Table 4's Big
    SVM on sub-sample 2 kept iteration 13 over iteration 2, both 50.8577 in its record)."""
    run = tmp_path / "run"
    run.mkdir()
    dev = [bleu_json(run / f"dev{i}.json", s) for i, s in enumerate([20.0, 33.25001, 31.0, 33.25004])]
    weights = []
    for i in range(4):
        (run / f"w{i}").write_text(f"LM0_0 {0.1 * (i + 1)!r}\n")
        weights.append(run / f"w{i}")
    r = cli("report", "best", "--dev-bleu", *dev, "--weights", *weights, "--out-weights", run / "best.weights",
            "--out-curve", run / "curve.tsv", "--meta", *META)
    assert r.returncode == 0, r.stderr
    tests = [f"test2016={bleu_json(run / 't16.json', 29.5)}"]
    r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", *tests, "--out", run / "summary.json")
    assert r.returncode == 0, r.stderr
    record = tmp_path / "record.json"
    record.write_text(json.dumps(run_record(run), indent=1, sort_keys=True))
    data = json.loads(record.read_text())
    assert data["best_iteration"] == 3 and data["dev_bleu"][1] == data["dev_bleu"][3] == 33.25
    out = tmp_path / "restored"
    r = cli("report", "restore", "--record", record, "--meta", *META, "--out-weights", out / "best.weights",
            "--out-curve", out / "curve.tsv")
    assert r.returncode == 0, r.stderr
    assert (out / "curve.tsv").read_bytes() == (run / "curve.tsv").read_bytes()
    assert read_weights(out / "best.weights")["LM0_0"] == 0.4
    r = cli("report", "summary", "--curve", out / "curve.tsv", "--test", *tests, "--expect", record,
            "--out", out / "summary.json")
    assert r.returncode == 0, r.stderr
    assert (out / "summary.json").read_bytes() == (run / "summary.json").read_bytes()


def test_a_summary_that_does_not_reproduce_its_record_is_refused(tmp_path, cli, tuned_run):
    run, tests, record = tuned_run
    # one test set one ten-billionth of a BLEU point off: another system or decoder
    bleu_json(run / "t17.json", 27.5000000001)
    r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", *tests, "--expect", record,
            "--out", tmp_path / "summary.json")
    assert r.returncode == 2
    assert "does not reproduce its record" in r.stderr and "test2017 BLEU 27.5000000001" in r.stderr
    assert not (tmp_path / "summary.json").exists()
    # another test set than the record's
    r = cli("report", "summary", "--curve", run / "curve.tsv", "--test", tests[0], "--expect", record,
            "--out", tmp_path / "summary.json")
    assert r.returncode == 2 and "test sets ['test2016'], the record's ['test2016', 'test2017']" in r.stderr


def test_a_record_of_another_run_is_refused(tmp_path, cli, tuned_run):
    _, _, record = tuned_run
    r = cli("report", "restore", "--record", record, "--meta", *META[:4], "sample=0", "--out-weights",
            tmp_path / "w", "--out-curve", tmp_path / "c")
    assert r.returncode == 2 and "the record is of another run: sample '3' (expected '0')" in r.stderr
    assert not (tmp_path / "w").exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("best_weights"), "missing best_weights"),
    (lambda r: r.update(best_iteration=1), "best_iteration 1 is not the best dev BLEU's (2)"),
    (lambda r: r.update(best_iteration=9), "best_iteration 9 is not an iteration"),
    (lambda r: r.update(tune=33.0), "tune 33.0 is not the dev BLEU of iteration 2"),
    (lambda r: r.update(dev_bleu=[]), "dev_bleu must be a non-empty list"),
    (lambda r: r.update(signatures=[SIG, SIG + "x"]), "one BLEU signature"),
    (lambda r: r["best_weights"].update(LM0_0=float("nan")), "finite weight"),
    (lambda r: r.update(tests={}), "tests must map"),
    (lambda r: r.update(steps={}), "steps must be a list"),
    (lambda r: r.update(steps=[{"iteration": 2, "info": {}, "benchmark": None}]), "iterations 1..3, in order"),
    (lambda r: r.update(steps=[{"iteration": i, "info": {}, "benchmark": {"s": 1.0, "cpu_time": -1.0, "max_rss": 5}}
                               for i in (1, 2, 3)]), "step 1: an info object and a benchmark"),
])
def test_malformed_records_are_input_errors(tmp_path, tuned_run, change, message):
    _, _, record = tuned_run
    data = json.loads(record.read_text())
    change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        read_record(bad)


BENCHMARK = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n{s}\t0:00:0{s}\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n"


def test_a_record_keeps_each_tuning_steps_info_and_cost_and_a_restore_gives_them_back(tmp_path, cli, tuned_run):
    """What Tan et al.'s findings read of a run (each step's --info, its benchmark's seconds and memory)
    travels in its record, comes back with the restore, and stays when the restored run is published again."""
    from smtlib.report.publish import run_record, this_machine

    run, _, _ = tuned_run
    benchmarks = tmp_path / "benchmarks"
    for it in (1, 2, 3):
        (run / f"it{it}").mkdir()
        (run / f"it{it}/tune.json").write_text(json.dumps({"method": "kbmira", "updates_seen": it}))
        (benchmarks / f"it{it}").mkdir(parents=True)
        (benchmarks / f"it{it}/tune.tsv").write_text(BENCHMARK.format(s=it + 1, rss=100 * it, cpu=it + 0.5))
    record = run_record(run, benchmarks)
    assert record["steps"] == [{"iteration": it, "info": {"method": "kbmira", "updates_seen": it},
                                "benchmark": {"s": it + 1.0, "cpu_time": it + 0.5, "max_rss": 100.0 * it,
                                              "machine": this_machine()}}
                               for it in (1, 2, 3)]
    assert [s["benchmark"] for s in run_record(run)["steps"]] == [None] * 3  # no benchmark directory given
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record, indent=1, sort_keys=True))
    out = tmp_path / "restored"
    r = cli("report", "restore", "--record", path, "--meta", *META, "--out-weights", out / "best.weights",
            "--out-curve", out / "curve.tsv", "--out-steps", out / "steps.json")
    assert r.returncode == 0, r.stderr
    steps = json.loads((out / "steps.json").read_text())
    assert steps == {"pair": "fr-en", "fs": "big", "method": "kbmira", "setting": "default", "sample": "3",
                     "steps": record["steps"]}
    (out / "summary.json").write_bytes((run / "summary.json").read_bytes())
    assert run_record(out) == record  # published again from the directory that restored it: nothing lost
    # a record published without steps restores to none, which the findings refuse to cost
    del record["steps"]
    path.write_text(json.dumps(record))
    r = cli("report", "restore", "--record", path, "--out-weights", out / "w", "--out-curve", out / "c",
            "--out-steps", out / "s.json")
    assert r.returncode == 0 and json.loads((out / "s.json").read_text())["steps"] == []


def test_a_record_tuned_with_other_settings_is_refused_and_restored_with_its_own(tmp_path, cli, tuned_run):
    """Each kept step names the hyper-parameters it ran with: a run whose settings (over the tuner's
    defaults) give others is another run, and restoring it from that record exits 2 and writes nothing;
    with the record's settings given, it is restored."""
    from smtlib.report.publish import run_record
    from smtlib.tuners.registry import get_tuner_class

    run, _, _ = tuned_run
    defaults = get_tuner_class("kbmira").defaults
    for it in (1, 2, 3):
        (run / f"it{it}").mkdir()
        params = {**defaults, "C": 0.1} if it == 2 else dict(defaults)  # one step in the middle differs
        (run / f"it{it}/tune.json").write_text(json.dumps({"method": "kbmira", "params": params}))
    path = tmp_path / "record.json"
    path.write_text(json.dumps(run_record(run)))
    out = tmp_path / "restored"
    args = ["report", "restore", "--record", path, "--meta", *META, "--out-weights", out / "w", "--out-curve",
            out / "c", "--out-steps", out / "s.json"]
    r = cli(*args)
    assert r.returncode == 2 and not out.exists()
    assert "iteration 2 was tuned with C=0.1; this run's settings give C=0.01" in r.stderr
    assert cli(*args, "--set", "C=0.1").returncode == 2  # now steps 1 and 3 differ
    # every step with the settings given: restored, and the message says the settings were checked
    for it in (1, 3):
        (run / f"it{it}/tune.json").write_text(json.dumps({"method": "kbmira", "params": {**defaults, "C": 0.1}}))
    path.write_text(json.dumps(run_record(run)))
    r = cli(*args, "--set", "C=0.1")
    assert r.returncode == 0, r.stderr
    assert "settings of 3 steps checked" in r.stderr and (out / "w").exists()
    assert cli(*args).returncode == 2  # and at the defaults it is refused
    r = cli(*args, "--set", "Cc=0.1")  # a typo in a setting is an error, not a pass
    assert r.returncode == 2 and "unknown hyper-parameter" in r.stderr


def test_settings_are_not_checked_where_they_cannot_be_known():
    """A record without steps, steps whose info names no parameters, or a method whose settings are not
    known here (params None): nothing to compare, and nothing is refused for it."""
    from smtlib.report.restore import check_settings

    steps = [{"iteration": 1, "info": {"method": "x", "params": {"C": 1}}}, {"iteration": 2, "info": {}}]
    assert check_settings({"steps": steps}, None) == 0
    assert check_settings({}, {"C": 2}) == 0
    assert check_settings({"steps": steps}, {"C": 1}) == 1  # the step without parameters is not counted
    with pytest.raises(InputError, match="iteration 1 was tuned with C=1; this run's settings give C=2"):
        check_settings({"steps": steps}, {"C": 2})
