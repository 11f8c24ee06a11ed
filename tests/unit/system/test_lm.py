"""The modified Kneser-Ney LM: sums to one, equals a slow reference written from Chen & Goodman's
formulas, and its ARPA file reads back in kenlm with the same perplexity."""

from __future__ import annotations

import collections
import gzip
import math

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.system.lm import BOS, EOS, UNK, NGramLM, kenlm_perplexity


def _corpus(seed: int = 3, n: int = 400, vocab: int = 150) -> list[str]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab + 1)
    weights /= weights.sum()
    return [" ".join(f"w{k}" for k in rng.choice(vocab, size=int(rng.integers(1, 9)), p=weights)) for _ in range(n)]


class ReferenceMKN:
    """Interpolated modified Kneser-Ney with dictionaries, straight from the formulas."""

    def __init__(self, sentences, order):
        self.order = order
        raw = collections.Counter()
        for s in sentences:
            words = [BOS] + s.split() + [EOS]
            for n in range(1, order + 1):
                for i in range(len(words) - n + 1):
                    raw[tuple(words[i : i + n])] += 1
        left = collections.defaultdict(set)
        for g in raw:
            if len(g) > 1:
                left[g[1:]].add(g[0])
        self.adj = {}
        for g, c in raw.items():
            if g == (BOS,):
                continue
            self.adj[g] = c if len(g) == order or g[0] == BOS else len(left[g])
        self.vocab = {g[0] for g in raw if len(g) == 1 and g != (BOS,)} | {UNK}
        self.disc = {}
        for n in range(1, order + 1):
            t = collections.Counter(a for g, a in self.adj.items() if len(g) == n)
            y = t[1] / (t[1] + 2 * t[2])
            self.disc[n] = (0.0, 1 - 2 * y * t[2] / t[1], 2 - 3 * y * t[3] / t[2], 3 - 4 * y * t[4] / t[3])
        self.ctx_total = collections.Counter()
        self.ctx_n = collections.defaultdict(lambda: [0, 0, 0, 0])
        for g, a in self.adj.items():
            self.ctx_total[g[:-1]] += a
            self.ctx_n[g[:-1]][min(a, 3)] += 1

    def prob(self, w, ctx):
        ctx = tuple(ctx[len(ctx) - (self.order - 1) :]) if self.order > 1 else ()
        return self._p(w, ctx)

    def _p(self, w, h):
        n = len(h) + 1
        d = self.disc[n]
        total = self.ctx_total.get(h, 0)
        if n == 1:
            a = self.adj.get((w,), 0)
            n1, n2, n3 = self.ctx_n[()][1:]
            gamma = (d[1] * n1 + d[2] * n2 + d[3] * n3) / total
            return (max(a - d[min(a, 3)], 0) if a else 0) / total + gamma / len(self.vocab)
        if total == 0:
            return self._p(w, h[1:])
        a = self.adj.get(h + (w,), 0)
        n1, n2, n3 = self.ctx_n[h][1:]
        gamma = (d[1] * n1 + d[2] * n2 + d[3] * n3) / total
        return (a - d[min(a, 3)] if a else 0) / total + gamma * self._p(w, h[1:])


@pytest.fixture(scope="module")
def corpus():
    return _corpus()


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_probabilities_sum_to_one(corpus, order):
    lm = NGramLM(corpus, order)
    vocab = [w for w in lm.vocab if w != BOS]
    for ctx in ([], [BOS], ["w0"], [BOS, "w1"], ["w2", "w0", "w1"], ["unseen", "w3"], ["w149", "w149", "w149"]):
        total = sum(lm.prob(w, ctx) for w in vocab)
        assert total == pytest.approx(1.0, abs=1e-9), ctx


def test_equals_the_reference_implementation(corpus):
    lm = NGramLM(corpus, 3)
    ref = ReferenceMKN(corpus, 3)
    assert lm.fallback_orders == []
    for n in (1, 2, 3):
        assert lm.tables[n - 1].discounts == pytest.approx(ref.disc[n][1:])
    words = sorted(ref.vocab) + [EOS]
    for ctx in ([], [BOS], ["w0"], ["w0", "w1"], [BOS, "w0"], ["w5", "w9"], ["zz", "w1"]):
        for w in words:
            assert lm.prob(w, ctx) == pytest.approx(ref.prob(w, ctx), rel=1e-12), (ctx, w)


def test_arpa_file_reads_back_in_kenlm(tmp_path, corpus):
    pytest.importorskip("kenlm")
    lm = NGramLM(corpus[:300], 4)
    path = tmp_path / "lm.arpa.gz"
    lm.write_arpa(path)
    with gzip.open(path, "rt") as fh:
        head = [next(fh) for _ in range(6)]
    assert head[1].strip() == "\\data\\"
    assert [int(h.split("=")[1]) for h in head[2:6]] == lm.ngram_counts()
    held_out = corpus[300:] + ["w0 never-seen w1", "w3"]
    ours = lm.perplexity(held_out)
    theirs = kenlm_perplexity(path, held_out)
    assert ours == pytest.approx(theirs, rel=1e-5)
    assert 1.0 < ours < len(lm.vocab)


def test_sentence_logprob_counts_tokens_and_oovs(corpus):
    lm = NGramLM(corpus, 2)
    lp, n, oov = lm.sentence_logprob("w0 qqq w1")
    assert (n, oov) == (4, 1)
    expected = sum(
        math.log10(lm.prob(w, ctx)) for w, ctx in [("w0", [BOS]), ("qqq", ["w0"]), ("w1", ["qqq"]), (EOS, ["w1"])]
    )
    assert lp == pytest.approx(expected)


def test_discount_fallback_on_tiny_text():
    lm = NGramLM(["a b", "a c"], 3)
    assert lm.fallback_orders  # counts of counts are zero: 0.5/1/1.5 are used
    vocab = [w for w in lm.vocab if w != BOS]
    assert sum(lm.prob(w, ["a"]) for w in vocab) == pytest.approx(1.0)


def test_bad_input():
    with pytest.raises(InputError):
        NGramLM(["", "  "], 3)
    with pytest.raises(InputError):
        NGramLM(["a"], 0)
