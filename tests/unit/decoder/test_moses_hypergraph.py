"""Moses search hypergraphs as lattices: Viterbi decoding against Moses ``hgdecode``'s recorded output
(``../shared/data/moses-regtest-mert/mert.hgdecode-*``: the 1-best translation and its feature values)."""

from __future__ import annotations

import gzip

import pytest

from smtlib.lattice.paths import best_path
from smtlib.decoder.moses_hypergraph import dense_names_of_weights, read_moses_hypergraph, read_moses_weights
from smtlib.errors import InputError


def _truth(path):
    """Moses's expected output: the 1-best words (boundary words dropped) and ``{Moses name: value}``."""
    words, feats = None, {}
    for line in gzip.open(path, "rt", encoding="utf-8"):
        key, _, value = line.rstrip("\n").partition("=")
        if key == "STDOUT_1":
            words = [w for w in value.split() if w not in ("<s>", "</s>")]
        elif key.startswith("STDERR_") and "=" in value:  # (a bare "WEIGHTS" line is a header)
            name, _, number = value.rpartition("=")
            feats[name] = float(number)
    return words, feats


def _moses_name(ours: str, n_values: dict[str, int]) -> str:
    base, _, k = ours.rpartition("_")
    return base if n_values[base] == 1 else f"{base}_{int(k) + 1}"


@pytest.mark.parametrize("case", ["mert.hgdecode-denseonly", "mert.hgdecode-sparse"])
def test_viterbi_path_of_a_moses_hypergraph_is_hgdecodes_output(shared_data, case):
    d = shared_data / "moses-regtest-mert" / case
    dense_w = d / "data" / "dense.weights.gz"
    sparse_w = d / "data" / "sparse.weights.gz"
    weights = read_moses_weights(dense_w, sparse_w if sparse_w.exists() else None)
    lat = read_moses_hypergraph(d / "data" / "hg.gz", dense_names=dense_names_of_weights(dense_w))
    _, path = best_path(lat, weights)
    want_words, want_feats = _truth(d / "truth" / "results.txt.gz")
    assert [w for e in path for w in lat.words[e]] == want_words
    n_values: dict[str, int] = {}
    for name in lat.feature_names:
        base = name.rpartition("_")[0]
        n_values[base] = n_values.get(base, 0) + 1
    got = {_moses_name(n, n_values): v for n, v in zip(lat.feature_names, lat.dense[path].sum(axis=0), strict=True)}
    for e in path:
        for name, value in lat.sparse[e].items():
            got[name] = got.get(name, 0.0) + value
    got = {k: v for k, v in got.items() if abs(v) > 1e-9}
    assert set(got) == set(want_feats)
    for name, value in want_feats.items():
        assert got[name] == pytest.approx(value, rel=1e-5, abs=1e-4), name


def test_a_real_hypergraph_is_rejected_with_its_line(tmp_path):
    p = tmp_path / "hg"
    p.write_text("# target ||| features ||| source-covered\n2 2\n1\n<s> ||| LM0=-1 ||| 0\n"
                 "1\n[0] x [0] ||| LM0=-2 ||| 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"hg:6: .*several children"):
        read_moses_hypergraph(p)
    p.write_text("# wrong header\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"hg:1: "):
        read_moses_hypergraph(p)
