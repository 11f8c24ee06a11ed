"""Linear regression of model scores on sentence BLEU (``linreg``, Neubig & Watanabe 2016 §3.6, §5.4)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from smtlib.tuners._losses import sentence_bleu
from smtlib.tuners.linreg import LinearRegression
from tests.support.tuner_fixtures import init_for, noisy_separable_pool, pool_from_arrays, stats_for_quality


def pairwise_reference(pool, lam):
    """Bazrafshan et al.'s all-pairs regression with each sentence's pairs weighted 1/k_i (slow)."""
    x = pool.features().toarray()
    y = sentence_bleu(pool)
    rows_x, rows_y, weights = [], [], []
    for s in range(pool.n_sentences):
        lo, hi = pool.offsets[s], pool.offsets[s + 1]
        for a in range(lo, hi):
            for b in range(a + 1, hi):
                rows_x.append(x[a] - x[b])
                rows_y.append(y[a] - y[b])
                weights.append(1.0 / (hi - lo))
    a = np.array(rows_x) * np.sqrt(weights)[:, None]
    b = np.array(rows_y) * np.sqrt(weights)
    return np.linalg.solve(a.T @ a + lam * np.eye(x.shape[1]), a.T @ b)


@pytest.mark.parametrize("sparse", [False, True])
def test_equals_weighted_all_pairs_regression(sparse):
    pool = noisy_separable_pool(noise_seed=8, n_sentences=5, per_sentence=6, seed=71, sparse=sparse)
    result = LinearRegression(seed=0, l2=0.3)(pool, init_for(pool))
    np.testing.assert_allclose(result.weights, pairwise_reference(pool, 0.3), rtol=1e-6, atol=1e-8)
    assert result.info["solver"] == ("lsqr" if sparse else "normal equations")


def test_recovers_an_exact_linear_relation():
    rng = np.random.default_rng(72)
    sizes = np.array([6, 6, 6, 6])
    n = 24
    quality = rng.uniform(0.1, 0.9, n)
    pool = pool_from_arrays(sizes, np.zeros((n, 2)), stats_for_quality(quality))
    y = sentence_bleu(pool)
    offsets = np.repeat(rng.standard_normal(4), 6)  # per-sentence offsets: centring removes them
    pool.dense[:, 0] = 2.0 * y + offsets
    pool.dense[:, 1] = rng.standard_normal(n)
    result = LinearRegression(seed=0, l2=0.0)(pool, np.zeros(2))
    np.testing.assert_allclose(result.weights, [0.5, 0.0], atol=1e-9)
    sparse_pool = pool_from_arrays(sizes, np.zeros((n, 0)), pool.stats, sparse=sp.csr_matrix(pool.dense))
    result = LinearRegression(seed=0, l2=0.0)(sparse_pool, np.zeros(2))
    np.testing.assert_allclose(result.weights, [0.5, 0.0], atol=1e-6)

