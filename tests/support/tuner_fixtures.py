"""Pools, starting weights and files shared by the tuner tests (``tests/unit/tuners/``).

One home for every test pool, so the per-method test files hold only what is particular to their
method and ``tests/unit/tuners/test_common.py`` the properties every registered tuner must have.

* Text pools (:func:`write_case`, :func:`load`, :func:`three_sentence_pool`): real k-best lines and
  references through the reader and the BLEU statistics, for known answers (a reference copy,
  a partial and a scrambled hypothesis per sentence).
* Array pools (:func:`pool_from_arrays`, :func:`stats_for_quality`, :func:`random_pool`,
  :func:`separable_pool`): generated features and consistent BLEU statistics (matches <= n-gram
  counts <= hypothesis length), with a known best hypothesis per sentence where it matters.
* :func:`degenerate_pools`: the structures every tuner must survive (issue 3, evidence 4).
* :func:`write_small_files` and :func:`scorer_data_files`: files for the command line, small and
  real (Moses's ``test_scorer_data``).
"""

from __future__ import annotations

import gzip

import numpy as np
import scipy.sparse as sp

from smtlib.bleu.corpus import corpus_bleu_from_stats
from smtlib.bleu.references import read_references
from smtlib.bleu.stats import HYP_LEN, MATCHES, NGRAM_ORDER, REF_LEN, STATS_WIDTH, TOTALS, BleuSettings
from smtlib.bleu.variants import get_variant
from smtlib.kbest.format import FeatureGroup
from smtlib.kbest.pool import KBestPool, read_pool

# -- text pools -------------------------------------------------------------------------------------

REFS = ["the cat sat on the mat today", "a dog ran in the big park", "we like green tea very much"]
GOOD = REFS
PARTIAL = ["the cat sat on a mat", "a dog ran in a park", "we like tea very much"]
BAD = ["mat the on today cat", "park big the dog", "much very tea green"]


def _shared_sparse(i: int, j: int) -> str:
    return f"WT_{j}"


def per_sentence_sparse(i: int, j: int) -> str:
    """Sparse names for :func:`write_case` that differ by sentence: ``WT_i_(j mod 2)``."""
    return f"WT_{i}_{j % 2}"


def write_case(tmp_path, sentences, refs, sparse=False):
    """A k-best file (features ``F= ...``) and a reference file.

    ``sentences`` = [[(text, features), ...], ...]; with ``sparse`` the j-th hypothesis of sentence
    i also has a sparse feature = 1: ``WT_j``, or ``sparse(i, j)`` when ``sparse`` is a function
    (e.g. :func:`per_sentence_sparse`).
    """
    name = sparse if callable(sparse) else _shared_sparse
    lines = []
    for i, hyps in enumerate(sentences):
        for j, (text, feats) in enumerate(hyps):
            extra = f" {name(i, j)}= 1" if sparse else ""
            lines.append(f"{i} ||| {text} ||| F= {' '.join(repr(float(v)) for v in feats)}{extra} ||| 0")
    kbest = tmp_path / "kbest.txt"
    kbest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    return kbest, ref


def load(kbest, ref) -> KBestPool:
    """The pool of a k-best file with its BLEU statistics (sacrebleu's default settings)."""
    refs = read_references([ref])
    pool = read_pool([kbest], n_sentences=len(refs[0]))
    pool.compute_stats(refs, BleuSettings())
    return pool


def three_sentences(good_step: float = 0.1):
    """Per sentence the scrambled, the partial and the reference hypothesis; F_0 ranks them right.

    The reference copy's F_0 grows by ``good_step`` per sentence so that no two sentences tie.
    """
    return [[(BAD[i], (0.0, 2.0)), (PARTIAL[i], (1.0, 1.0)), (GOOD[i], (2.0 + good_step * i, 0.0))] for i in range(3)]


def three_sentence_pool(tmp_path, sparse=False, good_step: float = 0.1) -> KBestPool:
    """:func:`three_sentences` read back as a pool; a separable one (F_0 alone ranks it right)."""
    return load(*write_case(tmp_path, three_sentences(good_step), REFS, sparse=sparse))


def unsmoothed_bleu(pool: KBestPool, weights: np.ndarray) -> float:
    """Corpus BLEU (0-1, no smoothing, as MERT optimises) of the pool's 1-best under ``weights``."""
    best = pool.best_indices(weights)
    return corpus_bleu_from_stats(pool.stats[best[best >= 0]], smooth_method="none")


def pool_bleu(pool: KBestPool, weights: np.ndarray) -> float:
    """Corpus BLEU (0-1, sacrebleu's default smoothing, as ``smtlib tune`` reports) of the 1-best."""
    best = pool.best_indices(weights)
    return corpus_bleu_from_stats(pool.stats[best[best >= 0]])


# -- array pools ------------------------------------------------------------------------------------


def pool_from_arrays(
    sizes,
    dense: np.ndarray,
    stats: np.ndarray,
    sparse: sp.spmatrix | None = None,
    texts: list[str] | None = None,
    dense_label: str = "F",
    sparse_names: list[str] | None = None,
) -> KBestPool:
    """A :class:`KBestPool` from arrays: ``sizes[s]`` hypotheses for sentence ``s`` (0 allowed).

    ``dense`` is ``(N, D)`` (one feature group ``dense_label`` with D values), ``stats`` the
    ``(N, 10)`` BLEU statistics, ``sparse`` an optional ``(N, F)`` matrix.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    dense = np.asarray(dense, dtype=np.float64)
    n = int(sizes.sum())
    if dense.ndim != 2 or dense.shape[0] != n:
        raise ValueError(f"dense must have {n} rows, got shape {dense.shape}")
    stats = np.asarray(stats, dtype=np.float64)
    if stats.shape != (n, STATS_WIDTH):
        raise ValueError(f"stats must have shape ({n}, {STATS_WIDTH}), got {stats.shape}")
    sparse = sp.csr_matrix((n, 0), dtype=np.float64) if sparse is None else sp.csr_matrix(sparse, dtype=np.float64)
    names = sparse_names if sparse_names is not None else [f"s{j}" for j in range(sparse.shape[1])]
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return KBestPool(
        offsets=offsets,
        texts=texts if texts is not None else [f"h{i}" for i in range(n)],
        dense=dense,
        groups=(FeatureGroup(dense_label, dense.shape[1]),) if dense.shape[1] else (),
        sparse=sparse,
        sparse_names=list(names),
        totals=np.full(n, np.nan),
        extras=[None] * n,
        stats=stats,
    )


def stats_for_quality(quality: np.ndarray, length: np.ndarray | int = 20, ref_len: np.ndarray | int = 20) -> np.ndarray:
    """BLEU statistics rows whose n-gram precisions all equal ``quality`` (in [0, 1]).

    Lengths are hypothesis and reference token counts; matches are ``round(quality * totals)``,
    so sentence BLEU is monotone in ``quality``.
    """
    quality = np.asarray(quality, dtype=np.float64)
    n = len(quality)
    length = np.broadcast_to(np.asarray(length, dtype=np.float64), (n,))
    stats = np.zeros((n, STATS_WIDTH))
    stats[:, HYP_LEN] = length
    stats[:, REF_LEN] = np.broadcast_to(np.asarray(ref_len, dtype=np.float64), (n,))
    totals = np.maximum(length[:, None] - np.arange(NGRAM_ORDER)[None, :], 0.0)
    stats[:, TOTALS] = totals
    stats[:, MATCHES] = np.round(quality[:, None] * totals)
    return stats


def random_stats(rng: np.random.Generator, ref_len: np.ndarray, quality: np.ndarray) -> np.ndarray:
    """Random consistent statistics: length around the reference's, matches <= totals, m_n <= m_{n-1}."""
    n = len(ref_len)
    hyp_len = np.maximum(1, np.round(ref_len * rng.normal(1.0, 0.15, size=n)))
    stats = np.zeros((n, STATS_WIDTH))
    stats[:, HYP_LEN] = hyp_len
    stats[:, REF_LEN] = ref_len
    precision = 1.0 / (1.0 + np.exp(-quality))
    previous = hyp_len.copy()
    for order in range(NGRAM_ORDER):
        totals = np.maximum(hyp_len - order, 0)
        matches = rng.binomial(np.minimum(previous, totals).astype(np.int64), precision * (0.8 if order else 1.0))
        stats[:, MATCHES.start + order] = matches
        stats[:, TOTALS.start + order] = totals
        previous = matches
    return stats


def random_pool(
    n_sentences: int = 12,
    per_sentence=15,
    n_dense: int = 5,
    n_sparse: int = 0,
    active: int = 3,
    seed: int = 0,
    informative: bool = True,
) -> KBestPool:
    """A generated pool; with ``informative`` feature 0 (and the sparse ones) correlate with sentence BLEU."""
    rng = np.random.default_rng(seed)
    sizes = np.full(n_sentences, per_sentence) if np.isscalar(per_sentence) else np.asarray(per_sentence)
    n = int(np.sum(sizes))
    quality = rng.normal(0.0, 1.0, size=n)
    ref_len = np.repeat(rng.integers(8, 30, size=n_sentences), sizes).astype(float)
    stats = random_stats(rng, ref_len, quality)
    dense = rng.normal(0.0, 1.0, size=(n, n_dense))
    if informative and n_dense:
        dense[:, 0] = get_variant("bleu+1").score(stats) * 10 + rng.normal(0.0, 0.3, size=n)
    sparse = None
    if n_sparse:
        cols = np.stack([rng.choice(n_sparse, size=active, replace=False) for _ in range(n)])
        vals = np.ones((n, active))
        if informative:
            # sparse feature j rewards the hypotheses whose quality is above average when j is even
            vals = np.where(cols % 2 == 0, 1.0, -1.0) * np.sign(quality)[:, None]
        sparse = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * active + 1, active)), shape=(n, n_sparse))
        sparse.sort_indices()
    texts = [f"hyp {i}" for i in range(n)]
    return pool_from_arrays(sizes, dense, stats, sparse=sparse, texts=texts, sparse_names=[f"sp_{j}" for j in range(n_sparse)])


def separable_pool(n_sentences: int = 6, per_sentence: int = 8, seed: int = 0, sparse: bool = False) -> KBestPool:
    """Feature 0 is a strictly increasing function of sentence BLEU; features 1-2 are noise.

    With ``sparse`` each hypothesis also has one of 4 indicator features; indicator 0 marks the best
    hypothesis of each sentence, so the pool is separable on the sparse block too.
    """
    rng = np.random.default_rng(seed)
    n = n_sentences * per_sentence
    quality = np.concatenate([rng.permutation(np.linspace(0.1, 0.9, per_sentence)) for _ in range(n_sentences)])
    stats = stats_for_quality(quality, length=20, ref_len=20)
    bleu = get_variant("bleu+1").score(stats)
    dense = np.column_stack([5.0 * bleu, 0.1 * rng.standard_normal(n), 0.1 * rng.standard_normal(n)])
    matrix = None
    if sparse:
        cols = rng.integers(1, 4, size=n)
        best = np.array([s * per_sentence + int(np.argmax(quality[s * per_sentence : (s + 1) * per_sentence])) for s in range(n_sentences)])
        cols[best] = 0
        matrix = sp.csr_matrix((np.ones(n), cols, np.arange(n + 1)), shape=(n, 4))
    return pool_from_arrays(np.full(n_sentences, per_sentence), dense, stats, sparse=matrix)


def noisy_separable_pool(seed: int, noise_seed: int, **kwargs) -> KBestPool:
    """:func:`separable_pool` with standard normal noise on feature 0: not separable, real work."""
    pool = separable_pool(seed=seed, **kwargs)
    pool.dense[:, 0] += np.random.default_rng(noise_seed).standard_normal(pool.n_hypotheses)
    return pool


def init_for(pool: KBestPool) -> np.ndarray:
    """A start on noise features (1, -0.5 on features 1 and 2): the initial 1-best is arbitrary."""
    init = np.zeros(len(pool.feature_names))
    init[1] = 1.0
    if len(init) > 2:
        init[2] = -0.5
    return init


def bad_init(pool: KBestPool) -> np.ndarray:
    """A start that prefers the worst hypotheses of an informative pool (feature 0 weighted -1)."""
    init = np.zeros(len(pool.feature_names))
    init[0] = -1.0
    if len(init) > 1:
        init[1] = 0.3
    return init


def degenerate_pools() -> dict[str, KBestPool]:
    """Small pools with degenerate structure (issue 3, evidence 4), keyed by what is degenerate."""
    pools = {}
    pools["single_sentence"] = separable_pool(n_sentences=1, per_sentence=10, seed=1)
    pools["one_hypothesis_each"] = separable_pool(n_sentences=5, per_sentence=1, seed=2)
    zero = separable_pool(seed=3)
    zero.dense[:] = 0.0
    pools["all_zero_features"] = zero
    same = separable_pool(seed=4)
    same.stats[:] = same.stats[0]
    pools["same_bleu"] = same
    empty = separable_pool(seed=5)
    empty.stats[[0, 9, 17]] = 0.0  # empty hypotheses: no tokens, no matches
    empty.stats[[0, 9, 17], REF_LEN] = 20.0  # the reference still has its length
    pools["empty_hypothesis"] = empty
    ties = separable_pool(seed=6)
    ties.dense[:, 1:] = 0.0
    ties.dense[:, 0] = np.round(ties.dense[:, 0])  # model-score ties between hypotheses of different BLEU
    pools["ties"] = ties
    sizes = np.array([4, 0, 1, 6])
    rng = np.random.default_rng(7)
    n = int(sizes.sum())
    pools["empty_and_tiny_sentences"] = pool_from_arrays(sizes, rng.standard_normal((n, 3)), stats_for_quality(rng.uniform(0.1, 0.9, n)))
    return pools


def snapshot(pool: KBestPool) -> dict[str, object]:
    """Copies of everything a tuner could modify in a pool (see :func:`assert_same`)."""
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


# -- files for the command line ---------------------------------------------------------------------


def write_small_files(tmp_path, sparse: bool = True):
    """A 3-sentence k-best file (an empty hypothesis; sparse features s_a, s_b unless ``sparse`` is
    false), references and initial weights (with a sparse feature the pool lacks, when it has sparse
    features: a pool without them accepts only its dense names, issue 28)."""
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
    if not sparse:
        lines = [line.replace(" s_a= 1", "").replace(" s_b= 1", "") for line in lines]
    kbest = tmp_path / "k.nbest"
    kbest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    init = tmp_path / "init.w"
    init.write_text("LM0_0 1\nTM0_0 0.2\nTM0_1 0.2\n" + ("unused_feature 0.5\n" if sparse else ""), encoding="utf-8")
    return kbest, ref, init


def scorer_data(shared_data):
    """Moses's ``test_scorer_data``: its directory, the 100 lowercased references and the pool."""
    base = shared_data / "moses-mert-nbest" / "test_scorer_data"
    with gzip.open(base / "reference.txt.gz", "rt", encoding="utf-8") as fh:
        refs = [line.rstrip("\n").lower() for _, line in zip(range(100), fh, strict=False)]
    pool = read_pool(base / "nbest.out.gz", n_sentences=100)
    pool.compute_stats([refs], BleuSettings(tokenize="none", lowercase=True))
    return base, refs, pool


def scorer_data_files(shared_data, tmp_path):
    """``test_scorer_data`` split for the command line: sentences 0-49 to tune, 50-99 held out.

    Writes ``tune.nbest``, ``test.nbest`` (ids renumbered from 0), ``tune.ref`` and an LM-only
    ``init.w`` into ``tmp_path``; returns the 100 references.
    """
    base, refs, _ = scorer_data(shared_data)
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
    return refs
