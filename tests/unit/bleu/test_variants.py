"""Sentence-level BLEU variants: sacrebleu parity, Moses's known values, hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu

from smtlib.bleu import VARIANTS, compute_stats, get_variant
from smtlib.bleu.corpus import bleu_from_stats, log_bleu_and_gradient
from smtlib.bleu.expected import segment_softmax, segment_sum
from smtlib.errors import InputError
from tests.support.bleu_reference import random_corpus

MOSES_ROW = np.array([[6, 7, 6, 4, 2, 1, 6, 5, 4, 3]], dtype=float)  # BleuScorerTest.cpp


@pytest.mark.parametrize("method", ["none", "floor", "add-k", "exp"])
def test_sacrebleu_sentence_parity(method):
    rng = np.random.default_rng(11)
    hyps, refs = random_corpus(rng, 300, 2, vocab=12, max_len=10)
    stats = compute_stats(hyps, np.arange(len(hyps)), refs)
    ours = 100 * get_variant(method).score(stats)
    theirs = [
        sacrebleu.sentence_bleu(h, [refs[0][i], refs[1][i]], tokenize="none", smooth_method=method).score
        for i, h in enumerate(hyps)
    ]
    np.testing.assert_allclose(ours, theirs, atol=1e-9)


def test_bleu_plus_one_is_sacrebleu_add_one():
    rng = np.random.default_rng(5)
    hyps, refs = random_corpus(rng, 100, 1, vocab=10, max_len=8)
    stats = compute_stats(hyps, np.arange(len(hyps)), refs)
    theirs = [sacrebleu.sentence_bleu(h, [refs[0][i]], tokenize="none", smooth_method="add-k", smooth_value=1).score for i, h in enumerate(hyps)]
    np.testing.assert_allclose(100 * get_variant("bleu+1").score(stats), theirs, atol=1e-9)


def test_moses_smoothed_known_values():
    # Moses mert/BleuScorerTest.cpp, sentence_level_bleu.
    assert get_variant("moses-smoothed").score(MOSES_ROW)[0] == pytest.approx(0.5985, abs=1e-4)
    assert get_variant("moses-smoothed", smoothing=0.5).score(MOSES_ROW)[0] == pytest.approx(0.5624, abs=1e-4)
    assert get_variant("moses-smoothed", bp_smooth=True).score(MOSES_ROW)[0] == pytest.approx(0.5067, abs=1e-4)


def test_liang_interpolated_by_hand():
    # p = 1, 4/5, 1/2, 1/3; c = 6 < r = 7
    bp = math.exp(1 - 7 / 6)
    p = [1.0, 0.8, 0.5, 1 / 3]
    expected = sum(bp * math.exp(sum(math.log(x) for x in p[:i]) / i) / 2 ** (4 - i + 1) for i in range(1, 5))
    assert get_variant("liang-interpolated").score(MOSES_ROW)[0] == pytest.approx(expected, rel=1e-12)
    # a zero 3-gram precision zeroes BLEU_3 and BLEU_4 but not BLEU_1, BLEU_2
    row = MOSES_ROW.copy()
    row[0, 4] = 0
    expected = sum(bp * math.exp(sum(math.log(x) for x in p[:i]) / i) / 2 ** (4 - i + 1) for i in range(1, 3))
    assert get_variant("liang-interpolated").score(row)[0] == pytest.approx(expected, rel=1e-12)


def test_pseudo_document_matches_moses_background_bleu():
    variant = get_variant("pseudo-doc", scale="ref-length", decay=0.5)
    bg = variant.background.copy()
    total = MOSES_ROW[0] + bg
    log_bleu = np.mean(np.log(total[2:6]) - np.log(total[6:10])) + min(0.0, 1 - total[1] / total[6])
    assert variant.score(MOSES_ROW)[0] == pytest.approx(math.exp(log_bleu) * total[1])
    variant.update(MOSES_ROW[0])
    np.testing.assert_allclose(variant.background, 0.5 * (bg + MOSES_ROW[0]))


def test_pseudo_document_sequence_uses_running_background():
    variant = get_variant("pseudo-doc")
    rows = np.vstack([MOSES_ROW, MOSES_ROW])
    scores = variant.score_sequence(rows)
    assert scores[0] != scores[1]


def test_every_variant_handles_degenerate_rows():
    rows = np.array([[0, 5, 0, 0, 0, 0, 0, 0, 0, 0], [3, 0, 0, 0, 0, 0, 3, 2, 1, 0], [1, 1, 1, 0, 0, 0, 1, 0, 0, 0]], float)
    for name in VARIANTS:
        scores = get_variant(name).score(rows)
        assert np.all(np.isfinite(scores)), name
        assert np.all(scores >= 0), name


def test_unknown_variant_and_parameter():
    with pytest.raises(InputError, match="unknown BLEU variant"):
        get_variant("bleu+2")
    with pytest.raises(InputError, match="no parameter"):
        get_variant("bleu+1", smoothing=2)


def test_expected_stats_and_xbleu_gradient():
    rng = np.random.default_rng(0)
    stats = rng.integers(1, 20, size=(7, 10)).astype(float)
    offsets = np.array([0, 3, 3, 7])
    scores = rng.normal(size=7)
    probs = segment_softmax(scores, offsets)
    expected = segment_sum(probs[:, None] * stats, offsets)  # expected statistics per sentence
    np.testing.assert_allclose(probs[:3].sum(), 1.0)
    np.testing.assert_allclose(expected[1], 0.0)
    np.testing.assert_allclose(expected[0], (probs[:3, None] * stats[:3]).sum(axis=0))
    np.testing.assert_allclose(segment_softmax(np.array([1000.0, 1000.0]), np.array([0, 2])), [0.5, 0.5])
    total = expected.sum(axis=0)
    for smooth in (0.0, 0.1):
        value, grad = log_bleu_and_gradient(total, smooth)
        for j in range(10):
            step = np.zeros(10)
            step[j] = 1e-6
            numeric = (log_bleu_and_gradient(total + step, smooth)[0] - log_bleu_and_gradient(total - step, smooth)[0]) / 2e-6
            assert grad[j] == pytest.approx(numeric, rel=1e-4, abs=1e-7)
    assert math.exp(log_bleu_and_gradient(MOSES_ROW[0])[0]) == pytest.approx(bleu_from_stats(MOSES_ROW[0], smooth_method="none"))
