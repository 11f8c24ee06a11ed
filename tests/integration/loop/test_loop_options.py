"""The loop's options on whole runs around the fake decoder: the stopping rule, the window over earlier
n-best lists, fixed features and ranges across iterations, historic interpolation, --runs, --start-from,
another metric, the Joshua (cdec) dialect."""

from __future__ import annotations

import json

import numpy as np
import pytest

from smtlib.kbest.store import read_stored
from smtlib.weights import read_weights
from tests.integration.loop.conftest import curve, loop_args, loop_in_process, nbest_lines


def test_the_stopping_rule_stops_before_max_iterations(example, tmp_path):
    """MERT on the fake decoder's small hypothesis space settles: an iteration in which no weight moves by more
    than --epsilon ends the loop long before --max-iterations (mert-moses.pl's rule); a huge epsilon stops
    after the first iteration."""
    work = tmp_path / "settles"
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "25"))
    assert code == 0, err
    rows = curve(work)
    assert len(rows) < 25
    last = json.loads((work / f"it{len(rows)}" / "scores.json").read_text())
    assert last["stop"] == "epsilon" and last["weights_moved"] == 0 and last["largest_move"] <= 1e-5
    earlier = [json.loads((work / f"it{n}" / "scores.json").read_text()) for n in range(1, len(rows))]
    assert all(row["stop"] is None and row["weights_moved"] > 0 for row in earlier)
    assert "no weight moved by more than 1e-05: stopping" in err
    best = json.loads((work / "best.json").read_text())
    assert best["finished"] and best["stop"] == "epsilon"
    # a rerun of a finished loop does nothing more
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "25"))
    assert code == 0 and len(curve(work)) == len(rows)
    work = tmp_path / "coarse"
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "25", "--epsilon", "1e9"))
    assert code == 0, err
    assert len(curve(work)) == 1


def test_the_window_limits_the_pool(example, tmp_path):
    """--prev-nbest 2: the pool of iteration N holds the lists of N-1 and N only; by default all of them."""
    pools = {}
    for name, options in (("all", ()), ("window", ("--prev-nbest", "2"))):
        work = tmp_path / name
        code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "4", "--method", "kbmira",
                                              *options))
        assert code == 0, err
        pools[name] = [read_stored(work / f"it{n}" / "pool.bin") for n in (1, 2, 3, 4)]
        lists = [{line.split(" ||| ")[0] + line.split(" ||| ")[1] for line in nbest_lines(work / f"it{n}" / "nbest.gz")}
                 for n in (1, 2, 3, 4)]
        for n, stored in enumerate(pools[name], 1):
            first = 1 if name == "all" else max(1, n - 1)
            assert [f["path"].rsplit("/", 2)[-2] for f in stored.files] == [f"it{m}" for m in range(first, n + 1)]
            texts = {str(s) + t for s, t in zip(stored.to_kbest_pool().sentence_index, stored.to_kbest_pool().texts)}
            assert texts == set().union(*lists[first - 1:n])
    assert pools["window"][3].n_hypotheses < pools["all"][3].n_hypotheses


def test_fixed_features_and_ranges_hold_in_every_iteration(example, tmp_path):
    """MERT (inside its search) and kbmira (folding and clipping): TM0_1 keeps its initial 0.5, every value of
    TM0 (TM0_0 here) stays in [-0.3, 0.3], LM0 in [0, 2]; tuning still improves dev BLEU."""
    for method in ("mert", "kbmira"):
        work = tmp_path / method
        code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "3", "--method", method,
                                              "--fixed", "TM0_1", "--range", "TM0:-0.3..0.3", "--range", "LM0_0:0..2"))
        assert code == 0, err
        for n in (1, 2, 3):
            for name in ("optimized.weights", "next.weights"):
                w = read_weights(work / f"it{n}" / name)
                assert w["TM0_1"] == 0.5
                assert -0.3 <= w["TM0_0"] <= 0.3 and 0.0 <= w["LM0_0"] <= 2.0, (method, n, w)
            info = json.loads((work / f"it{n}" / "tuner.json").read_text())
            assert info["constraints"] == {"fixed": ["TM0_1"], "ranges": {"LM0_0": [0.0, 2.0], "TM0_0": [-0.3, 0.3]}}
        rows = curve(work)
        assert float(rows[-1]["dev_bleu"]) > float(rows[0]["dev_bleu"]) + 10, (method, rows)
    code, err = loop_in_process(loop_args(example, tmp_path / "typo", "weights", "--fixed", "TM0_3", "-q"))
    assert code == 2 and "iteration 1: --fixed TM0_3: no feature of the decoder's n-best lists has this name" in err


def test_historic_interpolation_and_runs(example, tmp_path):
    """--runs 3 averages three runs (seeds seed + 1000 (N-1) + r); --historic-interpolation 0.3 gives
    w = 0.3 optimized + 0.7 w_prev (mert-moses.pl's rule) in every iteration."""
    work = tmp_path / "work"
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "3", "--method", "kbmira",
                                          "--runs", "3", "--seed", "5", "--historic-interpolation", "0.3"))
    assert code == 0, err
    for n in (1, 2, 3):
        info = json.loads((work / f"it{n}" / "tuner.json").read_text())
        assert [run["seed"] for run in info["runs"]] == [5 + 1000 * (n - 1) + r for r in range(3)]
        prev = read_weights(work / f"it{n}" / "weights")
        optimized = read_weights(work / f"it{n}" / "optimized.weights")
        new = read_weights(work / f"it{n}" / "next.weights")
        assert len({tuple(run["weights"].values()) for run in info["runs"]}) > 1  # kbmira's order of sentences differs
        for name in prev:
            runs = [run["weights"][name] for run in info["runs"]]
            assert optimized[name] == pytest.approx(np.mean(runs), abs=1e-12)
            assert new[name] == pytest.approx(0.3 * optimized[name] + 0.7 * prev[name], abs=1e-12)


def test_start_from_pro_then_mert_and_another_metric(example, tmp_path):
    """--start-from pro runs PRO first and MERT from its weights (mert-moses.pl --pro-starting-point);
    --metric chrf tunes and chooses the best iteration by dev chrF."""
    work = tmp_path / "work"
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "2", "--start-from", "pro",
                                          "--metric", "chrf"))
    assert code == 0, err
    info = json.loads((work / "it1" / "tuner.json").read_text())
    run = info["runs"][0]
    assert run["start_from"]["method"] == "pro" and run["tuner"]["method"] == "mert"
    assert run["tuner"]["metric"] == "chrf"
    assert "dev chrf" in err
    best = json.loads((work / "best.json").read_text())
    scores = [json.loads((work / f"it{n}" / "scores.json").read_text())["dev_score"] for n in (1, 2)]
    assert best["metric"] == "chrf" and best["dev_score"] == max(scores)


def test_the_joshua_dialect(example, tmp_path):
    """A decoder writing Joshua's (cdec's) name=value features is read with --dialect cdec; a Moses list then
    is an error."""
    work = tmp_path / "work"
    code, err = loop_in_process(loop_args(example, work, "weights", "--max-iterations", "2", "--method", "kbmira",
                                          "--dialect", "cdec", extra="--dialect joshua"))
    assert code == 0, err
    assert "LM0_0=" in nbest_lines(work / "it1" / "nbest.gz")[0]
    code, err = loop_in_process(loop_args(example, tmp_path / "moses", "weights", "--dialect", "cdec", "-q"))
    assert code == 2 and err.startswith("smtlib loop: error: iteration 1: ") and "nbest.gz:1:" in err
