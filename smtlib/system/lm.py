"""N-gram language models with interpolated modified Kneser-Ney smoothing, written as ARPA.

The estimate follows Chen & Goodman (1998, §3.5, eqs. 17-19 and 26) with the conventions of KenLM's
``lmplz`` (Heafield et al. 2013):

* each sentence is ``<s> w_1 ... w_n </s>``; n-grams never cross sentences;
* highest order: adjusted count a(g) = raw count c(g); lower orders: a(g) = N1+(. g), the number of
  distinct words seen before g (continuation count), except for n-grams starting with ``<s>``,
  which cannot be extended to the left and keep their raw counts;
* three discounts per order from the counts-of-adjusted-counts t_1..t_4 of that order:
  Y = t_1 / (t_1 + 2 t_2), D_1 = 1 - 2Y t_2/t_1, D_2 = 2 - 3Y t_3/t_2, D_3+ = 3 - 4Y t_4/t_3
  (if some t_k is 0 or a discount falls outside (0, k), the fallback 0.5, 1.0, 1.5 is used, as
  ``lmplz --discount_fallback`` does, and :attr:`NGramLM.fallback_orders` says so);
* interpolation: p(w|h) = (a(hw) - D(a(hw))) / sum_v a(hv) + gamma(h) p(w|h'), with
  gamma(h) = (D_1 N_1(h.) + D_2 N_2(h.) + D_3+ N_3+(h.)) / sum_v a(hv) and h' = h without its first
  word; the unigram distribution is interpolated with the uniform distribution over the vocabulary
  that can be predicted: every word of the text, ``</s>`` and ``<unk>`` (not ``<s>``, whose ARPA
  log-probability is -99). Hence sum_w p(w|h) = 1 for every context h (tested).

An ARPA file stores log10 p(w|h) for every seen n-gram and log10 gamma(h) as the back-off of every
n-gram that is a context; a back-off query p(w|h) = gamma(h) p(w|h') for an unseen hw reproduces
the interpolated model exactly (Chen & Goodman §2.6). :meth:`NGramLM.sentence_logprob` queries the
in-memory estimate, so that comparing it with the ``kenlm`` module reading the written ARPA file is
an independent check of the file.

Speed: n-grams get exact ids order by order (rank of (id of the first n-1 words, last word)), so
counting, continuation counts and interpolation are a few ``numpy.unique``/``bincount`` calls per
order.
"""

from __future__ import annotations

import dataclasses
import gzip
import math
import os
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from smtlib.errors import InputError
from smtlib.io import atomic_output

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2
FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)
LOG10_ZERO = -99.0


@dataclasses.dataclass
class OrderTable:
    """The n-grams of one order: ids are positions in these arrays."""

    prefix: np.ndarray  # id of the first n-1 words (order n-1), -1 for unigrams
    suffix: np.ndarray  # id of the last n-1 words (order n-1), -1 for unigrams
    last: np.ndarray  # last word id
    first: np.ndarray  # first word id
    count: np.ndarray  # raw count
    adjusted: np.ndarray  # adjusted count a(g)
    prob: np.ndarray  # interpolated p(w|h)
    backoff: np.ndarray  # gamma(g) when g is a context, 1.0 otherwise
    discounts: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _discounts(adjusted: np.ndarray) -> tuple[tuple[float, float, float], bool]:
    t = [int(np.count_nonzero(adjusted == k)) for k in range(1, 5)]
    if min(t) == 0:
        return FALLBACK_DISCOUNTS, True
    y = t[0] / (t[0] + 2 * t[1])
    d = (1 - 2 * y * t[1] / t[0], 2 - 3 * y * t[2] / t[1], 3 - 4 * y * t[3] / t[2])
    if not all(0 < d[k] < k + 1 for k in range(3)):
        return FALLBACK_DISCOUNTS, True
    return d, False


class NGramLM:
    """An interpolated modified Kneser-Ney n-gram model (see the module docstring).

    Parameters
    ----------
    sentences
        Tokenized sentences (one string per sentence, words separated by spaces).
    order
        n-gram order (>= 1).
    """

    def __init__(self, sentences: Iterable[str], order: int = 4):
        if order < 1:
            raise InputError(f"the LM order must be >= 1, got {order}")
        self.order = order
        tokens: list[str] = []
        lengths: list[int] = []
        for line in sentences:
            words = line.split()
            tokens.extend(words)
            lengths.append(len(words))
        if not tokens:
            raise InputError("cannot estimate a language model from an empty text")
        codes, uniques = pd.factorize(pd.Series(tokens, dtype=object), sort=False)
        specials = {UNK: UNK_ID, BOS: UNK_ID, EOS: UNK_ID}  # literal markers in the text are unknown words
        remap = np.array([specials.get(w, -1) for w in uniques], dtype=np.int64)
        words = [w for w in uniques if w not in specials]
        new_ids = np.full(len(uniques), -1, dtype=np.int64)
        keep = remap < 0
        new_ids[keep] = 3 + np.arange(int(keep.sum()))
        new_ids[~keep] = remap[~keep]
        self.vocab: list[str] = [UNK, BOS, EOS] + words
        self.word_id = {w: k for k, w in enumerate(self.vocab)}
        # Padded stream: <s> w1 .. wn </s> per sentence.
        lengths_arr = np.array(lengths, dtype=np.int64)
        n_sent = len(lengths_arr)
        padded_len = lengths_arr + 2
        starts = np.zeros(n_sent + 1, dtype=np.int64)
        np.cumsum(padded_len, out=starts[1:])
        stream = np.empty(int(starts[-1]), dtype=np.int64)
        stream[starts[:-1]] = BOS_ID
        stream[starts[1:] - 1] = EOS_ID
        body = np.ones(len(stream), dtype=bool)
        body[starts[:-1]] = False
        body[starts[1:] - 1] = False
        stream[body] = new_ids[codes]
        self.n_sentences = n_sent
        self.n_tokens = int(lengths_arr.sum())
        self.fallback_orders: list[int] = []
        self._estimate(stream, starts)

    # -- estimation -------------------------------------------------------------------------
    def _estimate(self, stream: np.ndarray, starts: np.ndarray) -> None:
        total = len(stream)
        sent_end = np.repeat(starts[1:], np.diff(starts))
        vocab_size = len(self.vocab)
        ids_prev = stream.copy()  # order-1 ids are the word ids
        tables: list[OrderTable] = []
        # Unigrams: every word id (including unseen <unk>, and <s>, whose probability is 0).
        uni_count = np.bincount(stream, minlength=vocab_size)
        uni = OrderTable(
            prefix=np.full(vocab_size, -1), suffix=np.full(vocab_size, -1), last=np.arange(vocab_size),
            first=np.arange(vocab_size), count=uni_count, adjusted=uni_count.copy(),
            prob=np.zeros(vocab_size), backoff=np.ones(vocab_size),
        )
        tables.append(uni)
        position_ids = [ids_prev]
        for n in range(2, self.order + 1):
            valid = np.nonzero(np.arange(total) + n <= sent_end)[0]
            ids_n = np.full(total, -1, dtype=np.int64)
            if len(valid) == 0:
                tables.append(OrderTable(*(np.zeros(0, np.int64) for _ in range(6)), np.zeros(0), np.zeros(0)))
                position_ids.append(ids_n)
                continue
            prefix_ids = position_ids[-1][valid]
            keys = prefix_ids * vocab_size + stream[valid + n - 1]
            uniq, first_pos, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
            ids_n[valid] = inverse
            position_ids.append(ids_n)
            rep = valid[first_pos]
            tables.append(
                OrderTable(
                    prefix=uniq // vocab_size, suffix=position_ids[-2][rep + 1], last=uniq % vocab_size,
                    first=stream[rep], count=counts.astype(np.int64), adjusted=counts.astype(np.int64),
                    prob=np.zeros(len(uniq)), backoff=np.ones(len(uniq)),
                )
            )
        # Adjusted counts of lower orders: continuation counts, raw for <s>-initial n-grams.
        for n in range(self.order - 1, 0, -1):
            low, high = tables[n - 1], tables[n]
            cont = np.bincount(high.suffix, minlength=len(low.count)) if len(high.suffix) else np.zeros(len(low.count), np.int64)
            low.adjusted = np.where(low.first == BOS_ID, low.count, cont).astype(np.int64)
        tables[0].adjusted[BOS_ID] = 0
        # Unigrams, interpolated with the uniform distribution over the predictable vocabulary.
        predictable = vocab_size - 1  # all but <s>
        for n, table in enumerate(tables, 1):
            if len(table.count) == 0:
                continue
            seen = table.adjusted > 0 if n == 1 else np.ones(len(table.count), bool)
            d, fell_back = _discounts(table.adjusted[seen])
            if fell_back:
                self.fallback_orders.append(n)
            table.discounts = d
            a = table.adjusted
            disc = np.where(a >= 3, d[2], np.where(a == 2, d[1], np.where(a == 1, d[0], 0.0)))
            if n == 1:
                denom = float(a.sum())
                gamma = float(disc.sum()) / denom
                table.prob = (a - disc) / denom + gamma / predictable
                table.prob[BOS_ID] = 0.0
                self.unigram_gamma = gamma
                continue
            lower = tables[n - 2]
            n_ctx = len(lower.count)
            denom = np.bincount(table.prefix, weights=a, minlength=n_ctx)
            mass = np.bincount(table.prefix, weights=disc, minlength=n_ctx)
            gamma = np.ones(n_ctx)
            has = denom > 0
            gamma[has] = mass[has] / denom[has]
            lower.backoff = gamma
            table.prob = (a - disc) / denom[table.prefix] + gamma[table.prefix] * lower.prob[table.suffix]
        self.tables = tables
        self._index: list[dict] | None = None

    # -- queries ----------------------------------------------------------------------------
    def ngram_counts(self) -> list[int]:
        """Number of n-grams of each order in the ARPA file (unigrams include <s>, </s>, <unk>)."""
        return [len(t.count) for t in self.tables]

    def _words(self, n: int) -> np.ndarray:
        """(count, n) word ids of the order-n n-grams."""
        table = self.tables[n - 1]
        if n == 1:
            return table.last[:, None]
        return np.column_stack([self._words(n - 1)[table.prefix], table.last])

    def _build_index(self) -> list[dict]:
        if self._index is None:
            self._index = [
                {tuple(row): k for k, row in enumerate(self._words(n).tolist())} for n in range(1, self.order + 1)
            ]
        return self._index

    def prob(self, word: str, context: Sequence[str]) -> float:
        """p(word | context) under the interpolated model (the last ``order-1`` context words count)."""
        ids = [self.word_id.get(w, UNK_ID) for w in list(context)[-(self.order - 1) :] if self.order > 1]
        return self._prob_ids(self.word_id.get(word, UNK_ID), ids)

    def _prob_ids(self, w: int, ctx: list[int]) -> float:
        index = self._build_index()
        backoff = 1.0
        for start in range(len(ctx) + 1):
            h = tuple(ctx[start:])
            k = index[len(h)].get(h + (w,))
            if k is not None:
                return backoff * float(self.tables[len(h)].prob[k])
            if h:
                hk = index[len(h) - 1].get(h)
                if hk is not None:
                    backoff *= float(self.tables[len(h) - 1].backoff[hk])
        return backoff * float(self.tables[0].prob[w])

    def sentence_logprob(self, sentence: str) -> tuple[float, int, int]:
        """log10 probability of ``<s> sentence </s>``, the number of predicted tokens and of OOVs."""
        ids = [BOS_ID] + [self.word_id.get(w, UNK_ID) for w in sentence.split()] + [EOS_ID]
        total = 0.0
        oov = 0
        for k in range(1, len(ids)):
            if ids[k] == UNK_ID:
                oov += 1
            ctx = ids[max(0, k - self.order + 1) : k]
            total += math.log10(self._prob_ids(ids[k], ctx))
        return total, len(ids) - 1, oov

    def perplexity(self, sentences: Iterable[str]) -> float:
        """Perplexity over sentences, ``</s>`` and OOVs included (what ``kenlm`` reports)."""
        logp, n = 0.0, 0
        for s in sentences:
            lp, k, _ = self.sentence_logprob(s)
            logp += lp
            n += k
        return 10 ** (-logp / max(n, 1))

    # -- output -----------------------------------------------------------------------------
    def write_arpa(self, path: str | os.PathLike, compresslevel: int = 6) -> None:
        """Write the model as an ARPA file (gzip when ``path`` ends in ``.gz``), atomically."""
        path = os.fspath(path)
        with atomic_output(path, binary=True, compress=False) as raw:
            stream = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=compresslevel) if path.endswith(".gz") else raw
            try:
                self._write(stream)
            finally:
                if stream is not raw:
                    stream.close()

    def _write(self, out) -> None:
        vocab = np.array(self.vocab, dtype=object)
        counts = self.ngram_counts()
        header = ["", "\\data\\"] + [f"ngram {n}={c}" for n, c in enumerate(counts, 1)] + [""]
        out.write(("\n".join(header) + "\n").encode("utf-8"))
        for n in range(1, self.order + 1):
            table = self.tables[n - 1]
            out.write(f"\\{n}-grams:\n".encode())
            words = self._words(n)
            text = vocab[words[:, 0]]
            for c in range(1, n):
                text = text + " " + vocab[words[:, c]]
            with np.errstate(divide="ignore"):
                logp = np.where(table.prob > 0, np.log10(np.maximum(table.prob, 1e-300)), LOG10_ZERO)
            probs = [f"{x:.7g}" for x in logp.tolist()]
            if n < self.order:
                bos = [f"{x:.7g}" for x in np.log10(table.backoff).tolist()]
                lines = [f"{p}\t{t}\t{b}\n" for p, t, b in zip(probs, text.tolist(), bos)]
            else:
                lines = [f"{p}\t{t}\n" for p, t in zip(probs, text.tolist())]
            out.write("".join(lines).encode("utf-8"))
            out.write(b"\n")
        out.write(b"\\end\\\n")


def kenlm_perplexity(arpa_path: str | os.PathLike, sentences: Iterable[str]) -> float:
    """Perplexity of the sentences under an ARPA file loaded by the ``kenlm`` module (the check)."""
    import kenlm

    model = kenlm.Model(os.fspath(arpa_path))
    logp, n = 0.0, 0
    for s in sentences:
        logp += model.score(s, bos=True, eos=True)
        n += len(s.split()) + 1
    return 10 ** (-logp / max(n, 1))
