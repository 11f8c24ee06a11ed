"""Softmax loss of the oracle set (``softmax``, Neubig & Watanabe 2016 §3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.tuners._losses import Features, oracle_mask, sentence_bleu
from smtlib.tuners.softmax import SoftmaxLoss, softmax_objective
from tests.support.tuner_fixtures import degenerate_pools, init_for, noisy_separable_pool, separable_pool


def test_gradient_matches_finite_differences():
    pool = separable_pool(sparse=True, seed=41)
    pool.stats[1] = pool.stats[np.argmax(sentence_bleu(pool)[:8])]  # a tie: an oracle set of two
    feats = Features(pool)
    in_oracle = oracle_mask(sentence_bleu(pool), pool.offsets)
    assert in_oracle[:8].sum() == 2
    w = np.random.default_rng(0).standard_normal(feats.dim)
    value, grad = softmax_objective(w, feats, pool.offsets, in_oracle, 2.0)
    numeric = np.array([(softmax_objective(w + e, feats, pool.offsets, in_oracle, 2.0)[0]
                         - softmax_objective(w - e, feats, pool.offsets, in_oracle, 2.0)[0]) / 2e-6
                        for e in np.eye(len(w)) * 1e-6])
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_value_is_the_oracle_set_log_likelihood():
    pool = separable_pool(n_sentences=2, per_sentence=3, seed=42)
    feats = Features(pool)
    in_oracle = oracle_mask(sentence_bleu(pool), pool.offsets)
    w = np.array([0.3, -1.0, 2.0])
    scores = pool.dense @ w
    expected = 0.0
    for s in range(2):
        sl = slice(3 * s, 3 * s + 3)
        expected -= np.log(np.exp(scores[sl])[in_oracle[sl]].sum() / np.exp(scores[sl]).sum())
    assert softmax_objective(w, feats, pool.offsets, in_oracle, 0.0)[0] == pytest.approx(expected)


def test_all_oracle_sentences_contribute_nothing():
    pool = degenerate_pools()["same_bleu"]
    feats = Features(pool)
    in_oracle = oracle_mask(sentence_bleu(pool), pool.offsets)
    value, grad = softmax_objective(np.ones(3), feats, pool.offsets, in_oracle, 0.0)
    assert value == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(grad, 0.0, atol=1e-12)


def test_objective_decreases():
    pool = noisy_separable_pool(noise_seed=5, seed=43)
    result = SoftmaxLoss(seed=0)(pool, init_for(pool))
    assert result.info["objective"] < result.info["objective_init"]

