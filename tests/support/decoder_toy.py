"""Tiny, self-contained model directories for the tests of the decoder (test fixtures, not part of the package).

:func:`estimate_arpa` estimates a real back-off language model (interpolated absolute discounting,
Ney, Essen & Kneser 1994, written in ARPA back-off form) from a list of sentences;
:func:`write_toy_model` writes a whole model directory (phrase tables, reordering table, ARPA LMs,
``model.yaml``) for a synthetic language pair. Everything is drawn from a seeded
:class:`numpy.random.Generator`, so the same seed gives the same files.
"""

from __future__ import annotations

import collections
import math
import os
import pathlib

import numpy as np

from smtlib.io import atomic_output
from smtlib.system.feature_sets import FEATURE_SETS
from smtlib.system.modeldir import Component, ModelSpec, write_model_spec


def estimate_arpa(sentences: list[list[str]], order: int, discount: float = 0.7) -> str:
    """An interpolated absolute-discounting n-gram model as ARPA text.

    For a history ``h`` seen as a context, ``p(w|h) = max(c(hw) - D, 0) / c(h.) + g(h) p(w|h')``
    with ``g(h) = D N1+(h.) / c(h.)``; an unseen ``hw`` gets ``g(h) p(w|h')``, so the ARPA entry of a
    seen ``hw`` holds the interpolated probability and ``g(h)`` is ``h``'s back-off weight. Unigrams
    are add-one smoothed over the vocabulary plus ``<unk>``.
    """
    counts: list[collections.Counter] = [collections.Counter() for _ in range(order + 1)]
    vocab: set[str] = set()
    for sent in sentences:
        seq = ["<s>", *sent, "</s>"]
        vocab.update(sent)
        for n in range(1, order + 1):
            for i in range(len(seq) - n + 1):
                gram = tuple(seq[i : i + n])
                if n == 1 and gram[0] == "<s>":
                    continue
                counts[n][gram] += 1
    ctx_total: list[collections.Counter] = [collections.Counter() for _ in range(order + 1)]
    ctx_types: list[collections.Counter] = [collections.Counter() for _ in range(order + 1)]
    for n in range(2, order + 1):
        for gram, c in counts[n].items():
            ctx_total[n][gram[:-1]] += c
            ctx_types[n][gram[:-1]] += 1
    words = sorted(vocab) + ["</s>"]
    total = sum(counts[1].values())
    prob: dict[tuple, float] = {}
    for w in words:
        prob[(w,)] = (counts[1][(w,)] + 1) / (total + len(words) + 1)
    prob[("<unk>",)] = 1 / (total + len(words) + 1)

    def p(gram: tuple) -> float:
        if gram in prob:
            return prob[gram]
        if len(gram) == 1:
            return prob[("<unk>",)]
        h = gram[:-1]
        n = len(gram)
        if ctx_total[n][h]:
            return ctx_types[n][h] * discount / ctx_total[n][h] * p(gram[1:])
        return p(gram[1:])

    for n in range(2, order + 1):
        for gram in sorted(counts[n]):
            h = gram[:-1]
            c_h = ctx_total[n][h]
            gamma = discount * ctx_types[n][h] / c_h
            prob[gram] = max(counts[n][gram] - discount, 0) / c_h + gamma * p(gram[1:])
    backoff: dict[tuple, float] = {}
    for n in range(2, order + 1):
        for h, c_h in ctx_total[n].items():
            backoff[h] = discount * ctx_types[n][h] / c_h
    lines = ["", "\\data\\"]
    grams_by_order: list[list[tuple]] = [[] for _ in range(order + 1)]
    grams_by_order[1] = [("<unk>",), ("<s>",)] + [(w,) for w in words]
    for n in range(2, order + 1):
        grams_by_order[n] = sorted(counts[n])
    for n in range(1, order + 1):
        lines.append(f"ngram {n}={len(grams_by_order[n])}")
    for n in range(1, order + 1):
        lines += ["", f"\\{n}-grams:"]
        for gram in grams_by_order[n]:
            logp = -99.0 if gram == ("<s>",) else math.log10(prob[gram])
            entry = f"{logp:.6f}\t{' '.join(gram)}"
            if n < order and gram in backoff:
                entry += f"\t{math.log10(backoff[gram]):.6f}"
            lines.append(entry)
    lines += ["", "\\end\\", ""]
    return "\n".join(lines)


def _phrase_pairs(rng: np.random.Generator, n_words: int, n_multi: int) -> list[tuple[str, str]]:
    """Source/target phrase pairs of a synthetic pair: a noisy dictionary plus multi-word phrases."""
    pairs = set()
    for i in range(n_words):
        for j in rng.choice(n_words, size=int(rng.integers(1, 4)), replace=False):
            pairs.add((f"f{i}", f"e{j}"))
        if rng.random() < 0.3:
            pairs.add((f"f{i}", f"e{i} e{(i + 1) % n_words}"))
    for _ in range(n_multi):
        length = int(rng.integers(2, 4))
        src = " ".join(f"f{int(k)}" for k in rng.integers(0, n_words, size=length))
        tgt_len = max(1, length + int(rng.integers(-1, 2)))
        tgt = " ".join(f"e{int(k)}" for k in rng.integers(0, n_words, size=tgt_len))
        pairs.add((src, tgt))
    return sorted(pairs)


def write_toy_model(model_dir: str | os.PathLike, feature_set: str = "medium", seed: int = 0, *,
                    n_words: int = 12, n_multi: int = 30, lm_order: int = 3) -> ModelSpec:
    """Write a small synthetic model directory and return its :class:`ModelSpec`.

    The source vocabulary is ``f0 .. f{n_words-1}``, the target vocabulary ``e0 ..``; the LMs are
    estimated with :func:`estimate_arpa` on random target sentences biased to ``e_i e_{i+1}``
    bigrams so that word order matters.
    """
    rng = np.random.default_rng(seed)
    model_dir = pathlib.Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    fs = FEATURE_SETS[feature_set]
    n_tm = fs.translation_models
    pairs = _phrase_pairs(rng, n_words, n_multi)
    phrase_tables = []
    for t in range(n_tm):
        name = f"phrase-table.{t}.gz"
        with atomic_output(model_dir / name) as out:
            for src, tgt in pairs:
                if t == 1 and rng.random() < 0.2:
                    continue  # the second table misses some pairs
                scores = rng.uniform(0.01, 1.0, size=4)
                ns, nt = len(src.split()), len(tgt.split())
                align = " ".join(f"{i}-{min(i, nt - 1)}" for i in range(ns))
                fields = [src, tgt, " ".join(f"{s:.4g}" for s in scores), align, "10 10 3"]
                if fs.sparse and t == 0:
                    sparse = [f"cbin_{int(rng.integers(1, 4))} 1"]
                    if rng.random() < 0.3:
                        sparse.append(f"tgtunal_{tgt.split()[0]} 1")
                    fields.append(" ".join(sparse))
                out.write(" ||| ".join(fields) + "\n")
        phrase_tables.append(Component(f"TranslationModel{t}", name, description="synthetic"))
    reordering = []
    if fs.reordering:
        with atomic_output(model_dir / "reordering-table.0.gz") as out:
            for src, tgt in pairs:
                if rng.random() < 0.1:
                    continue  # a pair without reordering scores
                prev = rng.dirichlet(np.ones(3))
                nxt = rng.dirichlet(np.ones(3))
                out.write(f"{src} ||| {tgt} ||| " + " ".join(f"{v:.4g}" for v in (*prev, *nxt)) + "\n")
        reordering.append(Component("LexicalReordering0", "reordering-table.0.gz", description="synthetic"))
    n_lm = fs.language_models
    language_models = []
    for k in range(n_lm):
        sents = []
        for _ in range(200):
            length = int(rng.integers(2, 8))
            w = int(rng.integers(0, n_words))
            sent = []
            for _ in range(length):
                sent.append(f"e{w}")
                w = (w + 1) % n_words if rng.random() < 0.6 else int(rng.integers(0, n_words))
            sents.append(sent)
        name = f"lm.{k}.arpa.gz"
        with atomic_output(model_dir / name) as out:
            out.write(estimate_arpa(sents, lm_order if k == 0 else max(2, lm_order - 1)))
        language_models.append(Component(f"LM{k}", name, order=lm_order if k == 0 else max(2, lm_order - 1)))
    dense = fs.dense_features()
    spec = ModelSpec(
        source_lang="fx", target_lang="ex", feature_set=feature_set, max_phrase_length=3,
        dense_features=dense, phrase_tables=phrase_tables, language_models=language_models,
        reordering=reordering, sparse_templates=["cbin", "tgtunal"] if fs.sparse else [],
    )
    write_model_spec(model_dir, spec)
    return spec


def random_source(rng: np.random.Generator, count: int, lengths: tuple[int, int] = (1, 12), vocab: int = 12) -> list[str]:
    """``count`` input lines of toy source words ``f0 .. f{vocab-1}``, each ``rng.integers(*lengths)`` long."""
    return [" ".join(f"f{int(x)}" for x in rng.integers(0, vocab, size=int(rng.integers(*lengths)))) for _ in range(count)]


def start_weights(spec: ModelSpec, base: float = 0.2, word_penalty: float = -0.5) -> dict[str, float]:
    """Dense weights for decoding a toy model: ``base`` everywhere, LM0 0.5, the word penalty negative."""
    weights = {n: base for n in spec.dense_weight_names()}
    weights.update({"LM0_0": 0.5, "WordPenalty0_0": word_penalty})
    return weights
