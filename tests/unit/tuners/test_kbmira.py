"""Batch k-best MIRA (smtlib.tuners.kbmira) against a slow transcription of Algorithm 1, and edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.variants import get_variant
from smtlib.errors import InputError, TuningError
from smtlib.kbest.pool import argmax_per_sentence
from smtlib.tuners.kbmira import KbMira, background_bleu
from smtlib.weights import read_weights
from tests.support.tuner_fixtures import BAD, GOOD, PARTIAL, REFS, load, per_sentence_sparse, random_pool, three_sentence_pool
from tests.support.tuner_fixtures import unsmoothed_bleu as bleu
from tests.support.tuner_fixtures import write_case as write_shared_case


def write_case(tmp_path, sentences, refs, sparse=False):
    """:func:`tests.support.tuner_fixtures.write_case` with sparse names that differ by sentence."""
    return write_shared_case(tmp_path, sentences, refs, sparse=per_sentence_sparse if sparse else False)


def separable(tmp_path, sparse=False):
    return three_sentence_pool(tmp_path, sparse=per_sentence_sparse if sparse else False, good_step=0.0)


def reference_kbmira(pool, init, seed, epochs=30, c=0.01, decay=0.999, scale="ref-length", initial=1.0):
    """Algorithm 1 of Cherry & Foster (2012), line by line, with dense arrays and the BLEU variant."""
    rng = np.random.default_rng(seed)
    h = pool.features().toarray()
    variant = get_variant("pseudo-doc", scale=scale)
    bg = np.full(10, initial)
    w = init.astype(float).copy()
    history = []  # w_1 ... w_t
    nonempty = np.flatnonzero(pool.sizes() > 0)
    best = (-np.inf, None)
    for _ in range(epochs):
        for i in rng.permutation(nonempty):
            rows = np.arange(pool.offsets[i], pool.offsets[i + 1])
            history.append(w.copy())
            model = h[rows] @ w
            gain = variant.score(pool.stats[rows], bg)
            hope = int(np.argmax(model + gain))
            fear = int(np.argmax(model - gain))
            d = h[rows[hope]] - h[rows[fear]]
            loss = (gain[hope] - gain[fear]) - w @ d
            if hope != fear and loss > 0 and d @ d > 0:
                w = w + min(c, loss / (d @ d)) * d
            bg = decay * bg + pool.stats[rows[hope]]
        average = np.mean(history, axis=0)
        chosen = argmax_per_sentence(h @ average, pool.offsets)
        score = corpus_bleu_from_stats(pool.stats[chosen[chosen >= 0]], smooth_method="none")
        if score > best[0]:
            best = (score, average)
    return best[1]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scale", ["ref-length", "none"])
def test_matches_reference_implementation(seed, scale):
    pool = random_pool(n_sentences=6, per_sentence=7, n_dense=3, n_sparse=5, seed=seed, informative=False)
    init = np.random.default_rng(seed + 10).normal(size=len(pool.feature_names)) * 0.1
    expected = reference_kbmira(pool, init, seed, epochs=8, c=0.05, scale=scale)
    got = KbMira(seed=seed, epochs=8, C=0.05, bleu_scale=scale)(pool, init).weights
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_background_bleu_equals_variant():
    rng = np.random.default_rng(5)
    stats = rng.integers(0, 20, size=(50, 10)).astype(float)
    bg = rng.uniform(1, 100, 10)
    for scale in ("ref-length", "none"):
        expected = get_variant("pseudo-doc", scale=scale).score(stats, bg)
        got = np.array([background_bleu(row, bg, scale == "ref-length") for row in stats])
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_separable_pool_reaches_oracle(tmp_path):
    pool = separable(tmp_path)
    init = np.array([-1.0, 0.5])
    assert bleu(pool, init) < 0.1
    result = KbMira(seed=0)(pool, init)
    assert bleu(pool, result.weights) == pytest.approx(1.0)
    assert result.info["objective"] == pytest.approx(1.0)


def test_sparse_features(tmp_path):
    pool = separable(tmp_path, sparse=True)
    assert pool.has_sparse()
    result = KbMira(seed=0)(pool, np.concatenate([[-1.0, 0.5], np.zeros(len(pool.sparse_names))]))
    assert result.weights.shape == (len(pool.feature_names),)
    assert bleu(pool, result.weights) == pytest.approx(1.0)


def test_single_sentence_one_hypothesis_and_empty(tmp_path):
    sentences = [[("", (1.0, 0.0)), (GOOD[0], (0.0, 1.0))], [(PARTIAL[1], (0.5, 0.5))], []]
    pool = load(*write_case(tmp_path, sentences, REFS))
    result = KbMira(seed=0)(pool, np.array([0.2, 0.0]))  # steps are capped at C = 0.01
    assert np.all(np.isfinite(result.weights))
    assert pool.best_indices(result.weights)[0] == 1


def test_ties_and_equal_bleu_do_not_move(tmp_path):
    """Identical features: hope = fear = the first row, no update, no division by zero."""
    pool = load(*write_case(tmp_path, [[(BAD[0], (1.0, 1.0)), (GOOD[0], (1.0, 1.0))]], REFS[:1]))
    result = KbMira(seed=0)(pool, np.array([0.3, 0.2]))
    np.testing.assert_array_equal(result.weights, [0.3, 0.2])
    same = load(*write_case(tmp_path, [[(GOOD[0], (0.0, 1.0)), (GOOD[0], (2.0, 0.0))]], REFS[:1]))
    result = KbMira(seed=0)(same, np.array([0.3, 0.2]))
    np.testing.assert_array_equal(result.weights, [0.3, 0.2])
    assert all(e["updates"] == 0 for e in result.info["epochs"])


def test_all_zero_features_warns(tmp_path):
    pool = load(*write_case(tmp_path, [[(BAD[0], (0.0, 0.0)), (GOOD[0], (0.0, 0.0))]], REFS[:1]))
    with pytest.raises(TuningError, match="^kbmira, this step: the tuned weights are all zero"):
        KbMira(seed=0)(pool, np.zeros(2))


@pytest.mark.parametrize("bad", [{"epochs": 0}, {"C": 0.0}, {"decay": 1.5}, {"bleu_scale": "x"}, {"bg_initial": 0.0}])
def test_bad_parameters(tmp_path, bad):
    pool = separable(tmp_path)
    with pytest.raises(InputError):
        KbMira(**bad)(pool, np.ones(2))


def test_cli(tmp_path, cli):
    kbest, ref = write_case(tmp_path, [[(BAD[i], (0.0, 2.0)), (GOOD[i], (2.0, 0.0))] for i in range(3)], REFS, sparse=True)
    init = tmp_path / "init.w"
    init.write_text("F_0 -1\nF_1 0.5\n", encoding="utf-8")
    out = tmp_path / "out.w"
    proc = cli("tune", "kbmira", "--kbest", kbest, "--refs", ref, "--init", init, "--out", out, "--set", "C=0.05", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    weights = read_weights(out)
    assert any(name.startswith("WT_") for name in weights)
    pool = load(kbest, ref)
    assert bleu(pool, pool.weight_vector(weights)) == pytest.approx(1.0)
