"""Robustness tests shared by every registered tuner (issue 3, evidence 3 and 4).

Parametrized over ``smtlib.tuners.registry.list_tuners()`` as it is when the tests are collected,
so a newly registered method is tested without editing this file. Pools are small and generated
with consistent BLEU statistics (matches <= n-gram counts <= hypothesis length). A few methods get
reduced iteration counts from :data:`FAST` (only keys the method declares are applied).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.variants import get_variant
from smtlib.errors import InputError
from smtlib.kbest.format import FeatureGroup
from smtlib.kbest.pool import KBestPool
from smtlib.tuners.registry import get_tuner_class, list_tuners

METHODS = list_tuners()

#: per-method reduced settings for speed (applied only where the method has the key)
FAST: dict[str, dict[str, object]] = {
    "mert": {"restarts": 5},
    "mr": {"restarts": 2, "max_epochs": 10},
    "svm": {"reselections": 3},
    "xbleu": {"max_iterations": 50},
    "softmax": {"max_iterations": 50},
}

#: settings for the "improves over a bad init" checks: PRO's interpolation with the previous weights
#: (Hopkins & May §5.4.3, Ψ = 0.1) moves a tenth of the way per step by design, so one step from a
#: bad init is judged on the optimizer itself (Ψ = 1)
IMPROVE: dict[str, dict[str, object]] = {
    "pro": {"psi": 1.0},
    # online MIRA's one epoch moves at most C = 0.01 per sentence by design: judged over J = 30 epochs
    "mira": {"epochs": 30},
}


def make_tuner(method: str, seed: int = 0, extra: dict[str, dict[str, object]] | None = None):
    cls = get_tuner_class(method)
    wanted = {**FAST.get(method, {}), **(extra or {}).get(method, {})}
    params = {k: v for k, v in wanted.items() if k in cls.defaults}
    return cls(seed=seed, **params)


# -- pool generation -------------------------------------------------------------------------------


def bleu_stats(rng: np.random.Generator, ref_len: np.ndarray, quality: np.ndarray) -> np.ndarray:
    """Consistent BLEU statistics rows: length around the reference's, matches <= totals, m_n <= m_{n-1}."""
    n = len(ref_len)
    hyp_len = np.maximum(1, np.round(ref_len * rng.normal(1.0, 0.15, size=n)))
    stats = np.zeros((n, 10))
    stats[:, 0] = hyp_len
    stats[:, 1] = ref_len
    precision = 1.0 / (1.0 + np.exp(-quality))
    previous = hyp_len.copy()
    for order in range(4):
        totals = np.maximum(hyp_len - order, 0)
        matches = rng.binomial(np.minimum(previous, totals).astype(np.int64), precision * (0.8 if order else 1.0))
        stats[:, 2 + order] = matches
        stats[:, 6 + order] = totals
        previous = matches
    return stats


def make_pool(
    n_sentences: int = 12,
    per_sentence: int | list[int] = 15,
    n_dense: int = 5,
    n_sparse: int = 0,
    active: int = 3,
    seed: int = 0,
    informative: bool = True,
) -> KBestPool:
    """A generated pool; with ``informative`` feature 0 (and sparse ones) correlate with sentence BLEU."""
    rng = np.random.default_rng(seed)
    sizes = np.full(n_sentences, per_sentence) if np.isscalar(per_sentence) else np.asarray(per_sentence)
    offsets = np.zeros(n_sentences + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n = int(offsets[-1])
    quality = rng.normal(0.0, 1.0, size=n)
    ref_len = np.repeat(rng.integers(8, 30, size=n_sentences), sizes).astype(float)
    stats = bleu_stats(rng, ref_len, quality)
    dense = rng.normal(0.0, 1.0, size=(n, n_dense))
    if informative and n_dense:
        dense[:, 0] = get_variant("bleu+1").score(stats) * 10 + rng.normal(0.0, 0.3, size=n)
    if n_sparse:
        cols = np.stack([rng.choice(n_sparse, size=active, replace=False) for _ in range(n)])
        vals = np.ones((n, active))
        if informative:
            # sparse feature j rewards the hypotheses whose quality is above average when j is even
            vals = np.where(cols % 2 == 0, 1.0, -1.0) * np.sign(quality)[:, None]
        sparse = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * active + 1, active)), shape=(n, n_sparse))
        sparse.sort_indices()
    else:
        sparse = sp.csr_matrix((n, 0))
    return KBestPool(
        offsets=offsets,
        texts=[f"hyp {i}" for i in range(n)],
        dense=dense,
        groups=(FeatureGroup("F", n_dense),) if n_dense else (),
        sparse=sparse,
        sparse_names=[f"sp_{j}" for j in range(n_sparse)],
        totals=np.full(n, np.nan),
        extras=[None] * n,
        stats=stats,
    )


def pool_bleu(pool: KBestPool, weights: np.ndarray) -> float:
    best = pool.best_indices(weights)
    return corpus_bleu_from_stats(pool.stats[best[best >= 0]])


def bad_init(pool: KBestPool) -> np.ndarray:
    init = np.zeros(len(pool.feature_names))
    init[0] = -1.0  # prefers the worst hypotheses on an informative pool
    if len(init) > 1:
        init[1] = 0.3
    return init


def degenerate_pools() -> dict[str, KBestPool]:
    pools = {}
    pools["single_sentence"] = make_pool(n_sentences=1, per_sentence=20, seed=1)
    pools["one_hyp_per_sentence"] = make_pool(n_sentences=8, per_sentence=1, seed=2)
    pool = make_pool(seed=3)
    pool.dense[:] = 0.0
    pools["all_zero_features"] = pool
    pool = make_pool(seed=4)
    pool.stats[:] = pool.stats[0]
    pools["all_equal_bleu"] = pool
    pool = make_pool(seed=5)
    for row in (0, 15, 16, 40):  # empty hypotheses: no tokens, reference length kept
        pool.stats[row, [0, *range(2, 10)]] = 0.0
    pools["empty_hypothesis"] = pool
    pools["empty_sentence"] = make_pool(n_sentences=6, per_sentence=[10, 0, 10, 0, 10, 10], seed=6)
    pool = make_pool(seed=7)
    pool.dense[:, :] = np.round(pool.dense[:, :])  # many model-score ties
    pools["ties"] = pool
    return pools


DEGENERATE = degenerate_pools()


def snapshot(pool: KBestPool) -> dict[str, object]:
    return {
        "offsets": pool.offsets.copy(),
        "dense": pool.dense.copy(),
        "sparse_data": pool.sparse.data.copy(),
        "sparse_indices": pool.sparse.indices.copy(),
        "sparse_indptr": pool.sparse.indptr.copy(),
        "stats": pool.stats.copy(),
        "texts": list(pool.texts),
        "names": list(pool.feature_names),
    }


def assert_same(before: dict[str, object], after: dict[str, object]) -> None:
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, after[key]), f"pool.{key} was modified"
        else:
            assert value == after[key], f"pool.{key} was modified"


# -- tests -----------------------------------------------------------------------------------------


def test_registry_is_not_empty():
    assert METHODS, "no tuner is registered"


@pytest.mark.parametrize("method", METHODS)
def test_deterministic(method):
    pool = make_pool(n_sparse=0, seed=11)
    init = bad_init(pool)
    first = make_tuner(method, seed=5)(pool, init).weights
    second = make_tuner(method, seed=5)(pool, init).weights
    assert first.dtype == second.dtype
    assert first.tobytes() == second.tobytes(), "same pool, init and seed must give bit-identical weights"


@pytest.mark.parametrize("case", sorted(DEGENERATE))
@pytest.mark.parametrize("method", METHODS)
def test_degenerate_pools(method, case):
    pool = DEGENERATE[case]
    init = np.linspace(0.5, 1.5, len(pool.feature_names))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make_tuner(method)(pool, init)
    runtime = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not runtime, f"numerical warning on {case}: {runtime[0].message}"
    assert result.weights.shape == init.shape
    assert np.all(np.isfinite(result.weights)), f"non-finite weights on {case}"
    warned = any("zero" in str(w.message).lower() for w in caught)
    assert np.any(result.weights) or warned, "all-zero weights without a warning"


@pytest.mark.parametrize("method", METHODS)
def test_inputs_not_modified(method):
    cls = get_tuner_class(method)
    pool = make_pool(n_sparse=20 if cls.supports_sparse else 0, seed=12)
    init = bad_init(pool)
    before, init_before = snapshot(pool), init.copy()
    make_tuner(method)(pool, init)
    assert_same(before, snapshot(pool))
    assert np.array_equal(init, init_before), "init was modified"


@pytest.mark.parametrize("method", METHODS)
def test_improves_over_bad_init(method):
    pool = make_pool(n_sentences=20, per_sentence=20, seed=13)
    init = bad_init(pool)
    result = make_tuner(method, extra=IMPROVE)(pool, init)
    before, after = pool_bleu(pool, init), pool_bleu(pool, result.weights)
    assert after > before + 0.02, f"{method}: pool BLEU {before:.4f} -> {after:.4f}"


@pytest.mark.parametrize("method", METHODS)
def test_sparse_pool(method):
    cls = get_tuner_class(method)
    pool = make_pool(n_sentences=20, per_sentence=20, n_dense=3, n_sparse=200, active=4, seed=14)
    init = bad_init(pool)
    if not cls.supports_sparse:
        with pytest.raises(InputError):
            make_tuner(method)(pool, init)
        return
    result = make_tuner(method, extra=IMPROVE)(pool, init)
    assert result.weights.shape == (3 + 200,)
    assert np.all(np.isfinite(result.weights))
    assert np.any(result.weights[3:]), f"{method} learned nothing for the sparse features"
    assert pool_bleu(pool, result.weights) > pool_bleu(pool, init)
