"""The stack decoder against an obviously-correct brute force search.

The reference enumerates every segmentation and order of a short sentence that Moses's distortion
rules allow, scores each complete derivation from scratch (KenLM for the language models, Python
sums for the rest) and keeps the best derivation per distinct translation. With an unlimited stack the
decoder's 1-best and its k-best list must match it exactly.
"""

from __future__ import annotations

import gzip
import math
import pathlib

import numpy as np
import pytest

from smtlib.decoder.decoder import Decoder, DecoderConfig
from smtlib.decoder.model import load_model
from tests.decoder_toy import write_toy_model

kenlm = pytest.importorskip("kenlm")


def _weights(model, rng=None):
    w = {n: 0.2 for n in model.layout.names}
    w.update({"LM0_0": 0.5, "WordPenalty0_0": -0.5, "Distortion0_0": 0.3})
    if "LM1_0" in w:
        w["LM1_0"] = 0.3
    for i in range(6):
        if f"LexicalReordering0_{i}" in w:
            w[f"LexicalReordering0_{i}"] = 0.3
    if rng is not None:
        w = {n: float(v + rng.normal(0, 0.2)) for n, v in w.items()}
    if model.spec.feature_set == "big":
        w.update({"cbin_1": 0.4, "cbin_2": -0.3, "tgtunal_e0": 0.5})
    return w


def _kenlms(model_dir: pathlib.Path, model):
    out = []
    for comp in model.spec.language_models:
        plain = model_dir / (comp.path + ".plain.arpa")
        if not plain.exists():
            plain.write_bytes(gzip.decompress((model_dir / comp.path).read_bytes()))
        out.append(kenlm.Model(str(plain)))
    return out


def brute_force(dec: Decoder, tokens: list[str], kenlms, dl: int) -> dict[str, float]:
    """Best model score of every translation reachable under the distortion rules."""
    m = dec.model
    opts = dec.options(tokens)
    lay = m.layout
    w = dec.weights
    n = len(tokens)
    best: dict[str, float] = {}

    def score(seq: list[int]) -> float:
        h = np.zeros(lay.size)
        sparse: dict[str, float] = {}
        words: list[str] = []
        prev = None  # (start, end, option)
        for o in seq:
            s, e, ent = int(opts.start[o]), int(opts.end[o]), int(opts.entry[o])
            tgt = [m.words[x] for x in opts.words[opts.woff[o] : opts.woff[o + 1]]]
            words += tgt
            if ent >= 0:
                for t, col in enumerate(lay.tm_cols):
                    h[col : col + 4] += m.entry_tm[ent, 4 * t : 4 * t + 4]
                for name, v in dec._sparse(ent).items():
                    sparse[name] = sparse.get(name, 0.0) + v
            h[lay.wp_col] -= len(tgt)
            last_end = -1 if prev is None else prev[1] - 1
            h[lay.dist_col] -= abs(s - (last_end + 1))
            if lay.lr_col >= 0:
                if s == last_end + 1:
                    orient = 0
                elif prev is not None and e == prev[0]:
                    orient = 1
                else:
                    orient = 2
                h[lay.lr_col + orient] += opts.lr[o, orient]
                if prev is not None:
                    h[lay.lr_col + 3 + orient] += opts.lr[prev[2], 3 + orient]
            prev = (s, e, o)
        for lm, col in zip(kenlms, lay.lm_cols, strict=True):
            h[col] = lm.score(" ".join(words), bos=True, eos=True) * math.log(10)
        total = float(h @ w.dense) + sum(w.sparse.get(k, 0.0) * v for k, v in sparse.items())
        key = " ".join(words)
        if total > best.get(key, -math.inf):
            best[key] = total
        return total

    def rec(covered: list[bool], last_end: int, seq: list[int]) -> None:
        if all(covered):
            score(seq)
            return
        gap = covered.index(False)
        for o in range(len(opts.start)):
            s, e = int(opts.start[o]), int(opts.end[o])
            if any(covered[s:e]):
                continue
            if dl >= 0:
                if abs(s - (last_end + 1)) > dl:
                    continue
                if s != gap and abs(e - gap) > dl:
                    continue
            for i in range(s, e):
                covered[i] = True
            rec(covered, e - 1, seq + [o])
            for i in range(s, e):
                covered[i] = False

    rec([False] * n, -1, [])
    return best


@pytest.fixture(scope="module", params=["small", "medium", "big"])
def toy(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"toy-{request.param}")
    write_toy_model(d, request.param, seed=7, n_words=10, n_multi=25)
    return d


def _sentences(seed: int, count: int, length: int, vocab: int = 11) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[f"f{int(x)}" for x in rng.integers(0, vocab, size=length)] for _ in range(count)]


@pytest.mark.parametrize("dl", [6, 1])
def test_unlimited_stack_equals_brute_force(toy, dl):
    sents = _sentences(11 + dl, 6, 4)
    sents.append(["f1", "zz", "f2", "f3"])  # an unknown word passes through
    model = load_model(toy, sents)
    kenlms = _kenlms(toy, model)
    for variant in range(2):
        rng = None if variant == 0 else np.random.default_rng(dl + variant)
        weights = model.read_weights(_weights(model, rng))
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
            for rank, (hyp, _dense, _sparse, total) in enumerate(res.kbest):
                assert total == pytest.approx(ref[hyp], abs=1e-4)
                assert total == pytest.approx(ref_sorted[rank][1], abs=1e-4)


def test_pruned_search_never_beats_the_optimum(toy):
    """With a small stack the result is a real translation whose score is at most the optimum."""
    sents = _sentences(5, 5, 5)
    model = load_model(toy, sents)
    kenlms = _kenlms(toy, model)
    weights = model.read_weights(_weights(model))
    exact = Decoder(model, weights, DecoderConfig(stack_size=0, table_limit=2, k=1))
    pruned = Decoder(model, weights, DecoderConfig(stack_size=2, table_limit=2, k=1))
    for sid, toks in enumerate(sents):
        ref = brute_force(exact, toks, kenlms, 6)
        res = pruned.decode(" ".join(toks), sid)
        assert res.best in ref
        assert res.best_score <= max(ref.values()) + 1e-6
        # its derivation may not be the best one of its string (pruned), never better
        assert res.kbest[0][3] <= ref[res.best] + 1e-4
