"""What a loaded model keeps between decoders (each entry's LM score, the sparse-name map) changes
nothing a decoder returns: a tuner that builds a decoder per sentence for new weights (``smtlib sgd
pass``, online MIRA) must get the bytes a fresh model gives."""

from __future__ import annotations

import numpy as np

from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.loader import load_model
from smtlib.decoder.model import Weights
from tests.support.decoder_toy import random_source, start_weights, write_toy_model


def _lines(result):
    return [(kl.hyp, kl.dense.tobytes(), sorted(kl.sparse.items()), kl.total, kl.features) for kl in result.kbest]


def test_a_model_reused_across_decoders_gives_a_fresh_models_kbest(tmp_path):
    spec = write_toy_model(tmp_path / "model", "big", seed=3)
    rng = np.random.default_rng(7)
    sentences = random_source(rng, 8, (2, 9), vocab=12)
    config = DecoderConfig(k=15, stack_size=20, search="cube", pop_limit=50)
    shared = load_model(tmp_path / "model", [s.split() for s in sentences])
    for i, line in enumerate(sentences):
        weights = start_weights(spec)
        weights.update({"cbin_1": 0.1 * i - 0.3, "tgtunal_e2": 0.05 * i})
        fresh = load_model(tmp_path / "model", [s.split() for s in sentences])
        reused = Decoder(shared, shared.read_weights(weights), config).decode(line, i)
        alone = Decoder(fresh, fresh.read_weights(weights), config).decode(line, i)
        assert _lines(reused) == _lines(alone)
    # the shared model scored each entry's target side once, and the rows are the fresh computation's
    done = np.flatnonzero(shared._entry_lm_done)
    assert len(done) > 0
    offs, words = shared.entry_tgt.take(done)
    fresh = load_model(tmp_path / "model", [s.split() for s in sentences])
    np.testing.assert_array_equal(fresh.entry_lm(done, offs, words), shared._entry_lm[done])


def test_sparse_vector_puts_each_weight_at_its_names_position():
    index = {"a_x": 0, "b_y": 1, "c_z": 2}
    weights = Weights(np.zeros(2), {"c_z": -0.0, "a_x": 1.5, "not_in_model": 7.0})
    vec = weights.sparse_vector(index)
    assert vec.tolist() == [1.5, 0.0, 0.0]
    assert np.signbit(vec[2])  # the weight's own value, -0.0 included
