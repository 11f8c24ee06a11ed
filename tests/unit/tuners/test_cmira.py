"""Corpus-level MIRA (``cmira``, Tan et al. 2013, Algorithm 1)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.bleu.corpus import bleu_from_stats, corpus_bleu_from_stats
from smtlib.tuners._losses import sentence_bleu
from smtlib.tuners.cmira import CorpusMira, _incremental_choice
from tests.support.tuner_fixtures import init_for, noisy_separable_pool, pool_from_arrays, separable_pool, unsmoothed_bleu


def reference_cmira(pool, init, C, epochs, scale=100.0, metric=None):
    """Algorithm 1 line by line with plain Python loops over sentences (slow, obviously correct);
    toward ``metric`` (a CorpusMetric) when given: its sentence scores as b', its corpus score for ΔB
    and for keeping the averaged weights."""
    x = pool.features().toarray()
    b = scale * (sentence_bleu(pool, "bleu+1") if metric is None else metric.sentence_scores)

    def corpus(rows):
        return corpus_bleu_from_stats(pool.stats[rows]) if metric is None else metric.corpus_score(np.array(rows))

    def unsmoothed(rows):
        return bleu_from_stats(pool.stats[rows].sum(0), smooth_method="none") if metric is None else corpus(rows)

    present = [s for s in range(pool.n_sentences) if pool.offsets[s + 1] > pool.offsets[s]]
    w = init.copy()
    history = [w.copy()]
    best_w, best_bleu = w.copy(), -np.inf
    for t in range(epochs + 1):
        avg = np.mean(history, axis=0)
        onebest = [max(range(pool.offsets[s], pool.offsets[s + 1]), key=lambda r: (x[r] @ avg, -r)) for s in present]
        bleu = corpus(onebest)
        if bleu > best_bleu:
            best_bleu, best_w = bleu, avg
        if t == epochs:
            break
        hope = [max(range(pool.offsets[s], pool.offsets[s + 1]), key=lambda r: (x[r] @ w + b[r], -r)) for s in present]
        fear = [max(range(pool.offsets[s], pool.offsets[s + 1]), key=lambda r: (x[r] @ w - b[r], -r)) for s in present]
        delta_b = scale * (unsmoothed(hope) - unsmoothed(fear))
        delta_h = x[fear].mean(0) - x[hope].mean(0)
        if delta_h @ delta_h > 0:
            eta = min(C, max(0.0, (delta_b + w @ delta_h) / (delta_h @ delta_h)))
            w = w - eta * delta_h
        history.append(w.copy())
    return best_w, best_bleu


@pytest.mark.parametrize("sparse", [False, True])
def test_matches_line_by_line_reference(sparse):
    pool = noisy_separable_pool(noise_seed=3, n_sentences=5, per_sentence=7, seed=31, sparse=sparse)
    init = init_for(pool)
    result = CorpusMira(seed=0, C=0.05, epochs=30)(pool, init)
    w_ref, bleu_ref = reference_cmira(pool, init, 0.05, 30)
    np.testing.assert_allclose(result.weights, w_ref, rtol=1e-9, atol=1e-12)
    assert result.info["train_bleu"] == pytest.approx(100 * bleu_ref)


def random_metric_stats(pool, seed):
    """Valid chrF (6 orders) and TER statistics rows for every hypothesis of ``pool`` (random counts)."""
    rng = np.random.default_rng(seed)
    n = pool.n_hypotheses
    hyp = rng.integers(0, 30, size=(n, 6)).astype(float)
    ref = rng.integers(1, 30, size=(n, 6)).astype(float)
    match = np.floor(rng.random((n, 6)) * np.minimum(hyp, ref))
    chrf = np.stack([hyp, ref, match], axis=2).reshape(n, 18)
    ter = np.column_stack([rng.integers(0, 12, size=n), rng.integers(5, 15, size=n)]).astype(float)
    return np.hstack([chrf, ter])


@pytest.mark.parametrize("sparse", [False, True])
def test_toward_a_metric_matches_line_by_line_reference(sparse):
    """Issue 25: toward chrF and TER (a mixture), b' is the mixture's sentence score, ΔB its corpus
    difference and the kept averaged weights those of its best corpus score, as the reference does."""
    from smtlib.bleu.metrics import parse_mixture
    from smtlib.tuners.corpus_metric import mixture_metric

    pool = noisy_separable_pool(noise_seed=3, n_sentences=6, per_sentence=7, seed=31, sparse=sparse)
    init = init_for(pool)
    metric = mixture_metric(parse_mixture("chrf:1,ter:-0.5"), random_metric_stats(pool, 5))
    for skip in (True, False):
        result = CorpusMira(seed=0, C=0.05, epochs=30, skip=skip)(pool, init, metric)
        w_ref, score_ref = reference_cmira(pool, init, 0.05, 30, metric=metric)
        np.testing.assert_allclose(result.weights, w_ref, rtol=1e-9, atol=1e-12)
        assert result.info["train_metric"] == pytest.approx(100 * score_ref) and "train_bleu" not in result.info
        assert result.info["metric"] == "chrf:1,ter:-0.5"


def test_incremental_choice_is_greedy_on_the_partial_document():
    pool = separable_pool(n_sentences=3, per_sentence=4, seed=32)
    scores = np.random.default_rng(0).standard_normal(pool.n_hypotheses)
    chosen = _incremental_choice(scores, pool.stats, pool.offsets, 100.0)
    doc = np.zeros(10)
    for k, s in enumerate(range(pool.n_sentences), 1):
        rows = range(pool.offsets[s], pool.offsets[s + 1])
        def gain(r):
            total = doc + pool.stats[r]
            m, t = total[2:6].copy(), total[6:10].copy()
            m[1:] += 1
            t[1:] += 1
            bp = min(0.0, 1 - total[1] / total[0])
            return scores[r] + 100.0 * k * np.exp(np.mean(np.log(m / t)) + bp)
        expected = max(rows, key=lambda r: (gain(r), -r))
        assert chosen[s] == expected
        doc += pool.stats[expected]


@pytest.mark.data
def test_bleu_scale_is_our_choice_measured_on_a_real_pool(shared_data):
    """Tan et al. do not give the BLEU scale; ``bleu_scale`` = 100 is our choice, and this is why.

    On Moses's test_scorer_data (sentences 0-49, LM-only start) BLEU in 0-1 makes the corpus margin
    ΔB too small against real feature differences: the hinge is never positive, no update happens
    and the weights stay at the start, whatever C. In percent the hinge stays active and the pool
    BLEU rises. Checked: those two facts. Not checked: that 100 is the best scale.
    """
    from tests.support.tuner_fixtures import scorer_data

    _, _, full = scorer_data(shared_data)
    end = full.offsets[50]
    pool = pool_from_arrays(np.diff(full.offsets[:51]), full.dense[:end], full.stats[:end])
    init = np.zeros(pool.dense.shape[1])
    init[full.feature_names.index("lm_0")] = 1.0
    for c in (0.01, 0.001):
        unit = CorpusMira(seed=0, bleu_scale=1.0, C=c)(pool, init)
        assert unit.info["updates"] == 0 and np.array_equal(unit.weights, init)
    percent = CorpusMira(seed=0)(pool, init)
    assert percent.info["updates"] > 0
    assert unsmoothed_bleu(pool, percent.weights) > unsmoothed_bleu(pool, init) + 0.03


def test_incremental_option_runs():
    pool = separable_pool(seed=34)
    result = CorpusMira(seed=0, epochs=20, hope_bleu="incremental")(pool, init_for(pool))
    assert np.all(np.isfinite(result.weights))


@pytest.mark.parametrize("sparse", [False, True])
def test_skipping_is_exact(sparse):
    """Re-scoring only the sentences whose argmaxes may have changed gives the full-pass result."""
    pool = noisy_separable_pool(noise_seed=11, n_sentences=30, per_sentence=40, seed=35, sparse=sparse)
    init = init_for(pool)
    fast = CorpusMira(seed=0, epochs=200, C=0.01)(pool, init)
    full = CorpusMira(seed=0, epochs=200, C=0.01, skip=False)(pool, init)
    assert fast.weights.tobytes() == full.weights.tobytes()
    assert fast.info["train_bleu"] == full.info["train_bleu"]
    assert fast.info["scored_fraction"] < 0.9 * full.info["scored_fraction"]
