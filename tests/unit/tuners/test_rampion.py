"""Ramp loss by CCCP (``rampion``, Gimpel & Smith 2012)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.tuners._losses import Features, sentence_bleu
from smtlib.tuners.rampion import RampLoss, ramp_objective
from tests.support.tuner_fixtures import init_for, noisy_separable_pool, separable_pool


def test_objective_value():
    pool = separable_pool(n_sentences=2, per_sentence=4, seed=91)
    cost = 1.0 - sentence_bleu(pool)
    w = np.array([0.2, 1.0, -1.0])
    scores = pool.dense @ w
    expected = 0.5 * 3.0 * (w @ w)
    for s in range(2):
        sl = slice(4 * s, 4 * s + 4)
        expected += (scores[sl] + cost[sl]).max() - (scores[sl] - cost[sl]).max()
    assert ramp_objective(Features(pool), pool.offsets, cost, w, 3.0) == pytest.approx(expected)


@pytest.mark.parametrize("lam", [1.0, 100.0])
def test_cccp_never_increases_the_objective(lam):
    pool = noisy_separable_pool(noise_seed=10, n_sentences=8, per_sentence=10, seed=92, sparse=True)
    result = RampLoss(seed=0, l2=lam, epsilon=1e-6)(pool, init_for(pool))
    history = result.info["objective_per_step"]
    assert len(history) >= 2
    assert all(b <= a + 1e-6 for a, b in zip(history, history[1:], strict=False)), history

