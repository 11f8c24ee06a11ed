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



# ------------------------------------------------------------------------ other metrics (issue 25)
def _numeric_gradient(f, x, eps=1e-6):
    return np.array([(f(x + e) - f(x - e)) / (2 * eps) for e in np.eye(len(x)) * eps])


@pytest.mark.parametrize("seed", range(3))
def test_chrf_and_ter_gradients_match_finite_differences(seed):
    """The gradients of chrF and TER in their (expected, fractional) statistics; chrF's values equal
    chrf_from_rows', including an order without reference n-grams (it does not count)."""
    from smtlib.bleu.chrf import chrf_and_gradient, chrf_from_rows
    from smtlib.bleu.ter import ter_and_gradient, ter_from_rows

    rng = np.random.default_rng(seed)
    hyp, ref = rng.uniform(1, 40, 6), rng.uniform(1, 40, 6)
    match = rng.uniform(0, 1, 6) * np.minimum(hyp, ref)
    ref[5] = hyp[5] = match[5] = 0.0  # sacrebleu's row for an order the reference lacks
    row = np.stack([hyp, ref, match], axis=1).reshape(-1)
    for beta in (1.0, 2.0, 3.0):
        value, grad = chrf_and_gradient(row, beta)
        assert value == pytest.approx(chrf_from_rows(row, beta)[0], rel=1e-12)
        np.testing.assert_allclose(grad, _numeric_gradient(lambda x: chrf_and_gradient(x, beta)[0], row),
                                   rtol=1e-5, atol=1e-9)
    ter = np.array([rng.uniform(0, 20), rng.uniform(5, 30)])
    value, grad = ter_and_gradient(ter)
    assert value == pytest.approx(ter_from_rows(ter)[0], rel=1e-12)
    np.testing.assert_allclose(grad, _numeric_gradient(lambda x: ter_and_gradient(x)[0], ter), rtol=1e-6)


def test_expected_metric_gradient_matches_finite_differences():
    """The expected score of a mixture with BLEU, chrF and TER parts, and its gradient in w."""
    from smtlib.bleu.metrics import parse_mixture
    from smtlib.tuners.corpus_metric import mixture_metric
    from smtlib.tuners.xbleu import expected_objective, metric_and_gradient
    from tests.unit.tuners.test_cmira import random_metric_stats

    pool = separable_pool(sparse=True, seed=81)
    stats = np.hstack([pool.stats, random_metric_stats(pool, 3)])
    metric = mixture_metric(parse_mixture("bleu:0.3,chrf:1,ter:-0.5"), stats)
    feats = Features(pool)
    w = np.random.default_rng(0).standard_normal(feats.dim)

    def score(x):
        return expected_objective(x, feats, pool.offsets, stats, 2.0, lambda s: metric_and_gradient(s, metric.kind, 0.01))

    value, grad = score(w)
    np.testing.assert_allclose(grad, _numeric_gradient(lambda x: score(x)[0], w), rtol=1e-5, atol=1e-8)
    sharp = expected_objective(w, feats, pool.offsets, stats, 1e4, lambda s: metric_and_gradient(s, metric.kind, 0.0))
    assert sharp[0] == pytest.approx(metric.corpus_score(pool.best_indices(w)), rel=1e-9)  # BLEU unsmoothed at 0


def test_toward_a_metric_improves_its_expected_score():
    """Without L2 (the statistics are random, unrelated to the features) L-BFGS raises the expected
    mixture score itself."""
    from smtlib.bleu.metrics import parse_mixture
    from smtlib.tuners.corpus_metric import mixture_metric
    from tests.unit.tuners.test_cmira import random_metric_stats

    pool = noisy_separable_pool(noise_seed=9, seed=84)
    metric = mixture_metric(parse_mixture("chrf:1,ter:-1"), random_metric_stats(pool, 4))
    result = ExpectedBleu(seed=0, l2=0.0)(pool, init_for(pool), metric)
    assert result.info["xmetric"] > result.info["xmetric_init"] and result.info["metric"] == "chrf:1,ter:-1"
    assert "xbleu" not in result.info and "train_bleu" not in result.info
