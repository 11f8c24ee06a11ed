"""The decoder's hashed back-off LM against KenLM, and ARPA reading errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from smtlib.decoder.lm import read_arpa
from tests.support.decoder_toy import estimate_arpa
from smtlib.errors import InputError

kenlm = pytest.importorskip("kenlm")


def _corpus(seed: int, n: int = 300, vocab: int = 15) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    sents = []
    for _ in range(n):
        w = int(rng.integers(vocab))
        sent = []
        for _ in range(int(rng.integers(1, 9))):
            sent.append(f"w{w}")
            w = (w + 1) % vocab if rng.random() < 0.5 else int(rng.integers(vocab))
        sents.append(sent)
    return sents


@pytest.mark.parametrize("order", [2, 3, 5])
def test_scores_equal_kenlm(tmp_path, order):
    arpa = tmp_path / "lm.arpa"
    arpa.write_text(estimate_arpa(_corpus(order), order), encoding="utf-8")
    ken = kenlm.Model(str(arpa))
    ours = read_arpa(arpa)
    rng = np.random.default_rng(1)
    for _ in range(200):
        # vocabulary words plus unknown ones (scored as <unk>)
        sent = [f"w{int(x)}" for x in rng.integers(0, 18, size=int(rng.integers(0, 12)))]
        expected = ken.score(" ".join(sent), bos=True, eos=True) * math.log(10)
        assert ours.score_sentence(sent) == pytest.approx(expected, abs=1e-4)


def test_unigram_model(tmp_path):
    """Order 1 (KenLM does not load it): the score is the sum of the unigram log probabilities."""
    arpa = tmp_path / "lm.arpa"
    arpa.write_text(estimate_arpa(_corpus(1), 1), encoding="utf-8")
    lm = read_arpa(arpa)
    table = {}
    for line in arpa.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 2:
            table[parts[1]] = float(parts[0]) * math.log(10)
    sent = ["w1", "w2", "zzz"]
    expected = table["w1"] + table["w2"] + table["<unk>"] + table["</s>"]
    assert lm.score_sentence(sent) == pytest.approx(expected, abs=1e-4)


def test_filtering_keeps_scores_of_kept_words(tmp_path):
    arpa = tmp_path / "lm.arpa"
    arpa.write_text(estimate_arpa(_corpus(3), 4), encoding="utf-8")
    full = read_arpa(arpa)
    keep = {f"w{i}" for i in range(0, 15, 2)}
    small = read_arpa(arpa, keep_words=keep)
    assert sum(small.n_ngrams) < sum(full.n_ngrams)
    rng = np.random.default_rng(2)
    for _ in range(100):
        sent = [f"w{2 * int(x)}" for x in rng.integers(0, 8, size=int(rng.integers(1, 10)))]
        assert small.score_sentence(sent) == pytest.approx(full.score_sentence(sent), abs=1e-9)


def test_upper_bound_holds(tmp_path):
    """max_word_prob bounds log p(w | h) for every history (the search's early-discard bound)."""
    arpa = tmp_path / "lm.arpa"
    arpa.write_text(estimate_arpa(_corpus(4), 3), encoding="utf-8")
    lm = read_arpa(arpa)
    rng = np.random.default_rng(3)
    for _ in range(300):
        sent = [f"w{int(x)}" for x in rng.integers(0, 15, size=int(rng.integers(1, 6)))]
        before = lm.score_sentence(sent[:-1], eos=False)
        after = lm.score_sentence(sent, eos=False)
        assert after - before <= lm.max_word_prob[lm.word_id(sent[-1])] + 1e-6


def test_bad_arpa(tmp_path):
    bad = tmp_path / "bad.arpa"
    bad.write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError, match="not an ARPA"):
        read_arpa(bad)
    bad.write_text("\\data\\\nngram 1=2\n\n\\1-grams:\n-1.0\ta\n\\end\\\n", encoding="utf-8")
    with pytest.raises(InputError, match="declares 2"):
        read_arpa(bad)
    bad.write_text("\\data\\\nngram 1=1\n\n\\1-grams:\nx\ta\n\\end\\\n", encoding="utf-8")
    with pytest.raises(InputError, match="malformed"):
        read_arpa(bad)
