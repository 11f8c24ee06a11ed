"""A sentence's translation options against a phrase-by-phrase reference.

:meth:`Decoder._ranked` scores and sorts the options of all new source phrases at once, and
:func:`~smtlib.decoder.decoder._span_index_nb` indexes the sorted options per span; the reference
below does both one phrase and one option at a time, the plain way. Estimates tie whenever the
entries differ only in features of weight 0, so the order must be that of a stable sort of each
phrase's own entries: the weights that give only the word penalty a value tie every entry of a target
length.
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib._dot import matvec
from smtlib.decoder.decoder import Decoder, DecoderConfig, _future_costs_nb
from smtlib.decoder.loader import load_model
from tests.support.decoder_reference import random_sentences, toy_weights


def reference_ranking(dec: Decoder, src: str) -> tuple[np.ndarray, ...]:
    """One phrase's cache item, computed for that phrase alone."""
    m = dec.model
    ents = np.arange(*m.index.span(src), dtype=np.int64)
    static = m.entry_static(dec.weights, ents, dec.sparse_w)
    offs, words = m.entry_tgt.take(ents)
    est = static + matvec(m.entry_lm(ents, offs, words), dec.w_lm)
    order = np.argsort(-est, kind="mergesort")
    if dec.config.table_limit > 0:
        order = order[: dec.config.table_limit]
    kept_words = [words[offs[o] : offs[o + 1]] for o in order]
    return (ents[order], static[order], est[order], np.array([len(w) for w in kept_words], dtype=np.int64),
            np.concatenate(kept_words) if kept_words else np.zeros(0, dtype=np.int64))


def reference_span_index(opts, n: int, maxlen: int) -> tuple[np.ndarray, ...]:
    """First option, count and best estimate per span, one option at a time."""
    first = np.zeros((max(n, 1), maxlen), dtype=np.int64)
    count = np.zeros((max(n, 1), maxlen), dtype=np.int64)
    best = np.full((n + 1, n + 1), -np.inf)
    for idx in range(len(opts.start)):
        i, ln = int(opts.start[idx]), int(opts.end[idx] - opts.start[idx])
        if count[i, ln - 1] == 0:
            first[i, ln - 1] = idx
        count[i, ln - 1] += 1
        best[i, opts.end[idx]] = max(best[i, opts.end[idx]], opts.est[idx])
    return first, count, best


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_options_of_all_phrases_at_once_equal_each_phrase_alone(brute_force_toy, limit):
    sents = random_sentences(5, 8, 6)
    sents.append(["f1", "f1", "zz", "f1", "f2"])  # a phrase twice in one sentence, an unknown word
    model = load_model(brute_force_toy, sents)
    # the toy weights, random ones, and only the word penalty: every entry of a target length ties
    for variant in range(3):
        rng = None if variant == 0 else np.random.default_rng(limit + 10 * variant)
        chosen = toy_weights(model, rng)
        if variant == 2:
            chosen = {name: 0.0 for name in chosen} | {"WordPenalty0_0": -0.5}
        weights = model.read_weights(chosen)
        dec = Decoder(model, weights, DecoderConfig(table_limit=limit))
        for toks in sents:
            opts = dec.options(toks)
            for _, _, src in dec._spans(toks):
                got, want = dec._cache[src], reference_ranking(dec, src)
                for a, b in zip(got, want, strict=True):
                    assert a.dtype == b.dtype and a.tolist() == b.tolist()
            first, count, best = reference_span_index(opts, len(toks), opts.maxlen)
            assert opts.span_first.tolist() == first.tolist()
            assert opts.span_cnt.tolist() == count.tolist()
            assert opts.fct.tolist() == _future_costs_nb(best).tolist()
