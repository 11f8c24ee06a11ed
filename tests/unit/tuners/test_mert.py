"""k-best MERT (smtlib.tuners.mert): the exact envelope against brute force, known answers, edge cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.errors import InputError, TuningError
from smtlib.kbest.pool import argmax_per_sentence
from smtlib.tuners.mert import Mert
from smtlib.tuners.line_search import envelopes, interval_scores, line_search
from smtlib.tuners.corpus_metric import ADDITIVE, BLEU, additive_metric, bleu_metric, bleu_none_from_sums
from smtlib.weights import read_weights
from tests.support.tuner_fixtures import BAD, GOOD, PARTIAL, REFS, load, write_case
from tests.support.tuner_fixtures import three_sentence_pool as separable
from tests.support.tuner_fixtures import unsmoothed_bleu as bleu


# -- the envelope --------------------------------------------------------------------------------
@pytest.mark.parametrize("integer", [False, True])
def test_envelope_matches_brute_force(integer):
    """Every interval's score equals the reranked score at a point inside it (ties: equal lines)."""
    rng = np.random.default_rng(1)
    for _ in range(120):
        sizes = rng.integers(0, 9, rng.integers(1, 5))
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        n = int(offsets[-1])
        if n == 0:
            continue
        if integer:  # many equal slopes and identical lines
            slopes = rng.integers(-2, 3, n).astype(float)
            intercepts = rng.integers(-2, 3, n).astype(float)
        else:
            slopes, intercepts = rng.normal(size=n), rng.normal(size=n)
        gains = rng.normal(size=n)
        first, bx, bnew, bprev = envelopes(slopes, intercepts, offsets)
        xs, scores = interval_scores(first, bx, bnew, bprev, gains[:, None].copy(), ADDITIVE)
        assert np.all(np.diff(xs) > 0)
        points = [xs[0] - 1.0] + [0.5 * (a + b) for a, b in zip(xs[:-1], xs[1:], strict=True)] + [xs[-1] + 1.0] if len(xs) else [0.0]
        for x, score in zip(points, scores, strict=True):
            best = argmax_per_sentence(intercepts + x * slopes, offsets)
            assert score == pytest.approx(gains[best[best >= 0]].sum(), abs=1e-9)


def test_line_search_finds_grid_maximum():
    """The exact line search is at least as good as a dense grid of steps, and its step achieves it."""
    rng = np.random.default_rng(2)
    offsets = np.arange(0, 41, 8, dtype=np.int64)
    stats = rng.integers(1, 9, size=(40, 10)).astype(float)
    stats[:, 6:] = stats[:, 2:6] + rng.integers(0, 4, size=(40, 4))
    stats[:, 0] = stats[:, 6]
    slopes, intercepts = rng.normal(size=40), rng.normal(size=40)
    score, x = line_search(slopes, intercepts, offsets, stats, BLEU)
    grid = np.linspace(-20, 20, 1201)
    values = [corpus_bleu_from_stats(stats[argmax_per_sentence(intercepts + g * slopes, offsets)], smooth_method="none") for g in grid]
    assert score >= max(values) - 1e-12
    at_x = corpus_bleu_from_stats(stats[argmax_per_sentence(intercepts + x * slopes, offsets)], smooth_method="none")
    assert at_x == pytest.approx(score, abs=1e-12)


def test_bleu_kernel_equals_corpus_bleu():
    rng = np.random.default_rng(3)
    for _ in range(200):
        row = rng.integers(0, 30, size=10).astype(float)
        row[6:] = row[2:6] + rng.integers(0, 5, size=4)
        assert bleu_none_from_sums(row) == pytest.approx(corpus_bleu_from_stats(row[None, :], smooth_method="none"), rel=1e-12, abs=1e-15)


# -- known answers --------------------------------------------------------------------------------
def test_separable_pool_reaches_oracle(tmp_path):
    pool = separable(tmp_path)
    init = np.array([-1.0, 0.5])  # ranks the scrambled hypotheses first
    assert bleu(pool, init) < 0.1
    result = Mert(seed=0)(pool, init)
    assert bleu(pool, result.weights) == pytest.approx(1.0)
    assert result.info["objective"] == pytest.approx(1.0)
    assert np.abs(result.weights).sum() == pytest.approx(1.0)  # L1-normalised as Moses


def test_single_sentence(tmp_path):
    pool = load(*write_case(tmp_path, [[(BAD[0], (0.0, 1.0)), (GOOD[0], (1.0, 0.0))]], REFS[:1]))
    result = Mert(seed=0, random_restarts=3)(pool, np.array([0.0, 1.0]))
    assert bleu(pool, result.weights) == pytest.approx(1.0)


def test_additive_metric_decomposes():
    """A gold linear score: MERT learns its ranking exactly on a 2-feature pool."""
    rng = np.random.default_rng(4)
    sep = separable_additive(rng)
    pool, gains = sep
    result = Mert(seed=0, random_restarts=5).fit_metric(pool, np.array([1.0, -1.0]), additive_metric(gains))
    chosen = argmax_per_sentence(pool.dense @ result.weights[:2], pool.offsets)
    oracle = argmax_per_sentence(gains, pool.offsets)
    assert gains[chosen].sum() == pytest.approx(gains[oracle].sum())


def separable_additive(rng):
    from smtlib.kbest.format import FeatureGroup
    from smtlib.kbest.pool import KBestPool

    n_sent, k = 30, 12
    dense = rng.uniform(0, 5, size=(n_sent * k, 2))
    gains = dense @ np.array([0.3, 0.7])
    n = len(dense)
    pool = KBestPool(
        offsets=np.arange(n_sent + 1, dtype=np.int64) * k, texts=[""] * n, dense=dense, groups=(FeatureGroup("F", 2),),
        sparse=sp.csr_matrix((n, 0)), sparse_names=[], totals=np.full(n, np.nan), extras=[None] * n,
    )  # fmt: skip
    pool.stats = np.zeros((n, 10))
    return pool, gains


# -- edge cases -----------------------------------------------------------------------------------
def test_ties_identical_features(tmp_path):
    """All hypotheses score the same: nothing to move, no NaN, the first row wins as in rerank."""
    pool = load(*write_case(tmp_path, [[(BAD[0], (1.0, 1.0)), (GOOD[0], (1.0, 1.0))]], REFS[:1]))
    result = Mert(seed=0, random_restarts=4)(pool, np.array([0.5, -0.5]))
    assert np.all(np.isfinite(result.weights))
    np.testing.assert_allclose(result.weights, [0.5, -0.5])


def test_empty_hypothesis_and_single_hypothesis_sentence(tmp_path):
    sentences = [[("", (1.0, 0.0)), (GOOD[0], (0.0, 1.0))], [(PARTIAL[1], (0.5, 0.5))], [(GOOD[2], (0.0, 1.0))]]
    pool = load(*write_case(tmp_path, sentences, REFS))
    result = Mert(seed=0, random_restarts=3)(pool, np.array([1.0, 0.0]))
    assert np.all(np.isfinite(result.weights))
    assert pool.best_indices(result.weights)[0] == 1  # away from the empty hypothesis


def test_empty_sentence_range(tmp_path):
    """A reference line without hypotheses (empty offsets range) is skipped."""
    sentences = [[(BAD[0], (0.0, 1.0)), (GOOD[0], (1.0, 0.0))], [], [(GOOD[2], (1.0, 0.0)), (BAD[2], (0.0, 1.0))]]
    pool = load(*write_case(tmp_path, sentences, REFS))
    assert pool.sizes()[1] == 0
    result = Mert(seed=0, random_restarts=2)(pool, np.array([0.0, 1.0]))
    assert bleu(pool, result.weights) == pytest.approx(1.0)


def test_all_zero_features_warns_not_crashes(tmp_path):
    pool = load(*write_case(tmp_path, [[(BAD[0], (0.0, 0.0)), (GOOD[0], (0.0, 0.0))]], REFS[:1]))
    with pytest.raises(TuningError, match="^mert, this step: the tuned weights are all zero"):
        Mert(seed=0, random_restarts=2)(pool, np.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = Mert(seed=0, random_restarts=2)(pool, np.array([2.0, -2.0]))
    np.testing.assert_allclose(result.weights, [0.5, -0.5])  # unchanged direction, normalised


def test_equal_bleu_everywhere(tmp_path):
    sentences = [[(GOOD[0], (0.0, 1.0)), (GOOD[0], (1.0, 0.0)), (GOOD[0], (2.0, 2.0))]]
    pool = load(*write_case(tmp_path, sentences, REFS[:1]))
    result = Mert(seed=0, random_restarts=3)(pool, np.array([1.0, 3.0]))
    np.testing.assert_allclose(result.weights, [0.25, 0.75])
    assert result.info["objective"] == pytest.approx(1.0)


def test_zero_init_climbs(tmp_path):
    """All-zero initial weights tie every hypothesis; the line searches still leave the tie."""
    pool = separable(tmp_path)
    result = Mert(seed=0, random_restarts=1)(pool, np.zeros(2))
    assert bleu(pool, result.weights) == pytest.approx(1.0)


# -- contract -------------------------------------------------------------------------------------
def test_deterministic_and_does_not_modify_inputs(tmp_path):
    pool = separable(tmp_path)
    init = np.array([-1.0, 0.5])
    dense, stats = pool.dense.copy(), pool.stats.copy()
    a = Mert(seed=7, random_directions=3)(pool, init)
    b = Mert(seed=7, random_directions=3)(pool, init)
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(init, [-1.0, 0.5]) and np.array_equal(pool.dense, dense) and np.array_equal(pool.stats, stats)


@pytest.mark.parametrize("sweep", ["sequential", "best"])
def test_both_sweeps_reach_oracle(tmp_path, sweep):
    pool = separable(tmp_path)
    assert bleu(pool, Mert(seed=1, sweep=sweep)(pool, np.array([-1.0, 0.5])).weights) == pytest.approx(1.0)


def test_sparse_pool_rejected(tmp_path):
    kbest = tmp_path / "k.txt"
    kbest.write_text(f"0 ||| {GOOD[0]} ||| F= 1 WT_a= 1 ||| 0\n0 ||| {BAD[0]} ||| F= 0 ||| 0\n", encoding="utf-8")
    ref = tmp_path / "r.txt"
    ref.write_text(REFS[0] + "\n", encoding="utf-8")
    pool = load(kbest, ref)
    with pytest.raises(InputError, match="dense"):
        Mert()(pool, np.zeros(len(pool.feature_names)))


@pytest.mark.parametrize("bad", [{"random_restarts": -1}, {"sweep": "powell"}, {"normalize": "l2"}, {"restart_low": 2.0}])
def test_bad_parameters(tmp_path, bad):
    pool = separable(tmp_path)
    with pytest.raises(InputError):
        Mert(**bad)(pool, np.ones(2))


def test_bleu_metric_shape_check():
    with pytest.raises(ValueError):
        bleu_metric(np.zeros((3, 4)))


def test_cli(tmp_path, cli):
    sentences = [[(BAD[i], (0.0, 2.0)), (PARTIAL[i], (1.0, 1.0)), (GOOD[i], (2.0, 0.0))] for i in range(3)]
    kbest, ref = write_case(tmp_path, sentences, REFS)
    init = tmp_path / "init.w"
    init.write_text("F_0 -1\nF_1 0.5\nother_feature 3\n", encoding="utf-8")  # a sparse name the pool lacks
    out = tmp_path / "out.w"
    # the pool has no sparse features: a name that is not one of its dense values is an error (issue 28)
    proc = cli("tune", "mert", "--kbest", kbest, "--refs", ref, "--init", init, "--out", out, "--seed", "3")
    assert proc.returncode == 2 and "init.w:3: weight 'other_feature' is not a feature of the k-best pool" in proc.stderr
    init.write_text("F_0 -1\nF_1 0.5\n", encoding="utf-8")
    proc = cli("tune", "mert", "--kbest", kbest, "--refs", ref, "--init", init, "--out", out, "--seed", "3", "--set", "random_restarts=4")
    assert proc.returncode == 0, proc.stderr
    weights = read_weights(out)
    assert weights["F_0"] > 0
    again = tmp_path / "again.w"
    cli("tune", "mert", "--kbest", kbest, "--refs", ref, "--init", init, "--out", again, "--seed", "3", "--set", "random_restarts=4")
    assert out.read_bytes() == again.read_bytes()
    bad = cli("tune", "mert", "--kbest", kbest, "--refs", ref, "--init", init, "--out", tmp_path / "x.w", "--set", "random_restarts=zero")
    assert bad.returncode == 2 and not (tmp_path / "x.w").exists()
