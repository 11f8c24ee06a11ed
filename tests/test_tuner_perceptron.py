"""Averaged structured perceptron (``perceptron``, Neubig & Watanabe 2016 §6.2)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.tuners._losses import oracle_mask, sentence_bleu
from smtlib.tuners.perceptron import AveragedPerceptron
from tests.test_tuner_mr import (
    check_all_zero_features_warns,
    check_cli,
    check_deterministic,
    check_edge_cases,
    check_real_data,
    check_separable,
    init_for,
    separable_pool,
)


def reference_perceptron(pool, init, passes, rate, seed):
    """Explicit averaging over the weights before the first and after every visit (slow)."""
    x = pool.features().toarray()
    in_oracle = oracle_mask(sentence_bleu(pool), pool.offsets)
    rng = np.random.default_rng(seed)
    active = np.flatnonzero(pool.sizes() > 0)
    w = init.copy()
    seen = [w.copy()]
    for _ in range(passes):
        errors = 0
        for s in rng.permutation(active):
            rows = np.arange(pool.offsets[s], pool.offsets[s + 1])
            scores = x[rows] @ w
            best = rows[np.argmax(scores)]
            oracle_rows = rows[in_oracle[rows]]
            orc = oracle_rows[np.argmax(x[oracle_rows] @ w)]
            if not in_oracle[best]:
                errors += 1
                w = w + rate * (x[orc] - x[best])
            seen.append(w.copy())
        if errors == 0:
            break
    return np.mean(seen, axis=0), w


@pytest.mark.parametrize("sparse", [False, True])
def test_lazy_average_equals_explicit_average(sparse):
    pool = separable_pool(n_sentences=7, per_sentence=6, seed=51, sparse=sparse)
    pool.dense[:, 0] += np.random.default_rng(6).standard_normal(pool.n_hypotheses)
    init = init_for(pool)
    avg, last = reference_perceptron(pool, init, passes=4, rate=0.5, seed=2)
    np.testing.assert_allclose(AveragedPerceptron(seed=2, passes=4, rate=0.5)(pool, init).weights, avg, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(AveragedPerceptron(seed=2, passes=4, rate=0.5, average=False)(pool, init).weights, last, rtol=1e-10, atol=1e-12)


def test_stops_when_separated():
    pool = separable_pool(seed=52)
    result = AveragedPerceptron(seed=0)(pool, init_for(pool))
    assert result.info["mistakes_per_pass"][-1] == 0
    assert len(result.info["mistakes_per_pass"]) < 10


def test_separable():
    check_separable("perceptron")
    check_separable("perceptron", sparse=True)


def test_edge_cases():
    check_edge_cases("perceptron")
    check_all_zero_features_warns("perceptron")


def test_deterministic():
    check_deterministic("perceptron")


def test_cli(cli, tmp_path):
    check_cli("perceptron", cli, tmp_path, ("--set", "passes=3"))


@pytest.mark.data
def test_real_pool(shared_data, cli, tmp_path):
    check_real_data("perceptron", shared_data, cli, tmp_path)
