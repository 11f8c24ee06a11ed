"""k-best lists and lattices written by the decoder: sorted, distinct, consistent with each other."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.decoder.decoder import DecoderConfig
from smtlib.decoder.driver import decode_file
from smtlib.lattice.envelope import upper_envelope
from smtlib.lattice.format import read_lattices
from smtlib.lattice.paths import best_path, kbest_paths
from tests.support.decoder_toy import random_source, start_weights, write_toy_model
from smtlib.io import read_lines
from smtlib.weights import read_weights, write_weights


def parse_nbest(path):
    """{id: [(hyp, {feature: value}, total)]} with dense values named NAME_k."""
    out: dict[int, list] = {}
    for line in read_lines(path, allow_empty=True):
        sid, hyp, feats, total = line.split(" ||| ")
        values: dict[str, float] = {}
        name, k = None, 0
        for tok in feats.split():
            if tok.endswith("="):
                name, k = tok[:-1], 0
                continue
            key = name if "_" in name else f"{name}_{k}"
            values[key] = values.get(key, 0.0) + float(tok)
            k += 1
        out.setdefault(int(sid), []).append((hyp, values, float(total)))
    return out


def dot(weights, values):
    return sum(weights.get(k, 0.0) * v for k, v in values.items())


@pytest.fixture(scope="module", params=["medium", "big"])
def decoded(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"lat-{request.param}")
    model = d / "model"
    spec = write_toy_model(model, request.param, seed=5)
    rng = np.random.default_rng(0)
    lines = random_source(rng, 12, (1, 10), vocab=13)
    (d / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    weights = {n: 0.2 for n in spec.dense_weight_names()}
    weights.update({"LM0_0": 0.5, "LM1_0": 0.2, "WordPenalty0_0": -0.5, "Distortion0_0": 0.3})
    if request.param == "big":
        weights.update({"cbin_1": 0.3, "tgtunal_e2": -0.4})
    write_weights(d / "w.txt", weights)
    decode_file(model, d / "w.txt", d / "in.txt", kbest_out=d / "kb.gz", lattice_out=d / "lat.gz",
                output=d / "best.txt", config=DecoderConfig(k=20, stack_size=30, lattice_beam=0), progress=False)
    return d, read_weights(d / "w.txt"), parse_nbest(d / "kb.gz"), read_lattices(d / "lat.gz"), lines


def test_kbest_sorted_distinct_and_totals(decoded):
    d, w, nbest, lats, lines = decoded
    assert sorted(nbest) == list(range(len(lines)))
    best = read_lines(d / "best.txt")
    for sid, entries in nbest.items():
        totals = [t for _, _, t in entries]
        assert totals == sorted(totals, reverse=True)
        hyps = [h for h, _, _ in entries]
        assert len(set(hyps)) == len(hyps)
        assert 1 <= len(entries) <= 20
        for _, values, total in entries:
            assert total == pytest.approx(dot(w, values), abs=1e-6)
        assert best[sid] == hyps[0]


def test_lattice_best_path_is_the_one_best(decoded):
    _, w, nbest, lats, lines = decoded
    assert [lat.sent_id for lat in lats] == list(range(len(lines)))
    for lat in lats:
        assert np.all(lat.tails < lat.heads)
        score, path = best_path(lat, w)
        hyp, _, total = nbest[lat.sent_id][0]
        assert score == pytest.approx(total, abs=1e-3)
        dense, sparse = lat.path_features(path)
        assert score == pytest.approx(float(dense @ np.array([w.get(n, 0) for n in lat.feature_names]))
                                      + dot(w, sparse), abs=1e-6)
        if len(nbest[lat.sent_id]) < 2 or nbest[lat.sent_id][1][2] < total - 1e-3:
            assert " ".join(lat.path_words(path)) == hyp


def test_lattice_kbest_matches_decoder_kbest(decoded):
    _, w, nbest, lats, _ = decoded
    for lat in lats:
        scores, _, paths = kbest_paths(lat, w, 20, distinct=True)
        ours = nbest[lat.sent_id]
        assert len(scores) == len(ours)
        assert scores == pytest.approx([t for _, _, t in ours], abs=1e-3)
        assert scores == sorted(scores, reverse=True)


def test_other_weights_lattice_beats_kbest(decoded):
    _, w, nbest, lats, _ = decoded
    rng = np.random.default_rng(4)
    for trial in range(5):
        other = {k: float(v + rng.normal(0, 0.5)) for k, v in w.items()}
        for lat in lats:
            lat_best, path = best_path(lat, other)
            kb_best = max(dot(other, values) for _, values, _ in nbest[lat.sent_id])
            assert lat_best >= kb_best - 1e-4
            # the k best paths (not distinct) start with the best path and are sorted
            scores, _, paths = kbest_paths(lat, other, 10)
            assert scores[0] == pytest.approx(lat_best)
            assert scores == sorted(scores, reverse=True)
            assert len({tuple(p) for p in paths}) == len(paths)


def test_upper_envelope_is_the_pointwise_max(decoded):
    _, w, _, lats, _ = decoded
    rng = np.random.default_rng(8)
    names = lats[0].feature_names
    for lat in lats[:6]:
        d = {n: float(rng.normal()) for n in names}
        env = upper_envelope(lat, w, d)
        assert np.all(np.diff(env.starts) > 0)
        assert np.all(np.diff(env.slopes) > 0)
        for gamma in [-3.0, -0.7, 0.0, 0.4, 2.5, *(env.starts[1:] + 1e-3)]:
            mixed = {n: w.get(n, 0.0) + gamma * d.get(n, 0.0) for n in set(w) | set(d)}
            best, _ = best_path(lat, mixed)
            seg = int(np.searchsorted(env.starts, gamma, side="right") - 1)
            assert env.intercepts[seg] + gamma * env.slopes[seg] == pytest.approx(best, abs=1e-6)
            # the segment's path really has that score
            scores = lat.edge_scores(mixed)
            assert scores[env.paths[seg]].sum() == pytest.approx(best, abs=1e-6)


def test_beam_pruned_lattice_keeps_the_kbest(tmp_path):
    model = tmp_path / "model"
    spec = write_toy_model(model, "medium", seed=9)
    rng = np.random.default_rng(1)
    lines = random_source(rng, 6, (3, 10), vocab=13)
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    weights = start_weights(spec)
    write_weights(tmp_path / "w.txt", weights)
    sizes = {}
    for beam in (0.0, 1.5):
        decode_file(model, tmp_path / "w.txt", tmp_path / "in.txt", kbest_out=tmp_path / f"kb{beam}",
                    lattice_out=tmp_path / f"lat{beam}", config=DecoderConfig(k=10, lattice_beam=beam), progress=False)
        sizes[beam] = sum(lat.n_edges for lat in read_lattices(tmp_path / f"lat{beam}"))
    assert sizes[1.5] < sizes[0.0]
    nbest = parse_nbest(tmp_path / "kb1.5")
    w = read_weights(tmp_path / "w.txt")
    for lat in read_lattices(tmp_path / "lat1.5"):
        assert np.all(lat.tails < lat.heads)
        scores, _, paths = kbest_paths(lat, w, 10, distinct=True)
        ours = nbest[lat.sent_id]
        assert scores == pytest.approx([t for _, _, t in ours], abs=1e-3)
        assert {" ".join(lat.path_words(p)) for p in paths} == {h for h, _, _ in ours} or len(ours) == 10


def test_values_printed_once_each_are_printed_as_one_by_one():
    """``_round`` prints each distinct value once (by its bits): the texts and rounded values must be
    those of printing every value, signed zeros and NaN included."""
    from smtlib.decoder.decoder import _round
    from smtlib.kbest.format import DECODED

    rng = np.random.default_rng(5)
    values = rng.choice([0.0, -0.0, 1 / 3, -2.5e-7, 123456.5, float("nan"), 1e300, 0.1 + 0.2], size=(40, 7))
    values[::3] += rng.normal(size=values[::3].shape)
    rounded, texts = _round(values)
    want = [DECODED.value(v) for v in values.ravel().tolist()]
    assert texts == want
    assert rounded.shape == values.shape
    assert [repr(v) for v in rounded.ravel().tolist()] == [repr(float(t)) for t in want]
    assert "-0" in texts and "0" in texts
