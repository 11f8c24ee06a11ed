"""Averaged structured perceptron (``perceptron``, Neubig & Watanabe 2016 §6.2)."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.tuners._losses import oracle_mask, sentence_bleu
from smtlib.tuners.perceptron import AveragedPerceptron
from tests.support.tuner_fixtures import init_for, noisy_separable_pool, separable_pool


def reference_perceptron(pool, init, passes, rate, seed, stop_when_separated=False):
    """Collins's (2002) averaged perceptron transcribed: explicit averaging over the weights before
    the first and after every visit (slow), all ``passes`` unless ``stop_when_separated``."""
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
        if errors == 0 and stop_when_separated:
            break
    return np.mean(seen, axis=0), w


@pytest.mark.parametrize("sparse", [False, True])
def test_lazy_average_equals_explicit_average(sparse):
    pool = noisy_separable_pool(noise_seed=6, n_sentences=7, per_sentence=6, seed=51, sparse=sparse)
    init = init_for(pool)
    avg, last = reference_perceptron(pool, init, passes=4, rate=0.5, seed=2)
    np.testing.assert_allclose(AveragedPerceptron(seed=2, passes=4, rate=0.5)(pool, init).weights, avg, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(AveragedPerceptron(seed=2, passes=4, rate=0.5, average=False)(pool, init).weights, last, rtol=1e-10, atol=1e-12)


def test_runs_every_pass_and_stops_early_only_when_asked():
    """All passes by default: after the first mistake-free pass the average still moves toward the
    separating w (the reference shows it); ``stop_when_separated`` returns the earlier average."""
    pool = separable_pool(seed=52)
    init = init_for(pool)
    full = AveragedPerceptron(seed=0)(pool, init)
    assert len(full.info["mistakes_per_pass"]) == 10 and full.info["mistakes_per_pass"][-1] == 0
    early = AveragedPerceptron(seed=0, stop_when_separated=True)(pool, init)
    passes = len(early.info["mistakes_per_pass"])
    assert passes < 10 and early.info["mistakes_per_pass"][-1] == 0
    avg_full, _ = reference_perceptron(pool, init, passes=10, rate=1.0, seed=0)
    avg_early, _ = reference_perceptron(pool, init, passes=10, rate=1.0, seed=0, stop_when_separated=True)
    np.testing.assert_allclose(full.weights, avg_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(early.weights, avg_early, rtol=1e-10, atol=1e-12)
    assert not np.allclose(full.weights, early.weights)

