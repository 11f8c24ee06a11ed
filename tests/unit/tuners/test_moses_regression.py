"""Group-A tuners against Moses's own regression data (skipped without ../shared/data).

* ``moses-regtest-mert/mert.basic``: Moses ``mert -d 14 -n 20`` (coordinate directions, 20 random
  restarts besides the starting point) on the FEATSTAT/SCORESTAT of 10 sentences x 100-best reaches
  corpus BLEU 0.304339 from ``INIT``; our ``mert`` with its defaults (the same settings) must reach
  it too. Its optimum lies where the word-penalty weight dominates (-1001 against weights below 1):
  Moses gets there by stepping 1000 past the first breakpoint into an unbounded best interval;
  stepping only as far as the neighbouring interval is wide stops at 0.304121, which the second
  test shows. The same pool is rebuilt from the n-best list it came from to check features and
  statistics.
* ``moses-mert-nbest/regression/mert-moses-new-aggregate``: ``truth/results.dat.gz`` records, per
  iteration i of ``mert-moses.pl``, the weights ``weights_i`` and ``best_i``, the unsmoothed corpus
  BLEU (case-sensitive, closest reference length, 3 references) that ``mert`` reached on the pool
  aggregated over the n-best lists of iterations 1..i. Each iteration is re-run as Moses ran it: the
  same pool_i and the same starting point (Moses's weights_{i-1}; the moses.ini weights for i = 1),
  compared with Moses's weights_i scored on our pool_i (equal to best_i wherever Moses's pool equals
  ours).
* ``moses-regtest-mert/mert.pro`` and ``mert.pro-bp-smooth``: Moses ``pro``'s sampled pairs. Every
  Moses pair is located in the pool (which sentence and hypotheses it is); per-sentence counts must
  equal ours; the BLEU differentials must agree in distribution (a two-sample Kolmogorov-Smirnov
  distance, calibrated at the level of whole sampler runs against 100 runs of ours with Moses's tie
  rule for the Ξ largest, ``moses_ties``) and the mean feature differences must be typical of our
  runs.
"""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats

from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.references import read_references
from smtlib.bleu.stats import BleuSettings
from smtlib.kbest.format import FeatureGroup
from smtlib.kbest.pool import KBestPool, read_pool
from smtlib.tuners.mert import Mert
from smtlib.tuners.pro import Pro

pytestmark = pytest.mark.data

MOSES_BASIC_BLEU = 0.304339  # mert.basic/truth/results.txt.gz, printed with 6 decimals
HALF_ULP = 5e-7  # half a unit of the 6th decimal


def _blocks(path, begin, end):
    """Rows between ``begin``/``end`` marker lines of a Moses FEATSTAT/SCORESTAT text file."""
    header, blocks, current = None, [], None
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(begin):
                header, current = line.split(), []
            elif line.startswith(end):
                blocks.append(np.array(current, dtype=np.float64).reshape(len(current), -1))
                current = None
            else:
                current.append([float(v) for v in line.split()])
    return header, blocks


def moses_stats_to_rows(scores: np.ndarray) -> np.ndarray:
    """Moses BLEU statistics ``m1 t1 m2 t2 m3 t3 m4 t4 ref`` -> our row layout."""
    rows = np.zeros((len(scores), 10))
    rows[:, 0] = scores[:, 1]
    rows[:, 1] = scores[:, 8]
    rows[:, 2:6] = scores[:, [0, 2, 4, 6]]
    rows[:, 6:10] = scores[:, [1, 3, 5, 7]]
    return rows


def featstat_pool(data_dir) -> KBestPool:
    """A pool straight from Moses's FEATSTAT.txt.gz / SCORESTAT.txt.gz."""
    header, features = _blocks(data_dir / "FEATSTAT.txt.gz", "FEATURES_TXT_BEGIN", "FEATURES_TXT_END")
    _, scores = _blocks(data_dir / "SCORESTAT.txt.gz", "SCORES_TXT_BEGIN", "SCORES_TXT_END")
    names = header[4:]
    dense = np.vstack(features)
    n = len(dense)
    pool = KBestPool(
        offsets=np.concatenate([[0], np.cumsum([len(b) for b in features])]).astype(np.int64),
        texts=[""] * n, dense=dense, groups=tuple(FeatureGroup(name.rsplit("_", 1)[0], 1, ":") for name in names),
        sparse=sp.csr_matrix((n, 0)), sparse_names=[], totals=np.full(n, np.nan), extras=[None] * n,
    )  # fmt: skip
    pool.stats = moses_stats_to_rows(np.vstack(scores))
    return pool


def plain_bleu(pool, weights) -> float:
    best = pool.best_indices(weights)
    return corpus_bleu_from_stats(pool.stats[best[best >= 0]], smooth_method="none")


def first_line_vector(path) -> np.ndarray:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return np.array([float(v) for v in fh.readline().split()])


# -- mert.basic -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def basic(shared_data):
    root = shared_data / "moses-regtest-mert" / "mert.basic"
    return root, featstat_pool(root / "data")


def test_mert_basic_reaches_moses(basic):
    """Moses's settings are our defaults; every seed reaches Moses's recorded optimum."""
    root, pool = basic
    init = first_line_vector(root / "data" / "INIT.gz")  # line 1 of INIT: the starting point
    moses_weights = first_line_vector(root / "weights.txt.gz")
    assert plain_bleu(pool, moses_weights) == pytest.approx(MOSES_BASIC_BLEU, abs=HALF_ULP)  # layouts agree
    for seed in range(5):
        result = Mert(seed=seed)(pool, init)
        assert plain_bleu(pool, result.weights) >= MOSES_BASIC_BLEU - HALF_ULP, seed
        assert result.info["objective"] == pytest.approx(plain_bleu(pool, result.weights))
        assert np.abs(result.weights).sum() == pytest.approx(1.0)
        assert len(result.info["restarts"]) == 21  # the starting point and 20 random restarts


def test_mert_basic_needs_the_far_unbounded_step(basic):
    """The cause of the former 0.304121: a short step into an unbounded best interval.

    Moses's optimum has a word-penalty weight 1,000 times the others. With the sequential sweep
    (every improving step taken at once), stepping only half the neighbouring interval's width
    beyond the last breakpoint (``unbounded_step=neighbour``, our former rule) never gets there;
    Moses's far step (``x_1 - 1000``) does from every seed. (Moses's one-step-per-round sweep,
    ``sweep=best``, reaches it with either rule from most seeds.)
    """
    root, pool = basic
    init = first_line_vector(root / "data" / "INIT.gz")
    for seed in range(5):
        near = Mert(seed=seed, sweep="sequential", unbounded_step="neighbour")(pool, init)
        far = Mert(seed=seed, sweep="sequential", unbounded_step="moses")(pool, init)
        assert plain_bleu(pool, near.weights) < MOSES_BASIC_BLEU - HALF_ULP
        assert plain_bleu(pool, far.weights) >= MOSES_BASIC_BLEU - HALF_ULP


def test_mert_basic_pool_from_nbest(basic, shared_data):
    """nbest.1 + reference through our reader and BLEU statistics = Moses's FEATSTAT/SCORESTAT."""
    _, moses = basic
    data = shared_data / "moses-regtest-mert" / "mert.extractor-bin" / "data"
    refs = read_references([data / "reference.gz"])
    pool = read_pool([data / "nbest.1.gz"], n_sentences=len(refs[0]))
    pool.compute_stats(refs, BleuSettings(tokenize="none"))
    np.testing.assert_array_equal(pool.offsets, moses.offsets)
    np.testing.assert_allclose(pool.dense, moses.dense, rtol=1e-5, atol=1e-5)  # FEATSTAT has 6 digits
    np.testing.assert_array_equal(pool.stats, moses.stats)


# -- mert-moses-new-aggregate ---------------------------------------------------------------------
def read_truth(path):
    text = gzip.open(path, "rt", encoding="utf-8").read()
    weights = {int(m[1]): np.array([float(x) for x in m[2].split()]) for m in re.finditer(r"weights_(\d+): (.*)", text)}
    best = {int(m[1]): float(m[2]) for m in re.finditer(r"best_(\d+):\s+(\S+)", text)}
    return weights, best


@pytest.mark.slow
def test_mert_on_aggregate_regression_from_moses_starting_points(shared_data):
    """Every iteration of Moses's tuning run, re-run from Moses's starting point on the same pool.

    MERT's random restarts make each iteration's optimum a draw, for Moses as for us, on pools of
    5 sentences with many local optima. What is checked: with Moses's settings (our defaults) and
    Moses's starting points, our optimum is at least Moses's on average over the 14 iterations and
    in at least half of them. Not checked: any single iteration (either search can land in a
    better local optimum; measured per iteration in the issue-12 note).
    """
    root = shared_data / "moses-mert-nbest" / "regression" / "mert-moses-new-aggregate"
    moses_weights, moses_best = read_truth(root / "truth" / "results.dat.gz")
    refs = read_references([root / f"reference.{k}.gz" for k in range(3)])
    # moses.ini's initial weights in n-best order d(7) lm w tm(5)
    start = np.array([0.4] + [0.15] * 6 + [0.5, -1.0] + [0.2] * 5)
    differences = []
    for i in sorted(moses_best):
        pool = read_pool([root / "data" / f"run{k}.NBEST.out.gz" for k in range(1, i + 1)], n_sentences=len(refs[0]))
        pool.compute_stats(refs, BleuSettings(tokenize="none", ref_length="closest"))
        assert pool.feature_names[7:9] == ["lm_0", "w_0"]
        moses_here = plain_bleu(pool, moses_weights[i])
        if i <= 6:  # our pools equal Moses's here: its weights reproduce its recorded BLEU exactly
            assert moses_here == pytest.approx(moses_best[i], abs=HALF_ULP)
        init = start if i == 1 else moses_weights[i - 1]
        differences.append(Mert(seed=i)(pool, init).info["objective"] - moses_here)
    differences = np.array(differences)
    assert differences.mean() >= 0.0, differences
    assert np.sum(differences >= -HALF_ULP) >= len(differences) / 2, differences


# -- PRO samples ----------------------------------------------------------------------------------
def read_moses_samples(path, n_features):
    """The ``1 F<i> v ...`` lines of Moses pro's output: difference vectors better - worse."""
    vectors = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("STDOUT_"):
                continue
            tokens = line.split("=", 1)[1].split()
            if tokens[0] != "1":
                continue
            vec = np.zeros(n_features)
            for name, value in zip(tokens[1::2], tokens[2::2], strict=True):
                vec[int(name[1:])] = float(value)
            vectors.append(vec)
    return np.array(vectors)


def locate(pool, vectors):
    """(sentence, better row, worse row) of every Moses difference vector (6 printed digits)."""
    pair_diffs = []
    for s in range(pool.n_sentences):
        rows = np.arange(pool.offsets[s], pool.offsets[s + 1])
        diffs = (pool.dense[rows][:, None, :] - pool.dense[rows][None, :, :]).reshape(-1, pool.dense.shape[1])
        pair_diffs.append((rows, diffs))
    found = []
    for vec in vectors:
        tol = 1e-4 * np.maximum(1.0, np.abs(vec))
        hits = []
        for s, (rows, diffs) in enumerate(pair_diffs):
            key = np.flatnonzero(np.abs(diffs[:, 7] - vec[7]) <= tol[7])  # lm_0 first: cheap filter
            ok = key[np.all(np.abs(diffs[key] - vec) <= tol, axis=1)]
            hits += [(s, rows[j // len(rows)], rows[j % len(rows)]) for j in ok[:1]]
        assert hits, "a Moses sample matches no hypothesis pair of the pool"
        found.append(hits[0])
    return np.array(found, dtype=np.int64)


def run_level_pvalue(moses: np.ndarray, runs: list[np.ndarray]) -> float:
    """Monte-Carlo two-sample test at the level of whole sampler runs.

    The pairs of one run are not independent (the Ξ largest of Γ draws with replacement, often the
    same extreme pair several times), so a plain KS p-value is far too small. Instead the KS
    distance of Moses's run to the union of our runs is compared with the distances of each of
    our runs to the union of the others: p = (1 + #{D_k >= D_moses}) / (1 + K).
    """
    d_moses = scipy.stats.ks_2samp(moses, np.concatenate(runs)).statistic
    d_runs = [scipy.stats.ks_2samp(run, np.concatenate(runs[:k] + runs[k + 1 :])).statistic for k, run in enumerate(runs)]
    return (1 + sum(d >= d_moses for d in d_runs)) / (1 + len(runs))


@pytest.mark.parametrize("case,bp_smooth", [("mert.pro", False), ("mert.pro-bp-smooth", True)])
def test_pro_samples_agree_with_moses(basic, shared_data, case, bp_smooth):
    _, pool = basic  # Moses's mert.pro data is mert.basic's FEATSTAT/SCORESTAT (SOURCE.md)
    vectors = read_moses_samples(shared_data / "moses-regtest-mert" / case / "truth" / "results.txt.gz", pool.dense.shape[1])
    where = locate(pool, vectors)
    tuner = Pro(bp_smooth=bp_smooth)
    scores = tuner.sentence_scores(pool)
    moses_diff = scores[where[:, 1]] - scores[where[:, 2]]
    assert np.all(moses_diff >= 0.05 - 1e-6)  # Moses's pairs pass the same α step
    moses_counts = np.bincount(where[:, 0], minlength=pool.n_sentences)
    # moses_ties: Moses keeps the first Ξ draws within 1e-5 of the Ξ-th largest differential
    ours = [Pro(seed=seed, bp_smooth=bp_smooth, moses_ties=True).sample(pool) for seed in range(100)]
    for pairs in ours:  # Ξ = 50 wherever there are enough pairs; 0 where none reaches 0.05
        np.testing.assert_array_equal(np.bincount(pairs["sentence"], minlength=pool.n_sentences), moses_counts)
    assert run_level_pvalue(moses_diff, [p["diff"] for p in ours]) > 0.01
    # feature differences: Moses's mean difference per feature lies within 3 standard deviations
    # of our runs' means (measured |z| <= 1.4). The run-level KS distance of some discrete features
    # (tm_4: 0.09 against at most 0.07 between our runs) is larger than between our own runs: Moses
    # repeats a drawn pair less often in some sentences, a trace of its different generator.
    run_means = np.array([(pool.dense[p["better"]] - pool.dense[p["worse"]]).mean(axis=0) for p in ours])
    spread = np.maximum(run_means.std(axis=0), 1e-9)
    z = (vectors.mean(axis=0) - run_means.mean(axis=0)) / spread
    assert np.all(np.abs(z[spread > 1e-6]) < 3.0), z
