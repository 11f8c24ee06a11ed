"""Latent structured SVM (``svm``, Cherry & Foster 2012 §3.2)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from smtlib.tuners._losses import Features, segment_max, sentence_bleu
from smtlib.tuners.svm import LatentSVM, StructuredHingeSolver, oracle_by_model_score
from tests.support.tuner_fixtures import init_for, noisy_separable_pool, pool_from_arrays, stats_for_quality


def reference_primal(pool, oracle, cost, lam):
    """The n-slack structured SVM primal solved by SLSQP on (w, ξ) with every constraint (slow, exact)."""
    feats = Features(pool)
    x = feats.dense
    d = x.shape[1]
    n_sent = pool.n_sentences
    cons = []
    for s in range(n_sent):
        o = oracle[s]
        for r in range(pool.offsets[s], pool.offsets[s + 1]):
            diff = x[o] - x[r]
            # w·(h(o) - h(r)) >= Δ(r) - ξ_s
            cons.append({"type": "ineq", "fun": lambda z, diff=diff, r=r, s=s: z[:d] @ diff - cost[r] + z[d + s],
                         "jac": lambda z, diff=diff, s=s: np.concatenate([diff, np.eye(n_sent)[s]])})
        cons.append({"type": "ineq", "fun": lambda z, s=s: z[d + s], "jac": lambda z, s=s: np.eye(d + n_sent)[d + s]})
    fun = lambda z: 0.5 * lam * z[:d] @ z[:d] + z[d:].sum()  # noqa: E731
    jac = lambda z: np.concatenate([lam * z[:d], np.ones(n_sent)])  # noqa: E731
    z0 = np.concatenate([np.zeros(d), np.ones(n_sent)])
    res = scipy.optimize.minimize(fun, z0, jac=jac, constraints=cons, method="SLSQP", options={"maxiter": 500, "ftol": 1e-12})
    assert res.success, res.message
    return res.x[:d], res.fun


@pytest.mark.parametrize("lam", [0.1, 1.0, 10.0])
def test_dual_solver_matches_primal_reference(lam):
    rng = np.random.default_rng(int(lam * 10))
    sizes = np.array([5, 7, 4, 6])
    n = int(sizes.sum())
    pool = pool_from_arrays(sizes, rng.standard_normal((n, 3)), stats_for_quality(rng.uniform(0.1, 0.9, n)))
    bleu = sentence_bleu(pool, "liang-interpolated")
    cost = np.repeat(segment_max(bleu, pool.offsets), sizes) - bleu
    oracle = oracle_by_model_score(cost <= 0, np.zeros(n), pool.offsets)
    solver = StructuredHingeSolver(Features(pool), pool.offsets, lam, 1e-9, 64, 50, 2000, np.random.default_rng(0))
    w = solver.solve(oracle, cost)
    w_ref, f_ref = reference_primal(pool, oracle, cost, lam)
    assert solver.objective(oracle, cost, w) == pytest.approx(f_ref, rel=1e-5, abs=1e-7)
    np.testing.assert_allclose(w, w_ref, rtol=1e-3, atol=1e-4)


def test_oracle_ties_broken_by_model_score():
    in_set = np.array([True, False, True, True, False])
    scores = np.array([1.0, 5.0, 3.0, 3.0, 0.0])
    offsets = np.array([0, 3, 5])
    assert oracle_by_model_score(in_set, scores, offsets).tolist() == [2, 3]


def test_latent_objective_does_not_increase_and_constraints_are_met():
    pool = noisy_separable_pool(noise_seed=2, seed=21)
    result = LatentSVM(seed=0)(pool, init_for(pool))
    history = result.info["objective_per_selection"]
    assert all(b <= a + 1e-6 for a, b in zip(history, history[1:], strict=False))
    assert result.info["constraints"] > 0
