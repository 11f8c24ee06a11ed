"""Unusable tuning results are errors naming the method and the step, never a weights file (issue 22).

The failures users report of tuners: weights near 1e-39 that make every model score tie
(mosesdecoder#189) and "success" with all-zero weights (modernmt#75); and NaN weights.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from smtlib.cli import main
from smtlib.errors import TuningError
from smtlib.tuners.base import TIE_SPREAD, check_tuned_weights
from smtlib.tuners.kbmira import KbMira
from smtlib.tuners.mira import mix
from smtlib.tuners._losses import Features
from tests.support.tuner_fixtures import init_for, separable_pool, write_small_files


def _check(weights, pool):
    check_tuned_weights("kbmira", np.asarray(weights, dtype=np.float64), "the step writing it3/weights",
                        Features(pool).scores, pool.offsets)


def test_usable_weights_pass():
    pool = separable_pool()
    _check(init_for(pool), pool)
    _check(1e-6 * init_for(pool), pool)  # small, but the scores still differ by far more than TIE_SPREAD


@pytest.mark.parametrize("bad, message", [
    ("nan", "not finite"), ("inf", "not finite"), ("zeros", "all zero"), ("tiny", "so small"),
])
def test_unusable_weights_are_errors_naming_method_and_step(bad, message):
    pool = separable_pool()
    weights = {"nan": [np.nan, 1.0, 0.0], "inf": [np.inf, 1.0, 0.0], "zeros": [0.0, 0.0, 0.0],
               "tiny": [1e-39, 2e-39, -1e-39]}[bad]
    with pytest.raises(TuningError, match=rf"^kbmira, the step writing it3/weights: .*{message}"):
        _check(weights, pool)


def test_tiny_weights_on_a_pool_with_nothing_to_rank_pass():
    """Hypotheses with identical features tie under any weights: that is not the tuner's doing."""
    pool = separable_pool()
    pool.dense[:] = 1.0
    _check([1e-39, 0.0, 0.0], pool)


def test_tie_threshold():
    pool = separable_pool()
    spread = Features(pool).scores(np.array([1.0, 0.0, 0.0]))
    largest = max(float(np.ptp(spread[a:b])) for a, b in zip(pool.offsets[:-1], pool.offsets[1:], strict=True))
    _check([2 * TIE_SPREAD / largest, 0.0, 0.0], pool)
    with pytest.raises(TuningError, match="so small"):
        _check([0.5 * TIE_SPREAD / largest, 0.0, 0.0], pool)


def test_a_tuner_returning_tiny_weights_fails_in_the_base_class(monkeypatch):
    pool = separable_pool()
    original = KbMira.fit

    def tiny(self, pool, init):
        result = original(self, pool, init)
        result.weights = result.weights * 1e-40
        return result

    monkeypatch.setattr(KbMira, "fit", tiny)
    with pytest.raises(TuningError, match="^kbmira, this step: the tuned weights are so small"):
        KbMira(seed=0)(pool, init_for(pool))


def test_the_command_exits_1_with_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    kbest, ref, init = write_small_files(tmp_path, sparse=False)
    out = tmp_path / "it3" / "weights"
    out.parent.mkdir()
    monkeypatch.setattr(KbMira, "fit", lambda self, pool, init: type("R", (), {"weights": 0 * init, "info": {}})())
    status = main(["tune", "kbmira", "--kbest", str(kbest), "--refs", str(ref), "--init", str(init),
                   "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert err[-1] == (f"smtlib tune: error: kbmira, the step writing {out}: the tuned weights are all zero "
                       "(the model would score every hypothesis 0)")
    assert not out.exists()


def _shard(shard, weights, weight_sum, steps):
    return {"shard": shard, "names": ["a_0", "b_0"], "weights": weights, "weight_sum": weight_sum, "steps": steps,
            "bg": [1.0] * 10, "updates": steps, "loss": 0.0}


def test_mira_mixing_averages_this_epoch_by_default_and_every_epoch_when_asked():
    first = mix([_shard(0, [1.0, 1.0], [10.0, 10.0], 10), _shard(1, [3.0, 1.0], [30.0, 10.0], 10)])
    assert first["average"] == {"a_0": 2.0, "b_0": 1.0} and first["mixed"] == {"a_0": 2.0, "b_0": 1.0}
    second = [_shard(0, [5.0, 1.0], [50.0, 10.0], 10), _shard(1, [7.0, 1.0], [70.0, 10.0], 10)]
    epoch = mix(second, first)
    assert epoch["average"] == {"a_0": 6.0, "b_0": 1.0} and epoch["steps"] == 20
    every = mix(second, first, accumulate=True)
    assert every["average"] == {"a_0": 4.0, "b_0": 1.0} and every["steps"] == 40
    assert epoch["mixed"] == every["mixed"] == {"a_0": 6.0, "b_0": 1.0}
    assert epoch["updates"] == every["updates"] == 40  # the update count and pseudo-documents always carry on


def test_mira_mix_command_takes_the_averaging_and_refuses_zero_weights(tmp_path, capsys):
    paths = []
    for k, (w, s) in enumerate((([1.0, 1.0], [10.0, 10.0]), ([3.0, 1.0], [30.0, 10.0]))):
        paths.append(tmp_path / f"shard{k}.json")
        paths[-1].write_text(json.dumps(_shard(k, w, s, 10)))
    state = tmp_path / "mira1.json"
    assert main(["tune", "mira", "--mix", *map(str, paths), "--out", str(tmp_path / "w1"), "--state-out", str(state)]) == 0
    later = []
    for k, (w, s) in enumerate((([5.0, 1.0], [50.0, 10.0]), ([7.0, 1.0], [70.0, 10.0]))):
        later.append(tmp_path / f"e2shard{k}.json")
        later[-1].write_text(json.dumps(_shard(k, w, s, 10)))
    for setting, expected in (([], "a_0 6"), (["--set", "average=all"], "a_0 4")):
        out = tmp_path / f"w2{len(setting)}"
        assert main(["tune", "mira", "--mix", *map(str, later), "--state", str(state), "--out", str(out), *setting]) == 0
        assert expected in out.read_text().splitlines()
    assert main(["tune", "mira", "--mix", *map(str, later), "--out", str(tmp_path / "x"), "--set", "average=some"]) == 2
    zero = tmp_path / "zero.json"
    zero.write_text(json.dumps(_shard(0, [0.0, 0.0], [0.0, 0.0], 10)))
    capsys.readouterr()
    assert main(["tune", "mira", "--mix", str(zero), "--out", str(tmp_path / "z")]) == 1
    assert "mira, the step writing" in capsys.readouterr().err and not (tmp_path / "z").exists()
