"""Minimum risk (``mr``), plus the checks shared by every group-B tuner test file.

The ``check_*`` and ``*_pool`` helpers below are imported by the other ``test_tuner_<method>.py``
files of the group (mr, svm, cmira, softmax, perceptron, arow, linreg, xbleu); they are named so
that pytest does not collect them twice.
"""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from smtlib.bleu.corpus import corpus_bleu
from smtlib.bleu.stats import BleuSettings
from smtlib.kbest.pool import read_pool
from smtlib.tuners._losses import Features, pool_bleu, pool_from_arrays, sentence_bleu, stats_for_quality
from smtlib.tuners.mr import MinimumRisk, _sgd_epoch, risk_objective
from smtlib.tuners.registry import get_tuner_class

# -- shared pools ---------------------------------------------------------------------------------


def separable_pool(n_sentences: int = 6, per_sentence: int = 8, seed: int = 0, sparse: bool = False):
    """Feature 0 is a strictly increasing function of sentence BLEU; features 1-2 are noise.

    With ``sparse`` each hypothesis also has one of 4 indicator features; indicator 0 marks the best
    hypothesis of each sentence, so the pool is separable on the sparse block too.
    """
    rng = np.random.default_rng(seed)
    n = n_sentences * per_sentence
    quality = np.concatenate([rng.permutation(np.linspace(0.1, 0.9, per_sentence)) for _ in range(n_sentences)])
    stats = stats_for_quality(quality, length=20, ref_len=20)
    bleu = sentence_bleu(pool_from_arrays([n], np.zeros((n, 1)), stats), "bleu+1")
    dense = np.column_stack([5.0 * bleu, 0.1 * rng.standard_normal(n), 0.1 * rng.standard_normal(n)])
    matrix = None
    if sparse:
        cols = rng.integers(1, 4, size=n)
        best = np.array([s * per_sentence + int(np.argmax(quality[s * per_sentence:(s + 1) * per_sentence])) for s in range(n_sentences)])
        cols[best] = 0
        matrix = sp.csr_matrix((np.ones(n), cols, np.arange(n + 1)), shape=(n, 4))
    return pool_from_arrays(np.full(n_sentences, per_sentence), dense, stats, sparse=matrix)


def edge_pools() -> dict[str, object]:
    """Small pools with degenerate structure (issue 3, evidence 4)."""
    pools = {}
    pools["single_sentence"] = separable_pool(n_sentences=1, per_sentence=10, seed=1)
    one = separable_pool(n_sentences=5, per_sentence=1, seed=2)
    pools["one_hypothesis_each"] = one
    zero = separable_pool(seed=3)
    zero.dense[:] = 0.0
    pools["all_zero_features"] = zero
    same = separable_pool(seed=4)
    same.stats[:] = same.stats[0]
    pools["same_bleu"] = same
    empty = separable_pool(seed=5)
    empty.stats[[0, 9, 17]] = 0.0  # empty hypotheses: no tokens, no matches
    empty.stats[[0, 9, 17], 1] = 20.0  # the reference still has its length
    pools["empty_hypothesis"] = empty
    ties = separable_pool(seed=6)
    ties.dense[:, 1:] = 0.0
    ties.dense[:, 0] = np.round(ties.dense[:, 0])  # model-score ties between hypotheses of different BLEU
    pools["ties"] = ties
    sizes = np.array([4, 0, 1, 6])
    n = int(sizes.sum())
    rng = np.random.default_rng(7)
    pools["empty_and_tiny_sentences"] = pool_from_arrays(sizes, rng.standard_normal((n, 3)), stats_for_quality(rng.uniform(0.1, 0.9, n)))
    return pools


def init_for(pool) -> np.ndarray:
    init = np.zeros(len(pool.feature_names))
    init[1] = 1.0  # a noise feature: the initial 1-best is arbitrary
    if len(init) > 2:
        init[2] = -0.5
    return init


# -- shared checks --------------------------------------------------------------------------------


def check_separable(method: str, sparse: bool = False, **params) -> np.ndarray:
    """The learned weights rank the best-BLEU hypothesis first in every sentence."""
    pool = separable_pool(sparse=sparse)
    result = get_tuner_class(method)(seed=0, **params)(pool, init_for(pool))
    best = pool.best_indices(result.weights)
    bleu = sentence_bleu(pool, "bleu+1")
    for s in range(pool.n_sentences):
        lo, hi = pool.offsets[s], pool.offsets[s + 1]
        assert bleu[best[s]] == bleu[lo:hi].max(), f"{method}: sentence {s} 1-best is not the best hypothesis"
    return result.weights


def check_edge_cases(method: str, **params) -> None:
    """No NaN, no exception, no silent all-zero weights on degenerate pools."""
    for name, pool in edge_pools().items():
        init = init_for(pool)
        stats_before = pool.stats.copy()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = get_tuner_class(method)(seed=0, **params)(pool, init)
        numeric = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        assert not numeric, f"{method} on {name}: {numeric[0].message}"
        assert np.all(np.isfinite(result.weights)), f"{method} on {name}: non-finite weights"
        assert np.any(result.weights) or any("zero" in str(w.message) for w in caught), f"{method} on {name}: silent zeros"
        assert np.array_equal(stats_before, pool.stats), f"{method} modified the pool on {name}"
        json.dumps(result.info)  # info must be JSON-serialisable for --info


def check_all_zero_features_warns(method: str, **params) -> None:
    """All-zero features from an all-zero start can only give zeros: the base class must warn."""
    pool = edge_pools()["all_zero_features"]
    with pytest.warns(UserWarning, match="all-zero"):
        result = get_tuner_class(method)(seed=0, **params)(pool, np.zeros(len(pool.feature_names)))
    assert result.info.get("fallback")


def check_deterministic(method: str, **params) -> None:
    pool = separable_pool(n_sentences=8, per_sentence=12, seed=9, sparse=True)
    pool.dense[:, 0] += np.random.default_rng(1).standard_normal(pool.n_hypotheses)  # not separable: real work
    init = init_for(pool)
    first = get_tuner_class(method)(seed=3, **params)(pool, init).weights
    second = get_tuner_class(method)(seed=3, **params)(pool, init).weights
    assert first.tobytes() == second.tobytes()


def write_small_files(tmp_path):
    """A 3-sentence k-best file (with a sparse feature and an empty hypothesis), references, init."""
    refs = ["the cat sat on the mat", "a dog runs in the park", "hello world"]
    lines = [
        "0 ||| the cat sat on the mat ||| LM0= -4 TM0= -2 -1 s_a= 1 ||| 0",
        "0 ||| the cat on mat ||| LM0= -3 TM0= -1 -2 ||| 0",
        "0 ||| cat the mat sat on ||| LM0= -2 TM0= -3 -1 ||| 0",
        "1 ||| a dog runs in the park ||| LM0= -5 TM0= -2 -2 s_a= 1 ||| 0",
        "1 ||| dog park ||| LM0= -1 TM0= -1 -1 ||| 0",
        "1 |||  ||| LM0= 0 TM0= 0 0 ||| 0",
        "2 ||| hello world ||| LM0= -2 TM0= -1 -1 s_b= 1 ||| 0",
        "2 ||| hello there world ||| LM0= -1 TM0= -2 -1 ||| 0",
    ]
    kbest = tmp_path / "k.nbest"
    kbest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    init = tmp_path / "init.w"
    init.write_text("LM0_0 1\nTM0_0 0.2\nTM0_1 0.2\nunused_feature 0.5\n", encoding="utf-8")
    return kbest, ref, init


def check_cli(method: str, cli, tmp_path, extra: tuple[str, ...] = ()) -> dict[str, float]:
    kbest, ref, init = write_small_files(tmp_path)
    out = tmp_path / f"{method}.w"
    info = tmp_path / f"{method}.json"
    result = cli("tune", method, "--kbest", kbest, "--refs", ref, "--init", init, "--out", out, "--seed", "1",
                 "--info", info, *extra)
    assert result.returncode == 0, result.stderr
    weights = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, value = line.split()
            weights[name] = float(value)
    assert set(weights) >= {"LM0_0", "TM0_0", "TM0_1", "s_a", "s_b", "unused_feature"}
    assert all(np.isfinite(list(weights.values())))
    assert weights["unused_feature"] == 0.5  # features the pool lacks are written back unchanged
    data = json.loads(info.read_text(encoding="utf-8"))
    assert data["method"] == method and "pool_bleu_out" in data
    bad = cli("tune", method, "--kbest", kbest, "--refs", ref, "--init", init, "--out", tmp_path / "bad.w",
              "--set", "no_such_parameter=1")
    assert bad.returncode == 2 and "no_such_parameter" in bad.stderr
    assert not (tmp_path / "bad.w").exists()
    return weights


def real_pool_split(shared_data):
    """Moses's test_scorer_data (100 sentences x 100-best, 15 features): tune on 0-49, test on 50-99."""
    base = shared_data / "moses-mert-nbest" / "test_scorer_data"
    with gzip.open(base / "reference.txt.gz", "rt", encoding="utf-8") as fh:
        refs = [line.rstrip("\n").lower() for _, line in zip(range(100), fh, strict=False)]
    pool = read_pool(base / "nbest.out.gz", n_sentences=100)
    pool.compute_stats([refs], BleuSettings(tokenize="none", lowercase=True))
    return base, refs, pool


def check_real_data(method: str, shared_data, cli, tmp_path, **params) -> tuple[float, float, float]:
    """Tune on sentences 0-49 from an LM-only start through the CLI, rerank 50-99 with ``smtlib rerank``.

    Returns (pool BLEU before, after, held-out BLEU after); the held-out BLEU of the initial
    weights is compared too. Pool BLEU must improve.
    """
    base, refs, _ = real_pool_split(shared_data)
    with gzip.open(base / "nbest.out.gz", "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    tune_lines, test_lines = [], []
    for line in lines:
        sid = int(line.split("|||", 1)[0])
        if sid < 50:
            tune_lines.append(line)
        else:
            test_lines.append(f"{sid - 50} |||" + line.split("|||", 1)[1])
    (tmp_path / "tune.nbest").write_text("\n".join(tune_lines) + "\n", encoding="utf-8")
    (tmp_path / "test.nbest").write_text("\n".join(test_lines) + "\n", encoding="utf-8")
    (tmp_path / "tune.ref").write_text("\n".join(refs[:50]) + "\n", encoding="utf-8")
    (tmp_path / "init.w").write_text("lm_0 1\n", encoding="utf-8")
    out = tmp_path / "out.w"
    info = tmp_path / "info.json"
    sets = [x for k, v in params.items() for x in ("--set", f"{k}={v}")]
    result = cli("tune", method, "--kbest", tmp_path / "tune.nbest", "--refs", tmp_path / "tune.ref", "--init",
                 tmp_path / "init.w", "--out", out, "--lowercase", "--info", info, *sets)
    assert result.returncode == 0, result.stderr
    data = json.loads(info.read_text(encoding="utf-8"))
    held_out = {}
    for label, weights in (("init", tmp_path / "init.w"), ("out", out)):
        reranked = cli("rerank", "--kbest", tmp_path / "test.nbest", "--weights", weights)
        assert reranked.returncode == 0, reranked.stderr
        hyps = reranked.stdout.splitlines()
        held_out[label] = 100 * corpus_bleu(hyps, [refs[50:]], BleuSettings(tokenize="none", lowercase=True))
    print(f"\n{method}: tune-pool BLEU {data['pool_bleu_init']:.2f} -> {data['pool_bleu_out']:.2f}; "
          f"held-out BLEU {held_out['init']:.2f} -> {held_out['out']:.2f}")
    assert data["pool_bleu_out"] > data["pool_bleu_init"] + 1.0, data
    return data["pool_bleu_init"], data["pool_bleu_out"], held_out["out"]


# -- mr ---------------------------------------------------------------------------------------------


def test_gradient_matches_finite_differences():
    pool = separable_pool(sparse=True, seed=11)
    feats = Features(pool)
    cost = -sentence_bleu(pool, "bleu+1")
    w = np.random.default_rng(0).standard_normal(feats.dim)
    value, grad = risk_objective(feats, pool.offsets, cost, w, 3.0)
    numeric = np.zeros_like(w)
    for j in range(len(w)):
        step = np.zeros_like(w)
        step[j] = 1e-6
        numeric[j] = (risk_objective(feats, pool.offsets, cost, w + step, 3.0)[0] - risk_objective(feats, pool.offsets, cost, w - step, 3.0)[0]) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_sgd_step_is_the_regularised_gradient_step():
    """One step on one sentence: w <- w - η (λ_B w + ∇ℓ_i), η = η0 / (1 + η0 λ_B t)."""
    pool = separable_pool(n_sentences=1, sparse=True, seed=12)
    feats = Features(pool)
    dense, indptr, indices, data = feats.arrays()
    cost = -sentence_bleu(pool, "bleu+1")
    w = np.random.default_rng(1).standard_normal(feats.dim)
    eta0, lam_b, t = 0.3, 0.05, 4.0
    v = w.copy()
    a, t_after = _sgd_epoch(dense, indptr, indices, data, pool.offsets, cost, np.array([0]), v, 1.0, eta0, lam_b, t)
    eta = eta0 / (1 + eta0 * lam_b * t)
    grad = risk_objective(feats, pool.offsets, cost, w, 0.0)[1]
    np.testing.assert_allclose(a * v, w - eta * (lam_b * w + grad), rtol=1e-12, atol=1e-12)
    assert t_after == t + 1


def test_lambda_is_divided_by_the_number_of_sentences():
    """Cherry & Foster's λ multiplies ||w||²/2 once for the whole sum over sentences."""
    pool = separable_pool(n_sentences=4, seed=13)
    tuner = MinimumRisk(seed=0, restarts=1, max_epochs=1, eta0=0.05)
    result = tuner(pool, init_for(pool))
    feats = Features(pool)
    cost = -sentence_bleu(pool, "bleu+1")
    # replaying the epoch by hand with λ_B = 50 / 4 gives the same weights
    order = np.random.default_rng(0).permutation(np.arange(4))
    w = init_for(pool)
    for step, s in enumerate(order):
        eta = 0.05 / (1 + 0.05 * 12.5 * step)
        sub = pool_from_arrays([pool.sizes()[s]], pool.dense[pool.offsets[s]:pool.offsets[s + 1]], pool.stats[pool.offsets[s]:pool.offsets[s + 1]])
        grad = risk_objective(Features(sub), sub.offsets, cost[pool.offsets[s]:pool.offsets[s + 1]], w, 0.0)[1]
        w = w - eta * (12.5 * w + grad)
    assert result.info["runs"][0]["eta0"] == 0.05
    # the epoch improved the objective, so it is the one returned
    assert risk_objective(feats, pool.offsets, cost, w, 50.0)[0] < risk_objective(feats, pool.offsets, cost, init_for(pool), 50.0)[0]
    np.testing.assert_allclose(result.weights, w, rtol=1e-9, atol=1e-12)


def test_objective_decreases_and_separable():
    pool = separable_pool()
    init = init_for(pool)
    result = MinimumRisk(seed=0)(pool, init)
    assert result.info["objective"] < result.info["objective_init"]
    assert len(result.info["runs"]) == 5
    check_separable("mr")
    check_separable("mr", sparse=True)


def test_edge_cases():
    check_edge_cases("mr")
    check_all_zero_features_warns("mr")


def test_deterministic():
    check_deterministic("mr")


def test_cli(cli, tmp_path):
    check_cli("mr", cli, tmp_path, ("--set", "restarts=2"))


@pytest.mark.data
def test_real_pool(shared_data, cli, tmp_path):
    check_real_data("mr", shared_data, cli, tmp_path)
