"""The cube-pruning search against the brute force of ``tests/support/decoder_reference.py``, and its
own limits.

With an unlimited stack and a pop limit larger than any cube, every cell of every cube is popped, so
cube pruning extends every hypothesis by every option, like the unlimited stack search: its 1-best
and k-best list must be the brute force's. With small limits it must return a real derivation scored
as the brute force scores it, never above the optimum, and pop at most ``pop_limit`` hypotheses per
stack.
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.loader import load_model
from tests.support.decoder_toy import start_weights, write_toy_model
from tests.support.decoder_reference import brute_force, kenlm_models, random_sentences, toy_weights

pytest.importorskip("kenlm")


@pytest.mark.parametrize("dl", [6, 1])
def test_unlimited_cube_equals_brute_force(brute_force_toy, dl):
    sents = random_sentences(21 + dl, 5, 4)
    sents.append(["f1", "zz", "f2", "f3"])
    model = load_model(brute_force_toy, sents)
    kenlms = kenlm_models(brute_force_toy, model)
    weights = model.read_weights(toy_weights(model, np.random.default_rng(dl)))
    dec = Decoder(model, weights, DecoderConfig(stack_size=0, distortion_limit=dl, table_limit=3, k=15,
                                                nbest_factor=10_000, search="cube", pop_limit=1_000_000))
    for sid, toks in enumerate(sents):
        ref = brute_force(dec, toks, kenlms, dl)
        ref_sorted = sorted(ref.items(), key=lambda kv: -kv[1])
        res = dec.decode(" ".join(toks), sid)
        assert res.best_score == pytest.approx(ref_sorted[0][1], abs=1e-4)
        assert len(res.kbest) == min(15, len(ref))
        for rank, (hyp, _dense, _sparse, total, _text) in enumerate(res.kbest):
            assert total == pytest.approx(ref[hyp], abs=1e-4)
            assert total == pytest.approx(ref_sorted[rank][1], abs=1e-4)


@pytest.mark.parametrize("pop_limit", [1, 3, 10])
def test_pruned_cube_is_a_real_derivation_and_pops_at_most_the_limit(brute_force_toy, pop_limit):
    sents = random_sentences(5, 5, 5)
    model = load_model(brute_force_toy, sents)
    kenlms = kenlm_models(brute_force_toy, model)
    weights = model.read_weights(toy_weights(model))
    exact = Decoder(model, weights, DecoderConfig(stack_size=0, table_limit=2, k=1))
    cube = Decoder(model, weights, DecoderConfig(stack_size=2, table_limit=2, k=5, search="cube",
                                                 pop_limit=pop_limit))
    for sid, toks in enumerate(sents):
        ref = brute_force(exact, toks, kenlms, 6)
        before = cube.counters.copy()
        res = cube.decode(" ".join(toks), sid)
        popped = int(cube.counters[2] - before[2])
        assert 0 < popped <= pop_limit * len(toks)
        assert res.best_score <= max(ref.values()) + 1e-6
        for hyp, _dense, _sparse, total, _text in res.kbest:
            assert hyp in ref
            assert total <= ref[hyp] + 1e-4  # a derivation of ``hyp``, maybe not its best one


def test_larger_pop_limit_finds_the_stack_search_optimum(brute_force_toy):
    """On short sentences Moses's default pop limit (1000) reaches the unlimited stack search's optimum."""
    sents = random_sentences(9, 4, 5)
    model = load_model(brute_force_toy, sents)
    weights = model.read_weights(toy_weights(model))
    stack = Decoder(model, weights, DecoderConfig(stack_size=0, table_limit=2, k=1))
    cube = Decoder(model, weights, DecoderConfig(stack_size=0, table_limit=2, k=1, search="cube"))
    for sid, toks in enumerate(sents):
        assert cube.decode(" ".join(toks), sid).best_score == pytest.approx(
            stack.decode(" ".join(toks), sid).best_score, abs=1e-9)


def test_config_rejects_unknown_search():
    with pytest.raises(ValueError, match="unknown search"):
        DecoderConfig(search="beam")
    with pytest.raises(ValueError, match="pop_limit"):
        DecoderConfig(search="cube", pop_limit=0)


def test_cli_cube_search(tmp_path, cli):
    spec = write_toy_model(tmp_path / "model", "medium", seed=2)
    from smtlib.weights import write_weights

    weights = start_weights(spec)
    write_weights(tmp_path / "w.txt", weights)
    (tmp_path / "in.txt").write_text("f1 f2 f3\n\nf4 f5 f1 f2\n", encoding="utf-8")
    args = ["decode", "--model", tmp_path / "model", "--weights", tmp_path / "w.txt", "--input", tmp_path / "in.txt",
            "--quiet"]
    r = cli(*args, "--search", "cube", "--pop-limit", "50", "--output", tmp_path / "cube.txt")
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "cube.txt").read_text(encoding="utf-8").split("\n")) == 4
    r = cli(*args, "--search", "cube", "--pop-limit", "0")
    assert r.returncode == 2
    assert "--pop-limit" in r.stderr
