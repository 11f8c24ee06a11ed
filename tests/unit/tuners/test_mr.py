"""Minimum risk (``mr``, Cherry & Foster 2012 §3.3; Smith & Eisner 2006).

What every tuner must satisfy (determinism, degenerate pools, separable pools, command line, real
pool) is in ``tests/unit/tuners/test_common.py``; the pools come from ``tests/support/tuner_fixtures.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.tuners._losses import Features, sentence_bleu
from smtlib.tuners.mr import MinimumRisk, _sgd_epoch, risk_objective
from tests.support.tuner_fixtures import init_for, pool_from_arrays, separable_pool


# -- mr ---------------------------------------------------------------------------------------------


def test_gradient_matches_finite_differences():
    pool = separable_pool(sparse=True, seed=11)
    feats = Features(pool)
    cost = -sentence_bleu(pool, "bleu+1")
    w = np.random.default_rng(0).standard_normal(feats.dim)
    value, grad = risk_objective(feats, pool.offsets, cost, w, 3.0)
    numeric = np.zeros_like(w)
    for j in range(len(w)):
        step = np.zeros_like(w)
        step[j] = 1e-6
        numeric[j] = (risk_objective(feats, pool.offsets, cost, w + step, 3.0)[0] - risk_objective(feats, pool.offsets, cost, w - step, 3.0)[0]) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_sgd_step_is_the_regularised_gradient_step():
    """One step on one sentence: w <- w - η (λ_B w + ∇ℓ_i), η = η0 / (1 + η0 λ_B t)."""
    pool = separable_pool(n_sentences=1, sparse=True, seed=12)
    feats = Features(pool)
    dense, indptr, indices, data = feats.arrays()
    cost = -sentence_bleu(pool, "bleu+1")
    w = np.random.default_rng(1).standard_normal(feats.dim)
    eta0, lam_b, t = 0.3, 0.05, 4.0
    v = w.copy()
    a, t_after = _sgd_epoch(dense, indptr, indices, data, pool.offsets, cost, np.array([0]), v, 1.0, eta0, lam_b, t)
    eta = eta0 / (1 + eta0 * lam_b * t)
    grad = risk_objective(feats, pool.offsets, cost, w, 0.0)[1]
    np.testing.assert_allclose(a * v, w - eta * (lam_b * w + grad), rtol=1e-12, atol=1e-12)
    assert t_after == t + 1


def test_lambda_is_divided_by_the_number_of_sentences():
    """Cherry & Foster's λ multiplies ||w||²/2 once for the whole sum over sentences."""
    pool = separable_pool(n_sentences=4, seed=13)
    tuner = MinimumRisk(seed=0, restarts=1, max_epochs=1, eta0=0.05, bleu_scale=1.0)
    result = tuner(pool, init_for(pool))
    feats = Features(pool)
    cost = -sentence_bleu(pool, "bleu+1")
    # replaying the epoch by hand with λ_B = 50 / 4 gives the same weights
    order = np.random.default_rng(0).permutation(np.arange(4))
    w = init_for(pool)
    for step, s in enumerate(order):
        eta = 0.05 / (1 + 0.05 * 12.5 * step)
        sub = pool_from_arrays([pool.sizes()[s]], pool.dense[pool.offsets[s]:pool.offsets[s + 1]], pool.stats[pool.offsets[s]:pool.offsets[s + 1]])
        grad = risk_objective(Features(sub), sub.offsets, cost[pool.offsets[s]:pool.offsets[s + 1]], w, 0.0)[1]
        w = w - eta * (12.5 * w + grad)
    assert result.info["runs"][0]["eta0"] == 0.05
    # the epoch improved the objective, so it is the one returned
    assert risk_objective(feats, pool.offsets, cost, w, 50.0)[0] < risk_objective(feats, pool.offsets, cost, init_for(pool), 50.0)[0]
    np.testing.assert_allclose(result.weights, w, rtol=1e-9, atol=1e-12)


def test_bleu_scale_is_percent_by_default():
    """The default objective is the paper's: λ = 50 with Δ in percent BLEU (= λ 0.5 with Δ in 0-1)."""
    assert MinimumRisk.defaults["bleu_scale"] == 100.0 and MinimumRisk.defaults["l2"] == 50.0
    pool = separable_pool(n_sentences=4, seed=13)
    feats, init = Features(pool), init_for(pool)
    cost = -sentence_bleu(pool, "bleu+1")
    info = MinimumRisk(seed=0, restarts=1, max_epochs=1)(pool, init).info
    np.testing.assert_allclose(info["objective_init"], risk_objective(feats, pool.offsets, 100 * cost, init, 50.0)[0])
    np.testing.assert_allclose(info["objective_init"], 100 * risk_objective(feats, pool.offsets, cost, init, 0.5)[0])
    info = MinimumRisk(seed=0, restarts=1, max_epochs=1, bleu_scale=1.0)(pool, init).info
    np.testing.assert_allclose(info["objective_init"], risk_objective(feats, pool.offsets, cost, init, 50.0)[0])
    with pytest.raises(InputError, match="bleu_scale"):
        MinimumRisk(bleu_scale=0.0)(pool, init)


def test_objective_decreases_and_separable():
    pool = separable_pool()
    init = init_for(pool)
    result = MinimumRisk(seed=0)(pool, init)
    assert result.info["objective"] < result.info["objective_init"]
    assert len(result.info["runs"]) == 5

