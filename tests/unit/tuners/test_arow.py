"""AROW with a diagonal covariance (``arow``, Neubig & Watanabe 2016 §6.4; Crammer et al. 2009)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.tuners._losses import oracle_mask, sentence_bleu
from smtlib.tuners.arow import Arow
from tests.support.tuner_fixtures import init_for, noisy_separable_pool


def reference_arow(pool, init, passes, r, seed, hope_fear=True, scale=100.0):
    """AROW's update written with dense vectors (slow, obviously correct)."""
    x = pool.features().toarray()
    bleu = scale * sentence_bleu(pool)
    in_oracle = oracle_mask(bleu, pool.offsets)
    rng = np.random.default_rng(seed)
    active = np.flatnonzero(pool.sizes() > 0)
    mu, sigma = init.copy(), np.ones(len(init))
    seen = [mu.copy()]
    for _ in range(passes):
        for s in rng.permutation(active):
            rows = np.arange(pool.offsets[s], pool.offsets[s + 1])
            if len(rows) >= 2:
                scores = x[rows] @ mu
                if hope_fear:
                    plus, minus = rows[np.argmax(scores + bleu[rows])], rows[np.argmax(scores - bleu[rows])]
                else:
                    plus = rows[np.argmax(np.where(in_oracle[rows], scores, -np.inf))]
                    minus = rows[np.argmax(scores)]
                vec = x[plus] - x[minus]
                loss = bleu[plus] - bleu[minus] - mu @ vec
                if plus != minus and bleu[plus] > bleu[minus] and loss > 0 and np.any(vec):
                    beta = 1.0 / (vec @ (sigma * vec) + r)
                    mu = mu + loss * beta * sigma * vec
                    sigma = sigma - beta * (sigma * vec) ** 2
            seen.append(mu.copy())
    return mu, sigma, np.mean(seen, axis=0)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("pairs", ["hope-fear", "oracle-1best"])
def test_matches_dense_reference(sparse, pairs):
    pool = noisy_separable_pool(noise_seed=7, n_sentences=7, per_sentence=6, seed=61, sparse=sparse)
    init = init_for(pool)
    mu, sigma, avg = reference_arow(pool, init, passes=3, r=0.5, seed=4, hope_fear=pairs == "hope-fear")
    result = Arow(seed=4, passes=3, r=0.5, pairs=pairs)(pool, init)
    np.testing.assert_allclose(result.weights, mu, rtol=1e-10, atol=1e-12)
    assert result.info["sigma_min"] == pytest.approx(sigma.min())
    assert sigma.min() > 0  # the covariance stays positive
    averaged = Arow(seed=4, passes=3, r=0.5, pairs=pairs, average=True)(pool, init)
    np.testing.assert_allclose(averaged.weights, avg, rtol=1e-10, atol=1e-12)
