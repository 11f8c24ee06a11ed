"""One loop step on a pool: fixed features, ranges (MERT inside its search, the others clipped), runs,
--start-from and historic interpolation (smtlib.loop.step, smtlib.loop.constraints, smtlib.loop.bounded_mert)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.loop.bounded_mert import BoundedMert, best_in_interval
from smtlib.loop.constraints import Box, fold_fixed, resolve, unfold
from smtlib.loop.options import RangeSpec
from smtlib.loop.step import StepSettings, one_run, run_seed, tune_step
from smtlib.tuners.mert import Mert
from tests.support.fake_decoder import INITIAL


def _start(pool):
    return pool.weight_vector(INITIAL)


def _bleu(pool, weights):
    from smtlib.bleu.corpus import corpus_bleu_from_stats

    return corpus_bleu_from_stats(pool.stats[pool.best_indices(weights)])


@pytest.mark.parametrize("method", ["mert", "kbmira", "pro", "mr", "lbmert"])
def test_a_fixed_feature_keeps_its_weight(example_pool, method):
    pool, references = example_pool
    box = resolve(pool.feature_names, ["TM0_1", "WordPenalty0"], [])
    start = _start(pool)
    result = tune_step(pool, references, start, box, StepSettings(method), 1)
    names = pool.feature_names
    fixed = [names.index("TM0_1"), names.index("WordPenalty0_0")]
    assert (result.weights[fixed] == start[fixed]).all() and (result.optimized[fixed] == start[fixed]).all()
    assert not np.array_equal(result.weights, start)
    assert _bleu(pool, result.weights) > _bleu(pool, start)
    run = result.info["runs"][0]["tuner"]
    if method == "mert":
        assert run["bounded"] is True
    else:  # the tuner moved the fixed features' combined weight; <= 0 keeps them without rescaling (a note)
        assert run["fold_weight"] > 0 or "note" in run


def test_folding_keeps_every_ranking(example_pool):
    """The folded pool scores every hypothesis as the pool does; unfolding divides by the fold's weight."""
    pool, _ = example_pool
    box = resolve(pool.feature_names, ["TM0"], [])
    start = _start(pool)
    reduced, init = fold_fixed(pool, box, start)
    assert reduced.feature_names.__len__() == 3 and init[-1] == 1.0
    assert np.allclose(reduced.model_scores(init), pool.model_scores(start))
    result = np.array([0.3, -0.2, 2.0])  # LM0_0, WordPenalty0_0, the fold
    weights, info = unfold(result, box, start, pool.dense.shape[1])
    assert info["fold_weight"] == 2.0
    assert np.allclose(pool.model_scores(weights) * 2.0, reduced.model_scores(result))
    assert weights[pool.feature_names.index("TM0_0")] == start[pool.feature_names.index("TM0_0")]
    weights, info = unfold(np.array([0.3, -0.2, -1.0]), box, start, pool.dense.shape[1])
    assert "note" in info and weights[0] == 0.3


@pytest.mark.parametrize("method", ["mert", "kbmira", "pro"])
def test_a_range_is_respected(example_pool, method):
    pool, references = example_pool
    box = resolve(pool.feature_names, [], [RangeSpec("TM0", -0.2, 0.2), RangeSpec("LM0_0", 0.5, 3.0)])
    result = tune_step(pool, references, _start(pool), box, StepSettings(method), 1)
    for weights in (result.weights, result.optimized):
        assert (weights >= box.lower).all() and (weights <= box.upper).all()
    run = result.info["runs"][0]["tuner"]
    if method == "mert":
        assert run["bounded"] is True
    else:
        assert "clipped" in run


class _Recording(BoundedMert):
    """BoundedMert that records every starting point and every point it steps to."""

    points: list

    def _climb_boxed(self, dense, offsets, metric, start, rng, lower, upper, free):
        self.points.append(("start", start.copy()))
        return super()._climb_boxed(dense, offsets, metric, start, rng, lower, upper, free)

    def _step(self, dense, offsets, metric, w, axis, x, lower, upper, free):
        self.points.append(("step", w + x * axis))  # before the guard against rounding
        return super()._step(dense, offsets, metric, w, axis, x, lower, upper, free)


def test_mert_draws_restarts_and_searches_lines_inside_the_ranges(example_pool):
    pool, _ = example_pool
    names = pool.feature_names
    box = resolve(names, ["WordPenalty0_0"], [RangeSpec("TM0", -0.5, 0.1), RangeSpec("LM0_0", 0.2, 4.0)])
    tuner = _Recording(seed=3, random_directions=2)
    tuner.points, tuner.box = [], box
    start = _start(pool)  # TM0_1 = 0.5 is outside its range: MERT starts from the clipped point
    result = tuner(pool, start)
    starts = [p for kind, p in tuner.points if kind == "start"]
    steps = [p for kind, p in tuner.points if kind == "step"]
    assert len(starts) == 21 and len(steps) > 10
    for point in starts + steps + [result.weights]:
        free = ~box.fixed
        assert (point[free] >= box.lower[free] - 1e-12).all() and (point[free] <= box.upper[free] + 1e-12).all()
        assert point[names.index("WordPenalty0_0")] == start[names.index("WordPenalty0_0")]
    assert starts[0][names.index("TM0_1")] == 0.1
    drawn = np.array(starts[1:])
    assert drawn[:, names.index("TM0_0")].min() < -0.3 and drawn[:, names.index("LM0_0")].max() > 2.0  # the whole range
    assert _bleu(pool, result.weights) > _bleu(pool, starts[0])


def test_mert_without_constraints_is_plain_mert(example_pool):
    """The boxed search with an unbounded box and nothing fixed is k-best MERT: the same weights as
    smtlib.tuners.mert.Mert (both without the final L1 normalisation)."""
    pool, _ = example_pool
    for seed in (0, 1):
        bounded = BoundedMert(seed=seed, normalize="none", random_directions=1)
        bounded.box = Box.none(len(pool.feature_names))
        a = bounded(pool, _start(pool))
        b = Mert(seed=seed, normalize="none", random_directions=1)(pool, _start(pool))
        assert a.info["objective"] == pytest.approx(b.info["objective"], abs=1e-12)
        assert np.allclose(a.weights, b.weights, rtol=1e-9, atol=1e-12)


def test_best_in_interval():
    xs, scores = np.array([-1.0, 0.0, 2.0]), np.array([0.1, 0.5, 0.3, 0.5])
    assert best_in_interval(xs, scores, -np.inf, np.inf) == (0.5, -0.5)  # leftmost best piece, its middle
    assert best_in_interval(xs, scores, -np.inf, -0.5) == (0.5, -0.75)  # the piece cut at the bound
    assert best_in_interval(xs, scores, -5.0, -1.0) == (0.1, -3.0)
    assert best_in_interval(xs, scores, 2.5, 3.0) == (0.5, 2.75)
    assert best_in_interval(xs, np.array([0.1, 0.2, 0.3, 0.9]), 1.0, np.inf) == (0.9, 2.0 + 0.1)  # Moses's x_n + 0.1
    assert best_in_interval(xs, np.array([0.9, 0.2, 0.3, 0.1]), -np.inf, 1.0) == (0.9, -1.0 - 1000.0)
    assert best_in_interval(np.array([]), np.array([0.4]), -1.0, 1.0) == (0.4, 0.0)


def test_historic_interpolation_gives_the_interpolated_weights(example_pool):
    """mert-moses.pl's rule: w = A optimized + (1 - A) w_prev; A = 0 is off."""
    pool, references = example_pool
    box = Box.none(len(pool.feature_names))
    start = _start(pool)
    plain = tune_step(pool, references, start, box, StepSettings("kbmira"), 2)
    assert np.array_equal(plain.weights, plain.optimized)
    mixed = tune_step(pool, references, start, box, StepSettings("kbmira", historic_interpolation=0.25), 2)
    assert np.array_equal(mixed.optimized, plain.optimized)
    assert np.allclose(mixed.weights, 0.25 * plain.optimized + 0.75 * start, rtol=0, atol=1e-15)


def test_runs_are_averaged(example_pool):
    pool, references = example_pool
    box = Box.none(len(pool.feature_names))
    start = _start(pool)
    result = tune_step(pool, references, start, box, StepSettings("kbmira", seed=7, runs=3), 4)
    singles = [one_run("kbmira", {}, run_seed(7, 4, r), pool, start, box, None, references, "test")[0] for r in range(3)]
    assert [run["seed"] for run in result.info["runs"]] == [3007, 3008, 3009]
    assert not np.array_equal(singles[0], singles[1])
    assert np.allclose(result.optimized, np.mean(singles, axis=0), rtol=0, atol=1e-15)
    assert np.array_equal(result.weights, result.optimized)


def test_start_from_runs_first_and_the_method_starts_from_its_weights(example_pool):
    pool, references = example_pool
    box = Box.none(len(pool.feature_names))
    start = _start(pool)
    result = tune_step(pool, references, start, box, StepSettings("mert", start_from="pro", seed=2), 1)
    pro, _ = one_run("pro", {}, 2, pool, start, box, None, references, "test")
    mert, _ = one_run("mert", {}, 2, pool, pro, box, None, references, "test")
    assert np.array_equal(result.optimized, mert)
    run = result.info["runs"][0]
    assert run["start_from"]["method"] == "pro" and list(run["start_from"]["weights"].values()) == pro.tolist()


def test_start_set_reaches_the_starting_method_only(example_pool):
    pool, references = example_pool
    box = Box.none(len(pool.feature_names))
    start = _start(pool)
    settings = StepSettings("mert", start_from="pro", seed=2, start_params={"max_iter": "2", "gamma": "7"})
    result = tune_step(pool, references, start, box, settings, 1)
    pro, _ = one_run("pro", {"max_iter": "2", "gamma": "7"}, 2, pool, start, box, None, references, "test")
    default_pro, _ = one_run("pro", {}, 2, pool, start, box, None, references, "test")
    assert not np.array_equal(pro, default_pro)  # the settings change PRO's weights here
    mert, _ = one_run("mert", {}, 2, pool, pro, box, None, references, "test")
    assert np.array_equal(result.optimized, mert)
    assert list(result.info["runs"][0]["start_from"]["weights"].values()) == pro.tolist()
