"""The decoder's obviously-correct reference: a brute-force search over every derivation of a short
sentence that Moses's distortion rules allow (see ``tests/unit/decoder/test_search.py``), with the
weights, sentences and KenLM models the search tests give it. Shared by the stack and cube-pruning
tests; needs ``kenlm`` (the tests skip without it)."""

from __future__ import annotations

import gzip
import math
import pathlib

import numpy as np

from smtlib.decoder.decoder import Decoder


def toy_weights(model, rng=None):
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


def kenlm_models(model_dir: pathlib.Path, model):
    import kenlm

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


def random_sentences(seed: int, count: int, length: int, vocab: int = 11) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[f"f{int(x)}" for x in rng.integers(0, vocab, size=length)] for _ in range(count)]
