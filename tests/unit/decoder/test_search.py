"""The stack decoder against an obviously-correct brute force search.

The reference enumerates every segmentation and order of a short sentence that Moses's distortion
rules allow, scores each complete derivation from scratch (KenLM for the language models, Python
sums for the rest) and keeps the best derivation per distinct translation. With an unlimited stack the
decoder's 1-best and its k-best list must match it exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.loader import load_model
from tests.support.decoder_reference import brute_force, kenlm_models, random_sentences, toy_weights

pytest.importorskip("kenlm")


@pytest.mark.parametrize("dl", [6, 1])
def test_unlimited_stack_equals_brute_force(brute_force_toy, dl):
    sents = random_sentences(11 + dl, 6, 4)
    sents.append(["f1", "zz", "f2", "f3"])  # an unknown word passes through
    model = load_model(brute_force_toy, sents)
    kenlms = kenlm_models(brute_force_toy, model)
    for variant in range(2):
        rng = None if variant == 0 else np.random.default_rng(dl + variant)
        weights = model.read_weights(toy_weights(model, rng))
        dec = Decoder(model, weights, DecoderConfig(stack_size=0, distortion_limit=dl, table_limit=3, k=15,
                                                    nbest_factor=10_000))
        for sid, toks in enumerate(sents):
            ref = brute_force(dec, toks, kenlms, dl)
            res = dec.decode(" ".join(toks), sid)
            ref_sorted = sorted(ref.items(), key=lambda kv: -kv[1])
            assert res.best_score == pytest.approx(ref_sorted[0][1], abs=1e-4)
            assert ref[res.best] == pytest.approx(ref_sorted[0][1], abs=1e-4)
            # the k-best list is the top-k of the distinct translations, with their best derivation
            assert len(res.kbest) == min(15, len(ref))
            for rank, (hyp, _dense, _sparse, total, _text) in enumerate(res.kbest):
                assert total == pytest.approx(ref[hyp], abs=1e-4)
                assert total == pytest.approx(ref_sorted[rank][1], abs=1e-4)


def test_pruned_search_never_beats_the_optimum(brute_force_toy):
    """With a small stack the result is a real translation whose score is at most the optimum."""
    sents = random_sentences(5, 5, 5)
    model = load_model(brute_force_toy, sents)
    kenlms = kenlm_models(brute_force_toy, model)
    weights = model.read_weights(toy_weights(model))
    exact = Decoder(model, weights, DecoderConfig(stack_size=0, table_limit=2, k=1))
    pruned = Decoder(model, weights, DecoderConfig(stack_size=2, table_limit=2, k=1))
    for sid, toks in enumerate(sents):
        ref = brute_force(exact, toks, kenlms, 6)
        res = pruned.decode(" ".join(toks), sid)
        assert res.best in ref
        assert res.best_score <= max(ref.values()) + 1e-6
        # its derivation may not be the best one of its string (pruned), never better
        assert res.kbest[0][3] <= ref[res.best] + 1e-4
