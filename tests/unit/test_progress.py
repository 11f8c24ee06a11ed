"""Progress lines (issue 13, "visible progress"): rate-limited stderr lines from the tuners' loops
and the start and end of every ``smtlib train build`` stage, with outputs unchanged."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

from smtlib.progress import SILENT, Progress, command_progress
from smtlib.tuners.registry import get_tuner_class, list_tuners
from tests.support.tuner_fixtures import init_for, noisy_separable_pool, write_small_files


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rate_limit_prints_first_then_one_a_second_then_the_last():
    clock, out = FakeClock(), io.StringIO()
    progress = Progress("smtlib tune x", stream=out, interval=1.0, clock=clock)
    for j in range(1, 2001):  # 2000 epochs in 4 seconds
        clock.now = j * 0.002
        progress.step("epoch", j, 2000, bleu=j / 4000)
    progress.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "smtlib tune x: epoch 1/2000 bleu=0.0003"
    assert lines[-1] == "smtlib tune x: epoch 2000/2000 bleu=0.5000"
    # the first line at t=0.002, then t=1.002, 2.002, 3.002 (epochs 501, 1001, 1501), then the last
    assert [int(re.search(r"epoch (\d+)/", line).group(1)) for line in lines] == [1, 501, 1001, 1501, 2000]
    progress.finish()  # nothing held: nothing more
    assert len(out.getvalue().splitlines()) == 5


def test_interval_zero_prints_every_step_and_silent_prints_nothing(capsys):
    out = io.StringIO()
    progress = Progress("p", stream=out, interval=0.0)
    for j in range(3):
        progress.step("iteration", j + 1, objective=1.5)
    assert out.getvalue().splitlines() == [f"p: iteration {j} objective=1.5000" for j in (1, 2, 3)]
    SILENT.step("epoch", 1, 2)
    SILENT.message("x")
    SILENT.finish()
    command_progress("q", quiet=True).step("epoch", 1)
    assert capsys.readouterr() == ("", "")
    command_progress("q").step("epoch", 1, 2, loss=0.25)
    assert capsys.readouterr() == ("", "q: epoch 1/2 loss=0.2500\n")


#: fewer iterations where the defaults are long (keys the method declares only)
SHORT = {"random_restarts": 3, "restarts": 2, "max_epochs": 5, "reselections": 3, "max_iterations": 30,
         "epochs": 20, "cccp_steps": 3, "passes": 5}


@pytest.mark.parametrize("method", list_tuners())
def test_reporting_does_not_change_the_weights(method):
    """The same weights, bit for bit, silent and reporting every step; every iterative method reports."""
    cls = get_tuner_class(method)
    params = {k: v for k, v in SHORT.items() if k in cls.defaults}
    pool = noisy_separable_pool(seed=4, noise_seed=2, n_sentences=8, per_sentence=10, sparse=cls.supports_sparse)
    init = init_for(pool)
    silent = cls(seed=5, **params)(pool, init)
    out = io.StringIO()
    reporting = cls(seed=5, **params)
    reporting.progress = Progress(f"smtlib tune {method}", stream=out, interval=0.0)
    result = reporting(pool, init)
    assert result.weights.tobytes() == silent.weights.tobytes()
    assert json.dumps(result.info, default=str) == json.dumps(silent.info, default=str)
    lines = out.getvalue().splitlines()
    if method != "linreg":  # a closed-form solve: no loop to report
        assert lines and all(line.startswith(f"smtlib tune {method}: ") for line in lines)
        assert all(re.fullmatch(r"smtlib tune \w+: [\w ]+ \d+(/\d+)?( \w+=\S+)*", line) for line in lines), lines


def test_kbmira_cli_prints_epochs_on_stderr_and_the_same_weights(tmp_path, cli):
    kbest, ref, init = write_small_files(tmp_path)
    outputs = {}
    for mode in ("loud", "quiet"):
        extra = ["--quiet"] if mode == "quiet" else []
        done = cli("tune", "kbmira", "--kbest", kbest, "--refs", ref, "--init", init, "--out", tmp_path / f"{mode}.w",
                   "--info", tmp_path / f"{mode}.json", "--seed", "2", "--set", "epochs=12", *extra)
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""
        outputs[mode] = done.stderr.splitlines()
    epochs = [line for line in outputs["loud"] if line.startswith("smtlib tune kbmira: epoch ")]
    # the first epoch at once, the last one always (the run takes well under a second)
    assert epochs[0].startswith("smtlib tune kbmira: epoch 1/12 updates=")
    assert epochs[-1].startswith("smtlib tune kbmira: epoch 12/12 updates=")
    assert all(" bleu=" in line and " best=" in line for line in epochs)
    assert not any("epoch" in line for line in outputs["quiet"])
    assert outputs["loud"][-1] == outputs["quiet"][-1]  # the summary line
    assert (tmp_path / "loud.w").read_bytes() == (tmp_path / "quiet.w").read_bytes()
    assert (tmp_path / "loud.json").read_bytes() == (tmp_path / "quiet.json").read_bytes()


def test_train_build_reports_every_stage_start_and_end(tmp_path, cli):
    rng = np.random.default_rng(1)
    pairs = [("chat", "cat"), ("chien", "dog"), ("maison", "house"), ("noir", "black")]
    src, tgt = [], []
    for _ in range(25):
        words = [pairs[k] for k in rng.integers(0, len(pairs), 4)]
        src.append("le " + " ".join(f for f, _ in words))
        tgt.append("the " + " ".join(e for _, e in words))
    (tmp_path / "c.fr").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "c.en").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    done = cli("train", "build", "--src", tmp_path / "c.fr", "--tgt", tmp_path / "c.en", "--src-lang", "fr",
               "--tgt-lang", "en", "--feature-set", "small", "--out", tmp_path / "m", "--seed", "1", "--threads", "1")
    assert done.returncode == 0, done.stderr
    stages = list(json.loads((tmp_path / "m" / "build.json").read_text())["stages"])
    assert stages[0] == "prepare" and "assemble" in stages
    lines = [line for line in done.stderr.splitlines() if line.startswith("smtlib train: ")]
    expected = []
    for name in stages:
        expected += [f"smtlib train: {name}: started", f"smtlib train: {name}: done in "]
    assert len(lines) == len(expected), done.stderr
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start), (line, start)
        if "done in" in start:
            assert re.fullmatch(r".*: done in \d+\.\d s \(\d+\.\d s CPU\)", line), line


def test_decode_progress_line_has_rate_and_time_left():
    from smtlib.decoder.driver import Progress as DecodeProgress

    out = io.StringIO()
    progress = DecodeProgress(10, stream=out, interval=0.0)
    progress.update(4)
    progress.finish(10)
    first, last = out.getvalue().splitlines()
    assert re.fullmatch(r"decode: 4/10 sentences, \d+\.\d sent/s, ETA \d+ s", first), first
    assert re.fullmatch(r"decode: 10/10 sentences, \d+\.\d sent/s", last), last
