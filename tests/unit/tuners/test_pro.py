"""PRO (smtlib.tuners.pro): the sampler against a slow transcription, the classifier, Ψ, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from smtlib.bleu.variants import get_variant
from smtlib.errors import InputError
from smtlib.tuners.pro import _CHUNK, Pro, _logistic_fit, sample_pairs
from smtlib.weights import read_weights
from tests.support.tuner_fixtures import BAD, GOOD, PARTIAL, REFS, load, three_sentence_pool, write_case
from tests.support.tuner_fixtures import unsmoothed_bleu as bleu


def separable(tmp_path, sparse=False):
    """The three-sentence pool with the reference copy's F_0 = 2 in every sentence."""
    return three_sentence_pool(tmp_path, sparse=sparse, good_step=0.0)


def reference_sampler(offsets, scores, seed, gamma, xi, min_diff, moses_ties=False):
    """H&M Figure 4 with the same draws: per sentence, stable sort of accepted draws by |Δg|."""
    rng = np.random.default_rng(seed)
    sizes = np.diff(offsets)
    eligible = np.flatnonzero(sizes >= 2)
    out = []
    for start in range(0, len(eligible), _CHUNK):
        block = eligible[start : start + _CHUNK]
        highs = np.repeat(sizes[block], gamma)
        first, second = rng.integers(0, highs), rng.integers(0, highs)
        for i, s in enumerate(block):
            accepted = []
            for q in range(gamma):
                a = offsets[s] + first[i * gamma + q]
                b = offsets[s] + second[i * gamma + q]
                d = abs(scores[a] - scores[b])
                if d >= min_diff and d > 0:
                    accepted.append((-d, q, a, b))
            if moses_ties and len(accepted) > xi:  # Moses pro: threshold, then drawing order
                threshold = sorted(-item[0] for item in accepted)[::-1][xi - 1] - 1e-5
                accepted = [item for item in accepted if -item[0] >= threshold][:xi]
            else:
                accepted.sort(key=lambda item: (item[0], item[1]))
            for neg, _, a, b in accepted[:xi]:
                better, worse = (a, b) if scores[a] >= scores[b] else (b, a)
                out.append((better, worse, -neg, s))
    return out


@pytest.mark.parametrize("moses_ties", [False, True])
@pytest.mark.parametrize("gamma,xi,min_diff", [(50, 5, 0.05), (200, 50, 0.0), (30, 100, 0.2)])
def test_sampler_matches_reference(gamma, xi, min_diff, moses_ties):
    rng = np.random.default_rng(0)
    sizes = rng.integers(0, 12, 300)  # more sentences than one block, some with 0 or 1 hypothesis
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    scores = np.round(rng.uniform(0, 1, offsets[-1]), 2)  # rounded: many ties in |Δg|
    got = sample_pairs(offsets, scores, np.random.default_rng(5), gamma, xi, min_diff, moses_ties)
    expected = reference_sampler(offsets, scores, 5, gamma, xi, min_diff, moses_ties)
    assert len(got["better"]) == len(expected)
    np.testing.assert_array_equal(got["better"], [e[0] for e in expected])
    np.testing.assert_array_equal(got["worse"], [e[1] for e in expected])
    np.testing.assert_array_equal(got["diff"], [e[2] for e in expected])
    np.testing.assert_array_equal(got["sentence"], [e[3] for e in expected])
    assert np.all(np.bincount(got["sentence"], minlength=len(sizes)) <= xi)
    assert np.all(scores[got["better"]] - scores[got["worse"]] >= min_diff)


def test_classifier_reaches_the_regularised_optimum():
    """With an L2 penalty the objective has one minimum; L-BFGS given enough iterations finds it."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(80, 4))
    x[:, 0] += 0.5
    import scipy.sparse as sp

    w, _ = _logistic_fit(x, sp.csr_matrix((80, 0)), l2=1.0, max_iter=500)

    def loss(v):
        return 2.0 * np.logaddexp(0.0, -(x @ v)).sum() + 0.5 * v @ v

    best = scipy.optimize.minimize(loss, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(w, best, atol=1e-5)


def test_separable_pool_psi_one_reaches_oracle(tmp_path):
    pool = separable(tmp_path)
    init = np.array([-1.0, 0.5])
    result = Pro(seed=0, psi=1.0)(pool, init)
    assert bleu(pool, result.weights) == pytest.approx(1.0)
    assert np.abs(result.weights).sum() == pytest.approx(1.5)  # rescaled to the L1 norm of init


def test_interpolation_formula(tmp_path):
    """w = Ψ w_new + (1 - Ψ) w_old, with w_new rescaled to |w_old|_1 (same seed, same classifier)."""
    pool = separable(tmp_path)
    init = np.array([-1.0, 0.5])
    new = Pro(seed=4)(pool, init).weights  # the default, Ψ = 1 (Moses): the rescaled classifier weights
    np.testing.assert_allclose(np.abs(new).sum(), np.abs(init).sum())
    mixed = Pro(seed=4, psi=0.1)(pool, init).weights  # Hopkins & May's Ψ
    np.testing.assert_allclose(mixed, 0.1 * new + 0.9 * init)
    zero = Pro(seed=4, psi=0.1)(pool, np.zeros(2)).weights  # no previous weights: the classifier's, L1 = 1
    np.testing.assert_allclose(zero, new / np.abs(new).sum())


def test_default_psi_is_moses_no_interpolation():
    """Moses's mert-moses.pl does not interpolate unless asked; Hopkins & May's 0.1 is a setting."""
    assert Pro.defaults["psi"] == 1.0


def test_sentence_scores_are_moses_smoothed(tmp_path):
    pool = separable(tmp_path)
    np.testing.assert_array_equal(Pro().sentence_scores(pool), get_variant("moses-smoothed").score(pool.stats))
    smoothed = Pro(bp_smooth=True).sentence_scores(pool)
    np.testing.assert_array_equal(smoothed, get_variant("moses-smoothed", bp_smooth=True).score(pool.stats))


def test_sparse_features_and_samples_out(tmp_path):
    pool = separable(tmp_path, sparse=True)
    out = tmp_path / "samples.txt"
    init = np.concatenate([[-1.0, 0.5], np.zeros(len(pool.sparse_names))])
    result = Pro(seed=0, psi=1.0, samples_out=str(out))(pool, init)
    assert result.weights.shape == (len(pool.feature_names),)
    assert bleu(pool, result.weights) == pytest.approx(1.0)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * result.info["pairs"]
    for pos, neg in zip(lines[0::2], lines[1::2], strict=True):
        p, n = pos.split(), neg.split()
        assert p[0] == "1" and n[0] == "0" and p[1::2] == n[1::2]
        assert [float(v) for v in p[2::2]] == [-float(v) for v in n[2::2]]
        assert any(name.startswith("WT_") for name in p[1::2])


def test_equal_bleu_everywhere_warns_and_keeps_init(tmp_path):
    pool = load(*write_case(tmp_path, [[(GOOD[0], (0.0, 1.0)), (GOOD[0], (1.0, 0.0))], [(BAD[1], (0.0, 1.0))]], REFS[:2]))
    with pytest.warns(UserWarning, match="no pair"):
        result = Pro(seed=0)(pool, np.array([0.3, 0.2]))
    np.testing.assert_array_equal(result.weights, [0.3, 0.2])


def test_all_zero_features_warns_and_keeps_init(tmp_path):
    pool = load(*write_case(tmp_path, [[(BAD[0], (0.0, 0.0)), (GOOD[0], (0.0, 0.0))]], REFS[:1]))
    with pytest.warns(UserWarning, match="all-zero"):
        result = Pro(seed=0)(pool, np.array([0.3, 0.2]))
    np.testing.assert_array_equal(result.weights, [0.3, 0.2])


def test_empty_hypothesis_single_and_empty_sentences(tmp_path):
    sentences = [[("", (1.0, 0.0)), (GOOD[0], (0.0, 1.0))], [(PARTIAL[1], (0.5, 0.5))], []]
    pool = load(*write_case(tmp_path, sentences, REFS))
    pairs = Pro(seed=0).sample(pool)
    assert set(pairs["sentence"]) == {0}
    assert np.all(pairs["better"] == 1) and np.all(pairs["worse"] == 0)
    result = Pro(seed=0, psi=1.0)(pool, np.array([1.0, 0.0]))
    assert np.all(np.isfinite(result.weights)) and pool.best_indices(result.weights)[0] == 1


@pytest.mark.parametrize("bad", [{"gamma": 0}, {"xi": 0}, {"psi": 0.0}, {"psi": 1.5}, {"max_iter": 0}, {"l2": -1.0}])
def test_bad_parameters(tmp_path, bad):
    pool = separable(tmp_path)
    with pytest.raises(InputError):
        Pro(**bad)(pool, np.ones(2))


def test_cli(tmp_path, cli):
    kbest, ref = write_case(tmp_path, [[(BAD[i], (0.0, 2.0)), (PARTIAL[i], (1.0, 1.0)), (GOOD[i], (2.0, 0.0))] for i in range(3)], REFS)
    init = tmp_path / "init.w"
    init.write_text("F_0 -1\nF_1 0.5\n", encoding="utf-8")
    out, samples = tmp_path / "out.w", tmp_path / "samples.txt"
    proc = cli("tune", "pro", "--kbest", kbest, "--refs", ref, "--init", init, "--out", out, "--set", "psi=1", "--set", f"samples_out={samples}")
    assert proc.returncode == 0, proc.stderr
    pool = load(kbest, ref)
    assert bleu(pool, pool.weight_vector(read_weights(out))) == pytest.approx(1.0)
    assert samples.read_text(encoding="utf-8").startswith("1 F0 ")
