"""A decoder that fails in iteration 2: exit status 2, one line naming the iteration and the file, iteration 1
kept; rerunning the same command (the decoder now behaves) continues from iteration 2."""

from __future__ import annotations

import json

import pytest

from tests.integration.loop.conftest import curve, loop_args, loop_in_process, outputs

CASES = {
    # kind: (file the message names, what it says)
    "exit": ("it2/decoder.log", "the decoder exited with status 3 (its standard error is in {log}): fake decoder: "
                                "loading the model | fake decoder: fatal: phrase table missing"),
    "short": ("it2/nbest.gz", "{nbest}: the decoder wrote hypotheses for 11 of the 12 sentences of the dev set: none "
                              "for sentence 11 (source line 12)"),
    "features": ("it2/nbest.gz", "{nbest}: the decoder's dense features changed: LM0(1) TM1(2) WordPenalty0(1) here, "
                                 "LM0(1) TM0(2) WordPenalty0(1) in iteration 1"),
    "malformed": ("it2/nbest.gz", "{nbest}:2: feature value of 'LM0': 'x"),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_bad_decoder_stops_the_loop_in_its_iteration(example, tmp_path, kind):
    work, calls = tmp_path / "work", tmp_path / "calls"
    args = loop_args(example, work, "weights", "--max-iterations", "3", "--quiet",
                     extra=f"--calls {calls} --break {kind}@2")
    code, err = loop_in_process(args)
    assert code == 2
    assert len(err.splitlines()) == 1, err
    _, expected = CASES[kind]
    expected = expected.format(log=work / "it2" / "decoder.log", nbest=work / "it2" / "nbest.gz")
    assert err.startswith(f"smtlib loop: error: iteration 2: {expected}"), err
    # iteration 1 is complete and its outputs written; iteration 2 is not
    assert (work / "it1" / "scores.json").exists() and not (work / "it2" / "scores.json").exists()
    assert [row["iteration"] for row in curve(work)] == ["1"]
    best = json.loads((work / "best.json").read_text())
    assert best["iteration"] == 1 and not best["finished"]
    kept = {k: v for k, v in outputs(work).items() if k.startswith("it1/")}
    # the decoder behaves from its third run on: the same command continues from iteration 2
    code, err = loop_in_process([a for a in args if a != "--quiet"])
    assert code == 0, err
    assert "after iteration 1" in err
    assert [row["iteration"] for row in curve(work)] == ["1", "2", "3"]
    assert {k: v for k, v in outputs(work).items() if k.startswith("it1/")} == kept


def test_a_decoder_killed_by_a_signal_and_one_writing_nothing(example, tmp_path):
    work = tmp_path / "killed"
    code, err = loop_in_process(["loop", "--source", example["dev.src"], "--refs", example["dev.en"], "--init",
                                 example["init.weights"], "--work-dir", work, "--quiet", "--decoder",
                                 "echo dying >&2; kill -9 $$ # {weights}"])
    assert code == 2 and err.startswith("smtlib loop: error: iteration 1: the decoder was killed by signal SIGKILL")
    assert err.rstrip().endswith(": dying")
    work = tmp_path / "silent"
    code, err = loop_in_process(["loop", "--source", example["dev.src"], "--refs", example["dev.en"], "--init",
                                 example["init.weights"], "--work-dir", work, "--quiet", "--decoder", "true {weights} {nbest}"])
    assert code == 2 and "iteration 1: the decoder wrote no n-best list" in err
    work = tmp_path / "empty"
    code, err = loop_in_process(["loop", "--source", example["dev.src"], "--refs", example["dev.en"], "--init",
                                 example["init.weights"], "--work-dir", work, "--quiet", "--decoder", "cat {weights} > /dev/null"])
    assert code == 2 and "iteration 1: " in err and "nbest.gz" in err and len(err.splitlines()) == 1
