"""Expected corpus BLEU from expected statistics (``xbleu``, Rosti et al. 2010; survey Appendix A)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.bleu.corpus import bleu_from_stats
from smtlib.tuners._losses import Features, pool_bleu
from smtlib.tuners.xbleu import ExpectedBleu, log_xbleu
from tests.support.tuner_fixtures import init_for, noisy_separable_pool, separable_pool


@pytest.mark.parametrize("scale", [1.0, 3.0])
@pytest.mark.parametrize("short", [False, True])
def test_gradient_matches_finite_differences(scale, short):
    pool = separable_pool(sparse=True, seed=81)
    if short:
        pool.stats[:, 1] *= 1.6  # references longer than every hypothesis: the brevity term is active
    feats = Features(pool)
    w = np.random.default_rng(0).standard_normal(feats.dim)
    value, grad = log_xbleu(w, feats, pool.offsets, pool.stats, scale, 0.01)
    numeric = np.array([(log_xbleu(w + e, feats, pool.offsets, pool.stats, scale, 0.01)[0]
                         - log_xbleu(w - e, feats, pool.offsets, pool.stats, scale, 0.01)[0]) / 2e-6
                        for e in np.eye(len(w)) * 1e-6])
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_value_is_log_bleu_of_expected_statistics():
    pool = separable_pool(n_sentences=3, per_sentence=4, seed=82)
    w = np.array([0.5, -0.2, 0.1])
    scores = pool.dense @ w
    expected = np.zeros(10)
    for s in range(3):
        sl = slice(4 * s, 4 * s + 4)
        p = np.exp(scores[sl]) / np.exp(scores[sl]).sum()
        expected += p @ pool.stats[sl]
    value, _ = log_xbleu(w, Features(pool), pool.offsets, pool.stats, 1.0, 0.0)
    assert value == pytest.approx(np.log(bleu_from_stats(expected, smooth_method="none")), rel=1e-12)


def test_sharp_distribution_gives_the_1best_bleu():
    pool = separable_pool(seed=83)
    w = np.array([1.0, 0.3, -0.2])
    value, _ = log_xbleu(w, Features(pool), pool.offsets, pool.stats, 1e4, 0.0)
    best = pool.best_indices(w)
    assert np.exp(value) == pytest.approx(bleu_from_stats(pool.stats[best].sum(0), smooth_method="none"), rel=1e-9)


def test_improves_expected_bleu():
    pool = noisy_separable_pool(noise_seed=9, seed=84)
    init = init_for(pool)
    result = ExpectedBleu(seed=0)(pool, init)
    assert result.info["xbleu"] > result.info["xbleu_init"]
    assert pool_bleu(pool, result.weights) > pool_bleu(pool, init)

