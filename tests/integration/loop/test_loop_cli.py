"""``smtlib loop`` end to end around the fake decoder: the three ways of passing weights, resuming
after a kill, ``--jobs``, and a working directory that belongs to other options."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from smtlib.kbest.store import read_stored
from smtlib.weights import from_moses_ini, read_weights
from tests.integration.loop.conftest import curve, loop_args, loop_in_process, nbest_lines, outputs


def test_the_three_ways_of_passing_weights_tune_the_same_way(cli, example, tmp_path):
    """A moses.ini ({ini}, source on stdin), a weights file ({weights}, -i {input}) and command-line weights
    ({weights_args}, n-best list on stdout) give the decoder the same weights: the same runs, and tuning
    lifts dev BLEU well above the initial weights'."""
    runs = {}
    for mode in ("ini", "weights", "weights_args"):
        work = tmp_path / mode
        result = cli(*loop_args(example, work, mode, "--max-iterations", "3", "--test", example["test.src"],
                                "--test-refs", example["test.en"]))
        assert result.returncode == 0, result.stderr
        lines = result.stderr.splitlines()
        assert [line.split(":")[1].strip() for line in lines[:3]] == ["iteration 1/3", "iteration 2/3", "iteration 3/3"]
        assert all("dev BLEU" in line and "pool BLEU" in line and "moved" in line and line.endswith(" s")
                   for line in lines[:3])
        rows = curve(work)
        assert list(rows[0]) == ["iteration", "dev_bleu", "pool_bleu", "test_bleu", "seconds"]
        assert float(rows[-1]["dev_bleu"]) > float(rows[0]["dev_bleu"]) + 20
        for n in (1, 2, 3):
            for name in ("weights", "nbest.gz", "pool.bin", "tuner.json", "optimized.weights", "next.weights",
                         "scores.json", "test.nbest.gz", "test.1best", "decoder.log"):
                assert (work / f"it{n}" / name).exists(), (mode, n, name)
            assert not (work / f"it{n}" / ".work").exists()
        best = json.loads((work / "best.json").read_text())
        assert best["finished"] and best["iterations"] == 3 and best["stop"] == "max-iterations"
        assert best["dev_bleu"] == pytest.approx(max(float(r["dev_bleu"]) for r in rows), abs=1e-4)
        assert best["dev_bleu"] == pytest.approx(float(rows[best["iteration"] - 1]["dev_bleu"]), abs=1e-4)
        assert read_weights(work / "best.weights") == read_weights(work / f"it{best['iteration']}" / "weights")
        runs[mode] = work
    ini = runs["ini"]
    assert (ini / "it2" / "moses.ini").exists() and (ini / "best.moses.ini").exists()
    assert from_moses_ini(ini / "best.moses.ini") == read_weights(ini / "best.weights")
    assert not (runs["weights"] / "best.moses.ini").exists()
    # the same weights reached the decoder every time: the same n-best lists and tuned weights
    for mode in ("weights", "weights_args"):
        for n in (1, 2, 3):
            assert nbest_lines(runs[mode] / f"it{n}" / "nbest.gz") == nbest_lines(ini / f"it{n}" / "nbest.gz")
            assert read_weights(runs[mode] / f"it{n}" / "next.weights") == read_weights(ini / f"it{n}" / "next.weights")


def test_a_loop_killed_in_iteration_2_resumes_to_the_same_weights(cli, example, tmp_path):
    """Kill the loop (and its decoder) while iteration 2 decodes, rerun the same command: it continues after
    iteration 1 without decoding it again and ends with the weights of an uninterrupted run, bit for bit."""
    options = ("--max-iterations", "4", "--method", "mert")
    whole = tmp_path / "whole"
    result = cli(*loop_args(example, whole, "weights", *options))
    assert result.returncode == 0, result.stderr

    work, calls = tmp_path / "killed", tmp_path / "calls"
    args = loop_args(example, work, "weights", *options, extra=f"--calls {calls}")
    env = {**os.environ, "PYTHONHASHSEED": "0", "FAKE_DECODER_HANG_AT": "2"}
    process = subprocess.Popen([sys.executable, "-m", "smtlib", *args], env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not os.path.exists(f"{calls}.hang"):
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "the decoder never started iteration 2"
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the loop and the decoder it started
        process.wait()
        process.stderr.close()
    assert (work / "it1" / "scores.json").exists() and (work / "it2").is_dir()
    assert not (work / "it2" / "scores.json").exists()
    assert len(curve(work)) == 1

    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert "continuing" in result.stderr and "after iteration 1" in result.stderr
    assert len(calls.read_text().splitlines()) == 2 + 3  # iteration 1 was not decoded again
    for n in (1, 2, 3, 4):
        for name in ("next.weights", "optimized.weights", "weights"):
            assert (work / f"it{n}" / name).read_bytes() == (whole / f"it{n}" / name).read_bytes(), (n, name)
    assert (work / "best.weights").read_bytes() == (whole / "best.weights").read_bytes()
    assert json.loads((work / "best.json").read_text()) == json.loads((whole / "best.json").read_text())


def test_jobs_do_not_change_the_results(example, tmp_path):
    """--jobs 1 and --jobs 3 (shards of 4 dev lines, 2 test lines, joined with renumbered ids) write the same
    n-best lists, pools, weights, tuner info and curve."""
    works = {}
    for jobs in ("1", "3"):
        works[jobs] = tmp_path / f"jobs{jobs}"
        code, err = loop_in_process(loop_args(example, works[jobs], "weights_args", "--jobs", jobs, "--max-iterations",
                                              "3", "--method", "kbmira", "--test", example["test.src"], "--test-refs",
                                              example["test.en"]))
        assert code == 0, err
    one, three = outputs(works["1"]), outputs(works["3"])
    assert one.keys() == three.keys() and "it3/nbest.gz" in one and "it3/test.nbest.gz" in one
    assert one == three
    for n in (1, 2, 3):
        a, b = read_stored(works["1"] / f"it{n}" / "pool.bin"), read_stored(works["3"] / f"it{n}" / "pool.bin")
        assert a.arrays.keys() == b.arrays.keys()
        assert all((a.arrays[key] == b.arrays[key]).all() for key in a.arrays)
    log = (works["3"] / "it1" / "decoder.log").read_text()
    assert "# shard 3 of 3: source lines 9-12" in log


def test_a_working_directory_of_other_options_is_refused(example, tmp_path):
    """Another method, other references or another decoder command: exit 2 naming what changed, nothing
    touched. --jobs and --max-iterations may change: the rerun continues up to the new limit."""
    work = tmp_path / "work"
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "2"))
    assert code == 0, err
    before = outputs(work)
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "2", "--method", "kbmira"))
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"smtlib loop: error: {work / 'loop.json'}: this working directory belongs to a loop started "
                          "with other options: --method (mert -> kbmira)")
    other_refs = tmp_path / "other.en"
    other_refs.write_text(open(example["dev.en"]).read().replace("the", "a"), encoding="utf-8")
    args = loop_args(example, work, "weights", "--max-iterations", "2")
    args[args.index("--refs") + 1] = str(other_refs)
    code, err = loop_in_process(args)
    assert code == 2 and "--refs (the file's content)" in err
    code, err = loop_in_process(loop_args(example, work, "ini", "--max-iterations", "2"))
    assert code == 2 and "--decoder (" in err and "--init (the file's content)" in err
    assert outputs(work) == before
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "3", "--jobs", "2"))
    assert code == 0, err
    assert "continuing" in err and [r["iteration"] for r in curve(work)] == ["1", "2", "3"]
