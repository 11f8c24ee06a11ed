"""BLEU statistics: the fast extractor against the slow reference, and corpus BLEU against sacrebleu."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import sacrebleu

from smtlib.bleu import BleuSettings, compute_stats, corpus_bleu_from_stats
from smtlib.bleu.corpus import bleu_from_stats
from tests.support.bleu_reference import random_corpus, slow_stats
from smtlib.errors import InputError


@pytest.mark.parametrize("n_refs", [1, 2, 4])
@pytest.mark.parametrize("rule", ["closest", "shortest", "average"])
def test_fast_equals_slow(n_refs, rule):
    rng = np.random.default_rng(n_refs * 10 + len(rule))
    hyps, refs = random_corpus(rng, 60, n_refs, vocab=8)
    # several hypotheses per sentence, in shuffled sentence order
    ids = rng.integers(0, 60, size=300)
    all_hyps = [hyps[i] if rng.random() < 0.5 else random_corpus(rng, 1, 1, 8)[0][0] for i in ids]
    settings = BleuSettings(ref_length=rule)
    fast = compute_stats(all_hyps, ids, refs, settings)
    slow = np.array([slow_stats(h, [r[i] for r in refs], settings) for h, i in zip(all_hyps, ids, strict=True)])
    np.testing.assert_array_equal(fast, slow)


def test_large_vocabulary_uses_per_sentence_ids():
    # > 65,535 distinct tokens overall: packed keys must still be exact.
    n_sent = 700
    refs = [[" ".join(f"t{s}_{j}" for j in range(100)) + " common words here" for s in range(n_sent)]]
    hyps = [" ".join(f"t{s}_{j}" for j in range(0, 100, 2)) + " common words" for s in range(n_sent)]
    fast = compute_stats(hyps, np.arange(n_sent), refs)
    slow = np.array([slow_stats(h, [refs[0][i]]) for i, h in enumerate(hyps)])
    np.testing.assert_array_equal(fast, slow)


def test_empty_hypotheses_and_no_matches():
    refs = [["a b c d e", "a b"]]
    stats = compute_stats(["", "x y z"], [0, 1], refs)
    np.testing.assert_array_equal(stats[0], [0, 5, 0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(stats[1], [3, 2, 0, 0, 0, 0, 3, 2, 1, 0])
    assert corpus_bleu_from_stats(stats) == 0.0


@pytest.mark.parametrize("tokenize", ["none", "13a", "intl"])
@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("n_refs", [1, 3])
def test_corpus_bleu_equals_sacrebleu_random(tokenize, lowercase, n_refs):
    rng = np.random.default_rng(7)
    hyps, refs = random_corpus(rng, 200, n_refs, vocab=30, max_len=25)
    hyps = [h.replace("w1", "W1,") for h in hyps]  # punctuation and case for the tokenizers
    stats = compute_stats(hyps, np.arange(len(hyps)), refs, BleuSettings(tokenize=tokenize, lowercase=lowercase))
    expected = sacrebleu.corpus_bleu(hyps, refs, tokenize=tokenize, lowercase=lowercase).score
    assert 100 * corpus_bleu_from_stats(stats) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("method", ["none", "floor", "add-k", "exp"])
def test_corpus_smoothing_equals_sacrebleu(method):
    rng = np.random.default_rng(3)
    hyps, refs = random_corpus(rng, 5, 1, vocab=50, max_len=6)  # few matches: smoothing matters
    stats = compute_stats(hyps, np.arange(len(hyps)), refs)
    expected = sacrebleu.corpus_bleu(hyps, refs, tokenize="none", smooth_method=method).score
    assert 100 * corpus_bleu_from_stats(stats, smooth_method=method) == pytest.approx(expected, abs=1e-9)


def test_moses_scorer_known_values():
    # Moses mert/BleuScorerTest.cpp: stats 6/6 4/5 2/4 1/3, reference length 7 -> BLEU 0.5115.
    row = np.array([6, 7, 6, 4, 2, 1, 6, 5, 4, 3], dtype=float)
    assert bleu_from_stats(row, smooth_method="none") == pytest.approx(0.5115, abs=1e-4)


def test_bad_references():
    with pytest.raises(InputError, match="segments"):
        compute_stats(["a"], [0], [["a", "b"], ["a"]])
    with pytest.raises(InputError, match="no reference"):
        compute_stats(["a", "b"], [0, 5], [["a", "b"]])


def _lines(path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()


def _perturb(lines: list[str], rng: np.random.Generator) -> list[str]:
    out = []
    for line in lines:
        tokens = line.split()
        tokens = [t for t in tokens if rng.random() > 0.15]
        if tokens and rng.random() < 0.3:
            i = rng.integers(0, len(tokens))
            tokens[i], tokens[-1] = tokens[-1], tokens[i]
        out.append(" ".join(tokens) if rng.random() > 0.02 else "")
    return out


@pytest.mark.data
@pytest.mark.parametrize("tokenize,lowercase", [("13a", False), ("13a", True), ("none", True)])
def test_corpus_bleu_equals_sacrebleu_multi30k(shared_data, tokenize, lowercase):
    rng = np.random.default_rng(0)
    refs_en = _lines(shared_data / "multi30k/raw/test_2016_flickr.en.gz")
    refs = [refs_en, _perturb(refs_en, np.random.default_rng(1)), _perturb(refs_en, np.random.default_rng(2))]
    hyps = _perturb(refs_en, rng)
    for n_refs in (1, 2, 3):
        stats = compute_stats(hyps, np.arange(len(hyps)), refs[:n_refs], BleuSettings(tokenize=tokenize, lowercase=lowercase))
        expected = sacrebleu.corpus_bleu(hyps, refs[:n_refs], tokenize=tokenize, lowercase=lowercase).score
        assert 100 * corpus_bleu_from_stats(stats) == pytest.approx(expected, abs=1e-9)


@pytest.mark.data
def test_joshua_four_references(shared_data):
    base = shared_data / "joshua-test-data/bn-en-hiero"
    refs = [_lines(base / f"reference.en.{i}.gz") for i in range(4)]
    hyps = _lines(base / "output.gold.gz")
    # output.gold is a 10-best list: take the first hypothesis of each sentence.
    firsts: dict[int, str] = {}
    for line in hyps:
        sid, text = line.split("|||")[:2]
        firsts.setdefault(int(sid), text.strip())
    ids = sorted(firsts)
    one_best = [firsts[i] for i in ids]
    ref_sets = [[r[i] for i in ids] for r in refs]
    stats = compute_stats(one_best, np.arange(len(ids)), ref_sets, BleuSettings(tokenize="13a"))
    assert 100 * corpus_bleu_from_stats(stats) == pytest.approx(sacrebleu.corpus_bleu(one_best, ref_sets).score, abs=1e-9)


@pytest.mark.data
def test_statistics_equal_moses_extractor(shared_data):
    """Our statistics of the merged n-best lists equal Moses's extractor output (mert.extractor-txt)."""
    from smtlib.kbest import read_pool

    data = shared_data / "moses-regtest-mert/mert.extractor-bin/data"
    truth = _lines(shared_data / "moses-regtest-mert/mert.extractor-txt/truth/results.txt.gz")
    truth = [line.split("=", 1)[1] for line in truth if line.startswith("STDOUT_")]
    # The last run's blocks: per sentence, its FEATURES block and its SCORES block.
    features: dict[int, list[list[float]]] = {}
    scores: dict[int, list[list[float]]] = {}
    current = None
    for line in truth:
        if line.startswith(("FEATURES_TXT_BEGIN", "SCORES_TXT_BEGIN")):
            kind, sid = line.split()[0], int(line.split()[1])
            current = (features if kind.startswith("FEATURES") else scores).setdefault(sid, [])
            current.clear()  # later runs (more candidates) overwrite earlier ones
        elif line.startswith(("FEATURES_TXT_END", "SCORES_TXT_END")):
            current = None
        elif current is not None:
            current.append([float(x) for x in line.split()])
    references = [_lines(data / "reference.gz")]
    pool = read_pool([data / f"nbest.{i}.gz" for i in range(1, 6)], n_sentences=len(references[0]))
    stats = pool.compute_stats(references)
    # Moses orders the new candidates of a later iteration differently (its de-duplication is
    # hash-based), so compare each sentence's (features, statistics) rows as sorted multisets.
    for sid in range(pool.n_sentences):
        lo, hi = pool.offsets[sid], pool.offsets[sid + 1]
        order = [2, 6, 3, 7, 4, 8, 5, 9, 1]  # m1 t1 m2 t2 m3 t3 m4 t4 ref_len, Moses's layout
        ours = np.hstack([np.round(pool.dense[lo:hi], 4), stats[lo:hi][:, order]])
        theirs = np.hstack([np.round(np.array(features[sid]), 4), np.array(scores[sid])])
        assert sorted(map(tuple, ours)) == sorted(map(tuple, theirs)), f"sentence {sid}"
