"""``smtlib decode --backend moses``: n-best conversion (always), and with a Moses binary (skipped when
none is found: ``$SMTLIB_MOSES_BIN`` or ``../shared/peers/moses/bin``) the outputs in our format."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.decoder.moses_backend import default_moses_dir, read_moses_nbest
from tests.support.decoder_toy import random_source, write_toy_model
from smtlib.kbest.pool import read_pool
from smtlib.system.moses_export import export_moses, feature_map
from smtlib.system.moses_ini import MosesIni
from smtlib.weights import read_weights, write_weights


@pytest.fixture(scope="module")
def toy_system(tmp_path_factory):
    """A big toy model, weights for it and twelve source lines (and one with an unknown word)."""
    d = tmp_path_factory.mktemp("moses-backend")
    spec = write_toy_model(d / "model", "big", seed=21)
    rng = np.random.default_rng(22)
    weights = {name: float(rng.uniform(0.1, 1.0)) for name in spec.dense_weight_names()}
    weights.update({"WordPenalty0_0": -0.4, "cbin_2": 0.3})
    write_weights(d / "w.txt", weights)
    lines = random_source(rng, 12, (1, 8))
    (d / "in.txt").write_text("\n".join(lines + ["f3 nope f4"]) + "\n", encoding="utf-8")
    return d, spec, weights, lines


def test_nbest_conversion(toy_system, tmp_path):
    d, spec, weights, _ = toy_system
    ini = MosesIni.read(export_moses(d / "model", tmp_path / "moses", weights))
    fmap = feature_map(spec, ini)
    # two sentences, written as Moses writes them (features in its own order, a zero sparse value,
    # trailing spaces in the hypothesis), the second line of sentence 0 better under our weights
    (tmp_path / "nbest").write_text(
        "0 ||| e1 e2  ||| LexicalReordering0= -1 0 0 -2 0 0 Distortion0= 0 LM0= -5 LM1= -6 WordPenalty0= -2 "
        "TranslationModel0= -1 -2 -3 -4 -5 -6 -7 -8 TranslationModel0_cbin_2= 1 TranslationModel0_cbin_1= 0 ||| -9\n"
        "0 ||| e2 e1  ||| LexicalReordering0= 0 0 0 0 0 0 Distortion0= -1 LM0= -1 LM1= -1 WordPenalty0= -2 "
        "TranslationModel0= -1 -1 -1 -1 -1 -1 -1 -1 ||| -10\n"
        "1 ||| e3 qq  ||| UnknownWordPenalty0= -100 LexicalReordering0= 0 0 0 0 0 0 Distortion0= 0 LM0= -3 LM1= -4 "
        "WordPenalty0= -2 TranslationModel0= -1 -1 -1 -1 -1 -1 -1 -1 ||| -20\n", encoding="utf-8")
    blocks = list(read_moses_nbest(tmp_path / "nbest", fmap, weights, k=5))
    assert [sent for sent, _ in blocks] == [0, 1]
    names = spec.dense_weight_names()
    w = np.array([weights[n] for n in names])
    first = blocks[0][1]
    assert [h for h, *_ in first] == ["e2 e1", "e1 e2"]  # re-sorted by w . h in our names
    hyp, dense, sparse, total = first[1]
    assert dense[names.index("TranslationModel1_0")] == -5 and dense[names.index("LexicalReordering0_3")] == -2
    assert sparse == {"cbin_2": 1.0}
    assert total == pytest.approx(float(dense @ w) + 0.3)
    assert blocks[1][1][0][3] == pytest.approx(float(blocks[1][1][0][1] @ w))  # no unknown-word penalty


def moses_binary(name: str = "moses"):
    bindir = default_moses_dir()
    if bindir is None or not (bindir / name).is_file():
        pytest.skip("no Moses binary ($SMTLIB_MOSES_BIN or ../shared/peers/moses/bin)")
    return bindir / name


def test_backend_outputs_in_our_format(toy_system, tmp_path, cli):
    binary = moses_binary()
    d, spec, weights, lines = toy_system
    args = ["decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "in.txt", "--k", "7",
            "--stack-size", "1000", "--quiet"]
    done = cli(*args, "--kbest", tmp_path / "moses.kbest.gz", "--output", tmp_path / "moses.1best", "--backend",
               "moses", "--moses-bin", binary, "--jobs", "2")
    assert done.returncode == 0, done.stderr
    done = cli(*args, "--kbest", tmp_path / "ours.kbest.gz", "--output", tmp_path / "ours.1best")
    assert done.returncode == 0, done.stderr
    theirs = read_pool(tmp_path / "moses.kbest.gz", dedup=False)
    ours = read_pool(tmp_path / "ours.kbest.gz", dedup=False)
    assert theirs.dense_names == ours.dense_names == spec.dense_weight_names()
    assert theirs.n_sentences == len(lines) + 1 and theirs.sizes().min() >= 1 and theirs.sizes().max() <= 7
    assert set(theirs.sparse_names) <= set(ours.sparse_names) | {"cbin_1", "cbin_2", "cbin_3"}
    # the totals are w . h of the printed values, as ours
    w = theirs.weight_vector(weights)
    np.testing.assert_allclose(theirs.model_scores(w), theirs.totals, rtol=1e-9, atol=1e-6)
    assert (tmp_path / "moses.1best").read_text() == (tmp_path / "ours.1best").read_text()
    assert "nope" in (tmp_path / "moses.1best").read_text().splitlines()[-1]


def test_backend_refusals(toy_system, tmp_path, cli):
    d, _, _, _ = toy_system
    base = ["decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "in.txt", "--backend", "moses"]
    done = cli(*base, "--moses-bin", tmp_path / "no-such-moses")
    assert done.returncode == 2 and "no-such-moses" in done.stderr
    fake = tmp_path / "moses2"  # refused before it would run
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    done = cli(*base, "--moses-bin", fake, "--lattice", tmp_path / "lat.gz")
    assert done.returncode == 2 and "lattice" in done.stderr and not (tmp_path / "lat.gz").exists()
    done = cli(*base, "--moses-bin", fake, "--kbest", tmp_path / "k.gz")
    assert done.returncode == 2 and "sparse" in done.stderr and not (tmp_path / "k.gz").exists()
    write_weights(tmp_path / "w0.txt", {k: v for k, v in read_weights(d / "w.txt").items() if k != "cbin_2"})
    done = cli(*base[:4], tmp_path / "w0.txt", *base[5:], "--moses-bin", fake, "--kbest", tmp_path / "k.gz")
    assert done.returncode == 2 and "exit status 3" in done.stderr and not (tmp_path / "k.gz").exists()


def test_backend_passes_the_search_to_moses(toy_system, tmp_path, cli):
    d, _, _, _ = toy_system
    fake = tmp_path / "moses"  # records its arguments, then fails (its output is not looked at)
    fake.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/args\nexit 3\n")
    fake.chmod(0o755)
    base = ["decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "in.txt", "--backend", "moses",
            "--moses-bin", fake, "--stack-size", "50"]
    for search, expected in ((["--search", "cube", "--pop-limit", "7"], "-search-algorithm 1 -cube-pruning-pop-limit 7"),
                             ([], None)):
        done = cli(*base, *search)
        assert done.returncode == 2 and "exit status 3" in done.stderr
        args = (tmp_path / "args").read_text()
        assert "-s 50 " in args
        if expected:
            assert expected in args
        else:
            assert "-search-algorithm" not in args and "-cube-pruning-pop-limit" not in args


def test_backend_lattices_from_the_moses_hypergraph(toy_system, tmp_path, cli):
    from smtlib.lattice.format import read_lattices
    from smtlib.lattice.paths import best_path

    binary = moses_binary()
    d, spec, weights, lines = toy_system
    done = cli("decode", "--model", d / "model", "--weights", d / "w.txt", "--input", d / "in.txt", "--k", "5",
               "--stack-size", "1000", "--quiet", "--kbest", tmp_path / "moses.kbest.gz", "--lattice",
               tmp_path / "lat.gz", "--backend", "moses", "--moses-bin", binary)
    assert done.returncode == 0, done.stderr
    pool = read_pool(tmp_path / "moses.kbest.gz", dedup=False)
    lats = read_lattices(tmp_path / "lat.gz")
    assert [lat.sent_id for lat in lats] == list(range(len(lines) + 1))
    w = pool.weight_vector(weights)
    best = pool.model_scores(w)
    for lat in lats[:-1]:  # the last line has an unknown word: its penalty is not in our lattice either
        score, edges = best_path(lat, weights)
        first = pool.offsets[lat.sent_id]
        # the lattice's best path is Moses's 1-best, with the same score (hypergraph values have 6 decimals)
        assert " ".join(lat.path_words(edges)) == pool.texts[first]
        assert score == pytest.approx(best[first], abs=1e-4)
        dense, sparse = lat.path_features(edges)
        np.testing.assert_allclose(dense, pool.dense[first], atol=1e-4)
        assert lat.feature_names == pool.dense_names
        row = pool.sparse[first]
        assert {k: v for k, v in sparse.items() if v} == pytest.approx(
            {pool.sparse_names[j]: v for j, v in zip(row.indices, row.data) if v}, abs=1e-4)
